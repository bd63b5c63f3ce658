package main

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// The drain timeout of `weir ingest` when WEIR_SHUTDOWN_DRAIN_TIMEOUT is not set
// (shutdown.drain_timeout in docs/CONFIGURATION.md).
const defaultDrainTimeout = 96 * time.Second

// workload is the pod-owning part of a StatefulSet or Deployment.
type workload struct {
	what     string // "StatefulSet weir-ingest-events"
	selector *metav1.LabelSelector
	template corev1.PodTemplateSpec
	claims   map[string]bool // a StatefulSet's volumeClaimTemplates: a volume per replica
}

type set struct {
	workloads  []workload
	services   map[string]*corev1.Service
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

// checkInvariants checks what the API server would not refuse but a weir deployment needs:
// selectors that select the pods they are for, probes and Service ports that name ports the
// containers have, references to ConfigMaps and Secrets of the same render that exist and have
// the key, resources and a non-root security context on every container, a grace period longer
// than the ingest drain, millpond's REPLICA_COUNT equal to the StatefulSet's replicas, a WAL
// directory on a volume claim of its own per replica, and `weir maintain --serve` running once.
func checkInvariants(objects []object) []string {
	s := set{services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{},
		secrets: map[string]*corev1.Secret{}}
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, o := range objects {
		switch v := o.obj.(type) {
		case *appsv1.StatefulSet:
			claims := map[string]bool{}
			for _, c := range v.Spec.VolumeClaimTemplates {
				claims[c.Name] = true
			}
			s.workloads = append(s.workloads, workload{"StatefulSet " + v.Name, v.Spec.Selector, v.Spec.Template, claims})
		case *appsv1.Deployment:
			s.workloads = append(s.workloads, workload{"Deployment " + v.Name, v.Spec.Selector, v.Spec.Template, nil})
		case *corev1.Service:
			s.services[v.Name] = v
		case *corev1.ConfigMap:
			s.configMaps[v.Name] = v
		case *corev1.Secret:
			s.secrets[v.Name] = v
		}
	}
	for _, w := range s.workloads {
		s.checkWorkload(w, fail)
	}
	for _, o := range objects {
		switch v := o.obj.(type) {
		case *appsv1.StatefulSet:
			checkStatefulSet(v, s, fail)
			checkMaintainReplicas("StatefulSet "+v.Name, v.Spec.Replicas, v.Spec.Template.Spec, "", fail)
		case *appsv1.Deployment:
			checkMaintainReplicas("Deployment "+v.Name, v.Spec.Replicas, v.Spec.Template.Spec,
				v.Spec.Strategy.Type, fail)
		case *corev1.Service:
			s.checkService(v, fail)
		case *policyv1.PodDisruptionBudget:
			if len(s.selected(v.Spec.Selector)) == 0 {
				fail("PodDisruptionBudget %s selects no pod of this render", v.Name)
			}
		case *monitoringv1.ServiceMonitor:
			s.checkServiceMonitor(v, fail)
		case *monitoringv1.PrometheusRule:
			for _, g := range v.Spec.Groups {
				for _, r := range g.Rules {
					if r.Alert == "" || r.Expr.String() == "" {
						fail("PrometheusRule %s group %s: a rule without alert name or expr", v.Name, g.Name)
					}
				}
			}
		}
	}
	return problems
}

// selected: the workloads whose pod labels the selector matches.
func (s set) selected(selector *metav1.LabelSelector) []workload {
	if selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() {
		return nil
	}
	var out []workload
	for _, w := range s.workloads {
		if sel.Matches(labels.Set(w.template.Labels)) {
			out = append(out, w)
		}
	}
	return out
}

func hasPort(spec corev1.PodSpec, port intstr.IntOrString) bool {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if (port.Type == intstr.String && p.Name == port.StrVal) ||
				(port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
				return true
			}
		}
	}
	return false
}

