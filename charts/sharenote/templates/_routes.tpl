{{/*
Generated from libs/routes by charts/tests (go test -run Routes -update): do not edit by hand.

The Ingress paths of the API's endpoint table (libs/routes.Table), in its order, each to the
target that serves it: Exact for a fixed path, Prefix for a parameterised one, up to its
first parameter (Kubernetes Prefix matches whole path elements, and the longest match
wins, Exact before Prefix). The sites' /@:handle has its parameter inside the first
element, which neither Prefix nor Exact can express (Prefix /@ never matches /@alice/):
it is ImplementationSpecific /@, which ingress-nginx, Traefik and HAProxy Ingress match as
a plain string prefix, and no other route's path starts with /@ (docs/deployment.md,
"The Ingress"). charts/tests proves every route of the table reaches its target through
these rules and that no rule is unused.
*/}}
{{- define "sharenote.routes" -}}
- {path: /api/auth/publish, pathType: Exact, target: auth}
- {path: /api/publish, pathType: Exact, target: publish}
- {path: /api/notes, pathType: Prefix, target: notes}
- {path: /api/unshare, pathType: Exact, target: notes}
- {path: /api/user/notes, pathType: Exact, target: notes}
- {path: /api/user/settings, pathType: Exact, target: notes}
- {path: /api/user/site, pathType: Exact, target: notes}
- {path: /api/images, pathType: Prefix, target: images}
- {path: /api/og, pathType: Prefix, target: og-renderer}
- {path: /s, pathType: Prefix, target: notes}
- {path: /api/openapi.json, pathType: Exact, target: notes}
- {path: /assets, pathType: Prefix, target: notes}
- {path: "/@", pathType: ImplementationSpecific, target: notes}
{{- end -}}

{{/*
The targets (libs/routes.Targets), in deployment order: one Deployment each in split mode.
*/}}
{{- define "sharenote.targets" -}}
- auth
- publish
- notes
- images
- og-renderer
{{- end -}}

{{/*
What each target needs (app.Target.Needs; `sharenote routes --needs`): a workload is given the
credentials of these only. edge: its background jobs include purge, which sends PURGE
requests to edge.purgeURLs.
*/}}
{{- define "sharenote.needs" -}}
auth: {database: read-write, redis: true, objectStore: false, edge: false}
publish: {database: read-write, redis: true, objectStore: true, edge: true}
notes: {database: read-write, redis: true, objectStore: true, edge: true}
images: {database: read-only, redis: true, objectStore: true, edge: false}
og-renderer: {database: read-only, redis: true, objectStore: false, edge: false}
{{- end -}}
