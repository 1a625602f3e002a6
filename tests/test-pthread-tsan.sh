#!/bin/sh
# tests/test-pthread-tsan.sh: the drop-in in a ThreadSanitizer program.
#
# tests/pthread-tsan.c, compiled with clang -fsanitize=thread, runs clean
# on glibc (without any preload: check-preload runs this script with the
# drop-in preloaded); preloaded with the drop-in it must stop at once with status 70
# and say why (src/pthread/tsan.c), not hang in a condition wait that TSan
# bound to glibc while the mutexes went to the drop-in.  The runs have a
# time limit, so that a hang fails instead of stalling make check.
# Natively only (Makefile: cross builds leave it out).
set -u
cc=${CLANG:-clang}
srcdir=${FL_SRCDIR:-..}
lib=$(pwd)/.libs/libfastlock-pthread.so.0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fl-pthread-tsan.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
prog=$scratch/pthread-tsan

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "FAIL: $cc is not installed (tools/install-deps installs it)"; exit 1
fi
"$cc" -fsanitize=thread -g -O1 -pthread "$srcdir/tests/pthread-tsan.c" -o "$prog" ||
	{ echo "FAIL: cannot build $prog"; exit 1; }

out=$(env -u LD_PRELOAD timeout 60 "$prog" 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ "$out" != 100 ]; then
	echo "FAIL: on glibc alone: rc=$rc, output:"; echo "$out"; exit 1
fi
echo "on glibc alone: ok"

out=$(LD_PRELOAD=$lib timeout 60 "$prog" 2>&1)
rc=$?
case $rc:$out in
	70:*"built with ThreadSanitizer"*)
		echo "preloaded: refused, status 70: $out" ;;
	*)
		echo "FAIL: preloaded: rc=$rc (70 wanted; 124: it hung), output:"
		echo "$out"; exit 1 ;;
esac
