#!/usr/bin/env bash
# The Tiltfile's image build where no Docker daemon answers (`--builder=podman`, its
# custom_build): podman builds the stage `dev` of services/Dockerfile (the Tiltfile's
# DOCKERFILE and DEV_STAGE), context tilt/ (tilt/.dockerignore lets in the binary and the
# entrypoint), into $EXPECTED_REF, the reference Tilt chose. The image stays in podman's
# store and is not pushed: under kwok nothing pulls it (see the Tiltfile). podman runs as
# everywhere in this repository: set up by .ci/podman-builder.sh (runc, ulimits).
#
# The base is an image made once from the host's static busybox (Debian's busybox-static),
# which needs no registry: busybox and its applets in /busybox as in distroless's debug
# images (the base of Docker builds), /tmp, the host's CA certificates, and users root and
# nonroot (65532). The build runs no network (--network=none): its one RUN step makes a
# directory.
set -eu
cd "$(dirname "$0")"
ref=${EXPECTED_REF:?set by Tilt: run this through the Tiltfile}
source ../.ci/podman-builder.sh
podman_setup || {
	echo "podman-build: $PODMAN_WHY" >&2
	exit 1
}

busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || LC_ALL=C ldd "$busybox" 2>/dev/null | grep -q '=>'; then
	echo "podman-build: the dev image's base needs a static busybox on PATH (apt-get install busybox-static)" >&2
	exit 1
fi
version=$("$busybox" 2>/dev/null | head -n1 | awk '{print $2}')
base=localhost/sharenote-dev-base:busybox-${version#v}
if ! podman image exists "$base"; then
	echo "podman-build: making $base from $busybox"
	root=.build/base
	rm -rf "$root"
	mkdir -p "$root/busybox" "$root/tmp" "$root/etc/ssl/certs"
	chmod 1777 "$root/tmp"
	cp "$busybox" "$root/busybox/busybox"
	for applet in $("$busybox" --list); do
		[ "$applet" = busybox ] || ln -s busybox "$root/busybox/$applet"
	done
	if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
		cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	fi
	printf 'root:x:0:0:root:/root:/busybox/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
	tar -C "$root" --owner=0 --group=0 --numeric-owner -cf - . |
		podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/busybox' \
			--change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' --change 'USER 65532:65532' \
			- "$base" >/dev/null
	rm -rf "$root"
fi

exec podman build --network=none --build-arg DEV_BASE_IMAGE="$base" -f ../services/Dockerfile --target dev -t "$ref" .
