package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/blob/blobstore"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

const (
	// The components of the bundled MinIO's pods: the server and the bucket hook Job.
	minioComponent       = "minio"
	minioBucketComponent = "minio-bucket"
	minioPort            = 9000
)

// awsKeys are the variables that carry the object store's credentials.
var awsKeys = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}

// sampleAWSKeys stand in for the keys of an existing Secret the values name.
var sampleAWSKeys = map[string]string{
	"AWS_ACCESS_KEY_ID":     "AKIAIOSFODNN7EXAMPLE",
	"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
}

// objectStorePod tells the bundled MinIO's pods (which run MinIO's images) by their labels.
func objectStorePod(l map[string]string) bool {
	c := l["app.kubernetes.io/component"]
	return c == minioComponent || c == minioBucketComponent
}

func (r *rendered) bundled() bool { return r.str("objectStore.type") == "bundled" }

// objectStoreSecret is the Secret the keys must come from: the bundled MinIO's, or the
// existing one the values name ("" when the AWS credential chain finds them).
func (r *rendered) objectStoreSecret() string {
	if r.bundled() {
		return fullname(minioComponent)
	}
	return r.str("objectStore.external.existingSecret")
}

// checkObjectStoreEnv asserts that a sharenote container finds the configured object
// store: SHARE_BLOB_URL naming the bundled MinIO's Service and bucket, or exactly
// objectStore.external.url, in a form the service's own parser accepts; and the keys from
// the configured Secret, or none at all for the AWS credential chain (IRSA).
func checkObjectStoreEnv(t *testing.T, r *rendered, what string, c corev1.Container) {
	t.Helper()
	raw := envValue(c, "SHARE_BLOB_URL")
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" {
		t.Errorf("%s: SHARE_BLOB_URL = %q, want s3://<bucket>?…", what, raw)
		return
	}
	if r.bundled() {
		svc := one[corev1.Service](t, r, fullname(minioComponent))
		q := u.Query()
		if u.Host != r.str("objectStore.bundled.bucket") || q.Get("endpoint") != fmt.Sprintf("%s:%d", svc.Name, minioPort) ||
			q.Get("tls") != "false" || q.Get("region") == "" {
			t.Errorf("%s: SHARE_BLOB_URL = %q, want bucket %s at the Service %s:%d, tls=false, a region", what, raw,
				r.str("objectStore.bundled.bucket"), svc.Name, minioPort)
		}
	} else if want := r.str("objectStore.external.url"); raw != want {
		t.Errorf("%s: SHARE_BLOB_URL = %q, want objectStore.external.url %q", what, raw, want)
	}
	// Opening an S3 store sends no request: this is the parser every process runs at start.
	if _, err := blobstore.Open(context.Background(), raw, func(k string) string { return sampleAWSKeys[k] }); err != nil {
		t.Errorf("%s: the service refuses SHARE_BLOB_URL: %v", what, err)
	}
	secret := r.objectStoreSecret()
	for _, k := range awsKeys {
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == k })
		switch {
		case secret == "" && i >= 0:
			t.Errorf("%s: %s is set, though no Secret is configured (the AWS credential chain finds the keys)", what, k)
		case secret == "":
		case i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.SecretKeyRef == nil:
			t.Errorf("%s: %s does not come from a Secret", what, k)
		case c.Env[i].ValueFrom.SecretKeyRef.Name != secret || c.Env[i].ValueFrom.SecretKeyRef.Key != k:
			ref := c.Env[i].ValueFrom.SecretKeyRef
			t.Errorf("%s: %s from %s/%s, want %s/%s", what, k, ref.Name, ref.Key, secret, k)
		}
	}
}

