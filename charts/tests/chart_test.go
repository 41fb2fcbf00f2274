package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/config"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	nonRootUser = 65532
	httpPort    = 8080
	adminPort   = 9090
)

// forEachCase renders every install once and runs check on it as a subtest.
func forEachCase(t *testing.T, check func(t *testing.T, r *rendered)) {
	t.Helper()
	forCases(t, renderCases, check)
}

// forCases renders each of cases and runs check on it as a subtest.
func forCases(t *testing.T, cases []renderCase, check func(t *testing.T, r *rendered)) {
	t.Helper()
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			check(t, render(t, rc))
		})
	}
}

func TestEveryObjectDecodesStrictlyWithValidNamesAndLabels(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		if len(r.Objects) == 0 {
			t.Fatal("nothing rendered")
		}
		seen := map[string]bool{}
		for _, o := range r.Objects {
			key := o.Kind + "/" + o.Name
			if seen[key] {
				t.Errorf("%s rendered twice", key)
			}
			seen[key] = true
			if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
				t.Errorf("%s: name: %v", key, errs)
			}
			if o.Meta.Namespace != namespace {
				t.Errorf("%s: namespace %q, want the release's %q", key, o.Meta.Namespace, namespace)
			}
			checkRecommendedLabels(t, key, o.Meta.Labels)
		}
		for _, s := range all[corev1.Service](r) {
			if errs := validation.IsDNS1035Label(s.Name); len(errs) > 0 {
				t.Errorf("Service %s: %v", s.Name, errs)
			}
		}
	})
}

// checkRecommendedLabels asserts the Kubernetes recommended labels, with valid values.
func checkRecommendedLabels(t *testing.T, what string, l map[string]string) {
	t.Helper()
	want := map[string]string{
		"app.kubernetes.io/name":       "sharenote",
		"app.kubernetes.io/instance":   releaseName,
		"app.kubernetes.io/part-of":    "sharenote",
		"app.kubernetes.io/managed-by": "Helm",
	}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%s: label %s=%q, want %q", what, k, l[k], v)
		}
	}
	for k, v := range l {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			t.Errorf("%s: label key %q: %v", what, k, errs)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("%s: label %s=%q: %v", what, k, v, errs)
		}
	}
}

func TestOneDeploymentServicePDBAndHPAPerWorkload(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		var deployments []string
		for _, d := range all[appsv1.Deployment](r) {
			deployments = append(deployments, d.Name)
		}
		var want []string
		for _, w := range r.workloads() {
			want = append(want, fullname(w))
		}
		slices.Sort(deployments)
		if !slices.Equal(deployments, want) {
			t.Fatalf("Deployments %v, want %v", deployments, want)
		}
		if r.allInOne() && len(deployments) != 1 {
			t.Fatalf("allInOne renders %d Deployments, want exactly one", len(deployments))
		}
		for _, w := range r.workloads() {
			d := one[appsv1.Deployment](t, r, fullname(w))
			pods := labels.Set(d.Spec.Template.Labels)

			svc := one[corev1.Service](t, r, fullname(w))
			if !labels.SelectorFromSet(svc.Spec.Selector).Matches(pods) || len(svc.Spec.Selector) == 0 {
				t.Errorf("Service %s selector %v does not select its pods %v", svc.Name, svc.Spec.Selector, pods)
			}
			if p := servicePort(svc, "http"); p == nil || p.TargetPort.String() != "http" {
				t.Errorf("Service %s: no port http → http", svc.Name)
			}

			if r.workloadSetting(w, "pdb.enabled") == true {
				pdb := one[policyv1.PodDisruptionBudget](t, r, fullname(w))
				sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
				if err != nil || sel.Empty() || !sel.Matches(pods) {
					t.Errorf("PDB %s does not select the pods of %s", pdb.Name, d.Name)
				}
				if pdb.Spec.MaxUnavailable == nil && pdb.Spec.MinAvailable == nil {
					t.Errorf("PDB %s sets no budget", pdb.Name)
				}
			}

			hpaOn := r.workloadSetting(w, "hpa.enabled") == true
			var hpa *autoscalingv2.HorizontalPodAutoscaler
			for _, h := range all[autoscalingv2.HorizontalPodAutoscaler](r) {
				if h.Spec.ScaleTargetRef.Name == d.Name {
					hpa = h
				}
			}
			switch {
			case hpaOn && hpa == nil:
				t.Errorf("%s: hpa.enabled but no HorizontalPodAutoscaler targets it", d.Name)
			case !hpaOn && hpa != nil:
				t.Errorf("%s: HPA %s rendered though hpa.enabled is false", d.Name, hpa.Name)
			case hpaOn:
				if hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.APIVersion != "apps/v1" {
					t.Errorf("HPA %s targets %+v", hpa.Name, hpa.Spec.ScaleTargetRef)
				}
				if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 1 || hpa.Spec.MaxReplicas < *hpa.Spec.MinReplicas {
					t.Errorf("HPA %s: replicas %v..%d", hpa.Name, hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
				}
				if len(hpa.Spec.Metrics) == 0 {
					t.Errorf("HPA %s has no metric", hpa.Name)
				}
				// The HPA owns the replica count; a fixed one would fight it on every upgrade.
				if d.Spec.Replicas != nil {
					t.Errorf("%s sets replicas while its HPA is enabled", d.Name)
				}
			default:
				if d.Spec.Replicas == nil || *d.Spec.Replicas < 1 {
					t.Errorf("%s: no replicas and no HPA", d.Name)
				}
			}
		}
	})
}

