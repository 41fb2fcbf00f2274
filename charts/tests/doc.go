// Package tests checks sharenote's delivery files: without a cluster, it renders the Helm
// chart (charts/sharenote) with helm's own Go packages for every values file and decodes
// every object strictly into the k8s.io/api types, lints the chart, builds the kustomize
// manifests of k8s/, runs the Tiltfile against recording stand-ins of Tilt's API and
// checks docker-compose.yaml. What follows the routes table of libs is generated here:
// the chart's targets and Ingress paths (templates/_routes.tpl), compose's target
// services, nginx dependencies and nginx configuration: `go test -run 'Routes|Compose'
// -update` rewrites them, and the tests fail while they are stale.
//
// With the build tag k8se2e (`make k8s-e2e`), it also installs, upgrades, rolls back,
// tests and uninstalls the chart on a real, throw-away control plane (kube-apiserver,
// etcd, kwok), built from the pinned wrapper modules in kubebin/ (no part of go.work).
//
// It is its own module so that helm and k8s.io, a long cold build, are never linked into
// the sharenote binary.
package tests
