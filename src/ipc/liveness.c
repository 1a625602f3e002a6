/* src/ipc/liveness.c: who is this thread, and is that process alive?
 *
 * Owner identity.  A mutex owner is a client tag (the slot the process
 * claimed in the region, with a generation) and a kernel thread id.  The
 * slot is unique in the region whatever PID namespace each process lives
 * in, and thread ids are unique within one process's namespace, so the
 * pair is unique; a process id is never compared across processes.
 *
 * Death detection: open file description locks.  When a process opens a
 * region it opens the region's file for itself (a new open file
 * description, O_CLOEXEC) and takes an F_OFD_SETLK write lock on one
 * byte: the byte at the offset of its client slot's index.  The kernel
 * drops that lock when the last reference to the open file description
 * goes, i.e. when the process exits or is killed (in exit_files(), before
 * its parent can reap it), whatever killed it.  Anyone can ask with
 * F_OFD_GETLK whether the byte is still locked: if not, the process is
 * gone.  This needs no server, no signal permission and no shared PID
 * namespace, and a PID reused by an unrelated process cannot fool it.
 *
 * Alternatives weighed: a pidfd (pidfd_open) is namespace-bound and each
 * prober would have to open its own; kill(pid, 0) is namespace-bound and
 * fooled by PID reuse; the kernel robust list would undo the lock word at
 * the exact moment of death, but glibc owns each thread's single robust
 * list head (its robust pthread mutexes live there), and our objects'
 * owners are (process, thread) pairs, not futex words the kernel could
 * rewrite.
 *
 * Caveat: the description must not outlive the process.  A fork child
 * would inherit it, so a fork handler closes every region's descriptor
 * in the child (an inherited fl_ipc_t then fails with ENOTCONN: the child
 * opens the region anew); passing it to another process is not done.
 *
 * Time bound: probes are made (a) by a sleeper on the region lock each
 * time FL_IPC_PROBE_MS passes without it getting the lock, and (b) by a
 * waiter for a mutex, before it sleeps and each FL_IPC_PROBE_MS while it
 * sleeps.  So a death is acted on within FL_IPC_PROBE_MS (20 ms) of
 * the kernel dropping the lock, plus the time to get a CPU and the region
 * lock.  tests/test-ipc-death.c checks that a death is found with nobody
 * to wake the waiter (no server, the dead owner's wake never made) within
 * one probe interval slept after the kernel dropped the lock (counted in
 * fl_ipc_probe_naps, with a margin of one), and prints how long it took;
 * it asserts no wall time, as no test here does (the machines are shared:
 * a bound in wall time would fail on load, not on a bug).  */
#include "config.h"

#include "ipc/ipc-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static int probe_lock(int fd, int cmd, short type, uint32_t index)
{
  struct flock fl = { 0 };

  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = (off_t)index;
  fl.l_len = 1;
  fl.l_pid = 0; /* required by the OFD commands */
  if (fcntl(fd, cmd, &fl) != 0)
    return -errno;
  return fl.l_type;
}

int32_t fl_ipc_probe_naps;

int fl_ipc_client_alive(fl_ipc_t *r, uint32_t index)
{
  int t;

  /* Our own lock never conflicts with our own probe.  */
  if (index == r->client)
    return 1;
  t = probe_lock(r->fd, F_OFD_GETLK, F_WRLCK, index);
  /* A probe that fails says nothing: count the process as alive and ask
   * again at the next probe.  */
  return t < 0 || t != F_UNLCK;
}

int fl_ipc_liveness_claim(fl_ipc_t *r, uint32_t index)
{
  int t = probe_lock(r->fd, F_OFD_SETLK, F_WRLCK, index);
  return t < 0 ? -t : 0;
}

void fl_ipc_liveness_release(fl_ipc_t *r)
{
  probe_lock(r->fd, F_OFD_SETLK, F_UNLCK, r->client);
}

/* ------------------------------------------------------------------ */
/* The registry of this process's regions, for the fork handler and the
 * thread-exit hook, and the thread id cache.                          */
