#!/usr/bin/env bash
# `make k8s-e2e KUBELET=1`: the one image for the real-kubelet stage (kubelet_e2e_test.go),
# built from services/Dockerfile with podman, FROM scratch, and saved as a docker-archive,
# which the stage imports into each node's containerd (`ctr images import`).
#
# No registry needs to answer: the builder stage is this machine's Go toolchain imported as
# an image (.ci/podman-builder.sh, which .ci/compose-smoke uses too), and the final stage
# is scratch. The build downloads the Go modules, so it runs before the stage's network
# namespace is made.
#
# Usage: kubelet_image.sh VERSION OUT.tar
# It prints the image's reference. Where it cannot build, it writes one line saying why
# to OUT.tar.skip (the stage then skips with that line) and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/podman-builder.sh
version=$1
out=$2
ref=localhost/sharenote:$version
rm -f "$out" "$out.skip"

work=$(mktemp -d /tmp/sharenote-kubelet-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
podman_builder "$work" || {
	echo "$PODMAN_WHY" >"$out.skip"
	exit 0
}

if ! podman build -f services/Dockerfile --build-arg VERSION="$version" --build-arg BASE_IMAGE=scratch \
	--build-arg GO_IMAGE="$GO_IMAGE" -t "$ref" . >"$work/build.log" 2>&1; then
	tail -n 30 "$work/build.log" >&2
	echo "kubelet_image: podman build of services/Dockerfile failed" >&2
	exit 1
fi
rm -f "$out.tmp"
podman save --quiet --format docker-archive -o "$out.tmp" "$ref"
mv "$out.tmp" "$out"
# The builder stage's intermediate images (with the modules: 1 GB) and the image itself
# (one tag per version) would pile up run after run; the builder image and the compile
# cache stay, so that the next build compiles only what changed.
podman rmi "$ref" >/dev/null
podman image prune -f --filter label=org.sharenote.stage=build >/dev/null 2>&1 || true
echo "$ref"
