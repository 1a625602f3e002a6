/* tests/pthread-check.c: the drop-in tests' helpers.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread-check.h"
#include "sys/clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

void pt_assert_ours(void *fn, const char *name)
{
  Dl_info info;

  ck_assert_msg(dladdr(fn, &info) != 0, "%s: dladdr found nothing", name);
  ck_assert_msg(strstr(info.dli_fname, "libfastlock-pthread") != NULL,
                "%s is bound to %s, not to the drop-in", name, info.dli_fname);
}

int pt_in_thread(void *(*fn)(void *), void *arg)
{
  pthread_t t;
  void *ret;

  ck_assert_int_eq(pthread_create(&t, NULL, fn, arg), 0);
  ck_assert_int_eq(pthread_join(t, &ret), 0);
  return (int)(intptr_t)ret;
}

void *pt_shared(size_t size)
{
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  ck_assert_ptr_ne(p, MAP_FAILED);
  return p;
}

int pt_in_child(int (*fn)(void *), void *arg)
{
  pid_t pid = fork();
  int status, i;

  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(fn(arg));
  for (i = 0; i < 3000; i++) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  ck_abort_msg("child did not finish in 30 s");
  return -1;
}

static void *read_to_be_cancelled(void *p)
{
  char c;

  return (void *)(intptr_t)read(*(int *)p, &c, 1);
}

static int cancel_a_reader(void)
{
  int fds[2];
  pthread_t t;
  void *ret;

  if (pipe(fds) != 0 || pthread_create(&t, NULL, read_to_be_cancelled, &fds[0]))
    return 1;
  usleep(20000); /* most likely in read by now; if not, cancelled on entry */
  if (pthread_cancel(t) != 0 || pthread_join(t, &ret) != 0)
    return 1;
  return ret == PTHREAD_CANCELED ? 0 : 1;
}

const char *pt_no_cancel_unwind(void)
{
  pid_t pid = fork();
  int status;

  if (pid < 0)
    return "fork failed: cannot probe pthread_cancel";
  if (pid == 0) {
    alarm(10); /* a cancel that never ends the thread: SIGALRM ends us */
    _exit(cancel_a_reader());
  }
  if (waitpid(pid, &status, 0) != pid)
    return "waitpid failed: cannot probe pthread_cancel";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return NULL;
  return "glibc's own pthread_cancel of a thread in read() does not end "
         "the thread here (on qemu-ppc it aborts the process: the unwinder "
         "cannot leave QEMU's 32-bit PowerPC signal frame), so no "
         "cancellation point can be tested";
}

int pt_cases_run(const char *cases, const char *why)
{
  if (why == NULL)
    return 1;
  printf("SKIP: %s: the %s cases: %s\n", program_invocation_short_name, cases,
         why);
  return 0;
}

struct timespec pt_after_ms(clockid_t clock, long ms)
{
  return fl_deadline_after_ns(clock, (int64_t)ms * 1000000);
}
