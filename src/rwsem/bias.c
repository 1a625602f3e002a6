/* src/rwsem/bias.c: FL_RWSEM_READ_BIAS, readers that write no shared line.
 *
 * Every down_read through the count word writes the lock's cache line, so
 * two readers on two CPUs take turns owning it and together do less than
 * one alone.  A READ_BIAS lock lets readers announce themselves somewhere
 * else while the bias is on, in the manner of BRAVO (Dice and Kogan,
 * "BRAVO: Biased Locking for Reader-Writer Locks", USENIX ATC 2019): a
 * process-wide table of visible readers, which a writer scans.
 *
 * Why a table keyed by thread and lock, and not per-CPU reader counts:
 * the object must stay 32 bytes of fixed-width integers with no pointers
 * (DESIGN.md), so per-CPU counts could not live in it, and a table of
 * them per lock would need allocating and freeing with every lock; and a
 * per-CPU count is shared by every thread that runs on that CPU, and
 * written from whichever CPU the reader has migrated to by up_read, so it
 * needs atomic read-modify-writes anyway (or rseq).  Here each thread
 * owns one row of the table, one cache line that only it writes; a lock
 * costs 8 bytes of its object (the bias word and its id); a reader does
 * two stores into its own line and one store-load fence, and up_read one
 * plain store there, both inline in <fastlock/rwsem.h> for the lock's
 * home entry (its id modulo ROW_ENTRIES); the other entries, recursion
 * and everything else are here.  A writer pays instead: it scans the rows of
 * the threads that exist (one line each) and waits for the readers it
 * finds.  BRAVO hashes (thread, lock) into one shared table, where two
 * readers can collide on a slot and one falls back; with a row per thread
 * there is no collision, a thread's own entry tells it whether it holds
 * the lock through the table (so up_read needs no token from down_read),
 * and a recursive read while a writer waits does not deadlock.
 *
 * A row has ROW_ENTRIES entries {id, depth}: the id of a lock the thread
 * holds through the table (0: free) and how many times.  A thread gets a
 * row the first time it reads a READ_BIAS lock, and gives it back when it
 * exits (unless it exits holding read locks through it).  Threads beyond
 * ROWS, and read locks beyond ROW_ENTRIES per thread, fall back to the
 * count word: slower, never wrong.
 *
 * The bias word (s->bias): bit 0 ON, readers may use the table; bit 1
 * MODE, s is a READ_BIAS lock (the inline fastpaths test bias != 0 to send
 * its readers here); bits 31..2 the time (in ticks of 1024 ns, modulo
 * 2^30) before which the bias may not come back on.  The count word's
 * BIASED bit says the table may hold readers: a writer must revoke before
 * it enters, and down_write's fastpath fails on it (rwsem.c).  It is set
 * with ON and cleared by revocation only; ON alone may go earlier: a
 * writer that queues without a deadline, and so will revoke, closes the
 * table to new readers (fl_rwsem_bias_close), so that they come to the
 * count word, where they wait their turn.
 * Readers in the table never block, and with thirty of them on two CPUs
 * a count-word reader that was preempted, and the writer queued behind
 * it, waited 40-60 ms for a CPU.
 *
 * The handshake.  Reader: store the id into its entry; fence (store->load);
 * load the bias: still on, it holds the lock; off, it clears its entry
 * and takes the count word path.  Writer, holding the count word's WRITER
 * (so no reader can come in through the count word, and nobody can turn
 * the bias back on, which needs a read lock): store "off"; fence; scan the
 * table and wait until no entry names the lock.  Either the writer's scan
 * sees the reader's entry, or the reader's load sees "off": the fences
 * forbid both to miss.  The writer then sets the time before which the
 * bias stays off to INHIBIT_FACTOR times what revoking took, so that
 * revocation costs writers at most about a tenth of their time; a reader
 * that holds the lock through the count word after that time turns the
 * bias on again, unless waiters are queued (their turn comes first).
 *
 * Waking the writer.  A writer that has spun REVOKE_SPIN times on an
 * entry marks it (ENTRY_SLEEPER) and sleeps on it.  The library's up_read
 * empties an entry with an exchange and wakes a marked one; the inline
 * up_read empties it with a plain store when it saw no mark, so a mark
 * set between its load and its store is wiped without a wake.  The
 * futex then either sees the changed word and does not sleep, or sleeps
 * until REVOKE_POLL_NS passes: the writer looks again at least that often,
 * so such a race costs it a fraction of a millisecond, never a hang.  */