func servicePort(s *corev1.Service, name string) *corev1.ServicePort {
	for i := range s.Spec.Ports {
		if s.Spec.Ports[i].Name == name {
			return &s.Spec.Ports[i]
		}
	}
	return nil
}

func TestDeploymentsAreHardenedProbedAndRollSafely(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		cm := one[corev1.ConfigMap](t, r, releaseName)
		shutdown, err := time.ParseDuration(cm.Data["SHARE_SHUTDOWN_TIMEOUT"])
		if err != nil {
			t.Fatalf("SHARE_SHUTDOWN_TIMEOUT: %v", err)
		}
		for _, w := range r.workloads() {
			d := one[appsv1.Deployment](t, r, fullname(w))
			name := d.Name
			t.Run(w, func(t *testing.T) {
				sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
				if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
					t.Errorf("selector %v does not match the pod template", d.Spec.Selector)
				}
				checkRecommendedLabels(t, name+" pod template", d.Spec.Template.Labels)
				if c := d.Spec.Template.Labels["app.kubernetes.io/component"]; c != w {
					t.Errorf("component label %q, want %q", c, w)
				}

				// Rolling updates never drop capacity.
				s := d.Spec.Strategy
				if s.Type != appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate == nil ||
					s.RollingUpdate.MaxUnavailable == nil || s.RollingUpdate.MaxUnavailable.IntValue() != 0 ||
					s.RollingUpdate.MaxSurge == nil || s.RollingUpdate.MaxSurge.IntValue() != 1 {
					t.Errorf("strategy %+v, want RollingUpdate maxUnavailable 0, maxSurge 1", s)
				}

				pod := d.Spec.Template.Spec
				checkPodHardening(t, name, pod)
				if len(pod.Containers) != 1 {
					t.Fatalf("%d containers, want 1", len(pod.Containers))
				}
				c := pod.Containers[0]

				// The one image, told its target by the arguments; the entrypoint stays the
				// image's (the sharenote binary).
				if want := serveArgs(w); len(c.Command) != 0 || !slices.Equal(c.Args, want) {
					t.Errorf("command %v args %v, want the image's entrypoint with args %v", c.Command, c.Args, want)
				}
				checkImage(t, r, c.Image)
				otel := envValue(c, "OTEL_SERVICE_NAME")
				if want := "sharenote-" + w; r.str("otel.endpoint") != "" && otel != want {
					t.Errorf("OTEL_SERVICE_NAME = %q, want %q", otel, want)
				}

				if p := containerPort(c, "http"); p != httpPort {
					t.Errorf("port http = %d, want %d", p, httpPort)
				}
				if p := containerPort(c, "admin"); p != adminPort {
					t.Errorf("port admin = %d, want %d", p, adminPort)
				}
				checkProbe(t, "startupProbe", c, c.StartupProbe, "/healthz")
				checkProbe(t, "livenessProbe", c, c.LivenessProbe, "/healthz")
				checkProbe(t, "readinessProbe", c, c.ReadinessProbe, "/readyz")

				// A preStop sleep (no shell in distroless), and a grace period that covers
				// it plus the drain.
				if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil ||
					c.Lifecycle.PreStop.Sleep.Seconds < 1 || c.Lifecycle.PreStop.Exec != nil {
					t.Errorf("lifecycle %+v, want a preStop sleep action", c.Lifecycle)
				} else {
					preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
					if pod.TerminationGracePeriodSeconds == nil ||
						time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second <= shutdown+preStop {
						t.Errorf("terminationGracePeriodSeconds %v ≤ SHARE_SHUTDOWN_TIMEOUT %v + preStop %v",
							pod.TerminationGracePeriodSeconds, shutdown, preStop)
					}
				}

				checkResources(t, name, c.Resources)
				checkConfigWiring(t, r, name, c, workloadNeeds(w).ObjectStore)

				// Spread over zones and nodes, softly.
				if r.workloadSetting(w, "topologySpread.enabled") == true {
					keys := map[string]bool{}
					for _, tsc := range pod.TopologySpreadConstraints {
						keys[tsc.TopologyKey] = true
						if tsc.WhenUnsatisfiable != corev1.ScheduleAnyway {
							t.Errorf("topology spread on %s: %s, want ScheduleAnyway", tsc.TopologyKey, tsc.WhenUnsatisfiable)
						}
						ls, err := metav1.LabelSelectorAsSelector(tsc.LabelSelector)
						if err != nil || ls.Empty() || !ls.Matches(labels.Set(d.Spec.Template.Labels)) {
							t.Errorf("topology spread on %s does not select the pods", tsc.TopologyKey)
						}
					}
					for _, k := range []string{"topology.kubernetes.io/zone", "kubernetes.io/hostname"} {
						if !keys[k] {
							t.Errorf("no topology spread on %s", k)
						}
					}
				}
			})
		}
	})
}

