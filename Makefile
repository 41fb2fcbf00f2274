# sharenote: every target loops over the modules of go.work, because `go test ./...`
# does not span a workspace.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

MODULES := $(shell go list -m -f '{{.Dir}}')
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/sharenote/sharenote/libs/app.Version=$(VERSION)
TOOLS := $(CURDIR)/.tools
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)
UNPARAM_VERSION := v0.0.0-20260823230713-2fa3d841b0c8
UNPARAM := $(TOOLS)/unparam-$(UNPARAM_VERSION)
# The tests' throw-away S3 server; libs/testkit finds it here (or through this variable).
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO := $(TOOLS)/minio-$(MINIO_VERSION)
export SHARE_TEST_MINIO_BIN := $(MINIO)

.PHONY: help run build test e2e chaos bench images compose-smoke k8s-e2e k8s-tools lint minio fmt tidy clean

help: ## Show the targets.
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

run: build ## Build and serve the whole API on the embedded default (SQLite, in-process limits).
	./bin/sharenote serve

build: ## Build the one binary, bin/sharenote (every target and command).
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/sharenote ./services/sharenote/cmd/sharenote

test: $(MINIO) ## Run every test of every module against real Postgres, Redis and MinIO.
	@failed=""; for m in $(MODULES); do \
		echo "== $$m"; \
		(cd $$m && go test -count=1 ./...) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi
	@$(MAKE) --no-print-directory e2e

e2e: $(MINIO) ## The five services as separate processes behind nginx, end to end on Postgres, Redis and MinIO.
	cd services/sharenote && go test -count=1 -tags e2e -run E2E -v .

chaos: $(MINIO) ## Fault tests on throw-away Postgres and Redis: outages under load, slow bodies, big uploads, SIGTERM.
	cd services/sharenote && go test -count=1 -tags chaos -run Chaos -v -timeout 20m .

bench: $(MINIO) ## Micro-benchmarks, then load benchmarks vs bare handlers on Postgres + Redis + MinIO (table; load part ~3 min).
	@for m in $(MODULES); do \
		(cd $$m && go test -run '^$$' -bench . -benchmem -benchtime 100x ./... | grep -E '^(Benchmark|ok|FAIL|---)'); \
	done
	@# The load benchmarks print their table at the end; LOADBENCH_ROWS=0 skips the 1M-row scale run.
	cd services/sharenote && go test -count=1 -tags loadbench -run LoadBench -v -timeout 30m .

CONTAINER ?= docker
BASE_IMAGE ?= gcr.io/distroless/static-debian12:nonroot

images: ## Build the one image, sharenote:<version> (and :latest), from services/Dockerfile.
	$(CONTAINER) build -f services/Dockerfile --build-arg VERSION=$(VERSION) --build-arg BASE_IMAGE=$(BASE_IMAGE) \
		-t sharenote:$(VERSION) -t sharenote:latest .

compose-smoke: ## docker-compose.yaml's images and services in podman, with the e2e flow (or one skip line).
	.ci/compose-smoke

# The chart on a real, throw-away control plane (charts/tests/k8se2e_test.go). Kubernetes
# and etcd are pinned in their wrapper modules under charts/tests/kubebin (the one place
# their versions are written), kwok here; binaries are cached under .tools by version.
KUBEBIN := charts/tests/kubebin
KUBERNETES_VERSION := $(shell awk '$$1 == "k8s.io/kubernetes" && $$2 ~ /^v/ {print $$2}' $(KUBEBIN)/kubernetes/go.mod)
ETCD_VERSION := $(shell awk '$$1 == "go.etcd.io/etcd/server/v3" && $$2 ~ /^v/ {print $$2}' $(KUBEBIN)/etcd/go.mod)
KWOK_VERSION := v0.8.0
KUBE := $(TOOLS)/kubernetes-$(KUBERNETES_VERSION)
KUBE_CMDS := kube-apiserver kube-controller-manager kube-scheduler kubectl
ETCD := $(TOOLS)/etcd-$(ETCD_VERSION)
KWOK := $(TOOLS)/kwok-$(KWOK_VERSION)
# Without these the binaries call themselves v0.0.0-master, and clients and charts that
# check the server's version misbehave.
KUBE_VERSION_PARTS := $(subst ., ,$(patsubst v%,%,$(KUBERNETES_VERSION)))
KUBE_LDFLAGS := -s -w $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	-X $(p).gitVersion=$(KUBERNETES_VERSION) -X $(p).gitMajor=$(word 1,$(KUBE_VERSION_PARTS)) \
	-X $(p).gitMinor=$(word 2,$(KUBE_VERSION_PARTS)) -X $(p).gitTreeState=clean)
# kwok ships no stages of its own (kwokctl adds them): these, from its module, make nodes
# Ready, pods Running and Ready (Jobs' pods Succeeded), deletions final, and claims Bound.
KWOK_STAGES := node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease pod/fast/pod-ready \
	pod/fast/pod-complete pod/fast/pod-delete volume/fast/storage-class volume/fast/pvc-provision \
	volume/fast/pv-bind volume/fast/pvc-delete volume/fast/pv-delete