// TestBundledMinIO checks the development object store: with objectStore.type bundled,
// one hardened, probed MinIO on a volume behind a Service, its credentials in a Secret
// that exists before the migration hook, and a hook Job that creates the bucket; with
// external, nothing of it.
func TestBundledMinIO(t *testing.T) {
	forEachCase(t, func(t *testing.T, r *rendered) {
		if !r.bundled() {
			for _, o := range r.Objects {
				if objectStorePod(o.Meta.Labels) {
					t.Errorf("%s %s rendered though the object store is external", o.Kind, o.Name)
				}
			}
			return
		}
		name := fullname(minioComponent)
		b := func(path string) string { return r.str("objectStore.bundled." + path) }

		// The credentials: a pre-install hook before the migration (which may copy older
		// image bytes into MinIO), with both keys, the values' when they give them.
		var secret object
		for _, o := range r.Objects {
			if o.Kind == "Secret" && o.Name == name {
				secret = o
			}
		}
		if secret.Typed == nil {
			t.Fatalf("no Secret %s", name)
		}
		migrate := one[batchv1.Job](t, r, fullname("migrate"))
		if !secret.Hook || secret.Meta.Annotations["helm.sh/hook"] != migrate.Annotations["helm.sh/hook"] ||
			weight(t, secret.Meta.Annotations) >= weight(t, migrate.Annotations) {
			t.Errorf("Secret %s: hook %v %q weight %q; it must be created before the migration (%q weight %q)", name, secret.Hook,
				secret.Meta.Annotations["helm.sh/hook"], secret.Meta.Annotations["helm.sh/hook-weight"],
				migrate.Annotations["helm.sh/hook"], migrate.Annotations["helm.sh/hook-weight"])
		}
		if p := secret.Meta.Annotations["helm.sh/hook-delete-policy"]; strings.Contains(p, "hook-succeeded") {
			t.Errorf("Secret %s: hook-delete-policy %q deletes what MinIO and the targets read", name, p)
		}
		data := secret.Typed.(*corev1.Secret).Data
		user, password := string(data["AWS_ACCESS_KEY_ID"]), string(data["AWS_SECRET_ACCESS_KEY"])
		if len(user) < 3 || len(password) < 8 {
			t.Errorf("Secret %s: user %d and password %d characters; MinIO needs at least 3 and 8", name, len(user), len(password))
		}
		if b("rootUser") != "" && (user != b("rootUser") || password != b("rootPassword")) {
			t.Errorf("Secret %s does not hold rootUser and rootPassword", name)
		}

		// The server: one replica, hardened like every pod of the release.
		ss := one[appsv1.StatefulSet](t, r, name)
		if ss.Spec.Replicas == nil || *ss.Spec.Replicas != 1 {
			t.Errorf("%s: replicas %v, want 1 (one process on one volume)", name, ss.Spec.Replicas)
		}
		podLabels := labels.Set(ss.Spec.Template.Labels)
		if sel := labels.SelectorFromSet(ss.Spec.Selector.MatchLabels); !sel.Matches(podLabels) || podLabels["app.kubernetes.io/component"] != minioComponent {
			t.Errorf("%s: selector %v, pod labels %v", name, ss.Spec.Selector, podLabels)
		}
		pod := ss.Spec.Template.Spec
		checkPodHardening(t, name, pod)
		if len(pod.Containers) != 1 {
			t.Fatalf("%s: %d containers, want 1", name, len(pod.Containers))
		}
		c := pod.Containers[0]
		if want := thirdPartyImage(r, "objectStore.bundled.image"); c.Image != want {
			t.Errorf("%s: image %q, want %q", name, c.Image, want)
		}
		if p := containerPort(c, "s3"); p != minioPort {
			t.Errorf("%s: port s3 = %d, want %d", name, p, minioPort)
		}
		if i := slices.Index(c.Args, "--address"); i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != fmt.Sprintf(":%d", minioPort) {
			t.Errorf("%s: args %v, want MinIO listening on :%d (--address)", name, c.Args, minioPort)
		}
		for which, probe := range map[string]*corev1.Probe{"startupProbe": c.StartupProbe, "livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe} {
			want := "/minio/health/live"
			if which == "readinessProbe" {
				want = "/minio/health/ready"
			}
			if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || containerPort(c, probe.HTTPGet.Port.StrVal) != minioPort {
				t.Errorf("%s: %s %+v, want GET %s on port %d", name, which, probe, want, minioPort)
			}
		}
		for env, key := range map[string]string{"MINIO_ROOT_USER": "AWS_ACCESS_KEY_ID", "MINIO_ROOT_PASSWORD": "AWS_SECRET_ACCESS_KEY"} {
			if ref := envSecretRef(c, env); ref == nil || ref.Name != name || ref.Key != key {
				t.Errorf("%s: %s from %+v, want %s/%s", name, env, ref, name, key)
			}
		}
		checkResources(t, name, c.Resources)

		// Its data: the directory it serves, on the claim (or an emptyDir) of the values' size.
		dataDir := ""
		if i := slices.Index(c.Args, "server"); i >= 0 && i+1 < len(c.Args) {
			dataDir = c.Args[i+1]
		}
		mount := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == dataDir })
		if mount < 0 {
			t.Fatalf("%s: args %v: the data directory %q is no volume", name, c.Args, dataDir)
		}
		size := resource.MustParse(b("persistence.size"))
		volume := c.VolumeMounts[mount].Name
		if r.val("objectStore.bundled.persistence.enabled") == true {
			claims := ss.Spec.VolumeClaimTemplates
			if len(claims) != 1 || claims[0].Name != volume || !claims[0].Spec.Resources.Requests.Storage().Equal(size) {
				t.Errorf("%s: volumeClaimTemplates %+v, want %s of %s", name, claims, volume, size.String())
			} else if sc := claims[0].Spec.StorageClassName; (sc == nil) != (b("persistence.storageClassName") == "") ||
				(sc != nil && *sc != b("persistence.storageClassName")) {
				t.Errorf("%s: storageClassName %v, want persistence.storageClassName %q", name, sc, b("persistence.storageClassName"))
			}
		} else {
			i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == volume })
			if len(ss.Spec.VolumeClaimTemplates) != 0 || i < 0 || pod.Volumes[i].EmptyDir == nil ||
				pod.Volumes[i].EmptyDir.SizeLimit == nil || !pod.Volumes[i].EmptyDir.SizeLimit.Equal(size) {
				t.Errorf("%s: without persistence, %s must be an emptyDir of %s", name, volume, size.String())
			}
		}

		// The Service the targets' SHARE_BLOB_URL names (checkObjectStoreEnv).
		svc := one[corev1.Service](t, r, name)
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) || len(svc.Spec.Selector) == 0 {
			t.Errorf("Service %s does not select the MinIO pods", name)
		}
		if p := servicePort(svc, "s3"); p == nil || p.Port != minioPort || p.TargetPort.String() != "s3" {
			t.Errorf("Service %s: port s3 %+v, want %d → s3", name, p, minioPort)
		}

		// The bucket: mc, after install and upgrade, with the same Secret.
		var job *batchv1.Job
		for _, o := range r.Objects {
			if j, ok := o.Typed.(*batchv1.Job); ok && objectStorePod(j.Spec.Template.Labels) {
				job = j
				hooks := strings.Split(o.Meta.Annotations["helm.sh/hook"], ",")
				if !o.Hook || !slices.Contains(hooks, "post-install") || !slices.Contains(hooks, "post-upgrade") {
					t.Errorf("Job %s: hook %q, want post-install and post-upgrade (MinIO exists then)", o.Name, hooks)
				}
			}
		}
		if job == nil {
			t.Fatal("no Job creates the bucket")
		}
		jpod := job.Spec.Template.Spec
		checkPodHardening(t, job.Name, jpod)
		if jpod.RestartPolicy != corev1.RestartPolicyNever || job.Spec.BackoffLimit == nil || job.Spec.ActiveDeadlineSeconds == nil {
			t.Errorf("Job %s: restartPolicy %q, backoffLimit %v, activeDeadlineSeconds %v", job.Name, jpod.RestartPolicy,
				job.Spec.BackoffLimit, job.Spec.ActiveDeadlineSeconds)
		}
		mc := jpod.Containers[0]
		if want := thirdPartyImage(r, "objectStore.bundled.bucketJob.image"); mc.Image != want {
			t.Errorf("Job %s: image %q, want %q", job.Name, mc.Image, want)
		}
		script := strings.Join(append(slices.Clone(mc.Command), mc.Args...), " ")
		for _, want := range []string{"mc ", "alias set", "mb --ignore-existing", "$BUCKET", "$MINIO_ENDPOINT"} {
			if !strings.Contains(script, want) {
				t.Errorf("Job %s: %q lacks %q", job.Name, script, want)
			}
		}
		if got := envValue(mc, "BUCKET"); got != b("bucket") {
			t.Errorf("Job %s: BUCKET = %q, want %q", job.Name, got, b("bucket"))
		}
		if got, want := envValue(mc, "MINIO_ENDPOINT"), fmt.Sprintf("http://%s:%d", svc.Name, minioPort); got != want {
			t.Errorf("Job %s: MINIO_ENDPOINT = %q, want %q", job.Name, got, want)
		}
		for _, k := range awsKeys {
			if ref := envSecretRef(mc, k); ref == nil || ref.Name != name || ref.Key != k {
				t.Errorf("Job %s: %s from %+v, want %s/%s", job.Name, k, ref, name, k)
			}
		}
		checkResources(t, job.Name, mc.Resources)
	})
}