#include "config.h"

#include "rwsem/rwsem-internal.h"

#include "sys/annotate.h"
#include "sys/clock.h"
#include "sys/cpu.h"
#include "sys/futex.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#define ROWS 256
#define ROW_ENTRIES FL_RWSEM_BIAS_SLOTS
/* Set in an entry's id by a writer that sleeps until the entry changes. */
#define ENTRY_SLEEPER INT32_MIN
#define TICK_SHIFT 10
#define TICK_MASK 0x3fffffffu
#define BIAS_TIME_SHIFT 2
#define INHIBIT_FACTOR 9
#define INHIBIT_MAX (1u << 20)   /* ticks: about a second */
#define REVOKE_SPIN 100
/* A writer sleeping on an entry looks again at least this often: the
 * inline up_read empties the entry with a plain store, and does not wake
 * a writer that marked the entry just after it looked.  */
#define REVOKE_POLL_NS 200000

/* One cache line, written only by the thread that owns it.  */
struct row {
  struct fl_rwsem_bias_slot e[ROW_ENTRIES];
} __attribute__((aligned(64)));

static struct row rows[ROWS];
static int32_t rows_used[ROWS / 32];   /* bitmap of rows owned by a thread */
static int32_t rows_high;              /* rows[rows_high..] were never used */
static int32_t last_id;
/* The calling thread's row (NULL: none yet), kept in the TLS block of
 * <fastlock/rwsem.h>, where the inline fastpaths find it.  */
static struct row *my_row(void)
{
  struct fl_rwsem_bias_slot *e = fl_rwsem_thread.bias_row;

  if (e == NULL)
    return NULL;
  return &rows[((uintptr_t)e - (uintptr_t)rows) / sizeof rows[0]];
}
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static pthread_key_t row_key;

static void row_release(void *p);

static void table_setup(void)
{
  pthread_key_create(&row_key, row_release);
  /* The table is synchronised by atomics and fences the Valgrind tools
   * cannot see.  */
  FL_VG_HIDE(rows, sizeof rows);
  FL_VG_HIDE(rows_used, sizeof rows_used);
  FL_VG_HIDE(&rows_high, sizeof rows_high);
  FL_VG_HIDE(&last_id, sizeof last_id);
}

static uint32_t now_ticks(void)
{
  return (uint32_t)(fl_clock_ns(CLOCK_MONOTONIC) >> TICK_SHIFT) & TICK_MASK;
}

int32_t fl_rwsem_bias_new_id(void)
{
  int32_t id;

  pthread_once(&table_once, table_setup);
  do
    id = (int32_t)(((uint32_t)fl_atomic_fetch_add_relaxed(&last_id, 1) + 1u) &
                   (uint32_t)INT32_MAX);
  while (id == 0);
  return id;
}

/* ------------------------------------------------------------------ */
/* Rows.                                                               */
/* ------------------------------------------------------------------ */

/* At thread exit.  */
static void row_release(void *p)
{
  struct row *r = p;
  uint32_t i = (uint32_t)(r - rows);
  int j;

  fl_rwsem_thread.bias_row = NULL;
  for (j = 0; j < ROW_ENTRIES; j++)
    if (fl_load_relaxed(&r->e[j].id) != 0)
      return;   /* it still holds read locks through the row: keep it */
  /* Release: the next owner starts from our empty entries.  */
  fl_atomic_fetch_add_release(&rows_used[i / 32], (int32_t)(0u - (1u << (i % 32))));
}

static struct row *row_claim(int32_t i)
{
  int32_t high = fl_load_relaxed(&rows_high);

  /* Release: a writer that reads the new rows_high (acquire) sees the row
   * as it is now; the entries we store later reach it through the
   * reader's fence.  */
  while (high <= i) {
    int32_t seen = fl_atomic_cmpxchg_release(&rows_high, high, i + 1);
    if (seen == high)
      break;
    high = seen;
  }
  fl_rwsem_thread.bias_row = rows[i].e;
  pthread_setspecific(row_key, &rows[i]);
  return &rows[i];
}