k8s-tools: $(addprefix $(KUBE)/,$(KUBE_CMDS)) $(ETCD)/etcd $(KWOK)/kwok ## Build the pinned control plane k8s-e2e runs (once; ~11 min cold, 26 s from a warm Go build cache).

# The test binary runs in a network namespace of its own whose only interface is loopback
# (`unshare --net`, or as a user namespace's root where that is allowed), so that nothing
# it starts can send a packet off the machine; where neither works it says so and runs on
# the host's loopback. Its last line is the summary. KUBELET=1 (a real kubelet on
# containerd, stage 2) is not built yet.
k8s-e2e: k8s-tools ## The chart on a throw-away kube-apiserver + kwok: install, upgrade, rollback, test, uninstall per values file.
	@if [ -n "$(KUBELET)" ]; then echo "k8s-e2e: KUBELET=1 (the real-kubelet stage) is not implemented yet; running the kwok stage"; fi
	@summary=$$(mktemp); trap 'rm -f "$$summary"' EXIT; \
	if unshare --net true 2>/dev/null; then sandbox="unshare --net --"; \
	elif unshare --net --map-root-user true 2>/dev/null; then sandbox="unshare --net --map-root-user --"; \
	else sandbox=""; echo "k8s-e2e: no network namespace can be made here; running on the host's loopback"; fi; \
	set +e; (cd charts/tests && SHARE_K8S_BIN=$(KUBE) SHARE_ETCD_BIN=$(ETCD)/etcd SHARE_KWOK_BIN=$(KWOK)/kwok \
		SHARE_KWOK_STAGES=$(KWOK)/stages SHARE_K8SE2E_SUMMARY="$$summary" \
		go test -count=1 -tags k8se2e -run K8sE2E -v -timeout 30m $${sandbox:+-exec "$$sandbox"} .); rc=$$?; \
	if [ -s "$$summary" ]; then cat "$$summary"; else echo "k8s-e2e FAILED before its summary (exit $$rc)"; fi; exit $$rc

# One `go build` for the four commands shares their compilation; into a temporary
# directory first, so an interrupted build leaves no half binary that counts as built.
$(addprefix $(KUBE)/,$(KUBE_CMDS)) &:
	rm -rf $(KUBE).tmp && mkdir -p $(KUBE).tmp
	cd $(KUBEBIN)/kubernetes && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' \
		-o $(KUBE).tmp/ $(addprefix k8s.io/kubernetes/cmd/,$(KUBE_CMDS))
	mkdir -p $(KUBE) && mv $(KUBE).tmp/* $(KUBE)/ && rmdir $(KUBE).tmp

$(ETCD)/etcd:
	rm -rf $(ETCD).tmp && mkdir -p $(ETCD).tmp
	cd $(KUBEBIN)/etcd && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $(ETCD).tmp/etcd go.etcd.io/etcd/server/v3
	rm -rf $(ETCD) && mv $(ETCD).tmp $(ETCD)

$(KWOK)/kwok:
	rm -rf $(KWOK).tmp && mkdir -p $(KWOK).tmp/stages
	GOBIN=$(KWOK).tmp GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go install -trimpath -ldflags '-s -w' sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)
	dir=$$(GOWORK=off GOFLAGS=-mod=mod go mod download -json sigs.k8s.io/kwok@$(KWOK_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
		for s in $(KWOK_STAGES); do cp "$$dir/kustomize/stage/$$s.yaml" $(KWOK).tmp/stages/; done
	chmod -R u+w $(KWOK).tmp && rm -rf $(KWOK) && mv $(KWOK).tmp $(KWOK)

# The tagged tests (e2e, chaos, load benchmarks, the Kubernetes stage) are checked with
# everything else.
LINT_TAGS := e2e,chaos,loadbench,k8se2e

lint: $(STATICCHECK) $(UNPARAM) ## gofmt, go vet, staticcheck and unparam on every module, tagged tests included.
	@out=$$(gofmt -l libs services charts); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do (cd $$m && go vet -tags $(LINT_TAGS) ./... && $(STATICCHECK) -tags $(LINT_TAGS) ./... && $(UNPARAM) ./...); done

$(STATICCHECK):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(TOOLS)/staticcheck $@

# unparam reports parameters and results no caller uses.
$(UNPARAM):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) GOWORK=off GOFLAGS=-mod=mod go install mvdan.cc/unparam@$(UNPARAM_VERSION)
	mv $(TOOLS)/unparam $@

minio: $(MINIO) ## Build the pinned MinIO server the tests start (once; ~150 MB, a few minutes).

$(MINIO):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) GOWORK=off GOFLAGS=-mod=mod go install github.com/minio/minio@$(MINIO_VERSION)
	mv $(TOOLS)/minio $@

fmt: ## Format the Go code.
	gofmt -w libs services charts

tidy: ## go mod tidy in every module.
	@for m in $(MODULES); do (cd $$m && go mod tidy); done

clean: ## Remove binaries, tools and the embedded default's data.
	rm -rf bin .tools .data
