// Command pause is the sandbox ("pause") container of the real-kubelet stage's pods
// (kubelet_node_test.go packs it into an image of its own, since no registry is reachable
// for registry.k8s.io/pause): it holds the pod's namespaces open until it is told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