static struct row *row_get(void)
{
  int i;

  if (my_row() != NULL)
    return my_row();
  pthread_once(&table_once, table_setup);
  for (i = 0; i < ROWS / 32; i++) {
    int32_t used = fl_load_relaxed(&rows_used[i]);

    while (used != -1) {
      int bit = __builtin_ctz(~(uint32_t)used);
      int32_t want = (int32_t)((uint32_t)used | (1u << bit));
      /* Acquire: the row's last owner left it empty.  */
      int32_t seen = fl_atomic_cmpxchg_acquire(&rows_used[i], used, want);

      if (seen == used)
        return row_claim(i * 32 + bit);
      used = seen;
    }
  }
  return NULL;
}

/* The entry of r that holds the lock named id (the sleeper bit aside).  */
static struct fl_rwsem_bias_slot *row_find(struct row *r, int32_t id)
{
  int j;

  for (j = 0; j < ROW_ENTRIES; j++)
    if ((fl_load_relaxed(&r->e[j].id) & INT32_MAX) == id)
      return &r->e[j];
  return NULL;
}

/* Where the caller reads the lock id through row r: the entry that holds
 * it already (a recursive read must not queue behind a writer that waits
 * for that entry), else its home entry (where the inline fastpaths look)
 * if free, else the first free one; NULL if the row is full of other
 * locks.  */
static struct fl_rwsem_bias_slot *row_slot(struct row *r, int32_t id)
{
  struct fl_rwsem_bias_slot *e = row_find(r, id);
  struct fl_rwsem_bias_slot *home = fl_rwsem_bias_home(r->e, id);
  int j;

  if (e != NULL)
    return e;
  if (fl_load_relaxed(&home->id) == 0)
    return home;
  for (j = 0; j < ROW_ENTRIES; j++)
    if (fl_load_relaxed(&r->e[j].id) == 0)
      return &r->e[j];
  return NULL;
}

/* Entry e of r starts (delta 1) or stops (-1) holding the lock named id:
 * keep count of the entries outside their home slot, so that the inline
 * fastpaths know when the home slot is the only place to look.  */
static void spill_count(struct row *r, struct fl_rwsem_bias_slot *e, int32_t id,
                        int delta)
{
  if (e != fl_rwsem_bias_home(r->e, id))
    fl_rwsem_thread.bias_spill += delta;
}

static void entry_clear(struct fl_rwsem_bias_slot *e)
{
  /* Release: our critical section happens before the writer that sees
   * the entry empty.  An exchange, to see at the same time whether that
   * writer sleeps on it.  */
  if (fl_atomic_xchg_release(&e->id, 0) & ENTRY_SLEEPER)
    fl_futex_wake((uint32_t *)&e->id, 1, 0);
}

/* ------------------------------------------------------------------ */
/* Readers.                                                            */
/* ------------------------------------------------------------------ */

static __thread unsigned restore_visits __attribute__((tls_model("initial-exec")));

/* The caller holds s for reading through the count word: turn the bias
 * back on if its time has come (looked at on one call in
 * FL_RWSEM_CLOCK_EVERY of a thread: the clock read would lengthen the
 * hold that writers wait for).  */
void fl_rwsem_biased_restore(fl_rwsem_t *s)
{
  int32_t b = fl_load_relaxed(&s->bias);
  uint32_t left;

  /* Not while anybody is queued either: readers in the table pass every
   * queue, hand-off included, so the bias would let them overtake the
   * writers waiting now.  The first reader after the queue empties turns
   * it back on.  */
  if ((b & FL_RWSEM_BIAS_ON) || (fl_load_relaxed(&s->count) & FL_RWSEM_WAITERS) ||
      ++restore_visits % FL_RWSEM_CLOCK_EVERY != 0)
    return;
  /* Ticks left, modulo 2^30: a time that has passed reads as more than
   * any inhibition can be.  */
  left = (((uint32_t)b >> BIAS_TIME_SHIFT) - now_ticks()) & TICK_MASK;
  if (left != 0 && left <= INHIBIT_MAX)
    return;
  /* Release: a reader that sees the bias on (acquire) sees what we saw,
   * the last writer's release included.  No writer can revoke before we
   * set BIASED: we hold a read lock.  BIASED may still be up from a close
   * that no writer has revoked yet (that writer failed): nobody else
   * changes it while we hold a read lock.  */
  if (fl_atomic_cmpxchg_release(&s->bias, b, b | FL_RWSEM_BIAS_ON) == b &&
      !(fl_load_relaxed(&s->count) & FL_RWSEM_BIASED))
    fl_atomic_fetch_add_relaxed(&s->count, FL_RWSEM_BIASED);
}

