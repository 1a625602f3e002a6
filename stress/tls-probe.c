/* stress/tls-probe.c: does a thread keep its own TLS across a signal
 * handler?  Two threads record their number in TLS; the first takes a
 * signal; the second was created last, so an emulator that reloads the
 * TLS register from a table shared by all threads gives the first the
 * second's.  */
#include "config.h"

#include "tls-probe.h"

#include "sys/annotate.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static __thread int probe_id;
static int probe_started, probe_stop, probe_wrong;

static void probe_handler(int sig)
{
  (void)sig;
}

static void *probe_thread(void *p)
{
  const struct timespec pause = { 0, 100 * 1000 };
  int id = (int)(intptr_t)p;

  probe_id = id;
  __atomic_fetch_add(&probe_started, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&probe_stop, __ATOMIC_ACQUIRE))
    nanosleep(&pause, NULL);
  if (probe_id != id)
    __atomic_fetch_add(&probe_wrong, 1, __ATOMIC_RELAXED);
  return NULL;
}

int fl_signals_keep_tls(int sig)
{
  const struct timespec pause = { 0, 10 * 1000 * 1000 };
  struct sigaction sa;
  pthread_t t[2];
  int i;

  FL_VG_HIDE(&probe_started, sizeof probe_started);
  FL_VG_HIDE(&probe_stop, sizeof probe_stop);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = probe_handler;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, NULL) != 0)
    return 0;
  for (i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, probe_thread, (void *)(intptr_t)(i + 1));
  while (__atomic_load_n(&probe_started, __ATOMIC_ACQUIRE) < 2)
    nanosleep(&pause, NULL);
  /* The first thread handles a signal; the second was created last.  */
  pthread_kill(t[0], sig);
  nanosleep(&pause, NULL);
  __atomic_store_n(&probe_stop, 1, __ATOMIC_RELEASE);
  for (i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  sa.sa_handler = SIG_DFL;
  sigaction(sig, &sa, NULL);
  return __atomic_load_n(&probe_wrong, __ATOMIC_RELAXED) == 0;
}
