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

.PHONY: help run build test fuzz e2e chaos bench images compose-smoke k8s-e2e k8s-tools tilt lint minio fmt tidy clean

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
	@$(MAKE) --no-print-directory fuzz
	@$(MAKE) --no-print-directory e2e

# Go fuzzes one target per run, so each gets FUZZTIME of its own; FuzzLinear spends about
# 5 s of it on its seeds before it mutates them.
FUZZTIME ?= 10s
fuzz: ## Fuzz the renderer for FUZZTIME per target: render time linear in the note (FuzzLinear), HTML within its cap.
	@for f in FuzzLinear FuzzMarkdown; do (cd libs && go test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./render) || exit 1; done

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

# Tilt, for tilt/Tiltfile and k8s-e2e's Tilt stage, built from source: its repository
# vendors its dependencies, so the build fetches nothing but the source. TILT_SRC=DIR
# builds a checkout or snapshot you already have (it must be TILT_VERSION); without it the
# tag is cloned from GitHub. Its web/ stays beside the binary: a Tilt built from source
# serves its web UI from the sources where it was compiled, so its `tilt up` needs Node.js
# and yarn (the first run downloads the UI's packages); release binaries have the UI built
# in. It needs cgo (a C compiler): its Starlark language server parses with tree-sitter.
TILT_VERSION := v0.37.6
TILT := $(TOOLS)/tilt-$(TILT_VERSION)/tilt
TILT_SRC ?=
# k8s-e2e's Tilt: the one on PATH, else the one `make tilt` built.
TILT_BIN ?= $(or $(shell command -v tilt 2>/dev/null),$(wildcard $(TILT)))
# The Tiltfile's helm() runs the helm CLI: for k8s-e2e's Tilt stage, the chart tests' helm,
# told the pinned Kubernetes version (a plain build believes in v1.20, which the chart's
# kubeVersion refuses).
HELM_VERSION := $(shell awk '$$1 == "helm.sh/helm/v3" {print $$2}' charts/tests/go.mod)
HELM := $(TOOLS)/helm-$(HELM_VERSION)/helm

tilt: $(TILT) ## Build Tilt from source into .tools (TILT_SRC=a checkout of TILT_VERSION, else git clone; ~3 min).

$(TILT):
	rm -rf $(@D).tmp && mkdir -p $(@D).tmp
	if [ -n "$(TILT_SRC)" ]; then cp -a "$(TILT_SRC)/." $(@D).tmp/src; \
	else git clone -q --depth 1 --branch $(TILT_VERSION) https://github.com/tilt-dev/tilt $(@D).tmp/src; fi
	@grep -q 'const devVersion = "$(TILT_VERSION:v%=%)"' $(@D).tmp/src/internal/cli/build.go || \
		{ echo "tilt: $(or $(TILT_SRC),the clone) is not Tilt $(TILT_VERSION) (internal/cli/build.go)"; rm -rf $(@D).tmp; exit 1; }
	rm -rf $(@D) && mv $(@D).tmp $(@D)
	cd $(@D)/src && GOWORK=off GOFLAGS=-mod=vendor GOTOOLCHAIN=local CGO_ENABLED=1 go build -ldflags '-s -w' -o ../tilt.tmp ./cmd/tilt
	cd $(@D) && find src -mindepth 1 -maxdepth 1 ! -name web -exec rm -rf {} + && mv tilt.tmp tilt

$(HELM):
	rm -rf $(@D).tmp && mkdir -p $(@D).tmp
	GOBIN=$(@D).tmp GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go install -trimpath \
		-ldflags '-s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) $(foreach p,chartutil lint/rules,\
		-X helm.sh/helm/v3/pkg/$(p).k8sVersionMajor=$(word 1,$(KUBE_VERSION_PARTS)) -X helm.sh/helm/v3/pkg/$(p).k8sVersionMinor=$(word 2,$(KUBE_VERSION_PARTS)))' \
		helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	rm -rf $(@D) && mv $(@D).tmp $(@D)

# The test binary runs in a network namespace of its own whose only interface is loopback
# (`unshare --net`, or as a user namespace's root where that is allowed), so that nothing
# it starts can send a packet off the machine; where neither works it says so and runs on
# the host's loopback. Its last line is the summary.
# KUBELET=1 adds stage 2 (charts/tests/kubelet_e2e_test.go): the one image, built with
# podman FROM scratch, as pods on two real kubelets on Debian's containerd and runc in that
# namespace, all-in-one and split, with the e2e flow before and after a rollout restart
# under read load; its summary line comes last. A machine that cannot run it says why in
# that line and skips it.
# Its last stage, with a Tilt binary (TILT_BIN), is `tilt ci -f tilt/Tiltfile` on that
# cluster (charts/tests/tilt_e2e_test.go), which compiles the binary in the sandbox: the
# root module's dependencies are downloaded first. Without one it says so in one line and
# leaves the stage out.
k8s-e2e: export SHARE_TILT_BIN = $(TILT_BIN)
k8s-e2e: export SHARE_HELM_BIN = $(if $(TILT_BIN),$(HELM))
k8s-e2e: k8s-tools $(if $(TILT_BIN),$(HELM)) ## The chart on a throw-away kube-apiserver + kwok: install, upgrade, rollback, test, uninstall per values file; then tilt ci.
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

