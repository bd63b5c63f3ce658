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