int fl_rwsem_bias_lock_read(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  struct row *r = row_get();
  int32_t id = fl_load_relaxed(&s->bias_id);
  struct fl_rwsem_bias_slot *e;
  int rc;

  if (r != NULL && (e = row_slot(r, id)) != NULL) {
    if (fl_load_relaxed(&e->id) != 0) {
      /* Held through the table already: a writer waits for this entry
       * anyway, so going in again cannot make anything worse.  */
      int32_t depth = fl_load_relaxed(&e->depth);
      if (depth == INT32_MAX)
        return EAGAIN;
      fl_store_relaxed(&e->depth, depth + 1);
      return 0;
    }
    if (fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_ON) {
      fl_store_relaxed(&e->depth, 1);
      /* Release: a writer that later finds another id here has seen our
       * earlier entry go (see entry_wait).  */
      fl_store_release(&e->id, id);
      /* Store->load: our entry before our look at the bias; the writer
       * fences between "off" and its scan.  */
      fl_smp_mb();
      /* Acquire: the critical section sees what the writers before the
       * bias came back on released.  */
      if (fl_load_acquire(&s->bias) & FL_RWSEM_BIAS_ON) {
        spill_count(r, e, id, 1);
        return 0;
      }
      entry_clear(e);
    }
  }
  rc = fl_rwsem_count_down_read(s, w);
  if (rc == 0)
    fl_rwsem_biased_restore(s);
  return rc;
}

int fl_rwsem_biased_down_read(fl_rwsem_t *s, int how)
{
  struct fl_rwsem_wait w = { how, CLOCK_MONOTONIC, NULL };
  return fl_rwsem_bias_lock_read(s, &w);
}

/* The inline down_read announced itself in its home entry and then found
 * the bias off: take the entry back and use the count word.  */
int fl_rwsem_biased_retreat(fl_rwsem_t *s, int how)
{
  struct fl_rwsem_wait w = { how, CLOCK_MONOTONIC, NULL };
  int rc;

  entry_clear(fl_rwsem_bias_home(my_row()->e, fl_load_relaxed(&s->bias_id)));
  rc = fl_rwsem_count_down_read(s, &w);
  if (rc == 0)
    fl_rwsem_biased_restore(s);
  return rc;
}

int fl_rwsem_biased_up_read(fl_rwsem_t *s)
{
  struct row *r = my_row();
  int32_t id = fl_load_relaxed(&s->bias_id);
  struct fl_rwsem_bias_slot *e = r != NULL ? row_find(r, id) : NULL;
  int32_t depth;

  if (e == NULL)
    return fl_rwsem_count_up_read(s);
  depth = fl_load_relaxed(&e->depth);
  fl_store_relaxed(&e->depth, depth - 1);
  if (depth == 1) {
    entry_clear(e);
    spill_count(r, e, id, -1);
  }
  return 0;
}

int fl_rwsem_bias_held(const fl_rwsem_t *s)
{
  return my_row() != NULL && row_find(my_row(), fl_load_relaxed(&s->bias_id)) != NULL;
}

