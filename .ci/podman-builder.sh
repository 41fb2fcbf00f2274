# Sourced (bash) by everything here that runs podman: .ci/compose-smoke and
# charts/tests/kubelet_image.sh, which build the one image from services/Dockerfile where no
# registry answers, and tilt/podman-build.sh, the Tiltfile's build of its dev stage. This
# is the one place that says how podman runs here (.ci/containers.conf: runc, ulimits).
#
# podman_setup: exports CONTAINERS_CONF (.ci/containers.conf) and checks that podman runs
# with it. Where it cannot, it sets PODMAN_WHY to one line saying why and returns 1.
#
# podman_builder WORK: podman_setup, then the Dockerfile's builder stage (GO_IMAGE): this
# machine's Go toolchain, CA certificates (for the module proxy) and a static busybox as
# /bin/sh, imported as an image once per Go version (WORK holds its scratch files). It
# sets GO_IMAGE to its reference, or PODMAN_WHY and returns 1.
PODMAN_CONF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/containers.conf

podman_setup() {
	local cmd info
	for cmd in podman runc; do
		command -v "$cmd" >/dev/null || {
			PODMAN_WHY="$cmd is not installed (apt-get install -y podman runc)"
			return 1
		}
	done
	export CONTAINERS_CONF=$PODMAN_CONF
	info=$(podman info 2>&1) || {
		PODMAN_WHY="podman info fails: $(grep -m1 -i error <<<"$info" || tail -n1 <<<"$info")"
		return 1
	}
}

podman_builder() {
	local work=$1 busybox root
	podman_setup || return 1
	command -v go >/dev/null || {
		PODMAN_WHY="go is not installed, to build the image"
		return 1
	}
	busybox=$(command -v busybox || true)
	[[ -n $busybox && $(LC_ALL=C ldd "$busybox" 2>&1) == *"not a dynamic executable"* ]] || {
		PODMAN_WHY="a static busybox is needed for the builder image's shell (apt-get install -y busybox-static)"
		return 1
	}
	GO_IMAGE=localhost/sharenote-go:$(go env GOVERSION)
	if ! podman image exists "$GO_IMAGE"; then
		echo "podman-builder: importing $(go env GOROOT) as $GO_IMAGE" >&2
		root=$work/goimage
		mkdir -p "$root/bin" "$root/tmp" "$root/etc/ssl/certs"
		chmod 1777 "$root/tmp"
		cp "$busybox" "$root/bin/busybox"
		for a in sh mkdir chmod cat ls; do ln -s busybox "$root/bin/$a"; done
		cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
		tar -C "$root" -cf - . -C "$(dirname "$(go env GOROOT)")" --exclude='go/test' \
			--transform "s,^$(basename "$(go env GOROOT)"),usr/local/go," "$(basename "$(go env GOROOT)")" |
			podman import --quiet --change 'ENV PATH=/usr/local/go/bin:/go/bin:/bin' --change 'ENV GOPATH=/go' \
				--change 'ENV GOTOOLCHAIN=local' - "$GO_IMAGE" >/dev/null
		rm -rf "$root"
	fi
	podman run --rm "$GO_IMAGE" go version >"$work/run-check" 2>&1 || {
		PODMAN_WHY="podman cannot run a container here: $(tail -n1 "$work/run-check")"
		return 1
	}
}
