#!/bin/sh
# tests/test-pthread-lockdep.sh: the lock-order checker on an unmodified
# pthread program (tests/pthread-lockdep) running on the drop-in, as
# `FASTLOCK_LOCKDEP=1 fastlock-run program` runs it: for each kind of
# mutex, the rwlock and the spinlock, two locks taken in ABBA order by two
# threads one after the other are reported once as a possible deadlock,
# and the same program taking them in one order (with a condition wait and
# a timed-out timedlock) gets no report at all; without FASTLOCK_LOCKDEP
# the ABBA program gets none either.  A robust mutex taken with EOWNERDEAD
# is held: its unlock is no release of a lock not held (the thread that
# died holding it is reported, once).  SKIP (77) under a cross runner.
set -u
prog=tests/pthread-lockdep
lib=$(pwd)/.libs/libfastlock-pthread.so.0

if [ -n "${FL_TEST_RUNNER:-}" ]; then
	echo "SKIP: LD_PRELOAD runs natively only"; exit 77
fi
if [ ! -f "$lib" ]; then
	echo "FAIL: $lib is missing"; exit 1
fi
status=0
# run WANT ENV ORDER KIND: WANT is the number of "fastlock: $what"
# lines and of "fastlock:" lines the run must print.
what='possible deadlock'
run() {
	want=$1; shift
	env "$1" LD_PRELOAD="$lib" timeout 60 "$prog" "$2" "$3" > lockdep.out 2>&1
	rc=$?
	n=$(grep -c "^fastlock: $what" lockdep.out)
	all=$(grep -c '^fastlock:' lockdep.out)
	if [ $rc -eq 0 ] && [ "$n" -eq "$want" ] && [ "$all" -eq "$want" ]; then
		echo "ok: $1 $2 $3: $n report(s)"
	else
		echo "FAIL: $1 $2 $3: rc=$rc, $n \"$what\", $all report(s), want $want:"
		cat lockdep.out
		status=1
	fi
}
for kind in normal errorcheck recursive robust pi static rwlock rwstatic spin; do
	run 1 FASTLOCK_LOCKDEP=1 abba $kind
	run 0 FASTLOCK_LOCKDEP=1 same $kind
	run 0 FASTLOCK_LOCKDEP=0 abba $kind
done
what='lock held at thread exit'
run 1 FASTLOCK_LOCKDEP=1 ownerdead robust
rm -f lockdep.out
exit $status