func (s set) checkWorkload(w workload, fail func(string, ...any)) {
	sel, err := metav1.LabelSelectorAsSelector(w.selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(w.template.Labels)) {
		fail("%s: spec.selector does not select its own pod template's labels", w.what)
	}
	spec := w.template.Spec
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
		if v.ConfigMap != nil && s.configMaps[v.ConfigMap.Name] == nil {
			fail("%s: volume %s refers to ConfigMap %s, not in this render", w.what, v.Name, v.ConfigMap.Name)
		}
	}
	podNonRoot := spec.SecurityContext != nil && spec.SecurityContext.RunAsNonRoot != nil &&
		*spec.SecurityContext.RunAsNonRoot
	for _, c := range spec.Containers {
		where := fmt.Sprintf("%s container %s", w.what, c.Name)
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() ||
			c.Resources.Limits.Memory().IsZero() {
			fail("%s: needs cpu and memory requests and a memory limit", where)
		}
		nonRoot := podNonRoot || (c.SecurityContext != nil && c.SecurityContext.RunAsNonRoot != nil &&
			*c.SecurityContext.RunAsNonRoot)
		if !nonRoot {
			fail("%s: runAsNonRoot is not set", where)
		}
		if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil ||
			*c.SecurityContext.AllowPrivilegeEscalation {
			fail("%s: allowPrivilegeEscalation must be false", where)
		}
		if c.LivenessProbe == nil || c.ReadinessProbe == nil {
			fail("%s: needs a liveness and a readiness probe", where)
		}
		for name, probe := range map[string]*corev1.Probe{"liveness": c.LivenessProbe,
			"readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
			if probe == nil {
				continue
			}
			if probe.HTTPGet != nil && !hasPort(spec, probe.HTTPGet.Port) {
				fail("%s: %s probe port %s is not a container port", where, name, probe.HTTPGet.Port.String())
			}
			if probe.TCPSocket != nil && !hasPort(spec, probe.TCPSocket.Port) {
				fail("%s: %s probe port %s is not a container port", where, name, probe.TCPSocket.Port.String())
			}
		}
		for _, m := range c.VolumeMounts {
			if _, ok := volumes[m.Name]; !ok && !w.claims[m.Name] {
				fail("%s: volumeMount %s has no volume", where, m.Name)
			}
		}
		for _, e := range c.Env {
			s.checkEnvRef(where, e, fail)
		}
		if len(c.Args) > 0 && c.Args[0] == "ingest" {
			settings := s.weirSettings(where, spec, c, fail)
			drain := defaultDrainTimeout
			if v, ok := settings["shutdown.drain_timeout"]; ok {
				if d, ok := parseWeirDuration(v.value); ok {
					drain = d
				} else {
					fail("%s: %s %q is not a duration", where, v.from, v.value)
				}
			}
			grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
			if spec.TerminationGracePeriodSeconds != nil {
				grace = *spec.TerminationGracePeriodSeconds
			}
			if time.Duration(grace)*time.Second <= drain {
				fail("%s: terminationGracePeriodSeconds %d does not outlast the drain timeout %s",
					where, grace, drain)
			}
			if mode, ok := settings["ingest.mode"]; ok && strings.EqualFold(strings.TrimSpace(mode.value), "wal") {
				checkWalVolume(where, w, c, settings["wal.dir"], fail)
			}
		}
	}
}

// setting is one weir setting's value in a container and where it came from.
type setting struct {
	value string
	from  string // "WEIR_WAL_DIR" or "wal.dir in ConfigMap weir-ingest"
}

// weirSettings: the settings this checker needs of a container, from the weir.yaml its
// --config names (when that file is a key of a ConfigMap of this render) and then its WEIR_*
// variables, which weir lets override the file.
func (s set) weirSettings(where string, spec corev1.PodSpec, c corev1.Container,
	fail func(string, ...any)) map[string]setting {
	out := map[string]setting{}
	if file := configArg(c.Args); file != "" {
		if cm, key := s.mountedConfigMap(spec, c, file); cm != nil {
			if text, ok := cm.Data[key]; ok {
				var doc map[string]any
				if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
					fail("%s: %s of ConfigMap %s is not YAML: %v", where, key, cm.Name, err)
				}
				flatten("", doc, func(name, value string) {
					out[name] = setting{value, fmt.Sprintf("%s in ConfigMap %s", name, cm.Name)}
				})
			}
		}
	}
	for _, name := range []string{"shutdown.drain_timeout", "ingest.mode", "wal.dir"} {
		variable := "WEIR_" + strings.ToUpper(strings.ReplaceAll(name, ".", "_"))
		for _, e := range c.Env {
			if e.Name == variable && e.ValueFrom == nil {
				out[name] = setting{e.Value, variable}
			}
		}
	}
	return out
}

// configArg: the path of `--config PATH`, `--config=PATH` or `-c PATH`, or "".
func configArg(args []string) string {
	for i, a := range args {
		if (a == "--config" || a == "-c") && i+1 < len(args) {
			return args[i+1]
		}
		if strings.HasPrefix(a, "--config=") {
			return strings.TrimPrefix(a, "--config=")
		}
	}
	return ""
}

