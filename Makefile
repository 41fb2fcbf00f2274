# sharenote's targets; `make` alone lists them, the everyday ones first. The Go targets loop
# over the modules of go.work, because `go test ./...` does not span a workspace. The pinned
# tools the tests run (linters, MinIO, Kubernetes, kwok, helm, Tilt, containerd, runc) are
# built into .tools by build/tools.mk, included first: the targets here depend on its files.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

MODULES := $(shell go list -m -f '{{.Dir}}')
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/sharenote/sharenote/libs/app.Version=$(VERSION)
TOOLS := $(CURDIR)/.tools
CONTAINER ?= docker
BASE_IMAGE ?= gcr.io/distroless/static-debian12:nonroot

include build/tools.mk

.PHONY: help run test build lint bench fmt fuzz e2e chaos compose-smoke k8s-e2e images mermaid tidy clean

##@ Everyday

run: build ## Build and serve the whole API on the embedded default (SQLite, in-process limits).
	./bin/sharenote serve

test: $(MINIO) ## Run every test of every module against real Postgres, Redis and MinIO, then fuzz and e2e.
	@failed=""; for m in $(MODULES); do \
		echo "== $$m"; \
		(cd $$m && go test -count=1 ./...) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi
	@$(MAKE) --no-print-directory fuzz
	@$(MAKE) --no-print-directory e2e

build: ## Build the one binary, bin/sharenote (every target and command).
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/sharenote ./services/sharenote/cmd/sharenote

# The tagged tests (e2e, chaos, load benchmarks, the Kubernetes stage) are checked too.
LINT_TAGS := e2e,chaos,loadbench,k8se2e

lint: $(STATICCHECK) $(UNPARAM) ## gofmt, go vet, staticcheck and unparam on every module, tagged tests included.
	@out=$$(gofmt -l libs services charts); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do (cd $$m && go vet -tags $(LINT_TAGS) ./... && $(STATICCHECK) -tags $(LINT_TAGS) ./... && $(UNPARAM) ./...) || exit 1; done

# The load part measures with wrk (Debian package `wrk`), c=32, against the app and a bare
# net/http handler serving the same bytes, in turns, in one run; without wrk it says so in
# one line and skips those rows.
bench: $(MINIO) ## Micro-benchmarks, then load benchmarks (wrk) vs bare handlers on Postgres + Redis + MinIO (load part ~3 min).
	@for m in $(MODULES); do \
		(cd $$m && go test -run '^$$' -bench . -benchmem -benchtime 100x ./... | grep -E '^(Benchmark|ok|FAIL|---)'); \
	done
	@# The load benchmarks print their table at the end; LOADBENCH_ROWS=0 skips the 1M-row scale run.
	cd services/sharenote && go test -count=1 -tags loadbench -run LoadBench -v -timeout 30m .

fmt: ## Format the Go code.
	gofmt -w libs services charts

##@ More tests, and the image

# Go fuzzes one target per run, for a number of inputs each, not for a time: when a
# -fuzztime duration runs out while a worker is mid-input, go1.26 can fail the run with a
# bare "context deadline exceeded" (go.dev/issue/75804, fixed in go1.27). FuzzLinear
# spends about 5 s on its seeds before it mutates them, then tries some 20 inputs a
# second; FuzzMarkdown some thousands. Each input that widens the coverage is shortened
# by up to 200 tries, not for up to a minute (Go's default), which held the fuzzing up.
FUZZ ?= FuzzLinear:150 FuzzMarkdown:20000
fuzz: ## Fuzz the renderer for a count of inputs per target (FUZZ): render time linear in the note (FuzzLinear), HTML within its cap.
	@for t in $(FUZZ); do (cd libs && go test -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime "$${t#*:}x" -fuzzminimizetime 200x ./render) || exit 1; done

e2e: $(MINIO) ## The five services as separate processes behind nginx, end to end on Postgres, Redis and MinIO; and Varnish with the shipped VCL in front of two replicas.
	cd services/sharenote && go test -count=1 -tags e2e -run E2E -v .

chaos: $(MINIO) ## Fault tests on throw-away Postgres and Redis: outages under load, slow bodies, big uploads, SIGTERM.
	cd services/sharenote && go test -count=1 -tags chaos -run Chaos -v -timeout 20m .

compose-smoke: ## docker-compose.yaml's images and services in podman, with the e2e flow (or one skip line).
	.ci/compose-smoke