// thirdPartyImage is the reference of an image of the values: repository:tag[@digest].
func thirdPartyImage(r *rendered, path string) string {
	ref := r.str(path+".repository") + ":" + r.str(path+".tag")
	if d := r.str(path + ".digest"); d != "" {
		ref += "@" + d
	}
	return ref
}

// TestProductionRefusesTheBundledMinIO: a production install with the development MinIO
// fails to render, saying why and what to set; the schema lets it through to say so.
func TestProductionRefusesTheBundledMinIO(t *testing.T) {
	c := loadChart(t)
	vals := readValues(t, "values-prod.yaml")
	setPath(vals, "objectStore.type", "bundled")
	coalesced, err := chartutil.CoalesceValues(c, vals)
	if err != nil {
		t.Fatal(err)
	}
	if err := chartutil.ValidateAgainstSchema(c, coalesced); err != nil {
		t.Fatalf("the schema refuses it first, without the reason: %v", err)
	}
	_, err = renderErr(t, vals)
	if err == nil || !strings.Contains(err.Error(), "production: true needs objectStore.type: external") {
		t.Fatalf("render = %v, want a failure naming the production rule", err)
	}
	setPath(vals, "production", false)
	if _, err := renderErr(t, vals); err != nil {
		t.Fatalf("without production: true: %v", err)
	}
}

