/* src/pthread/tsan.c: the drop-in refuses to run in a ThreadSanitizer
 * program, which it cannot serve.
 *
 * A program compiled with -fsanitize=thread carries TSan's interceptors
 * of the pthread functions, which call the "real" functions they find
 * when the runtime starts: pthread_mutex_* by plain dlsym(RTLD_NEXT),
 * which finds the preloaded drop-in first, but pthread_cond_* by
 * dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2") on x86, which an unversioned
 * definition does not satisfy, so they stay glibc's.  glibc's condition
 * wait then releases and retakes a drop-in mutex as if it were glibc's,
 * and the program hangs or worse.  So the drop-in stops the program at
 * once, with a message that says why, rather than let it hang: TSan
 * checks the program's own synchronisation through glibc's locks, which
 * is all it can check anyway (fastlock-pthread(3)).
 *
 * The test is the runtime's __tsan_init, which every TSan program
 * exports: a weak reference here is null anywhere else.  */
#include "config.h"

#include <string.h>
#include <unistd.h>

void __tsan_init(void) __attribute__((weak));

#define FL_PT_TSAN_EXIT 70

__attribute__((constructor(101))) static void refuse_under_tsan(void)
{
  static const char msg[] =
      "fastlock-pthread: this program is built with ThreadSanitizer, whose "
      "interceptors bind pthread_cond_* to glibc and the mutexes to the "
      "drop-in: run it without libfastlock-pthread (fastlock-pthread(3))\n";

  ssize_t said;

  if (__tsan_init == 0)
    return;
  said = write(STDERR_FILENO, msg, strlen(msg));
  (void)said; /* nothing better to do if standard error is gone */
  _exit(FL_PT_TSAN_EXIT);
}