// checkPodHardening asserts the pod-level and container-level security settings every
// sharenote pod has, and the writable /tmp the read-only root filesystem needs.
func checkPodHardening(t *testing.T, what string, pod corev1.PodSpec) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil {
		t.Fatalf("%s: no pod securityContext", what)
	}
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("%s: runAsNonRoot not true", what)
	}
	for n, v := range map[string]*int64{"runAsUser": psc.RunAsUser, "runAsGroup": psc.RunAsGroup, "fsGroup": psc.FSGroup} {
		if v == nil || *v != nonRootUser {
			t.Errorf("%s: pod %s = %v, want %d", what, n, v, nonRootUser)
		}
	}
	if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: seccompProfile %+v, want RuntimeDefault", what, psc.SeccompProfile)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: the service account token is mounted; nothing needs the Kubernetes API", what)
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Errorf("%s: shares a host namespace", what)
	}
	tmpVolumes := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.EmptyDir != nil {
			tmpVolumes[v.Name] = true
		}
		if v.HostPath != nil {
			t.Errorf("%s: hostPath volume %s", what, v.Name)
		}
	}
	for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s/%s: no securityContext", what, c.Name)
			continue
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s/%s: readOnlyRootFilesystem not true", what, c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s/%s: allowPrivilegeEscalation not false", what, c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s/%s: privileged", what, c.Name)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s/%s: capabilities %+v, want drop [ALL] and nothing added", what, c.Name, sc.Capabilities)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser != nonRootUser {
			t.Errorf("%s/%s: runAsUser %d", what, c.Name, *sc.RunAsUser)
		}
		mounted := false
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/tmp" && tmpVolumes[m.Name] {
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("%s/%s: no emptyDir at /tmp for the read-only root filesystem", what, c.Name)
		}
	}
}