// mountedConfigMap: the ConfigMap of this render and its key that the container sees at file.
func (s set) mountedConfigMap(spec corev1.PodSpec, c corev1.Container, file string) (*corev1.ConfigMap, string) {
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok || v.ConfigMap == nil || s.configMaps[v.ConfigMap.Name] == nil {
			continue
		}
		var rel string
		switch {
		case m.SubPath != "" && path.Clean(m.MountPath) == path.Clean(file):
			rel = m.SubPath
		case m.SubPath == "" && strings.HasPrefix(path.Clean(file), path.Clean(m.MountPath)+"/"):
			rel = strings.TrimPrefix(path.Clean(file), path.Clean(m.MountPath)+"/")
		default:
			continue
		}
		key := rel
		if len(v.ConfigMap.Items) > 0 {
			key = ""
			for _, item := range v.ConfigMap.Items {
				if path.Clean(item.Path) == rel {
					key = item.Key
				}
			}
		}
		return s.configMaps[v.ConfigMap.Name], key
	}
	return nil, ""
}

// flatten calls add for every scalar of a weir.yaml by its dotted setting name (weir reads
// `shutdown: {drain_timeout: 60s}` and `shutdown.drain_timeout: 60s` alike); datasets are
// per-dataset settings and left out.
func flatten(prefix string, node map[string]any, add func(name, value string)) {
	for key, value := range node {
		name := key
		if prefix != "" {
			name = prefix + "." + key
		}
		if name == "datasets" {
			continue
		}
		switch v := value.(type) {
		case map[string]any:
			flatten(name, v, add)
		case nil:
		default:
			add(name, fmt.Sprint(v))
		}
	}
}

// parseWeirDuration parses a duration as weir does (config/units.cc): "0", or one or more
// <digits><unit> with unit ms, s, m, h or d (any case), e.g. 96s, 1m30s, 2d.
func parseWeirDuration(text string) (time.Duration, bool) {
	text = strings.TrimSpace(text)
	if text == "0" {
		return 0, true
	}
	if text == "" {
		return 0, false
	}
	units := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute,
		"h": time.Hour, "d": 24 * time.Hour}
	var total time.Duration
	for text != "" {
		digits := 0
		for digits < len(text) && text[digits] >= '0' && text[digits] <= '9' {
			digits++
		}
		letters := digits
		for letters < len(text) && ((text[letters] >= 'a' && text[letters] <= 'z') ||
			(text[letters] >= 'A' && text[letters] <= 'Z')) {
			letters++
		}
		amount, err := strconv.ParseInt(text[:digits], 10, 64)
		unit, known := units[strings.ToLower(text[digits:letters])]
		if digits == 0 || err != nil || !known {
			return 0, false
		}
		total += time.Duration(amount) * unit
		text = text[letters:]
	}
	return total, true
}

// checkWalVolume: in WAL mode the write-ahead log holds records whose Kafka offsets are already
// committed until they land in the lake, so wal.dir must be on a volume that outlives the pod
// and belongs to one replica: a volumeClaimTemplate of the StatefulSet, mounted writable.
func checkWalVolume(where string, w workload, c corev1.Container, dir setting, fail func(string, ...any)) {
	if dir.value == "" {
		dir = setting{"weir-wal", "wal.dir (default)"}
	}
	if !path.IsAbs(dir.value) {
		fail("%s: WAL mode with %s %q, not an absolute path on a volume claim", where, dir.from, dir.value)
		return
	}
	var best *corev1.VolumeMount
	for i, m := range c.VolumeMounts {
		mount := path.Clean(m.MountPath)
		clean := path.Clean(dir.value)
		if (clean == mount || strings.HasPrefix(clean, strings.TrimSuffix(mount, "/")+"/")) &&
			(best == nil || len(mount) > len(path.Clean(best.MountPath))) {
			best = &c.VolumeMounts[i]
		}
	}
	switch {
	case best == nil:
		fail("%s: WAL mode: %s %q is on no volume (the container's file system)", where, dir.from, dir.value)
	case !w.claims[best.Name]:
		fail("%s: WAL mode: %s %q is on volume %s, not on a volumeClaimTemplate of a StatefulSet "+
			"(the WAL must outlive the pod and belong to one replica)", where, dir.from, dir.value, best.Name)
	case best.ReadOnly:
		fail("%s: WAL mode: %s %q is on a read-only mount", where, dir.from, dir.value)
	}
}

