#!/bin/sh
# tests/configure-options.sh: configure refuses what it must, saying why.
#
# Each case runs the real configure script in a scratch directory with one
# wrong option and requires a non-zero exit and a message naming the
# valid choices or the reason.  Options are validated before any compiler
# check, so no cross compiler is needed for the foreign --host cases.
set -u
srcdir=${FL_SRCDIR:-${srcdir:-.}}
srcdir=$(cd "$srcdir" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fl-configure.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failed=0

# refuses EXPECTED-TEXT CONFIGURE-ARGUMENT...
refuses() {
  expected=$1
  shift
  out=$(cd "$scratch" && "$srcdir/configure" "$@" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q -F -- "$expected"; then
    echo "ok: configure $* -> refused ($expected)"
  else
    echo "FAILED: configure $* exited $rc; expected a refusal saying '$expected':"
    printf '%s\n' "$out" | tail -5
    failed=1
  fi
}

refuses "valid values are: asm builtin" --with-atomics=fast
refuses "valid values are: xadd sub" --with-x86-release=cmpxchg
refuses "valid values are: isync lwsync" --host=powerpc-linux-gnu --with-ppc-acquire=sync
refuses "valid values are: eieio lwsync" --host=powerpc64le-linux-gnu --with-ppc-wmb=sync
refuses "valid values are: llsc beql sysmips" --host=mipsel-linux-gnu --with-mips-atomics=ll
refuses "valid values are: llsc lse" --host=aarch64-linux-gnu --with-aarch64-atomics=v9
refuses "applies only to ppc hosts" --host=x86_64-linux-gnu --with-ppc-acquire=lwsync
refuses "applies only to x86 hosts" --host=aarch64-linux-gnu --with-x86-release=sub
refuses "cannot be combined with --with-atomics=builtin" --host=x86_64-linux-gnu --with-atomics=builtin --with-x86-release=sub
refuses "correct only on a uniprocessor" --host=mipsel-linux-gnu --with-mips-atomics=beql
refuses "no hand-written asm for sparc64" --host=sparc64-linux-gnu --with-atomics=asm
refuses "takes yes or no" --enable-uniprocessor=maybe
refuses "takes yes or no" --enable-annotations=sometimes
exit $failed