func checkResources(t *testing.T, what string, r corev1.ResourceRequirements) {
	t.Helper()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := r.Requests[name]; !ok || q.IsZero() {
			t.Errorf("%s: no %s request", what, name)
		}
	}
	if q, ok := r.Limits[corev1.ResourceMemory]; !ok || q.IsZero() {
		t.Errorf("%s: no memory limit", what)
	} else if req := r.Requests[corev1.ResourceMemory]; q.Cmp(req) < 0 {
		t.Errorf("%s: memory limit %s below its request %s", what, q.String(), req.String())
	}
}

// oneImage is the image every container of an install runs: image.repository at
// image.tag, else at the chart's appVersion.
func oneImage(t *testing.T, r *rendered) string {
	t.Helper()
	tag := r.str("image.tag")
	if tag == "" {
		tag = loadChart(t).Metadata.AppVersion
	}
	return r.str("image.repository") + ":" + tag
}

// checkImage asserts that a container runs the one image.
func checkImage(t *testing.T, r *rendered, image string) {
	t.Helper()
	if want := oneImage(t, r); image != want {
		t.Errorf("image %q, want the one image %q", image, want)
	}
}

// envValue returns the plain value of a container's variable ("" when unset).
func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// checkProbe asserts an HTTP GET of path on the admin port (by name or number).
func checkProbe(t *testing.T, which string, c corev1.Container, p *corev1.Probe, path string) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s: no HTTP %s", c.Name, which)
		return
	}
	port := p.HTTPGet.Port.IntValue()
	if p.HTTPGet.Port.StrVal != "" {
		port = int(containerPort(c, p.HTTPGet.Port.StrVal))
	}
	if port != adminPort || p.HTTPGet.Path != path {
		t.Errorf("%s: %s on port %v path %s, want %s on %d", c.Name, which, p.HTTPGet.Port.String(), p.HTTPGet.Path, path, adminPort)
	}
}

// checkConfigWiring asserts that a container reads the ConfigMap and both connection URLs
// from Secrets, the object store's settings when it needs the object store (else none),
// and that the environment it ends up with is a valid libs/config.
func checkConfigWiring(t *testing.T, r *rendered, what string, c corev1.Container, objectStore bool) {
	t.Helper()
	env := map[string]string{}
	fromConfigMap := false
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef != nil && ef.ConfigMapRef.Name == releaseName {
			fromConfigMap = true
			for k, v := range one[corev1.ConfigMap](t, r, releaseName).Data {
				env[k] = v
			}
		}
	}
	if !fromConfigMap {
		t.Errorf("%s: does not read the ConfigMap %s", what, releaseName)
	}
	refs := map[string]*corev1.SecretKeySelector{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			refs[e.Name] = e.ValueFrom.SecretKeyRef
			env[e.Name] = secretValue(t, r, e.ValueFrom.SecretKeyRef)
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		}
	}
	for _, name := range []string{"SHARE_DATABASE_URL", "SHARE_REDIS_URL"} {
		if _, ok := refs[name]; !ok && (name == "SHARE_DATABASE_URL" || redisConfigured(r)) {
			t.Errorf("%s: %s does not come from a Secret", what, name)
		}
		if v, ok := env[name]; ok && refs[name] == nil && v != "" {
			t.Errorf("%s: %s is a plain value", what, name)
		}
	}
	if _, err := config.Load(func(k string) string { return env[k] }); err != nil {
		t.Errorf("%s: its environment is not a valid configuration: %v", what, err)
	}
	if objectStore {
		checkObjectStoreEnv(t, r, what, c)
	} else {
		for _, e := range c.Env {
			if e.Name == "SHARE_BLOB_URL" || slices.Contains(awsKeys, e.Name) {
				t.Errorf("%s: %s is set, though its target needs no object store", what, e.Name)
			}
		}
	}
	for k, want := range map[string]string{"SHARE_ADDR": ":8080", "SHARE_ADMIN_ADDR": ":9090"} {
		if env[k] != want {
			t.Errorf("%s: %s=%q, want %q", what, k, env[k], want)
		}
	}
	if !strings.HasPrefix(env["SHARE_PUBLIC_URL"], "http") || env["SHARE_LOG_LEVEL"] == "" {
		t.Errorf("%s: public URL or log level unset: %v", what, env)
	}
	// Empty is a valid setting (no X-Forwarded-For is believed), but the key is always there.
	if _, ok := env["SHARE_TRUSTED_PROXIES"]; !ok {
		t.Errorf("%s: SHARE_TRUSTED_PROXIES missing: %v", what, env)
	}
}

