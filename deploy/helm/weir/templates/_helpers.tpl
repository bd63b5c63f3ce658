{{/* Names and labels. */}}
{{- define "weir.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "weir.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "weir.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "weir.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "weir.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "weir.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* Pod and container security: the image's non-root user, nothing writable but the volumes. */}}
{{- define "weir.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "weir.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* A secretKeyRef env entry: name, key, optional. */}}
{{- define "weir.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* The lake's secrets under millpond's names (static) or weir's (group, serve). */}}
{{- define "weir.lakeSecretEnv" -}}
{{- $c := .root.Values.credentials -}}
{{- $secret := $c.existingSecret -}}
{{- if $c.create }}{{ $secret = printf "%s-lake" (include "weir.fullname" .root) }}{{ end -}}
{{- if .millpond -}}
{{ include "weir.secretEnv" (dict "name" "DUCKLAKE_RDS_PASSWORD" "secret" $secret "key" $c.keys.postgresPassword) }}
{{ include "weir.secretEnv" (dict "name" "DUCKDB_S3_ACCESS_KEY_ID" "secret" $secret "key" $c.keys.s3AccessKeyId "optional" true) }}
{{ include "weir.secretEnv" (dict "name" "DUCKDB_S3_SECRET_ACCESS_KEY" "secret" $secret "key" $c.keys.s3SecretAccessKey "optional" true) }}
{{- else -}}
{{ include "weir.secretEnv" (dict "name" "WEIR_CATALOG_POSTGRES_PASSWORD" "secret" $secret "key" $c.keys.postgresPassword) }}
{{ include "weir.secretEnv" (dict "name" "WEIR_STORAGE_S3_ACCESS_KEY_ID" "secret" $secret "key" $c.keys.s3AccessKeyId "optional" true) }}
{{ include "weir.secretEnv" (dict "name" "WEIR_STORAGE_S3_SECRET_ACCESS_KEY" "secret" $secret "key" $c.keys.s3SecretAccessKey "optional" true) }}
{{- end -}}
{{- end -}}

{{/* The lake's settings as weir variables (group mode and serve). */}}
{{- define "weir.lakeEnv" -}}
{{- $l := .Values.lake -}}
- name: WEIR_CATALOG_KIND
  value: postgres
- name: WEIR_CATALOG_POSTGRES_HOST
  value: {{ $l.catalog.host | quote }}
- name: WEIR_CATALOG_POSTGRES_PORT
  value: {{ $l.catalog.port | quote }}
- name: WEIR_CATALOG_POSTGRES_DATABASE
  value: {{ $l.catalog.database | quote }}
- name: WEIR_CATALOG_POSTGRES_USER
  value: {{ $l.catalog.user | quote }}
{{- with $l.s3.region }}
- name: WEIR_STORAGE_S3_REGION
  value: {{ . | quote }}
{{- end }}
{{- with $l.s3.endpoint }}
- name: WEIR_STORAGE_S3_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: WEIR_STORAGE_S3_USE_SSL
  value: {{ $l.s3.useSsl | quote }}
- name: WEIR_STORAGE_S3_URL_STYLE
  value: {{ $l.s3.urlStyle | quote }}
{{- end -}}

{{/* Probes of weir ingest's HTTP port (named http). The startup probe covers the startup
checks (brokers, catalog, storage) before the HTTP port opens; /healthz fails when the poll
loop has not run for 60 s, /readyz until partitions are assigned and while draining. */}}
{{- define "weir.ingestProbes" -}}
startupProbe:
  httpGet: {path: /healthz, port: http}
  periodSeconds: 5
  failureThreshold: 36
livenessProbe:
  httpGet: {path: /healthz, port: http}
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 6
readinessProbe:
  httpGet: {path: /readyz, port: http}
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 3
{{- end -}}

{{- define "weir.workVolumes" -}}
- name: work
  emptyDir: {}
- name: tmp
  emptyDir: {}
{{- end -}}

{{- define "weir.workMounts" -}}
- name: work
  mountPath: /var/lib/weir
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* The weir.yaml every ingest-configured process shares: Kafka's brokers and properties (the
loader requires kafka.bootstrap_servers), the lake's catalog and storage without their secrets
(those come from weir.lakeSecretEnv), and the log format. */}}
{{- define "weir.lakeConfig" -}}
{{- $l := .Values.lake -}}
{{- $config := dict
  "kafka" (dict "bootstrap_servers" .Values.kafka.bootstrapServers "properties" .Values.kafka.properties)
  "catalog" (dict "kind" "postgres" "postgres_host" $l.catalog.host "postgres_port" $l.catalog.port
                  "postgres_database" $l.catalog.database "postgres_user" $l.catalog.user)
  "storage" (dict "data_path" $l.dataPath "s3_use_ssl" $l.s3.useSsl "s3_url_style" $l.s3.urlStyle)
  "log" (dict "format" .Values.ingest.logFormat) -}}
{{- with $l.s3.region }}{{ $_ := set $config.storage "s3_region" . }}{{ end -}}
{{- with $l.s3.endpoint }}{{ $_ := set $config.storage "s3_endpoint" . }}{{ end -}}
{{- if not .Values.kafka.properties }}{{ $_ := unset $config.kafka "properties" }}{{ end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* Group mode's weir.yaml: weir.lakeConfig, the consumer group, the datasets, and group.config
merged over it. The maintain workload starts from the same text. */}}
{{- define "weir.groupConfig" -}}
{{- $config := include "weir.lakeConfig" . | fromYaml -}}
{{- $_ := set $config.kafka "group_id" .Values.group.groupId -}}
{{- $_ = set $config.kafka "assignment" "group" -}}
{{- $_ = set $config "memory_budget" .Values.ingest.memoryBudget -}}
{{- $_ = set $config "http" (dict "host" "0.0.0.0" "port" .Values.ingest.httpPort) -}}
{{- $_ = set $config "datasets" (deepCopy .Values.group.datasets) -}}
{{- $config = mergeOverwrite $config (deepCopy .Values.group.config) -}}
{{- toYaml $config -}}
{{- end -}}

{{/* WAL mode (wal.enabled) for an ingest container: the settings, and the volume claim each
replica mounts at wal.dir. */}}
{{- define "weir.walEnv" -}}
- name: WEIR_INGEST_MODE
  value: wal
- name: WEIR_WAL_DIR
  value: {{ .Values.wal.dir | quote }}
- name: WEIR_WAL_DISK_HIGH_WATERMARK_PCT
  value: {{ .Values.wal.diskHighWatermarkPct | quote }}
{{- end -}}

{{- define "weir.walMount" -}}
{{- if not (isAbs .Values.wal.dir) }}{{ fail "wal.dir: an absolute path (the volume claim's mount path)" }}{{ end -}}
- name: wal
  mountPath: {{ .Values.wal.dir }}
{{- end -}}

{{- define "weir.walClaimTemplates" -}}
{{- $v := .Values.wal.volume -}}
- metadata:
    name: wal
    labels:
      {{- include "weir.selectorLabels" . | nindent 6 }}
  spec:
    accessModes: [ReadWriteOnce]
    {{- with $v.storageClassName }}
    storageClassName: {{ . | quote }}
    {{- end }}
    resources:
      requests:
        storage: {{ $v.size }}
{{- end -}}

{{- define "weir.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