/* ------------------------------------------------------------------ */

#define MAX_OPEN 64
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static fl_ipc_t *registry[MAX_OPEN];
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static __thread uint32_t self_tid __attribute__((tls_model("initial-exec")));

/* The thread-exit hook.  A thread that acquires a mutex sets exit_key's
 * value once (fl_ipc_watched says it did), so that glibc runs
 * thread_exit when the thread ends by returning from its start routine,
 * pthread_exit or cancellation; a process's end (exit, a signal, exec)
 * runs no key destructor, and needs none: the process's death abandons
 * all its mutexes.  pthread_setspecific allocates nothing in glibc for
 * the first 32 keys of a process (they live in the thread's descriptor;
 * a later key's first value callocs a block of 32 per thread), and the
 * key is made at the first region opened, early; past 32 the one
 * allocation per thread happens on the lock path, and if it fails the
 * thread is not watched (its mutexes are abandoned with its process, as
 * before) and the next acquisition tries again.  A fork child's thread
 * keeps its value and fl_ipc_watched (glibc copies the thread's
 * descriptor and TLS), and the child's registry starts empty.  */
__thread int32_t fl_ipc_watched __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static int exit_key_made;

/* Lock order: registry_lock, then a region lock.  No one takes them the
 * other way: fl_ipc_close leaves the registry after its last section,
 * join enters it before its first.  Holding registry_lock keeps every
 * listed view from being freed (fl_ipc_close unregisters before it
 * closes the descriptor and unmaps), so the hook never uses a closed one,
 * and while the process has no region listed it does nothing.  */
static void thread_exit(void *unused)
{
  uint32_t tid = fl_ipc_tid();
  int i;

  (void)unused;
  /* Another key's destructor may still take a mutex: it must set the
   * value again (glibc then runs the destructors once more).  */
  fl_ipc_watched = 0;
  pthread_mutex_lock(&registry_lock);
  for (i = 0; i < MAX_OPEN; i++)
    if (registry[i] != NULL && registry[i]->listed == FL_IPC_LISTED_ALL)
      fl_ipc_thread_exit(registry[i], tid);
  pthread_mutex_unlock(&registry_lock);
}

static void fork_child(void)
{
  int i;

  self_tid = 0;
  /* The child has one thread: nobody else touches the registry.  */
  for (i = 0; i < MAX_OPEN; i++)
    if (registry[i] != NULL) {
      close(registry[i]->fd);
      registry[i]->fd = -1;
      registry[i]->listed = FL_IPC_UNLISTED;
      registry[i] = NULL;
    }
  pthread_mutex_init(&registry_lock, NULL);
}

/* Once per process, before the first region is listed or the first
 * thread id read.  */
static void setup(void)
{
  pthread_atfork(NULL, NULL, fork_child);
  exit_key_made = pthread_key_create(&exit_key, thread_exit) == 0;
}

uint32_t fl_ipc_tid(void)
{
  if (self_tid == 0) {
    pthread_once(&setup_once, setup);
    self_tid = (uint32_t)syscall(SYS_gettid);
  }
  return self_tid;
}

void fl_ipc_watch_slow(void)
{
  pthread_once(&setup_once, setup);
  if (exit_key_made && pthread_setspecific(exit_key, &fl_ipc_watched) == 0)
    fl_ipc_watched = 1;
}

/* r's entry is the one holding r if it is listed, else a free one.  */
int fl_ipc_register(fl_ipc_t *r, int listed)
{
  int i, rc = 0;

  pthread_once(&setup_once, setup);
  pthread_mutex_lock(&registry_lock);
  for (i = 0; i < MAX_OPEN; i++)
    if (registry[i] == (r->listed != FL_IPC_UNLISTED ? r : NULL))
      break;
  if (i == MAX_OPEN) {
    rc = EMFILE;
  } else {
    registry[i] = listed != FL_IPC_UNLISTED ? r : NULL;
    r->listed = listed;
  }
  pthread_mutex_unlock(&registry_lock);
  return rc;
}
