#!/bin/sh
# tests/test-pthread-tsan.sh: the drop-in in a ThreadSanitizer program.
#
# tests/pthread-tsan.c, compiled with clang -fsanitize=thread, runs with
# the drop-in preloaded (src/pthread/tsan.c: mutexes and condition
# variables go to glibc there, rwlocks, spinlocks and semaphores stay the
# drop-in's): its counts must be right, TSan must report nothing, and the
# rwlock, spinlock and semaphore functions TSan calls must be the
# drop-in's.  Then with its seeded race: TSan must report it at the line
# marked SEEDED RACE.  Each run has a time limit, so that a hang (as in a
# condition wait TSan bound to glibc on a drop-in mutex) fails instead of
# stalling make check.  Natively only (Makefile: cross builds leave it
# out).
set -u
cc=${CLANG:-clang}
srcdir=${FL_SRCDIR:-..}
src=$srcdir/tests/pthread-tsan.c
lib=$(pwd)/.libs/libfastlock-pthread.so.0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fl-pthread-tsan.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
prog=$scratch/pthread-tsan
line=$(grep -n 'SEEDED RACE' "$src" | sed -n '2s/:.*//p')
export TSAN_OPTIONS="halt_on_error=0 exitcode=66"

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "FAIL: $cc is not installed (tools/install-deps installs it)"; exit 1
fi
[ -n "$line" ] || { echo "FAIL: no SEEDED RACE line in $src"; exit 1; }
"$cc" -fsanitize=thread -g -O1 -pthread "$src" -o "$prog" ||
	{ echo "FAIL: cannot build $prog"; exit 1; }

LD_PRELOAD=$lib timeout 120 "$prog" >"$scratch/clean.out" 2>&1
rc=$?
status=0
if [ $rc -ne 0 ] || ! grep -q '^100 100 100 100$' "$scratch/clean.out"; then
	echo "FAIL: correct program: rc=$rc (124: it hung; 66: TSan reported), output:"
	status=1
elif [ "$(grep -c 'libfastlock-pthread' "$scratch/clean.out")" -ne 4 ]; then
	echo "FAIL: the functions TSan calls are not all the drop-in's:"
	status=1
else
	echo "correct program: no report, counts right, drop-in in use"
fi
[ $status -eq 0 ] || cat "$scratch/clean.out"

LD_PRELOAD=$lib timeout 120 "$prog" race >"$scratch/race.out" 2>&1
rc=$?
if [ $rc -eq 66 ] && grep -q "pthread-tsan.c:$line:" "$scratch/race.out"; then
	echo "seeded race: reported at pthread-tsan.c:$line"
else
	echo "FAIL: seeded race not reported at pthread-tsan.c:$line (rc=$rc):"
	cat "$scratch/race.out"
	status=1
fi
exit $status