// TestObjectStoreCredentialsAreNeverPlain proves the keys travel only through the Secret:
// every credential variable of every container is a secretKeyRef, and the values of the
// keys appear in no other object (env values, args, annotations, ConfigMap) nor in
// NOTES.txt, whether they were given or generated.
func TestObjectStoreCredentialsAreNeverPlain(t *testing.T) {
	credentialVars := append([]string{"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"}, awsKeys...)
	// Where to look for the keys' values: credentials given as values, and generated ones
	// (values-dev.yaml's dev user is the chart's name, found everywhere).
	searched := []renderCase{
		{name: "given", file: "values-dev.yaml", set: map[string]any{
			"objectStore.bundled.rootUser": "ak-7f3c9e21", "objectStore.bundled.rootPassword": "sk-0b8d4a6e5c2f1978"}},
		{name: "generated", file: "values.yaml", set: map[string]any{"objectStore.type": "bundled"}},
	}
	for _, rc := range append(slices.Clone(renderCases), searched...) {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			r := render(t, rc)
			for _, o := range r.Objects {
				var pod *corev1.PodSpec
				switch w := o.Typed.(type) {
				case *appsv1.Deployment:
					pod = &w.Spec.Template.Spec
				case *appsv1.StatefulSet:
					pod = &w.Spec.Template.Spec
				case *batchv1.Job:
					pod = &w.Spec.Template.Spec
				case *batchv1.CronJob:
					pod = &w.Spec.JobTemplate.Spec.Template.Spec
				default:
					continue
				}
				for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
					for _, e := range c.Env {
						if slices.Contains(credentialVars, e.Name) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
							t.Errorf("%s %s/%s: %s is not a secretKeyRef", o.Kind, o.Name, c.Name, e.Name)
						}
					}
					for _, ef := range c.EnvFrom {
						if ef.SecretRef != nil {
							t.Errorf("%s %s/%s: envFrom a Secret; name each key instead", o.Kind, o.Name, c.Name)
						}
					}
				}
			}
			if !slices.ContainsFunc(searched, func(c renderCase) bool { return c.name == rc.name }) {
				return
			}
			s := one[corev1.Secret](t, r, fullname(minioComponent))
			for _, k := range awsKeys {
				v := string(s.Data[k])
				if len(v) < 8 {
					t.Fatalf("%s = %q: too short to search for", k, v)
				}
				for _, o := range r.Objects {
					if o.Kind == "Secret" && o.Name == s.Name {
						continue
					}
					j, err := json.Marshal(o.Typed)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(string(j), v) || strings.Contains(string(j), base64.StdEncoding.EncodeToString([]byte(v))) {
						t.Errorf("%s %s holds the value of %s", o.Kind, o.Name, k)
					}
				}
				if strings.Contains(r.Notes, v) {
					t.Errorf("NOTES.txt shows the value of %s", k)
				}
			}
		})
	}
}

