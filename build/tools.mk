# The pinned tools the tests and the dev loop run, built from source (or, for containerd
# and runc, unpacked from Debian's archive) into .tools, each in a directory or file named
# by its version, so that a new pin builds anew and an old one is never taken for it.
# Included by the Makefile, whose targets depend on the files named here. Every build goes
# into a temporary name first: an interrupted one leaves nothing that counts as built.

##@ Pinned tools, built once into .tools

# The linters of `make lint`.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)
UNPARAM_VERSION := v0.0.0-20260823230713-2fa3d841b0c8
UNPARAM := $(TOOLS)/unparam-$(UNPARAM_VERSION)
# The tests' throw-away S3 server; libs/testkit finds it here (or through this variable),
# and .ci/compose-smoke as .tools/minio-*.
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO := $(TOOLS)/minio-$(MINIO_VERSION)
export SHARE_TEST_MINIO_BIN := $(MINIO)

.PHONY: minio k8s-tools kubelet-tools tilt

minio: $(MINIO) ## Build the pinned MinIO server the tests start (~150 MB, a few minutes).

$(MINIO):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) GOWORK=off GOFLAGS=-mod=mod go install github.com/minio/minio@$(MINIO_VERSION)
	mv $(TOOLS)/minio $@

$(STATICCHECK):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(TOOLS)/staticcheck $@

# unparam reports parameters and results no caller uses.
$(UNPARAM):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) GOWORK=off GOFLAGS=-mod=mod go install mvdan.cc/unparam@$(UNPARAM_VERSION)
	mv $(TOOLS)/unparam $@

# k8s-e2e's control plane. Kubernetes and etcd are pinned in their wrapper modules under
# charts/tests/kubebin (the one place their versions are written), kwok here.
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

k8s-tools: $(addprefix $(KUBE)/,$(KUBE_CMDS)) $(ETCD)/etcd $(KWOK)/kwok ## Build the pinned control plane k8s-e2e runs (~11 min cold, 26 s from a warm Go build cache).

# One `go build` for the four commands shares their compilation.
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
# on, `apt-cache policy containerd runc` names the ones to pin.
CONTAINERD_DEB := 1.6.20~ds1-1+deb12u3
RUNC_DEB := 1.1.5+ds1-1+deb12u1
CONTAINERD := $(TOOLS)/containerd-$(subst ~,_,$(subst +,_,$(CONTAINERD_DEB)))
RUNC := $(TOOLS)/runc-$(subst ~,_,$(subst +,_,$(RUNC_DEB)))

kubelet-tools: $(KUBE)/kubelet $(CONTAINERD)/containerd $(RUNC)/runc ## KUBELET=1's kubelet (~4 min cold) and Debian's containerd and runc (unpacked, not installed).

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

# Tilt, for tilt/Tiltfile and k8s-e2e's Tilt stage, built from source: its repository
# vendors its dependencies, so the build fetches nothing but the source. The source is
# pinned by the commit of the tag, not by a constant inside it (the tag's
# internal/cli/build.go still says 0.37.5: upstream bumps it after tagging, so this build's
# `tilt version` says v0.37.5-dev). Without
# TILT_SRC the tag is cloned from GitHub; TILT_SRC=DIR takes it from a Git repository you
# have (a checkout, a clone or a mirror, which must hold TILT_COMMIT: its files are that
# commit's, whatever is checked out), or from a plain snapshot of the tag, whose files must
# hash to the commit's tree. Its web/ stays beside the binary: a Tilt built from source
# serves its web UI from the sources where it was compiled, so its `tilt up` needs Node.js
# and yarn (the first run downloads the UI's packages); release binaries have the UI built
# in. It needs cgo (a C compiler): its Starlark language server parses with tree-sitter.
TILT_VERSION := v0.37.6
TILT_COMMIT := 76a6dd7d311178fe864baa22ce63a2f053764efc
TILT_TREE := ede1a16380c01a05cf38199afd2e187d227c4fde
TILT := $(TOOLS)/tilt-$(TILT_VERSION)/tilt
TILT_SRC ?=
# k8s-e2e's Tilt: the one on PATH, else the one `make tilt` built.
TILT_BIN ?= $(or $(shell command -v tilt 2>/dev/null),$(wildcard $(TILT)))
# The Tiltfile's helm() runs the helm CLI: for k8s-e2e's Tilt stage, the chart tests' helm,
# told the pinned Kubernetes version (a plain build believes in v1.20, which the chart's
# kubeVersion refuses).
HELM_VERSION := $(shell awk '$$1 == "helm.sh/helm/v3" {print $$2}' charts/tests/go.mod)
HELM := $(TOOLS)/helm-$(HELM_VERSION)/helm

tilt: $(TILT) ## Build the pinned Tilt from source (TILT_SRC=a Git repository or snapshot of it, else git clone; ~3 min).

$(TILT):
	rm -rf $(@D).tmp && mkdir -p $(@D).tmp/src
	@set -e; tmp=$(@D).tmp; src="$(TILT_SRC)"; what="$(or $(TILT_SRC),the clone of tag $(TILT_VERSION))"; \
	if [ -z "$$src" ]; then src=$$tmp/clone.git; \
		git clone -q --bare --depth 1 --branch $(TILT_VERSION) https://github.com/tilt-dev/tilt "$$src"; \
	elif [ ! -d "$$src" ]; then echo "tilt: TILT_SRC=$$src is not a directory"; rm -rf $$tmp; exit 1; fi; \
	export GIT_CEILING_DIRECTORIES=$$(dirname "$$(realpath "$$src")"); \
	if git -C "$$src" cat-file -e '$(TILT_COMMIT)^{commit}' 2>/dev/null; then \
		echo "tilt: the files of commit $(TILT_COMMIT) (Tilt $(TILT_VERSION)) from $$what"; \
		git -C "$$src" archive $(TILT_COMMIT) | tar -x -C $$tmp/src; \
	elif [ -n "$(TILT_SRC)" ] && ! git -C "$$src" rev-parse --git-dir >/dev/null 2>&1; then \
		cp -a "$$src/." $$tmp/src; \
		tree=$$(export GIT_DIR=$$tmp/tree.git GIT_WORK_TREE=$$tmp/src; git init -q && git add -A && git write-tree); \
		[ "$$tree" = $(TILT_TREE) ] || { echo "tilt: $$what is not Tilt $(TILT_VERSION): its files hash to tree $$tree, not $(TILT_TREE) (commit $(TILT_COMMIT))"; rm -rf $$tmp; exit 1; }; \
		echo "tilt: $$what is a snapshot of the tree of commit $(TILT_COMMIT) (Tilt $(TILT_VERSION))"; \
	else echo "tilt: $$what holds no commit $(TILT_COMMIT) (Tilt $(TILT_VERSION))"; rm -rf $$tmp; exit 1; fi; \
	rm -rf $$tmp/clone.git $$tmp/tree.git
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
