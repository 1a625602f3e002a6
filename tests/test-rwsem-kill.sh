#!/bin/sh
# tests/test-rwsem-kill.sh: fastlock-stress rwsem --kill-ms, briefly:
# readers and writers in three processes sharing a robust FL_PSHARED
# rwsem, one process SIGKILLed every 2 ms wherever its threads are, in
# each mode, must end in SUCCESS with processes killed, the dead readers'
# locks accounted for and the lock usable at every quiescent point; the
# negative control (a supervisor that never releases a dead reader's
# lock) must end in FAILURE with the lock found unusable.  Through
# $FL_TEST_RUNNER (qemu-user for a foreign build) a replacement process
# takes longer to start: kills every 5 ms and twice as long runs.  Run
# from the build directory.

set -u
runner=${FL_TEST_RUNNER:-}
out=$(mktemp "${TMPDIR:-/tmp}/fl-rwsem-kill.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT
failures=0

# shellcheck source=tests/shared-memory-skip.sh
. "${srcdir:-.}/tests/shared-memory-skip.sh"

kill_ms=2 long=2
[ -z "$runner" ] || { kill_ms=5 long=4; }

# torture MODE READERS WRITERS
torture() {
	# shellcheck disable=SC2086  # the runner is a command with arguments
	$runner ./fastlock-stress rwsem --pshared --processes 3 --mode "$1" \
		--readers "$2" --writers "$3" --kill-ms $kill_ms --duration $long \
		--interval 0 --seed 1 >"$out" 2>&1
	rc=$?
	kills=$(sed -n 's/^  kills: \([0-9]*\) .*/\1/p' "$out")
	if [ $rc -eq 0 ] && grep -q '^End of test: SUCCESS$' "$out" \
	   && [ "${kills:-0}" -gt 0 ]; then
		echo "ok: fastlock-stress rwsem --kill-ms $kill_ms --mode $1: SUCCESS, $kills kills"
	else
		echo "FAIL: fastlock-stress rwsem --kill-ms $kill_ms --mode $1 (exit $rc, ${kills:-no} kills):"
		sed 's/^/    /' "$out"
		failures=$((failures + 1))
	fi
}
torture fair 3 2
torture prefer-reader 3 2
torture prefer-writer 2 3

# shellcheck disable=SC2086
$runner ./fastlock-stress rwsem --impl leaky --pshared --processes 3 \
	--kill-ms $kill_ms --duration $long --interval 0 --seed 1 >"$out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q '^End of test: FAILURE$' "$out" \
   && grep -q 'the deaths left the lock unusable' "$out"; then
	echo "ok: fastlock-stress rwsem --kill-ms --impl leaky: FAILURE, the lock found unusable"
else
	echo "FAIL: the negative control was not caught (exit $rc):"
	sed 's/^/    /' "$out"
	failures=$((failures + 1))
fi
exit $((failures != 0))
