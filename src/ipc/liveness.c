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
/* The registry of this process's regions, for the fork handler, and
 * the thread id cache.                                                */
/* ------------------------------------------------------------------ */

#define MAX_OPEN 64
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static fl_ipc_t *registry[MAX_OPEN];
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static __thread uint32_t self_tid __attribute__((tls_model("initial-exec")));

static void fork_child(void)
{
  int i;

  self_tid = 0;
  /* The child has one thread: nobody else touches the registry.  */
  for (i = 0; i < MAX_OPEN; i++)
    if (registry[i] != NULL) {
      close(registry[i]->fd);
      registry[i]->fd = -1;
      registry[i] = NULL;
    }
  pthread_mutex_init(&registry_lock, NULL);
}

static void fork_setup(void)
{
  pthread_atfork(NULL, NULL, fork_child);
}

uint32_t fl_ipc_tid(void)
{
  if (self_tid == 0) {
    pthread_once(&fork_once, fork_setup);
    self_tid = (uint32_t)syscall(SYS_gettid);
  }
  return self_tid;
}

int fl_ipc_register(fl_ipc_t *r, int add)
{
  int i, rc = add ? EMFILE : 0;

  pthread_once(&fork_once, fork_setup);
  pthread_mutex_lock(&registry_lock);
  for (i = 0; i < MAX_OPEN; i++) {
    if (add && registry[i] == NULL) {
      registry[i] = r;
      rc = 0;
      break;
    }
    if (!add && registry[i] == r) {
      registry[i] = NULL;
      break;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return rc;
}