func redisConfigured(r *rendered) bool {
	return r.str("redis.existingSecret") != "" || r.str("redis.url") != ""
}

// secretValue resolves a secretKeyRef: a Secret the chart renders must hold the key; an
// existing Secret must be the one the values name, and stands in as a sample URL.
func secretValue(t *testing.T, r *rendered, ref *corev1.SecretKeySelector) string {
	t.Helper()
	for _, s := range all[corev1.Secret](r) {
		if s.Name == ref.Name {
			v, ok := s.Data[ref.Key]
			if !ok {
				t.Errorf("Secret %s has no key %q", s.Name, ref.Key)
			}
			return string(v)
		}
	}
	for _, w := range r.workloads() {
		if r.perWorkload() && databaseSecret(r, w) == ref.Name && r.str("database.existingSecretKey") == ref.Key {
			return "postgres://" + databaseRole(r, w) + "@postgres.example:5432/sharenote"
		}
	}
	for _, which := range []string{"database", "redis"} {
		if r.str(which+".existingSecret") == ref.Name && r.str(which+".existingSecretKey") == ref.Key {
			if which == "database" {
				return "postgres://sharenote@postgres.example:5432/sharenote"
			}
			return "redis://redis.example:6379/0"
		}
	}
	if v, ok := sampleAWSKeys[ref.Key]; ok && r.str("objectStore.type") == "external" && r.str("objectStore.external.existingSecret") == ref.Name {
		return v
	}
	t.Errorf("secretKeyRef %s/%s is neither rendered nor an existingSecret of the values", ref.Name, ref.Key)
	return ""
}

func TestSecretsAreReferencedOrCreated(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		var plain []string
		for _, s := range all[corev1.Secret](r) {
			plain = append(plain, s.Name)
		}
		if r.str("database.existingSecret") != "" {
			// Production: the URLs stay out of the release; nothing secret is rendered.
			for _, s := range all[corev1.Secret](r) {
				if _, ok := s.Data["database-url"]; ok {
					t.Errorf("Secret %s holds a database URL though database.existingSecret is set", s.Name)
				}
			}
			w := r.workloads()[0]
			d := one[appsv1.Deployment](t, r, fullname(w))
			ref := envSecretRef(d.Spec.Template.Spec.Containers[0], "SHARE_DATABASE_URL")
			if ref == nil || ref.Name != databaseSecret(r, w) || ref.Key != r.str("database.existingSecretKey") {
				t.Errorf("SHARE_DATABASE_URL from %+v, want the existing Secret %s/%s", ref,
					databaseSecret(r, w), r.str("database.existingSecretKey"))
			}
			return
		}
		s := one[corev1.Secret](t, r, releaseName)
		if string(s.Data["database-url"]) != r.str("database.url") {
			t.Errorf("Secret %s database-url = %q, want database.url", s.Name, s.Data["database-url"])
		}
		if u := r.str("redis.url"); u != "" && string(s.Data["redis-url"]) != u {
			t.Errorf("Secret %s redis-url = %q, want redis.url", s.Name, s.Data["redis-url"])
		}
		if len(plain) == 0 {
			t.Error("no Secret rendered though the URLs are values")
		}
	})
}