// TestMinIOCredentialsAreGeneratedOnceAndKept: without credentials in the values, an
// install generates them (a fresh pair each time) and an upgrade reads back the pair its
// install stored, so MinIO and its data keep their keys; values override both.
func TestMinIOCredentialsAreGeneratedOnceAndKept(t *testing.T) {
	vals := map[string]any{}
	setPath(vals, "objectStore.type", "bundled")
	secretData := func(r *rendered) map[string][]byte { return one[corev1.Secret](t, r, fullname(minioComponent)).Data }

	first, second := secretData(mustRender(t, vals)), secretData(mustRender(t, vals))
	for _, k := range awsKeys {
		if len(first[k]) == 0 || string(first[k]) == string(second[k]) {
			t.Errorf("%s: %q then %q: want a fresh random value per install", k, first[k], second[k])
		}
	}

	stored := map[string]string{"AWS_ACCESS_KEY_ID": "kept-user", "AWS_SECRET_ACCESS_KEY": "kept-password-0123"}
	cluster := secretObject(fullname(minioComponent), stored)
	kept := secretData(renderInCluster(t, vals, cluster))
	for k, v := range stored {
		if string(kept[k]) != v {
			t.Errorf("upgrade: %s = %q, want the stored %q", k, kept[k], v)
		}
	}

	setPath(vals, "objectStore.bundled.rootUser", "given-user")
	setPath(vals, "objectStore.bundled.rootPassword", "given-password-4567")
	given := secretData(renderInCluster(t, vals, cluster))
	if string(given["AWS_ACCESS_KEY_ID"]) != "given-user" || string(given["AWS_SECRET_ACCESS_KEY"]) != "given-password-4567" {
		t.Errorf("values rootUser/rootPassword do not override the stored keys: %q", given)
	}
}

func mustRender(t *testing.T, vals map[string]any) *rendered {
	t.Helper()
	r, err := renderErr(t, vals)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// secretObject is a Secret of the release's namespace, as the API server returns it.
func secretObject(name string, data map[string]string) *unstructured.Unstructured {
	encoded := map[string]any{}
	for k, v := range data {
		encoded[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"data":     encoded,
	}}
}

// fakeCluster answers the templates' lookup calls from a fixed set of Secrets.
type fakeCluster struct{ objects []runtime.Object }

func (f fakeCluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion != "v1" || kind != "Secret" {
		return nil, false, fmt.Errorf("the chart looks up %s %s; the test knows only Secrets", apiVersion, kind)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	return dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), f.objects...).Resource(gvr), true, nil
}

// renderInCluster renders the chart as an upgrade whose lookups see the given objects, and
// strictly decodes what it renders.
func renderInCluster(t *testing.T, vals map[string]any, objects ...runtime.Object) *rendered {
	t.Helper()
	c := loadChart(t)
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	caps := &chartutil.Capabilities{KubeVersion: *kv, APIVersions: chartutil.DefaultVersionSet, HelmVersion: chartutil.DefaultCapabilities.HelmVersion}
	top, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, IsUpgrade: true}, caps)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.RenderWithClientProvider(c, top, fakeCluster{objects})
	if err != nil {
		t.Fatal(err)
	}
	r := &rendered{}
	for path, text := range files {
		if !strings.HasSuffix(path, ".yaml") {
			continue
		}
		for _, doc := range splitDocs(text) {
			o, err := decodeStrict(doc)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			r.Objects = append(r.Objects, o)
		}
	}
	return r
}