# The chart on a throw-away control plane (charts/tests/k8se2e_test.go). The test binary
# runs in a network namespace of its own whose only interface is loopback (`unshare --net`,
# or as a user namespace's root where that is allowed), so that nothing it starts can send
# a packet off the machine; where neither works it says so and runs on the host's loopback.
# Its last line is the summary.
# KUBELET=1 adds stage 2 (charts/tests/kubelet_e2e_test.go): the one image, built with
# podman FROM scratch (charts/tests/kubelet_image.sh, about 45 s: podman keeps the builder
# image and the compile cache), as pods on two real kubelets on Debian's containerd and
# runc in that namespace, all-in-one and split, with the e2e flow before and after a
# rollout restart under read load; its summary line comes last. A machine that cannot run
# it says why in that line and skips it.
# Its last stage, with a Tilt binary (TILT_BIN), is `tilt ci -f tilt/Tiltfile` on that
# cluster (charts/tests/tilt_e2e_test.go), which compiles the binary in the sandbox: the
# root module's dependencies are downloaded first. Without one it says so in one line and
# leaves the stage out.
KUBELET_IMAGE_TAR := $(TOOLS)/kubelet-image.tar
k8s-e2e: export SHARE_TILT_BIN = $(TILT_BIN)
k8s-e2e: export SHARE_HELM_BIN = $(if $(TILT_BIN),$(HELM))
k8s-e2e: export SHARE_KUBELET_BIN = $(if $(KUBELET),$(KUBE)/kubelet)
k8s-e2e: export SHARE_CONTAINERD_BIN = $(if $(KUBELET),$(CONTAINERD))
k8s-e2e: export SHARE_RUNC_BIN = $(if $(KUBELET),$(RUNC)/runc)
k8s-e2e: export SHARE_KUBELET_IMAGE = $(if $(KUBELET),localhost/sharenote:$(VERSION))
k8s-e2e: export SHARE_KUBELET_IMAGE_TAR = $(if $(KUBELET),$(KUBELET_IMAGE_TAR))
k8s-e2e: k8s-tools $(if $(TILT_BIN),$(HELM)) $(if $(KUBELET),kubelet-tools) ## The chart on a throw-away kube-apiserver + kwok: install, upgrade, rollback, test, uninstall per values file; then tilt ci (KUBELET=1: and on real kubelets).
	@if [ -z "$(TILT_BIN)" ]; then echo "k8s-e2e: no tilt binary (tilt on PATH, or make tilt): skipping the Tilt stage (tilt ci)"; \
	else GOWORK=off go mod download; fi
	@if [ -n "$(KUBELET)" ]; then echo "k8s-e2e: building the one image for the kubelet stage (podman, FROM scratch)"; \
		charts/tests/kubelet_image.sh "$(VERSION)" "$(KUBELET_IMAGE_TAR)" >/dev/null; fi
	@summary=$$(mktemp); trap 'rm -f "$$summary"' EXIT; \
	if unshare --net true 2>/dev/null; then sandbox="unshare --net --"; \
	elif unshare --net --map-root-user true 2>/dev/null; then sandbox="unshare --net --map-root-user --"; \
	else sandbox=""; echo "k8s-e2e: no network namespace can be made here; running on the host's loopback"; fi; \
	set +e; (cd charts/tests && SHARE_K8S_BIN=$(KUBE) SHARE_ETCD_BIN=$(ETCD)/etcd SHARE_KWOK_BIN=$(KWOK)/kwok \
		SHARE_KWOK_STAGES=$(KWOK)/stages SHARE_K8SE2E_SUMMARY="$$summary" \
		go test -count=1 -tags k8se2e -run '$(if $(KUBELET),K8sE2E|KubeletE2E,K8sE2E)' -v -timeout $(if $(KUBELET),60m,30m) \
		$(if $(TILT_BIN),,-skip '^TestK8sE2E$$/^tilt_ci$$') $${sandbox:+-exec "$$sandbox"} .); rc=$$?; \
	if [ -s "$$summary" ]; then cat "$$summary"; else echo "k8s-e2e FAILED before its summary (exit $$rc)"; fi; exit $$rc

images: ## Build the one image, sharenote:<version> (and :latest), from services/Dockerfile.
	$(CONTAINER) build -f services/Dockerfile --build-arg VERSION=$(VERSION) --build-arg BASE_IMAGE=$(BASE_IMAGE) \
		-t sharenote:$(VERSION) -t sharenote:latest .

##@ Housekeeping

mermaid: ## Fetch the pinned Mermaid build (npm) into services/notes/internal/assets/mermaid and check its sha256; PIN=1 re-pins.
	PIN=$(PIN) build/fetch-mermaid.sh

tidy: ## go mod tidy in every module.
	@for m in $(MODULES); do (cd $$m && go mod tidy); done

clean: ## Remove binaries, tools and the embedded default's data.
	rm -rf bin .tools .data

help: ## Show the targets, the everyday ones first.
	@awk 'BEGIN {FS = ":.*## "} /^##@ / {printf "\n%s:\n", substr($$0, 5)} \
		/^[a-z0-9-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