func envSecretRef(c corev1.Container, name string) *corev1.SecretKeySelector {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil {
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

func TestConfigMapHoldsOnlyKnownVariables(t *testing.T) {
	known := map[string]bool{}
	for _, v := range config.Variables {
		known[v.Name] = true
	}
	forEachCase(t, func(t *testing.T, r *rendered) {
		cm := one[corev1.ConfigMap](t, r, releaseName)
		for k := range cm.Data {
			if !known[k] && !strings.HasPrefix(k, "OTEL_") {
				t.Errorf("ConfigMap key %s is not in libs/config.Variables", k)
			}
			if k == "SHARE_DATABASE_URL" || k == "SHARE_REDIS_URL" || strings.HasPrefix(k, "AWS_") {
				t.Errorf("ConfigMap holds %s: it belongs in a Secret", k)
			}
		}
		if r.str("otel.endpoint") != "" && cm.Data["OTEL_EXPORTER_OTLP_ENDPOINT"] != r.str("otel.endpoint") {
			t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT = %q, want otel.endpoint", cm.Data["OTEL_EXPORTER_OTLP_ENDPOINT"])
		}
	})
}

func TestReaperCronJobRunsTheReaper(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		cj := one[batchv1.CronJob](t, r, fullname("reaper"))
		if cj.Spec.Schedule != r.str("reaper.schedule") || cj.Spec.Schedule == "" {
			t.Errorf("schedule %q, want reaper.schedule %q", cj.Spec.Schedule, r.str("reaper.schedule"))
		}
		if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
			t.Errorf("concurrencyPolicy %q", cj.Spec.ConcurrencyPolicy)
		}
		js := cj.Spec.JobTemplate.Spec
		if js.BackoffLimit == nil || js.ActiveDeadlineSeconds == nil || *js.ActiveDeadlineSeconds <= 0 {
			t.Errorf("job: backoffLimit %v, activeDeadlineSeconds %v: both must be set", js.BackoffLimit, js.ActiveDeadlineSeconds)
		}
		pod := js.Template.Spec
		if pod.RestartPolicy != corev1.RestartPolicyNever && pod.RestartPolicy != corev1.RestartPolicyOnFailure {
			t.Errorf("restartPolicy %q", pod.RestartPolicy)
		}
		checkPodHardening(t, cj.Name, pod)
		if len(pod.Containers) != 1 {
			t.Fatalf("%d containers", len(pod.Containers))
		}
		c := pod.Containers[0]
		// `sharenote reap` on the one image, then reaper.args.
		checkImage(t, r, c.Image)
		want := []string{"reap"}
		if extra, ok := r.val("reaper.args").([]any); ok {
			for _, a := range extra {
				want = append(want, fmt.Sprint(a))
			}
		}
		if len(c.Command) != 0 || !slices.Equal(c.Args, want) {
			t.Errorf("command %v args %v, want the image's entrypoint with args %v (`sharenote reap`)", c.Command, c.Args, want)
		}
		checkResources(t, cj.Name, c.Resources)
		checkConfigWiring(t, r, cj.Name, c, true)
		checkRecommendedLabels(t, cj.Name+" pod template", js.Template.Labels)
	})
}

