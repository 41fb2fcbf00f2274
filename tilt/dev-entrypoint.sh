#!/busybox/sh
# The dev image's entrypoint (services/Dockerfile's stage dev), run by its busybox shell: it runs
# its arguments (/app/sharenote and the chart's args) as a child, and runs them again each
# time the marker file appears. Tilt's live update syncs a new /app/sharenote into the
# running container and then creates the marker (the Tiltfile's `run` step), so a code
# change restarts the process in place, in the same pod, without an image build or a
# rollout. This is what Tilt's restart_process extension does with a wrapper binary of its
# own, which would have to be downloaded; production images have neither this script nor a
# shell.
#
# When the child exits by itself, so does this script, with its status: a crash or a Job's
# end looks to Kubernetes as it does in production. SIGTERM and SIGINT are passed on to the
# child, and the script exits when the child has.
#
# RESTART_MARKER (default /app/.restart-proc, the Tiltfile's) and RESTART_POLL (seconds
# between looks, default 1) are for the test of this script (charts/tests/tiltfile_test.go).
marker=${RESTART_MARKER:-/app/.restart-proc}
poll=${RESTART_POLL:-1}
child=
nap=

stop() {
	[ -n "$nap" ] && kill "$nap" 2>/dev/null
	if [ -n "$child" ]; then
		kill "-$1" "$child" 2>/dev/null
		wait "$child"
		exit $?
	fi
	exit 143
}
trap 'stop TERM' TERM
trap 'stop INT' INT

# (A Job's root filesystem stays read-only: only remove what is there.)
[ ! -e "$marker" ] || rm -f "$marker"
while :; do
	"$@" &
	child=$!
	restart=
	while kill -0 "$child" 2>/dev/null; do
		if [ -e "$marker" ]; then
			rm -f "$marker"
			restart=1
			echo "dev-entrypoint: live update: restarting $*" >&2
			kill -TERM "$child" 2>/dev/null
			wait "$child"
			break
		fi
		# Sleep in the background, so that a signal's trap runs at once.
		sleep "$poll" &
		nap=$!
		wait "$nap"
		nap=
	done
	if [ -z "$restart" ]; then
		wait "$child"
		exit $?
	fi
done
