// Package tests checks sharenote's delivery files without a cluster: it renders the Helm
// chart (charts/sharenote) with helm's own Go packages for every values file and decodes
// every object strictly into the k8s.io/api types, lints the chart, builds the kustomize
// manifests of k8s/, runs the Tiltfile against recording stand-ins of Tilt's API and
// checks docker-compose.yaml. The chart's Ingress paths (templates/_routes.tpl) are
// generated here from the routes table of libs: `go test -run Routes -update`.
//
// It is its own module so that helm and k8s.io, a long cold build, are never linked into
// the sharenote binary.
package tests