func TestMigrationIsAPreInstallAndPreUpgradeHook(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		var job *batchv1.Job
		for _, o := range r.Objects {
			if j, ok := o.Typed.(*batchv1.Job); ok {
				if !o.Hook {
					t.Errorf("Job %s is not a hook", o.Name)
				}
				if o.Name == fullname("migrate") {
					job = j
				}
			}
		}
		if job == nil {
			t.Fatal("no migration Job")
		}
		a := job.Annotations
		if a["helm.sh/hook"] != "pre-install,pre-upgrade" {
			t.Errorf("helm.sh/hook = %q", a["helm.sh/hook"])
		}
		policies := strings.Split(a["helm.sh/hook-delete-policy"], ",")
		for _, p := range []string{"before-hook-creation", "hook-succeeded"} {
			if !slices.Contains(policies, p) {
				t.Errorf("hook-delete-policy %q lacks %s", a["helm.sh/hook-delete-policy"], p)
			}
		}
		if job.Spec.BackoffLimit == nil || job.Spec.ActiveDeadlineSeconds == nil {
			t.Error("backoffLimit and activeDeadlineSeconds must be set")
		}
		pod := job.Spec.Template.Spec
		if pod.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("restartPolicy %q", pod.RestartPolicy)
		}
		checkPodHardening(t, job.Name, pod)
		c := pod.Containers[0]
		// `sharenote migrate`: the one image, whose entrypoint is the sharenote binary.
		checkImage(t, r, c.Image)
		if len(c.Command) != 0 || !slices.Equal(c.Args, []string{"migrate"}) {
			t.Errorf("command %v args %v, want `sharenote migrate`", c.Command, c.Args)
		}
		checkResources(t, job.Name, c.Resources)

		// It copies the image bytes older releases kept in Postgres into the object store.
		checkObjectStoreEnv(t, r, job.Name, c)

		// Hooks run before the release's ordinary objects exist: the Job may only read a
		// Secret that exists already (an existingSecret of the values) or is itself an
		// earlier hook.
		if envSecretRef(c, "SHARE_DATABASE_URL") == nil {
			t.Fatal("SHARE_DATABASE_URL does not come from a Secret")
		}
		existing := map[string]bool{r.str("database.existingSecret"): true}
		if r.str("objectStore.type") == "external" {
			existing[r.str("objectStore.external.existingSecret")] = true
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				continue
			}
			ref := e.ValueFrom.SecretKeyRef
			if ref.Name != "" && existing[ref.Name] {
				continue
			}
			var secret *object
			for i, o := range r.Objects {
				if o.Kind == "Secret" && o.Name == ref.Name {
					secret = &r.Objects[i]
				}
			}
			if secret == nil || !secret.Hook {
				t.Errorf("the migration reads %s from Secret %s, which is not a hook created before it", e.Name, ref.Name)
				continue
			}
			sa := secret.Meta.Annotations
			if sa["helm.sh/hook"] != a["helm.sh/hook"] || weight(t, sa) >= weight(t, a) {
				t.Errorf("hook Secret %s: hook %q weight %q, Job: hook %q weight %q", ref.Name,
					sa["helm.sh/hook"], sa["helm.sh/hook-weight"], a["helm.sh/hook"], a["helm.sh/hook-weight"])
			}
			if _, ok := secret.Typed.(*corev1.Secret).Data[ref.Key]; !ok {
				t.Errorf("hook Secret %s lacks key %s", ref.Name, ref.Key)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				t.Errorf("the migration reads ConfigMap key %s, which does not exist yet on first install", e.Name)
			}
		}
		if len(c.EnvFrom) > 0 {
			t.Errorf("the migration uses envFrom %v, which does not exist yet on first install", c.EnvFrom)
		}
	})
}

func weight(t *testing.T, a map[string]string) int {
	t.Helper()
	var w int
	if s := a["helm.sh/hook-weight"]; s != "" {
		if _, err := fmt.Sscan(s, &w); err != nil {
			t.Errorf("hook-weight %q: %v", s, err)
		}
	}
	return w
}

func TestServiceMonitorIsOptionalAndScrapesTheAdminPort(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		sms := all[serviceMonitor](r)
		if r.val("serviceMonitor.enabled") != true {
			if len(sms) > 0 {
				t.Fatal("ServiceMonitor rendered while disabled")
			}
			return
		}
		if len(sms) != 1 {
			t.Fatalf("%d ServiceMonitors, want 1", len(sms))
		}
		sm := sms[0]
		if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "admin" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("endpoints %+v, want port admin path /metrics", sm.Spec.Endpoints)
		}
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range r.workloads() {
			svc := one[corev1.Service](t, r, fullname(w))
			if !sel.Matches(labels.Set(svc.Labels)) {
				t.Errorf("ServiceMonitor does not select Service %s", svc.Name)
			}
			if p := servicePort(svc, "admin"); p == nil || p.TargetPort.String() != "admin" {
				t.Errorf("Service %s has no admin port", svc.Name)
			}
		}
		for k, v := range r.val("serviceMonitor.labels").(map[string]any) {
			if sm.Labels[k] != v {
				t.Errorf("ServiceMonitor label %s=%q, want %q", k, sm.Labels[k], v)
			}
		}
	})
}

func TestNotesRender(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		if !strings.Contains(r.Notes, "Public URL: http") {
			t.Errorf("NOTES.txt:\n%s", r.Notes)
		}
	})
}

