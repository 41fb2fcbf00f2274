{{/*
Where each pod of the release may send packets, as YAML {component: [destination, …]}: the
destinations are keys of networkPolicy (dns, postgres, redis, objectStore, otel, edge,
each {to, ports}), and "extra" (networkPolicy.extraEgress) and "admin" (the serving
workloads' admin port). A workload uses what its target needs (sharenote.workloadNeeds),
the edge only while edge.purgeURLs is set; the migration Postgres and the object store
(it copies older bytes); the reaper what publish does but the edge (it sends no purges);
the bundled bucket's Job the MinIO; helm test's Pod the admin ports. A new
destination is a key of networkPolicy (and the schema) added to the lists of the pods
that use it; sharenote.egressRule renders it.
*/}}
{{- define "sharenote.egressUses" -}}
{{- $redis := include "sharenote.secretRef" (dict "root" . "which" "redis") -}}
{{- $otel := ternary (list "otel") (list) (not (empty .Values.otel.endpoint)) -}}
{{- $extra := ternary (list "extra") (list) (not (empty .Values.networkPolicy.extraEgress)) -}}
{{- $edge := not (empty .Values.edge.purgeURLs) -}}
{{- $out := dict -}}
{{- range $name, $_ := include "sharenote.workloads" . | fromYaml -}}
{{- $needs := include "sharenote.workloadNeeds" (dict "root" $ "name" $name) | fromYaml -}}
{{- $uses := list "dns" -}}
{{- if ne $needs.database "none" }}{{ $uses = append $uses "postgres" }}{{ end -}}
{{- if and $needs.redis $redis }}{{ $uses = append $uses "redis" }}{{ end -}}
{{- if $needs.objectStore }}{{ $uses = append $uses "objectStore" }}{{ end -}}
{{- if and $needs.edge $edge }}{{ $uses = append $uses "edge" }}{{ end -}}
{{- $_ := set $out $name (concat $uses $otel $extra) -}}
{{- end -}}
{{- if .Values.migration.enabled -}}
{{- $_ := set $out "migration" (concat (list "dns" "postgres" "objectStore") $extra) -}}
{{- end -}}
{{- if .Values.reaper.enabled -}}
{{- $uses := list "dns" "postgres" -}}
{{- if $redis }}{{ $uses = append $uses "redis" }}{{ end -}}
{{- $_ := set $out "reaper" (concat $uses (list "objectStore") $otel $extra) -}}
{{- end -}}
{{- if eq .Values.objectStore.type "bundled" -}}
{{- $_ := set $out "minio-bucket" (list "dns" "objectStore") -}}
{{- end -}}
{{- if .Values.tests.enabled -}}
{{- $_ := set $out "test" (list "dns" "admin") -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
The egress rules of one destination of sharenote.egressUses. Call with (dict "root" $
"to" DESTINATION). An empty "to" of the values allows the ports to any destination (a
managed database or S3 is a CIDR, or anywhere, not a selector).
*/}}
{{- define "sharenote.egressRule" -}}
{{- $np := .root.Values.networkPolicy -}}
{{- if eq .to "extra" -}}
{{- toYaml $np.extraEgress -}}
{{- else if eq .to "admin" -}}
- to:
    - podSelector:
        matchLabels:
          {{- include "sharenote.releaseSelectorLabels" .root | nindent 10 }}
        matchExpressions:
          - key: app.kubernetes.io/component
            operator: In
            values:
              {{- range $name, $_ := include "sharenote.workloads" .root | fromYaml }}
              - {{ $name }}
              {{- end }}
  ports:
    - protocol: TCP
      port: 9090
{{- else if and (eq .to "objectStore") (eq .root.Values.objectStore.type "bundled") -}}
- to:
    - podSelector:
        matchLabels:
          {{- include "sharenote.selectorLabels" (dict "root" .root "component" "minio") | nindent 10 }}
  ports:
    - protocol: TCP
      port: 9000
{{- else -}}
{{- $dest := index $np .to -}}
- ports:
    {{- range $dest.ports }}
    {{- if eq $.to "dns" }}
    - protocol: UDP
      port: {{ . }}
    {{- end }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
  {{- with $dest.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
{{- end -}}
