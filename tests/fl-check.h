/* tests/fl-check.h: what every Check test program here shares.  */
#ifndef FASTLOCK_TESTS_FL_CHECK_H
#define FASTLOCK_TESTS_FL_CHECK_H

#include <check.h>
#include <stdint.h>

/* Iterations for a torture loop: base scaled by FL_TEST_SCALE (a
 * percentage, default 100), never below 1.  The valgrind, TSan and QEMU
 * runs lower it; nothing else changes between those runs.  */
long fl_test_iterations(long base);

/* Run the tests of s, print Check's summary, return the exit status for
 * the automake harness, for a program that uses the atomic shim.  Where
 * this build's shim cannot run at all (the sysmips variant without a
 * sysmips system call, as under QEMU) it runs nothing and returns 77, the
 * harness's SKIP, after a "SKIP: " line saying why.  On a uniprocessor-only
 * build (the BEQL trick) test cases tagged "threads" are left out, with a
 * "SKIP: " line: there threads must never run on two CPUs at once, and
 * nothing here can promise that.  */
int fl_check_run(Suite *s);

/* The same for a program that never touches the shim (futex, clocks).  */
int fl_check_run_no_shim(Suite *s);

/* The tag of test cases that run several threads at once.  */
#define FL_TAG_THREADS "threads"

/* Start n threads running fn(arg_i) at the same moment (they wait on a
 * barrier first) and join them.  args has n entries of size arg_size. */
void fl_test_threads(int n, void *(*fn)(void *), void *args, size_t arg_size);

/* In a child the test forked: unshare a PID namespace and fork its init,
 * which exits with fn(arg), or 3 if it is not PID 1; store the init's PID
 * (in the caller's namespace) in *init_pid if init_pid is not NULL (put
 * it in shared memory to read it from the test), wait for the init and
 * exit with its status.  Exits with 77 where unshare(CLONE_NEWPID) is
 * refused.  For tests of owners that are each PID 1 in a namespace of
 * their own (containers sharing /dev/shm).  */
void fl_test_namespace_init(int (*fn)(void *), void *arg, int32_t *init_pid)
    __attribute__((noreturn));

#endif /* FASTLOCK_TESTS_FL_CHECK_H */