# k8s-e2e KUBELET=1: the kubelet, built like the control plane (into its directory), and
# Debian's containerd and runc, downloaded with apt-get and unpacked with dpkg -x into
# .tools, never installed. The Debian versions are bookworm's; once the archive has moved
# on, `apt-cache policy containerd runc` names the ones to pin. The image's archive
# (charts/tests/kubelet_image.sh) is rebuilt on every run: about 45 s here, as podman keeps
# the builder image and the compile cache.
CONTAINERD_DEB := 1.6.20~ds1-1+deb12u3
RUNC_DEB := 1.1.5+ds1-1+deb12u1
CONTAINERD := $(TOOLS)/containerd-$(subst ~,_,$(subst +,_,$(CONTAINERD_DEB)))
RUNC := $(TOOLS)/runc-$(subst ~,_,$(subst +,_,$(RUNC_DEB)))
KUBELET_IMAGE_TAR := $(TOOLS)/kubelet-image.tar

.PHONY: kubelet-tools
kubelet-tools: $(KUBE)/kubelet $(CONTAINERD)/containerd $(RUNC)/runc ## KUBELET=1's kubelet (built once, ~4 min cold) and Debian's containerd and runc (unpacked, not installed).

k8s-e2e: $(if $(KUBELET),kubelet-tools)
k8s-e2e: export SHARE_KUBELET_BIN = $(if $(KUBELET),$(KUBE)/kubelet)
k8s-e2e: export SHARE_CONTAINERD_BIN = $(if $(KUBELET),$(CONTAINERD))
k8s-e2e: export SHARE_RUNC_BIN = $(if $(KUBELET),$(RUNC)/runc)
k8s-e2e: export SHARE_KUBELET_IMAGE = $(if $(KUBELET),localhost/sharenote:$(VERSION))
k8s-e2e: export SHARE_KUBELET_IMAGE_TAR = $(if $(KUBELET),$(KUBELET_IMAGE_TAR))

$(KUBE)/kubelet:
	rm -rf $(KUBE)-kubelet.tmp && mkdir -p $(KUBE)-kubelet.tmp
	cd $(KUBEBIN)/kubernetes && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags '$(KUBE_LDFLAGS)' \
		-o $(KUBE)-kubelet.tmp/kubelet k8s.io/kubernetes/cmd/kubelet
	mkdir -p $(KUBE) && mv $(KUBE)-kubelet.tmp/kubelet $@ && rmdir $(KUBE)-kubelet.tmp

# $(call debian-unpack,PACKAGE,VERSION,FILES): the target's directory holds FILES (paths
# in the package) of Debian's PACKAGE=VERSION, downloaded (after an apt-get update when
# the lists do not know it yet) and unpacked, not installed. A machine without apt-get
# and dpkg gets one line instead, and the kubelet stage skips for want of the files.
define debian-unpack
	@if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then \
		echo "k8s-e2e: no apt-get and dpkg to fetch Debian's $(1) $(2): the kubelet stage will skip"; \
	else set -ex; rm -rf $(@D).tmp && mkdir -p $(@D).tmp && cd $(@D).tmp; \
		apt-get download -q -o APT::Sandbox::User=root $(1)=$(2) || \
			{ apt-get update -qq && apt-get download -q -o APT::Sandbox::User=root $(1)=$(2); }; \
		dpkg -x $(1)_*.deb root && mv $(addprefix root/,$(3)) . && rm -rf root *.deb; \
		rm -rf $(@D) && mv $(@D).tmp $(@D); \
	fi
endef

$(CONTAINERD)/containerd:
	$(call debian-unpack,containerd,$(CONTAINERD_DEB),usr/bin/containerd usr/bin/containerd-shim-runc-v2 usr/bin/ctr)

$(RUNC)/runc:
	$(call debian-unpack,runc,$(RUNC_DEB),usr/sbin/runc)

# The tagged tests (e2e, chaos, load benchmarks, the Kubernetes stage) are checked with
# everything else.
LINT_TAGS := e2e,chaos,loadbench,k8se2e

lint: $(STATICCHECK) $(UNPARAM) ## gofmt, go vet, staticcheck and unparam on every module, tagged tests included.
	@out=$$(gofmt -l libs services charts); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do (cd $$m && go vet -tags $(LINT_TAGS) ./... && $(STATICCHECK) -tags $(LINT_TAGS) ./... && $(UNPARAM) ./...) || exit 1; done

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
