/* src/pthread/tsan.c: the drop-in in a ThreadSanitizer program.
 *
 * A program compiled with -fsanitize=thread carries TSan's interceptors
 * of the pthread functions, which call the "real" functions they find as
 * the runtime starts: most by plain dlsym(RTLD_NEXT), which finds the
 * preloaded drop-in first, but pthread_cond_* by dlvsym(RTLD_NEXT, name,
 * glibc's version of the current condition variables, GLIBC_2.3.2 on
 * x86), which the drop-in's unversioned definitions do not satisfy: the
 * program's condition variables stay glibc's.  glibc's condition wait
 * would then release and retake a drop-in mutex as if it were glibc's,
 * and hang.
 *
 * So in such a program the drop-in hands every mutex and condition
 * variable to glibc (fl_pt_tsan: mutex.c takes the path of the PI and PP
 * kinds for every mutex, cond.c calls glibc's functions), while its
 * rwlocks, spinlocks and semaphores, which TSan reaches through plain
 * dlsym and which stand alone, stay the drop-in's.  TSan sees every one
 * of these calls through its interceptors; the drop-in's own atomics are
 * not instrumented, so they draw no report.
 *
 * The test is the runtime's __tsan_init, which every TSan program
 * exports: a weak reference here is null anywhere else.  It runs first
 * among the drop-in's constructors, before any lock of the program.  If
 * glibc's functions cannot be found, the program stops with a message
 * (status 70) rather than hang later.  */
#include "config.h"

#include "pthread/internal.h"

#include <string.h>
#include <unistd.h>

void __tsan_init(void) __attribute__((weak));

int fl_pt_tsan;

#define FL_PT_TSAN_EXIT 70

__attribute__((constructor(101))) static void hand_to_glibc_under_tsan(void)
{
  static const char msg[] =
      "fastlock-pthread: this program is built with ThreadSanitizer and "
      "glibc's pthread_mutex_* or pthread_cond_* cannot be found: run it "
      "without libfastlock-pthread (fastlock-pthread(3))\n";
  ssize_t said;

  if (__tsan_init == 0)
    return;
  if (fl_pt_glibc_resolve() == 0) {
    fl_pt_tsan = 1;
    return;
  }
  said = write(STDERR_FILENO, msg, strlen(msg));
  (void)said; /* nothing better to do if standard error is gone */
  _exit(FL_PT_TSAN_EXIT);
}