// checkMaintainReplicas: `weir maintain --serve` looks after a whole lake, so it runs in one
// pod, and a rollout must stop the old pod before it starts the new one (a Deployment's
// Recreate; a StatefulSet of one does so by itself).
func checkMaintainReplicas(what string, replicas *int32, spec corev1.PodSpec,
	strategy appsv1.DeploymentStrategyType, fail func(string, ...any)) {
	for _, c := range spec.Containers {
		serve := false
		for _, a := range c.Args {
			serve = serve || a == "--serve"
		}
		if len(c.Args) == 0 || c.Args[0] != "maintain" || !serve {
			continue
		}
		if replicas != nil && *replicas != 1 {
			fail("%s container %s: weir maintain --serve with %d replicas (it must run once per lake)",
				what, c.Name, *replicas)
		}
		if strings.HasPrefix(what, "Deployment ") && strategy != appsv1.RecreateDeploymentStrategyType {
			fail("%s container %s: weir maintain --serve needs strategy Recreate (a rolling update "+
				"runs the old and the new pod at once)", what, c.Name)
		}
	}
}

func (s set) checkEnvRef(where string, e corev1.EnvVar, fail func(string, ...any)) {
	if e.ValueFrom == nil {
		return
	}
	if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
		cm := s.configMaps[ref.Name]
		if cm == nil {
			fail("%s: env %s refers to ConfigMap %s, not in this render", where, e.Name, ref.Name)
		} else if _, ok := cm.Data[ref.Key]; !ok {
			fail("%s: env %s refers to key %s that ConfigMap %s lacks", where, e.Name, ref.Key, ref.Name)
		}
	}
	// Secrets are usually created outside the chart; one rendered here must have the key.
	if ref := e.ValueFrom.SecretKeyRef; ref != nil {
		if secret := s.secrets[ref.Name]; secret != nil {
			_, inData := secret.Data[ref.Key]
			_, inString := secret.StringData[ref.Key]
			if !inData && !inString && (ref.Optional == nil || !*ref.Optional) {
				fail("%s: env %s refers to key %s that Secret %s lacks", where, e.Name, ref.Key, ref.Name)
			}
		}
	}
}

// checkStatefulSet: static assignment reads the replica count from REPLICA_COUNT (millpond's
// contract) and the ordinal from the pod name; both must agree with the StatefulSet.
func checkStatefulSet(sts *appsv1.StatefulSet, s set, fail func(string, ...any)) {
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	if svc := s.services[sts.Spec.ServiceName]; svc == nil || svc.Spec.ClusterIP != corev1.ClusterIPNone {
		fail("StatefulSet %s: serviceName %q is not a headless Service of this render", sts.Name,
			sts.Spec.ServiceName)
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		var replicaCount string
		ordinal := false
		for _, e := range c.Env {
			switch e.Name {
			case "REPLICA_COUNT", "WEIR_KAFKA_REPLICA_COUNT":
				replicaCount = e.Value
			case "POD_NAME":
				ordinal = e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
					e.ValueFrom.FieldRef.FieldPath == "metadata.name"
			case "WEIR_KAFKA_ORDINAL":
				ordinal = true
			}
		}
		if replicaCount == "" {
			continue
		}
		if replicaCount != strconv.Itoa(int(replicas)) {
			fail("StatefulSet %s container %s: REPLICA_COUNT %s differs from spec.replicas %d "+
				"(static assignment would leave partitions unowned or owned twice)",
				sts.Name, c.Name, replicaCount, replicas)
		}
		if !ordinal {
			fail("StatefulSet %s container %s: static assignment needs POD_NAME from metadata.name "+
				"(the ordinal)", sts.Name, c.Name)
		}
	}
}

func (s set) checkService(svc *corev1.Service, fail func(string, ...any)) {
	pods := s.selected(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector})
	if len(pods) == 0 {
		fail("Service %s selects no pod of this render", svc.Name)
		return
	}
	for _, p := range svc.Spec.Ports {
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port)
		}
		for _, w := range pods {
			if !hasPort(w.template.Spec, target) {
				fail("Service %s port %s: target %s is not a port of %s", svc.Name, p.Name,
					target.String(), w.what)
			}
		}
	}
}

func (s set) checkServiceMonitor(sm *monitoringv1.ServiceMonitor, fail func(string, ...any)) {
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil || sel.Empty() {
		fail("ServiceMonitor %s: empty or invalid selector", sm.Name)
		return
	}
	matched := 0
	for _, svc := range s.services {
		if !sel.Matches(labels.Set(svc.Labels)) {
			continue
		}
		matched++
		for _, e := range sm.Spec.Endpoints {
			found := false
			for _, p := range svc.Spec.Ports {
				found = found || p.Name == e.Port
			}
			if !found {
				fail("ServiceMonitor %s: endpoint port %q is not a port of Service %s", sm.Name, e.Port, svc.Name)
			}
		}
	}
	if matched == 0 {
		fail("ServiceMonitor %s selects no Service of this render", sm.Name)
	}
}
