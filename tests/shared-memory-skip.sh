# shellcheck shell=sh
# tests/shared-memory-skip.sh: sourced (from the build directory) by the
# tests whose processes share a lock; exits 77 (skipped) where they
# cannot run.  A shim that is atomic within one process only (sysmips),
# or correct only while one thread runs at a time (a uniprocessor build:
# natively the tortures keep their processes on one CPU, under QEMU
# nothing can), cannot run processes that share a lock.  $runner is
# $FL_TEST_RUNNER.
config=include/fastlock/config.h
if grep -q '^#define FL_ATOMICS_ASM 1' "$config" &&
   grep -q '^#define FL_MIPS_SYSMIPS 1' "$config"; then
	echo "SKIP: the sysmips shim is atomic within one process only"
	exit 77
fi
# shellcheck disable=SC2154  # runner: set by the test that sources this
if [ -n "$runner" ] && grep -q '^#define FL_UNIPROCESSOR 1' "$config"; then
	echo "SKIP: a uniprocessor build under $runner"
	exit 77
fi
