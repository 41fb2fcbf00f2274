// Package tests checks sharenote's delivery files without a cluster: it renders the Helm
// chart (charts/sharenote) with helm's own Go packages for every values file and decodes
// every object strictly into the k8s.io/api types, lints the chart, builds the kustomize
// manifests of k8s/ and parses the Tiltfile.
//
// It is its own module so that helm and k8s.io, a long cold build, are never linked into
// a service binary; the routes table it checks the Ingress against comes from libs.
package tests
