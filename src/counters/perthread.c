/* src/counters/perthread.c: FL_COUNTER_PERTHREAD_SIGSAFE, the user-space
 * analog of the kernel's irq-save counter (case 2 of Menyhart and
 * Lameter, linux-ia64, "Re: light weight counters: race free through
 * local_t?").
 *
 * Each such counter gets an id at init.  Each thread that adds to one
 * gets a table of int32_t slots, one per id, in chunks of a page, so that
 * an add is: block every signal, plain load, add and store of the calling
 * thread's own slot, restore the signal mask.  Blocking the signals is
 * what makes the plain increment safe against a signal handler that adds
 * to the same counter; other threads never write the slot (destroy
 * excepted) and fl_counter_sum() only reads it, and an aligned int32_t
 * is read whole.  A slot that reaches the batch is moved into the count.
 *
 * The registry, every table in a list plus an owner[id] array naming the
 * counter of each id, is under registry_lock.  That lock is only ever
 * taken with every signal blocked, so a signal handler that takes it (an
 * add that folds or makes the first table) can only wait for another
 * thread, never for the one it interrupted.  Moves from a slot into the
 * count (folds, thread exit) happen under the lock, and so does
 * fl_counter_sum(): it sees each value exactly once.
 *
 * Tables and chunks are mmap()ed, since the first add of a thread may
 * come from a signal handler, where malloc() may not be called; mmap() is
 * a plain system call.  A thread's table is found through an
 * initial-exec TLS pointer (no allocation on first access in a thread)
 * and freed by a pthread key destructor at thread exit, which first moves
 * every nonzero slot into its counter's count.  Registering that
 * destructor (pthread_setspecific) allocates nothing in glibc for the
 * first 32 keys; the key is created at the first PERTHREAD_SIGSAFE init.
 * If any of this fails, the add goes straight into the count: slower,
 * never lost.
 *
 * Invariant: the slot of a free id is 0 in every table (chunks start
 * zeroed; destroy zeroes the id in every table).  */
#include "config.h"

#include <fastlock/counter.h>

#include "counters/counter-internal.h"
#include "sys/annotate.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A table holds this many chunks, each a page of slots: with 4 KiB pages,
 * 65536 ids.  */
#define FL_COUNTER_CHUNKS 64

