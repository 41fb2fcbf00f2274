{{/*
The chart's name, overridable so that two charts' objects never collide.
*/}}
{{- define "sharenote.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of every object's name: the release name, unless it already contains the
chart's name. Kept short so that "<fullname>-og-renderer" stays within 63 characters.
*/}}
{{- define "sharenote.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Labels that select one component's pods. Call with (dict "root" $ "component" NAME).
*/}}
{{- define "sharenote.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sharenote.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
Labels that select every pod of the release (the NetworkPolicies' subject).
*/}}
{{- define "sharenote.releaseSelectorLabels" -}}
app.kubernetes.io/name: {{ include "sharenote.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The Kubernetes recommended labels of every object. Call with (dict "root" $ "component" NAME);
component may be empty for release-wide objects.
*/}}
{{- define "sharenote.labels" -}}
app.kubernetes.io/name: {{ include "sharenote.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/part-of: sharenote
app.kubernetes.io/version: {{ include "sharenote.tag" .root | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/*
The image's tag: image.tag, else the chart's appVersion.
*/}}
{{- define "sharenote.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{/*
The one image every pod runs, <repository>:<tag> (services/Dockerfile, whose entrypoint is
the sharenote binary): the Deployments pick their target with `serve --target`, the
migration Job runs `migrate` and the reaper CronJob `reap`.
*/}}
{{- define "sharenote.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "sharenote.tag" .) -}}
{{- end -}}

{{/*
SHARE_PUBLIC_URL: publicURL, or derived from the Ingress host.
*/}}
{{- define "sharenote.publicURL" -}}
{{- if .Values.publicURL -}}
{{- .Values.publicURL | trimSuffix "/" -}}
{{- else if and .Values.ingress.enabled .Values.ingress.host -}}
{{- printf "%s://%s" (ternary "https" "http" .Values.ingress.tls.enabled) .Values.ingress.host -}}
{{- else -}}
{{- fail "publicURL is required when ingress.enabled is false or ingress.host is empty" -}}
{{- end -}}
{{- end -}}

{{/*
The serving workloads as a YAML map, name → settings: one per target in split mode (the
generated list of _routes.tpl, each merged with its optional entry of services) or the one
all-in-one process, each merged over serviceDefaults. Every per-workload template (Deployment,
Service, HPA, PDB) ranges over this one map, so no template is written per target. Each
entry also carries "args": the one image's `serve --target <target>`, or `--target all`.
*/}}
{{- define "sharenote.workloads" -}}
{{- $out := dict -}}
{{- if eq .Values.mode "allInOne" -}}
{{- $w := mergeOverwrite (deepCopy .Values.serviceDefaults) (deepCopy (default dict .Values.allInOne)) -}}
{{- $_ := set $w "args" (list "serve" "--target" "all") -}}
{{- $_ = set $out "all-in-one" $w -}}
{{- else -}}
{{- $services := default dict .Values.services -}}
{{- range $name := include "sharenote.targets" . | fromYamlArray -}}
{{- $w := mergeOverwrite (deepCopy $.Values.serviceDefaults) (deepCopy (default dict (index $services $name))) -}}
{{- $_ := set $w "args" (list "serve" "--target" $name) -}}
{{- $_ = set $out $name $w -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
What a workload needs, as YAML {database, redis, objectStore, edge}: its target's entry of
the generated sharenote.needs, or, for the all-in-one, what any target needs. Call with
(dict "root" $ "name" WORKLOAD).
*/}}
{{- define "sharenote.workloadNeeds" -}}
{{- $all := include "sharenote.needs" .root | fromYaml -}}
{{- if hasKey $all .name -}}
{{- toYaml (index $all .name) -}}
{{- else -}}
{{- $u := dict "database" "read-only" "redis" false "objectStore" false "edge" false -}}
{{- range $all -}}
{{- if eq .database "read-write" }}{{ $_ := set $u "database" "read-write" }}{{ end -}}
{{- if .redis }}{{ $_ := set $u "redis" true }}{{ end -}}
{{- if .objectStore }}{{ $_ := set $u "objectStore" true }}{{ end -}}
{{- if .edge }}{{ $_ := set $u "edge" true }}{{ end -}}
{{- end -}}
{{- toYaml $u -}}
{{- end -}}
{{- end -}}

{{/*
The ports a workload listens on, as YAML {http, admin}: 8080 and 9090 in a pod network
namespace of its own, or its entry of hostNetwork.ports on the node's network. Call with
(dict "root" $ "name" WORKLOAD).
*/}}
{{- define "sharenote.ports" -}}
{{- if .root.Values.hostNetwork.enabled -}}
{{- $p := index .root.Values.hostNetwork.ports .name -}}
http: {{ int $p.http }}
admin: {{ int $p.admin }}
{{- else -}}
http: 8080
admin: 9090
{{- end -}}
{{- end -}}

{{/*
The pod settings of host networking (hostNetwork.enabled): the node's network namespace,
and cluster DNS still first.
*/}}
{{- define "sharenote.hostNetwork" -}}
{{- if .Values.hostNetwork.enabled -}}
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
{{- end -}}
{{- end -}}

{{/*
The Secret and key holding one connection URL. Call with (dict "root" $ "which" "database"|"redis").
Prints nothing when the URL is not configured (Redis of a single all-in-one replica).
*/}}
{{- define "sharenote.secretRef" -}}
{{- $v := index .root.Values .which -}}
{{- if $v.existingSecret -}}
name: {{ $v.existingSecret }}
key: {{ $v.existingSecretKey }}
{{- else if $v.url -}}
name: {{ include "sharenote.fullname" .root }}
key: {{ .which }}-url
{{- end -}}
{{- end -}}

{{/*
The Secret and key of a workload's SHARE_DATABASE_URL. Call with (dict "root" $ "name"
WORKLOAD). With database.perWorkloadCredentials, the workload's own: its entry of
database.workloads (existingSecret, or url in a Secret the chart makes), else the Secret
<database.existingSecret>-<workload>; without, the owner's, shared by every pod.
*/}}
{{- define "sharenote.databaseRef" -}}
{{- $db := .root.Values.database -}}
{{- $w := get (default dict $db.workloads) .name | default dict -}}
{{- if not $db.perWorkloadCredentials -}}
{{- include "sharenote.secretRef" (dict "root" .root "which" "database") -}}
{{- else if $w.existingSecret -}}
name: {{ $w.existingSecret }}
key: {{ $db.existingSecretKey }}
{{- else if $w.url -}}
name: {{ include "sharenote.fullname" .root }}-database-{{ .name }}
key: url
{{- else -}}
name: {{ $db.existingSecret }}-{{ .name }}
key: {{ $db.existingSecretKey }}
{{- end -}}
{{- end -}}

{{/*
The database role a workload logs in as with database.perWorkloadCredentials: its entry's
role, else sharenote_<workload> ("-" becomes "_"). Call with (dict "root" $ "name" WORKLOAD).
*/}}
{{- define "sharenote.databaseRole" -}}
{{- $w := get (default dict .root.Values.database.workloads) .name | default dict -}}
{{- default (printf "sharenote_%s" (.name | replace "-" "_")) $w.role -}}
{{- end -}}

{{/*
SHARE_DATABASE_ROLES of the migration: every target with the role of the workload that
serves it (the all-in-one's for all of them in allInOne mode), so that `sharenote migrate`
grants each role what its targets need.
*/}}
{{- define "sharenote.databaseRoles" -}}
{{- $out := list -}}
{{- range $t := include "sharenote.targets" . | fromYamlArray -}}
{{- $name := ternary "all-in-one" $t (eq $.Values.mode "allInOne") -}}
{{- $out = append $out (printf "%s=%s" $t (include "sharenote.databaseRole" (dict "root" $ "name" $name))) -}}
{{- end -}}
{{- join "," $out -}}
{{- end -}}

{{/*
The workload whose database credentials the reaper uses: publish, which reads and writes
rows and image bytes as the reaper does, or the all-in-one.
*/}}
{{- define "sharenote.reaperCredentials" -}}
{{- ternary "all-in-one" "publish" (eq .Values.mode "allInOne") -}}
{{- end -}}

{{/*
SHARE_DATABASE_URL and SHARE_REDIS_URL from their Secrets, for a workload's pods. Call with
(dict "root" $ "name" WORKLOAD).
*/}}
{{- define "sharenote.secretEnv" -}}
{{- $redis := include "sharenote.secretRef" (dict "root" .root "which" "redis") -}}
- name: SHARE_DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- include "sharenote.databaseRef" . | nindent 6 }}
{{- if $redis }}
- name: SHARE_REDIS_URL
  valueFrom:
    secretKeyRef:
      {{- $redis | nindent 6 }}
{{- end }}
{{- end -}}

{{/*
The name of the bundled MinIO's objects: its StatefulSet, Service, Secret and NetworkPolicy.
*/}}
{{- define "sharenote.minio.fullname" -}}
{{- printf "%s-minio" (include "sharenote.fullname" .) -}}
{{- end -}}

{{/*
A third-party image reference from {repository, tag, digest}: <repository>:<tag>, and
@<digest> when one pins it.
*/}}
{{- define "sharenote.thirdPartyImage" -}}
{{- printf "%s:%s" .repository .tag -}}
{{- with .digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/*
SHARE_BLOB_URL: the bundled MinIO's bucket through its Service (path-style, MinIO's
default region, no TLS inside the namespace), or objectStore.external.url.
*/}}
{{- define "sharenote.blobURL" -}}
{{- if eq .Values.objectStore.type "bundled" -}}
{{- printf "s3://%s?endpoint=%s:9000&region=us-east-1&tls=false" .Values.objectStore.bundled.bucket (include "sharenote.minio.fullname" .) -}}
{{- else -}}
{{- .Values.objectStore.external.url -}}
{{- end -}}
{{- end -}}

{{/*
The object store's environment of every sharenote container: SHARE_BLOB_URL, and the
keys from the bundled MinIO's Secret or objectStore.external.existingSecret (none when the
AWS credential chain finds them, e.g. IRSA). The keys never appear as plain values.
*/}}
{{- define "sharenote.objectStoreEnv" -}}
{{- $secret := "" -}}
{{- if eq .Values.objectStore.type "bundled" -}}
{{- $secret = include "sharenote.minio.fullname" . -}}
{{- else -}}
{{- $secret = .Values.objectStore.external.existingSecret -}}
{{- end -}}
- name: SHARE_BLOB_URL
  value: {{ include "sharenote.blobURL" . | quote }}
{{- if $secret }}
{{- range $key := list "AWS_ACCESS_KEY_ID" "AWS_SECRET_ACCESS_KEY" }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
The pod security context of every pod: the image's numeric non-root user.
*/}}
{{- define "sharenote.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
The container security context of every container.
*/}}
{{- define "sharenote.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
privileged: false
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop:
    - ALL
{{- end -}}

{{/*
Settings a template cannot express in the schema; every template includes it, so a bad
combination fails whatever is rendered.
*/}}
{{- define "sharenote.validate" -}}
{{- if and .Values.database.existingSecret .Values.database.url -}}
{{- fail "database: set existingSecret or url, not both" -}}
{{- end -}}
{{- if not (or .Values.database.existingSecret .Values.database.url) -}}
{{- fail "database: set existingSecret (a Secret holding SHARE_DATABASE_URL) or url" -}}
{{- end -}}
{{- include "sharenote.validateDatabaseWorkloads" . -}}
{{- if and .Values.redis.existingSecret .Values.redis.url -}}
{{- fail "redis: set existingSecret or url, not both" -}}
{{- end -}}
{{- if not (or .Values.redis.existingSecret .Values.redis.url) -}}
{{- $w := mergeOverwrite (deepCopy .Values.serviceDefaults) (deepCopy (default dict .Values.allInOne)) -}}
{{- if or (ne .Values.mode "allInOne") $w.hpa.enabled (gt (int $w.replicas) 1) -}}
{{- fail "redis: the rate limits of more than one process are shared in Redis; set redis.existingSecret or redis.url (only allInOne with one replica and no HPA may do without)" -}}
{{- end -}}
{{- end -}}
{{- $targets := include "sharenote.targets" . | fromYamlArray -}}
{{- range $name, $_ := .Values.services -}}
{{- if not (has $name $targets) -}}
{{- fail (printf "services.%s is not a target (targets: %s)" $name (join ", " $targets)) -}}
{{- end -}}
{{- end -}}
{{- /* A JSON schema cannot compare two values; the API server refuses such an HPA. */ -}}
{{- range $name, $w := include "sharenote.workloads" . | fromYaml -}}
{{- if and $w.hpa.enabled (gt (int $w.hpa.minReplicas) (int $w.hpa.maxReplicas)) -}}
{{- fail (printf "%s: hpa.minReplicas (%d) is more than hpa.maxReplicas (%d)" $name (int $w.hpa.minReplicas) (int $w.hpa.maxReplicas)) -}}
{{- end -}}
{{- end -}}
{{- if .Values.hostNetwork.enabled -}}
{{- if .Values.networkPolicy.enabled -}}
{{- fail "hostNetwork.enabled: NetworkPolicies do not apply to pods on the node's network; set networkPolicy.enabled false" -}}
{{- end -}}
{{- $workloads := include "sharenote.workloads" . | fromYaml -}}
{{- $used := dict -}}
{{- range $name := keys $workloads | sortAlpha -}}
{{- $p := index $.Values.hostNetwork.ports $name -}}
{{- if not $p -}}
{{- fail (printf "hostNetwork.ports.%s: every workload needs its ports on the node's network ({http: <port>, admin: <port>})" $name) -}}
{{- end -}}
{{- range $which := list "http" "admin" -}}
{{- $port := toString (int (index $p $which)) -}}
{{- if hasKey $used $port -}}
{{- fail (printf "hostNetwork.ports: %s is used twice (%s and %s.%s)" $port (get $used $port) $name $which) -}}
{{- end -}}
{{- $_ := set $used $port (printf "%s.%s" $name $which) -}}
{{- end -}}
{{- end -}}
{{- $names := append ($targets) "all-in-one" -}}
{{- range $name, $_ := .Values.hostNetwork.ports -}}
{{- if not (has $name $names) -}}
{{- fail (printf "hostNetwork.ports.%s is not a workload (%s)" $name (join ", " $names)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .Values.ingress.enabled .Values.ingress.tls.enabled (not .Values.ingress.host) -}}
{{- fail "ingress.tls.enabled needs ingress.host" -}}
{{- end -}}
{{- if eq .Values.objectStore.type "bundled" -}}
{{- if .Values.production -}}
{{- fail "objectStore.type: bundled is a development MinIO (one replica, root credentials, no backups); production: true needs objectStore.type: external" -}}
{{- end -}}
{{- if ne (empty .Values.objectStore.bundled.rootUser) (empty .Values.objectStore.bundled.rootPassword) -}}
{{- fail "objectStore.bundled: set rootUser and rootPassword, or neither (generated once)" -}}
{{- end -}}
{{- end -}}
{{- end -}}


{{/*
With database.perWorkloadCredentials, every workload must have a Secret to read: its own
existingSecret or url, or one named after database.existingSecret.
*/}}
{{- define "sharenote.validateDatabaseWorkloads" -}}
{{- $db := .Values.database -}}
{{- if $db.perWorkloadCredentials -}}
{{- range $name, $_ := include "sharenote.workloads" . | fromYaml -}}
{{- $w := get (default dict $db.workloads) $name | default dict -}}
{{- if and $w.existingSecret $w.url -}}
{{- fail (printf "database.workloads.%s: set existingSecret or url, not both" $name) -}}
{{- end -}}
{{- if not (or $w.existingSecret $w.url $db.existingSecret) -}}
{{- fail (printf "database.workloads.%s: perWorkloadCredentials needs the workload's own existingSecret or url (or database.existingSecret, whose <name>-%s it reads)" $name $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
