#!/bin/sh
# examples/ipc-demo.sh: the IPC example end to end.  A server and five
# clients share a region; two clients are killed with SIGKILL while they
# work; the other three carry on, and the server reports what each dead
# client abandoned.  Run from the build directory (make builds
# examples/ipc-server and examples/ipc-client), or from anywhere with the
# directory of the installed programs as its argument (sh ipc-demo.sh
# /usr/local/libexec/fastlock); exits 0 if the three survivors finished
# and both deaths were reported.

set -u
dir=${1:-examples}
runner=${FL_TEST_RUNNER:-}         # qemu-user for a foreign build

# The clients run on any CPU: a build whose shim is correct only on one
# (uniprocessor) or only within one process (sysmips) cannot run them.
config=include/fastlock/config.h
if [ -f "$config" ] && { grep -q '^#define FL_UNIPROCESSOR 1' "$config" ||
   { grep -q '^#define FL_ATOMICS_ASM 1' "$config" &&
     grep -q '^#define FL_MIPS_SYSMIPS 1' "$config"; }; }; then
	echo "SKIP: this build's shim cannot run processes on several CPUs"
	exit 77
fi
region=/fl-ipc-demo-$$
sock=${TMPDIR:-/tmp}/fl-ipc-demo-$$.sock
log=${TMPDIR:-/tmp}/fl-ipc-demo-$$.log
trap 'rm -f "$sock" "$log"' EXIT

: >"$log"
# shellcheck disable=SC2086  # the runner is a command with arguments
$runner "$dir/ipc-server" "$region" "$sock" 4 >>"$log" 2>&1 &
server=$!
tries=0
while ! grep -q ready "$log" 2>/dev/null; do
	tries=$((tries + 1))
	if [ $tries -gt 200 ] || ! kill -0 "$server" 2>/dev/null; then
		cat "$log"
		echo "demo: the server did not start"
		exit 1
	fi
	sleep 0.05
done
# The clients' PIDs, in order: the killed ones (2, 4) and the survivors.
killed=
survivors=
for n in 1 2 3 4 5; do
	# shellcheck disable=SC2086
	$runner "$dir/ipc-client" "$region" "$sock" "$n" >>"$log" 2>&1 &
	case $n in
	2 | 4) killed="$killed $!" ;;
	*) survivors="$survivors $!" ;;
	esac
done
# Once all five have connected and worked a little, kill two.
tries=0
while [ "$(grep -c connected "$log")" -lt 5 ] && [ $tries -lt 400 ]; do
	tries=$((tries + 1))
	sleep 0.05
done
sleep 0.5
# shellcheck disable=SC2086  # two PIDs, split on purpose
kill -9 $killed
echo "demo: killed clients 2 and 4 with SIGKILL" >>"$log"
survivors_rc=0
for pid in $survivors; do
	wait "$pid" || survivors_rc=$?
done
wait "$server"
server_rc=$?
cat "$log"
deaths=$(grep -c 'is gone; abandoned' "$log")
finished=$(grep -c '"quit" is set' "$log")
if [ "$survivors_rc" -eq 0 ] && [ "$server_rc" -eq 0 ] && [ "$deaths" -eq 2 ] \
   && [ "$finished" -eq 3 ]; then
	echo "demo: OK (3 clients finished, 2 deaths reported)"
	exit 0
fi
echo "demo: FAILED (survivors $survivors_rc, server $server_rc, deaths $deaths, finished $finished)"
exit 1