int fl_rwsem_bias_readers(const fl_rwsem_t *s)
{
  int32_t id = fl_load_relaxed(&s->bias_id);
  int32_t i, high = fl_load_acquire(&rows_high);

  for (i = 0; i < high; i++)
    if (row_find(&rows[i], id) != NULL)
      return 1;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Writers.                                                            */
/* ------------------------------------------------------------------ */

/* Wait until e no longer names the lock id.  */
static int entry_wait(struct fl_rwsem_bias_slot *e, int32_t id,
                      const struct fl_rwsem_wait *w)
{
  struct timespec poll;
  const struct timespec *until;
  int spin;

  for (spin = 0;; spin++) {
    /* Acquire: the reader's critical section, which ended with the
     * release that emptied (or, through a later release store, reused)
     * the entry, happens before ours.  */
    int32_t v = fl_load_acquire(&e->id);

    if ((v & INT32_MAX) != id)
      return 0;
    if (w->how == FL_RWSEM_TRY)
      return EBUSY;
    if (spin < REVOKE_SPIN) {
      fl_cpu_relax();
      continue;
    }
    if (!(v & ENTRY_SLEEPER)) {
      if (fl_atomic_cmpxchg_relaxed(&e->id, v, v | ENTRY_SLEEPER) != v)
        continue;
      v |= ENTRY_SLEEPER;
    }
    poll = fl_deadline_after_ns(w->clock, REVOKE_POLL_NS);
    until = &poll;
    if (w->abstime != NULL && !fl_rwsem_after(w->abstime, &poll))
      until = w->abstime;
    if (fl_futex_wait((uint32_t *)&e->id, (uint32_t)v, 0, w->clock, until) ==
        ETIMEDOUT && until == w->abstime)
      return ETIMEDOUT;
  }
}

void fl_rwsem_bias_close(fl_rwsem_t *s)
{
  int32_t b = fl_load_relaxed(&s->bias);

  /* Relaxed: a reader that still sees ON enters the table, where the
   * writer's revocation (with its fences) will find it.  A failed
   * exchange means a reader turned the bias on or another writer closed
   * it: look again.  */
  while ((b & FL_RWSEM_BIAS_ON) &&
         fl_atomic_cmpxchg_relaxed(&s->bias, b, b & ~FL_RWSEM_BIAS_ON) != b)
    b = fl_load_relaxed(&s->bias);
}

int fl_rwsem_bias_revoke(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int32_t b = fl_load_relaxed(&s->bias);
  int32_t id = fl_load_relaxed(&s->bias_id);
  int32_t i, j, high;
  int64_t start, spent;
  uint32_t inhibit;
  int rc = 0;

  if (!(fl_load_relaxed(&s->count) & FL_RWSEM_BIASED))
    return 0;
  start = fl_clock_ns(CLOCK_MONOTONIC);
  fl_store_relaxed(&s->bias, b & ~FL_RWSEM_BIAS_ON);
  fl_atomic_fetch_add_relaxed(&s->count, -FL_RWSEM_BIASED);
  /* Store->load: "off" before the scan; the readers fence between their
   * entry and their look at the bias.  */
  fl_smp_mb();
  if (fl_rwsem_bias_held(s))
    rc = w->how == FL_RWSEM_TRY ? EBUSY : EDEADLK;
  high = fl_load_acquire(&rows_high);
  for (i = 0; rc == 0 && i < high; i++)
    for (j = 0; rc == 0 && j < ROW_ENTRIES; j++)
      rc = entry_wait(&rows[i].e[j], id, w);
  if (rc != 0) {
    /* Back to how it was: no sleeper marks of ours, the bias as it was
     * (on, or closed by a queued writer), BIASED.  */
    for (i = 0; i < high; i++)
      for (j = 0; j < ROW_ENTRIES; j++)
        fl_atomic_cmpxchg_relaxed(&rows[i].e[j].id, id | ENTRY_SLEEPER, id);
    fl_atomic_fetch_add_relaxed(&s->count, FL_RWSEM_BIASED);
    fl_store_release(&s->bias, b);
    return rc;
  }
  spent = fl_clock_ns(CLOCK_MONOTONIC) - start;
  inhibit = (uint32_t)(((uint64_t)spent * INHIBIT_FACTOR) >> TICK_SHIFT);
  if (inhibit > INHIBIT_MAX)
    inhibit = INHIBIT_MAX;
  fl_store_relaxed(&s->bias, (int32_t)((((now_ticks() + inhibit) & TICK_MASK)
                                        << BIAS_TIME_SHIFT) | FL_RWSEM_BIAS_MODE));
  return 0;
}