struct fl_counter_table {
  struct fl_counter_table *next, *prev;
  int32_t *chunk[FL_COUNTER_CHUNKS];
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fl_counter_table registry = { &registry, &registry, { NULL } };
static fl_counter_t **owner;
static uint32_t owner_len;

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int setup_error;
static size_t chunk_bytes;
static uint32_t slots_per_chunk;
static pthread_key_t exit_key;
static sigset_t all_signals;
static sigset_t fork_mask;

static __thread struct fl_counter_table *self
    __attribute__((tls_model("initial-exec")));

static void block_signals(sigset_t *old)
{
  pthread_sigmask(SIG_BLOCK, &all_signals, old);
}

static void restore_signals(const sigset_t *old)
{
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void registry_lock_blocked(sigset_t *old)
{
  block_signals(old);
  pthread_mutex_lock(&registry_lock);
}

static void registry_unlock_restore(const sigset_t *old)
{
  pthread_mutex_unlock(&registry_lock);
  restore_signals(old);
}

/* fork() while another thread holds the lock would leave it locked in the
 * child: take it around fork, with the signals blocked as always.  */
static void fork_prepare(void)
{
  registry_lock_blocked(&fork_mask);
}

static void fork_release(void)
{
  registry_unlock_restore(&fork_mask);
}

static void *map_zeroed(size_t size)
{
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static int32_t *slot_in(const struct fl_counter_table *t, uint32_t id)
{
  int32_t *chunk = t->chunk[id / slots_per_chunk];
  return chunk != NULL ? &chunk[id % slots_per_chunk] : NULL;
}

/* Thread exit: move every nonzero slot into its counter, then free.  */
static void table_exit(void *arg)
{
  struct fl_counter_table *t = arg;
  sigset_t old;
  uint32_t k, i;

  registry_lock_blocked(&old);
  for (k = 0; k < FL_COUNTER_CHUNKS; k++) {
    if (t->chunk[k] == NULL)
      continue;
    for (i = 0; i < slots_per_chunk; i++) {
      uint32_t id = k * slots_per_chunk + i;
      int32_t x = fl_load_relaxed(&t->chunk[k][i]);
      if (x != 0 && id < owner_len && owner[id] != NULL)
        fl_counter_count_add_direct(&owner[id]->core, x);
    }
  }
  t->prev->next = t->next;
  t->next->prev = t->prev;
  pthread_mutex_unlock(&registry_lock);
  self = NULL;
  for (k = 0; k < FL_COUNTER_CHUNKS; k++)
    if (t->chunk[k] != NULL)
      munmap(t->chunk[k], chunk_bytes);
  munmap(t, sizeof *t);
  restore_signals(&old);
}

static void setup(void)
{
  long page = sysconf(_SC_PAGESIZE);

  chunk_bytes = page > 0 ? (size_t)page : 4096;
  slots_per_chunk = (uint32_t)(chunk_bytes / sizeof(int32_t));
  sigfillset(&all_signals);
  if (pthread_key_create(&exit_key, table_exit) != 0
      || pthread_atfork(fork_prepare, fork_release, fork_release) != 0)
    setup_error = EAGAIN;
}

/* The calling thread's slot for id, making its table and the chunk on
 * first use; NULL if that cannot be done.  Signals are blocked.  */
static int32_t *self_slot(uint32_t id)
{
  struct fl_counter_table *t = self;
  int32_t *chunk;

  if (t == NULL) {
    t = map_zeroed(sizeof *t);
    if (t == NULL)
      return NULL;
    if (pthread_setspecific(exit_key, t) != 0) {
      munmap(t, sizeof *t);
      return NULL;
    }
    pthread_mutex_lock(&registry_lock);
    t->next = registry.next;
    t->prev = &registry;
    registry.next->prev = t;
    registry.next = t;
    pthread_mutex_unlock(&registry_lock);
    self = t;
  }
  chunk = t->chunk[id / slots_per_chunk];
  if (chunk == NULL) {
    chunk = map_zeroed(chunk_bytes);
    if (chunk == NULL)
      return NULL;
    /* Written by this thread, read by fl_counter_sum() in others, with
     * nothing but single-copy atomicity between them: hidden from the
     * Valgrind tools, like the per-CPU slots.  */
    FL_VG_HIDE(chunk, chunk_bytes);
    pthread_mutex_lock(&registry_lock);
    t->chunk[id / slots_per_chunk] = chunk;
    pthread_mutex_unlock(&registry_lock);
  }
  return &chunk[id % slots_per_chunk];
}

int fl_counter_perthread_init(fl_counter_t *c)
{
  sigset_t old;
  uint32_t id, max, len;
  int rc = 0;

  pthread_once(&setup_once, setup);
  if (setup_error != 0)
    return setup_error;
  max = FL_COUNTER_CHUNKS * slots_per_chunk;

  registry_lock_blocked(&old);
  for (id = 0; id < owner_len && owner[id] != NULL; id++)
    continue;
  if (id == owner_len) {
    len = owner_len != 0 ? owner_len * 2 : 64;
    if (len > max)
      len = max;
    if (id == len) {
      rc = EAGAIN;
    } else {
      fl_counter_t **grown = realloc(owner, len * sizeof *owner);
      if (grown == NULL) {
        rc = ENOMEM;
      } else {
        memset(grown + owner_len, 0, (len - owner_len) * sizeof *owner);
        owner = grown;
        owner_len = len;
      }
    }
  }
  if (rc == 0) {
    owner[id] = c;
    c->id = id;
  }
  registry_unlock_restore(&old);
  return rc;
}

void fl_counter_perthread_destroy(fl_counter_t *c)
{
  struct fl_counter_table *t;
  sigset_t old;

  registry_lock_blocked(&old);
  owner[c->id] = NULL;
  for (t = registry.next; t != &registry; t = t->next) {
    int32_t *slot = slot_in(t, c->id);
    if (slot != NULL)
      fl_store_relaxed(slot, 0);
  }
  registry_unlock_restore(&old);
}

void fl_counter_perthread_add(fl_counter_t *c, int32_t delta)
{
  sigset_t old;
  int32_t *slot;
  int32_t v;

  block_signals(&old);
  slot = self_slot(c->id);
  if (slot == NULL) {
    fl_counter_count_add_direct(&c->core, delta);
  } else {
    v = (int32_t)((uint32_t)fl_load_relaxed(slot) + (uint32_t)delta);
    fl_store_relaxed(slot, v);
    if (!fl_counter_slot_in_batch(v)) {
      pthread_mutex_lock(&registry_lock);
      fl_counter_count_add_direct(&c->core, v);
      fl_store_relaxed(slot, 0);
      pthread_mutex_unlock(&registry_lock);
    }
  }
  restore_signals(&old);
}

int64_t fl_counter_perthread_sum(fl_counter_t *c)
{
  struct fl_counter_table *t;
  sigset_t old;
  uint64_t v;

  registry_lock_blocked(&old);
  v = (uint64_t)fl_counter_snapshot(c, 0);
  for (t = registry.next; t != &registry; t = t->next) {
    int32_t *slot = slot_in(t, c->id);
    if (slot != NULL)
      v += (uint64_t)(int64_t)fl_load_relaxed(slot);
  }
  registry_unlock_restore(&old);
  return (int64_t)v;
}

int fl_counter_perthread_threads(void)
{
  struct fl_counter_table *t;
  sigset_t old;
  int n = 0;

  registry_lock_blocked(&old);
  for (t = registry.next; t != &registry; t = t->next)
    n++;
  registry_unlock_restore(&old);
  return n;
}

int32_t *fl_counter_perthread_slot_of_self(const fl_counter_t *c)
{
  return self != NULL ? slot_in(self, c->id) : NULL;
}