// trustedProxiesWarning opens the NOTES.txt paragraph shown when trustedProxies is empty.
const trustedProxiesWarning = "WARNING: trustedProxies is empty"

// TestTrustedProxiesReachTheConfigMapAndEmptyWarns proves the rate limits' client IP is set
// up as the values say: the list becomes SHARE_TRUSTED_PROXIES, the defaults trust nobody,
// and an empty list is announced, since then every client shares the ingress's limit.
func TestTrustedProxiesReachTheConfigMapAndEmptyWarns(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		var proxies []string
		if l, ok := r.val("trustedProxies").([]any); ok {
			for _, p := range l {
				proxies = append(proxies, fmt.Sprint(p))
			}
		}
		cm := one[corev1.ConfigMap](t, r, releaseName)
		if got, want := cm.Data["SHARE_TRUSTED_PROXIES"], strings.Join(proxies, ","); got != want {
			t.Errorf("SHARE_TRUSTED_PROXIES = %q, want %q", got, want)
		}
		warned := strings.Contains(r.Notes, trustedProxiesWarning)
		switch {
		case len(proxies) == 0 && !warned:
			t.Errorf("trustedProxies is empty but NOTES.txt does not warn:\n%s", r.Notes)
		case len(proxies) > 0 && warned:
			t.Errorf("trustedProxies is %v but NOTES.txt warns it is empty", proxies)
		}
		if warned {
			// The warning must say what goes wrong and what to set, over several lines.
			warning := r.Notes[strings.Index(r.Notes, trustedProxiesWarning):]
			for _, want := range []string{"one limit", "pod CIDR", "trustedProxies="} {
				if !strings.Contains(warning, want) {
					t.Errorf("the NOTES.txt warning does not mention %q:\n%s", want, warning)
				}
			}
			if strings.Count(warning, "\n") < 3 {
				t.Errorf("the NOTES.txt warning is not a paragraph:\n%s", warning)
			}
		}
		switch r.Case.file {
		case "values.yaml":
			// Any address in a default range could pick its own client IP.
			if len(proxies) != 0 {
				t.Errorf("the defaults trust %v; they must trust nobody", proxies)
			}
		case "values-prod.yaml":
			want, _ := readValues(t, r.Case.file)["trustedProxies"].([]any)
			if len(want) == 0 || len(proxies) != len(want) {
				t.Errorf("values-prod.yaml sets trustedProxies %v, rendered %v", want, proxies)
			}
		}
	})
}

func TestInvalidCombinationsFailWithOneLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]any
		want string
	}{
		{"both a Secret and a URL", map[string]any{"database.url": "postgres://x@y/z"}, "not both"},
		{"no database", map[string]any{"database.existingSecret": ""}, "database: set existingSecret"},
		{"split mode without Redis", map[string]any{"redis.existingSecret": ""}, "redis:"},
		{"all-in-one with two replicas and no Redis", map[string]any{"mode": "allInOne", "allInOne.replicas": 2, "redis.existingSecret": ""}, "redis:"},
		{"TLS without a host", map[string]any{"ingress.host": ""}, "needs ingress.host"},
		{"a MinIO root user without its password", map[string]any{"objectStore.type": "bundled", "objectStore.bundled.rootUser": "dev-user"}, "objectStore.bundled: set rootUser and rootPassword"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := map[string]any{}
			for k, v := range tc.set {
				setPath(vals, k, v)
			}
			_, err := renderErr(t, vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("all-in-one with one replica may do without Redis", func(t *testing.T) {
		vals := map[string]any{}
		setPath(vals, "mode", "allInOne")
		setPath(vals, "redis.existingSecret", "")
		r, err := renderErr(t, vals)
		if err != nil {
			t.Fatal(err)
		}
		c := one[appsv1.Deployment](t, r, fullname("all-in-one")).Spec.Template.Spec.Containers[0]
		if envSecretRef(c, "SHARE_REDIS_URL") != nil {
			t.Error("SHARE_REDIS_URL set though Redis is not configured")
		}
	})
}
