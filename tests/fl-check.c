/* tests/fl-check.c: the helpers every test program shares.  */
#include "config.h"

#include "fl-check.h"

#include <fastlock/config.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#if FL_ATOMICS_ASM && FL_ARCH_MIPS && FL_MIPS_SYSMIPS
# include <asm/sysmips.h>
# include <sys/syscall.h>
# include <unistd.h>
#endif

long fl_test_iterations(long base)
{
  const char *s = getenv("FL_TEST_SCALE");
  long pct = s != NULL ? strtol(s, NULL, 10) : 100;
  long n;

  if (pct <= 0)
    pct = 100;
  n = base * pct / 100;
  return n > 0 ? n : 1;
}

/* Why this build's shim cannot run on this machine, or NULL.  */
static const char *shim_unusable(void)
{
#if FL_ATOMICS_ASM && FL_ARCH_MIPS && FL_MIPS_SYSMIPS
  int32_t probe = 0;

  /* An old value of 0, so that syscall(2)'s -1 can only be an error.  */
  errno = 0;
  if (syscall(SYS_sysmips, (long)MIPS_ATOMIC_SET, (long)&probe, 1L) == -1
      && errno == ENOSYS)
    return "sysmips(MIPS_ATOMIC_SET) fails with ENOSYS: this kernel (or QEMU "
           "user mode, which does not implement sysmips) cannot run the "
           "sysmips variant";
#endif
  return NULL;
}

static int run(Suite *s, int uses_shim)
{
  const char *why = uses_shim ? shim_unusable() : NULL;
  const char *exclude = NULL;
  SRunner *sr;
  int failed;

  if (why != NULL) {
    printf("SKIP: %s: %s\n", program_invocation_short_name, why);
    return 77;
  }
#if FL_UNIPROCESSOR
  exclude = FL_TAG_THREADS;
  printf("SKIP: %s: test cases tagged \"" FL_TAG_THREADS "\": a uniprocessor "
         "build's shim (" FL_CONFIG_SUMMARY ") is correct only while one "
         "thread runs at a time, and here threads run on several CPUs\n",
         program_invocation_short_name);
#endif
  sr = srunner_create(s);
  srunner_run_tagged(sr, NULL, NULL, NULL, exclude, CK_ENV);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int fl_check_run(Suite *s)
{
  return run(s, 1);
}

int fl_check_run_no_shim(Suite *s)
{
  return run(s, 0);
}

struct start {
  pthread_barrier_t *barrier;
  void *(*fn)(void *);
  void *arg;
};

static void *start_together(void *p)
{
  struct start *st = p;
  pthread_barrier_wait(st->barrier);
  return st->fn(st->arg);
}

void fl_test_threads(int n, void *(*fn)(void *), void *args, size_t arg_size)
{
  pthread_t tid[n];
  struct start st[n];
  pthread_barrier_t barrier;
  int i;

  if (pthread_barrier_init(&barrier, NULL, (unsigned)n) != 0)
    abort();
  for (i = 0; i < n; i++) {
    st[i].barrier = &barrier;
    st[i].fn = fn;
    st[i].arg = (char *)args + (size_t)i * arg_size;
    if (pthread_create(&tid[i], NULL, start_together, &st[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      abort();
    }
  }
  for (i = 0; i < n; i++)
    pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&barrier);
}

void fl_test_namespace_init(int (*fn)(void *), void *arg, int32_t *init_pid)
{
  pid_t pid;
  int status;

  if (unshare(CLONE_NEWPID) != 0)
    _exit(77);
  pid = fork();
  if (pid < 0)
    _exit(2);
  if (pid == 0)
    _exit(getpid() == 1 ? fn(arg) : 3);
  if (init_pid != NULL)
    __atomic_store_n(init_pid, (int32_t)pid, __ATOMIC_RELEASE);
  if (waitpid(pid, &status, 0) != pid)
    _exit(4);
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 5);
}
