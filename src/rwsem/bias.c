/* src/rwsem/bias.c: FL_RWSEM_READ_BIAS, readers that write no shared line.
 *
 * Every down_read through the count word writes the lock's cache line, so
 * two readers on two CPUs take turns owning it.  A READ_BIAS lock lets
 * readers announce themselves elsewhere while the bias is on, in the
 * manner of BRAVO (Dice and Kogan, "BRAVO: Biased Locking for
 * Reader-Writer Locks", USENIX ATC 2019): a process-wide table of visible
 * readers, which a writer scans.
 *
 * Why a table keyed by thread: the object must stay 32 bytes of
 * fixed-width integers with no pointers, so per-CPU reader counts could
 * not live in it; and a per-CPU count is written from whichever CPU the
 * reader has migrated to by up_read, so it needs atomic read-modify-writes
 * anyway.  Here each thread owns one row, one cache line that only it
 * writes, of ROW_SLOTS one-word slots (<fastlock/bits/rwsem.h>: the lock's
 * id in bits 0..23, the depth minus one in bits 24..30, the sign set by a
 * writer that sleeps on the slot).  A reader does one store into its own
 * line and one store-load fence, and up_read one plain store: inline, for
 * slot 0 at depth 1.  Recursion, other slots and everything else are
 * here.  A thread gets a row the first time it reads a READ_BIAS lock and
 * gives it back when it exits (unless it exits holding read locks through
 * it); until then, and in a process a tool watches, its row is NO_ROW.
 * Threads beyond ROWS, and locks beyond ROW_SLOTS per thread, use the
 * count word: slower, never wrong.
 *
 * The bias word (s->bias): ON, MODE, WATCHED (<fastlock/bits/rwsem.h>),
 * and in bits 30..3 the time (ticks of 1024 ns, modulo 2^28) before which
 * the bias may not come back.  It goes on and off ONLY by a CAS of the
 * whole word.  The count word's BIASED says the table may hold readers: a
 * writer that takes WRITER must revoke before it enters.  BIASED is set
 * and cleared ONLY by a CAS that ORs or ANDs it in (never added), and it
 * is set BEFORE the bias goes on: so whenever a reader can enter the
 * table, BIASED is in the count word, and a writer that takes WRITER sees
 * it.  Two readers that both restore the bias both OR the same bit in:
 * no carry, no lost flag (the defect of the earlier design, which added
 * BIASED after reading the count).
 *
 * Protocol v2 (rwsem.c): a writer about to wait closes the table (bias
 * off, BIASED stays: readers inside drain, new readers go to the count
 * word, where WPEND makes them wait their turn); the bias comes back only
 * while nobody waits (no SLOW), and not before INHIBIT_FACTOR times what
 * the last revocation cost has passed.
 *
 * The handshake.  Reader: store its slot; fence (store->load); load the
 * bias: still on, it holds the lock; off, it clears its slot and takes
 * the count word path.  Writer, holding WRITER (so no reader can come in
 * through the count word, and nobody can turn the bias back on, which
 * needs a read lock): bias off; clear BIASED; fence; scan the table and
 * wait until no slot names the lock.  The fences forbid both to miss.
 *
 * Waking the writer.  A writer that has spun REVOKE_SPIN times on a slot
 * marks it (the sign bit) and sleeps on it.  The library's up_read empties
 * a slot with an exchange and wakes a marked one; the inline up_read
 * empties it with a plain store only when it saw no mark, so a mark set
 * between its load and its store is wiped without a wake: the writer
 * sleeps at most REVOKE_POLL_NS at a time, so that costs it a fraction of
 * a millisecond, never a hang.  */
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
#define ROW_SLOTS FL_RWSEM_BIAS_SLOTS
#define ID_MASK FL_RWSEM_BIAS_ID_MASK
#define DEPTH_ONE (1 << 24)
#define DEPTH_MAX 0x7f
#define SLEEPER INT32_MIN
#define TICK_SHIFT 10
#define TICK_MASK 0x0fffffffu
#define BIAS_TIME_SHIFT 3
#define BIAS_FLAGS                                                             \
 (FL_RWSEM_BIAS_ON | FL_RWSEM_BIAS_MODE | FL_RWSEM_BIAS_WATCHED)
#define INHIBIT_FACTOR 9
#define INHIBIT_MAX (1u << 20) /* ticks: about a second */
#define REVOKE_SPIN 100
#define REVOKE_POLL_NS 200000
/* A reader that holds the lock through the count word looks whether the
 * bias may come back on one visit in this many: the clock read costs
 * more than the lock.  */
#define RESTORE_EVERY 8

/* One cache line, written only by the thread that owns it.  */
struct row {
  int32_t e[ROW_SLOTS];
} __attribute__((aligned(64)));

static struct row rows[ROWS];
/* The row of a thread that has none: its one slot is never free and names
 * no lock, so the inline paths come here (<fastlock/bits/rwsem.h>).  Never
 * written.  */
const int32_t fl_rwsem_no_row = FL_RWSEM_BIAS_NO_ROW;
static int32_t rows_used[ROWS / 32]; /* bitmap of rows owned by a thread */
static int32_t rows_high;            /* rows[rows_high..] were never used */
static int32_t last_id;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static pthread_key_t row_key;

static struct row *my_row(void)
{
  int32_t *e = fl_rwsem_thread.bias_row;

  return e == NO_ROW ? NULL : (struct row *)(void *)e;
}

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
    id = (fl_atomic_fetch_add_relaxed(&last_id, 1) + 1) & ID_MASK;
  while (id == 0);
  return id;
}

/* ------------------------------------------------------------------ */
/* Rows and slots.                                                     */
/* ------------------------------------------------------------------ */

/* At thread exit.  */
static void row_release(void *p)
{
  struct row *r = p;
  uint32_t i = (uint32_t)(r - rows);
  int j;

  fl_rwsem_thread.bias_row = NO_ROW;
  for (j = 0; j < ROW_SLOTS; j++)
    if (fl_load_relaxed(&r->e[j]) != 0)
      return; /* it still holds read locks through the row: keep it */
  /* Release: the next owner starts from our empty slots.  */
  fl_atomic_fetch_add_release(&rows_used[i / 32],
                              (int32_t)(0u - (1u << (i % 32))));
}

static struct row *row_claim(int32_t i)
{
  int32_t high = fl_load_relaxed(&rows_high);

  /* Release: a writer that reads the new rows_high (acquire) sees the row
   * as it is now; later slot stores reach it through the reader's fence. */
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
  /* No row while a tool watches: the inline fastpaths rely on it to send
   * every watched read here (<fastlock/bits/rwsem.h>).  */
  if (fl_load_relaxed(&fl_tools_active) != 0)
    return NULL;
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

static int names(int32_t v, int32_t id)
{
  return v != 0 && (v & ID_MASK) == id;
}

/* The slot of r that holds the lock named id.  */
static int32_t *row_find(struct row *r, int32_t id)
{
  int j;

  for (j = 0; j < ROW_SLOTS; j++)
    if (names(fl_load_relaxed(&r->e[j]), id))
      return &r->e[j];
  return NULL;
}

/* Where the caller reads the lock id through r: the slot that holds it
 * already (a recursive read must not queue behind a writer that waits
 * for that slot), else the first free one (slot 0 if free, which the
 * inline up_read empties); NULL if the row is full of other locks.  */
static int32_t *row_slot(struct row *r, int32_t id)
{
  int32_t *e = row_find(r, id);
  int j;

  if (e != NULL)
    return e;
  for (j = 0; j < ROW_SLOTS; j++)
    if (fl_load_relaxed(&r->e[j]) == 0)
      return &r->e[j];
  return NULL;
}

static void slot_clear(int32_t *e)
{
  /* Release: our critical section happens before the writer that sees
   * the slot empty.  An exchange, to see whether that writer sleeps.  */
  if (fl_atomic_xchg_release(e, 0) & SLEEPER)
    fl_futex_wake((uint32_t *)e, 1, 0);
}

/* Add delta to the depth of our slot e; a writer may set SLEEPER in it
 * meanwhile, hence a CAS.  */
static void slot_depth(int32_t *e, int32_t delta)
{
  int32_t v = fl_load_relaxed(e);

  while (fl_atomic_cmpxchg_relaxed(e, v, v + delta) != v)
    v = fl_load_relaxed(e);
}

/* ------------------------------------------------------------------ */
/* The count word's BIASED bit: ORed and ANDed by CAS, never added.    */
/* ------------------------------------------------------------------ */

static void count_or(fl_rwsem_t *s, int32_t bit)
{
  int32_t c = fl_load_relaxed(&s->count);

  while (!(c & bit)) {
    int32_t seen = fl_atomic_cmpxchg_relaxed(&s->count, c, c | bit);
    if (seen == c)
      break;
    c = seen;
  }
}

static void count_and_not(fl_rwsem_t *s, int32_t bit)
{
  int32_t c = fl_load_relaxed(&s->count);

  while (c & bit) {
    int32_t seen = fl_atomic_cmpxchg_relaxed(&s->count, c, c & ~bit);
    if (seen == c)
      break;
    c = seen;
  }
}

/* ------------------------------------------------------------------ */
/* Readers.                                                            */
/* ------------------------------------------------------------------ */

static __thread unsigned restore_visits
    __attribute__((tls_model("initial-exec")));

/* The caller holds s for reading through the count word: turn the bias
 * back on if nobody waits and its time has come.  No writer can hold
 * WRITER meanwhile (we hold a read lock), so none can be revoking; a
 * writer may close the table at any moment, which only delays the bias.  */
static void restore(fl_rwsem_t *s)
{
  int32_t b = fl_load_relaxed(&s->bias);
  uint32_t left;

  if ((b & FL_RWSEM_BIAS_ON) || (fl_load_relaxed(&s->count) & FL_RWSEM_SLOW)
      || ++restore_visits % RESTORE_EVERY != 0)
    return;
  /* Ticks left, modulo 2^28: a time that has passed reads as more than
   * any inhibition can be.  */
  left = (((uint32_t)b >> BIAS_TIME_SHIFT) - now_ticks()) & TICK_MASK;
  if (left != 0 && left <= INHIBIT_MAX)
    return;
  /* BIASED first, then ON: a reader can enter the table only once a
   * writer that takes WRITER is sure to see BIASED.  Release: a reader
   * that sees ON (acquire) sees what we saw, the last writer's release
   * included.  */
  count_or(s, FL_RWSEM_BIASED);
  fl_atomic_cmpxchg_release(&s->bias, b, b | FL_RWSEM_BIAS_ON);
}

int fl_rwsem_bias_lock_read(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  struct row *r = row_get();
  int32_t id = fl_load_relaxed(&s->bias_id);
  int32_t *e;
  int rc;

  if (r != NULL && (e = row_slot(r, id)) != NULL) {
    int32_t v = fl_load_relaxed(e);

    if (v != 0) {
      /* Held through the table already: a writer waits for this slot
       * anyway, so going in again makes nothing worse.  */
      if (((v >> 24) & DEPTH_MAX) != DEPTH_MAX) {
        slot_depth(e, DEPTH_ONE);
        return 0;
      }
    } else if (fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_ON) {
      /* As the inline fastpath (<fastlock/bits/rwsem.h>).  */
      fl_store_release(e, id);
      fl_smp_mb();
      if (fl_load_acquire(&s->bias) & FL_RWSEM_BIAS_ON)
        return 0;
      slot_clear(e);
    }
  }
  rc = fl_rwsem_count_down_read(s, w);
  if (rc == 0)
    restore(s);
  return rc;
}

int fl_rwsem_biased_down_read(fl_rwsem_t *s, int how)
{
  struct fl_rwsem_wait w = FL_RWSEM_NO_DEADLINE(how);

  if (fl_load_relaxed(&fl_tools_active) != 0)
    return fl_rwsem_tool_down_read(s, how);
  if (!(fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_MODE))
    return fl_rwsem_count_down_read(s, &w); /* watched once, not now */
  return fl_rwsem_bias_lock_read(s, &w);
}

/* The inline down_read announced itself in slot 0 and then found the
 * bias off: take the slot back and use the count word.  */
int fl_rwsem_biased_retreat(fl_rwsem_t *s, int how)
{
  struct fl_rwsem_wait w = FL_RWSEM_NO_DEADLINE(how);
  int rc;

  slot_clear(&my_row()->e[0]);
  rc = fl_rwsem_count_down_read(s, &w);
  if (rc == 0 && (fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_MODE))
    restore(s);
  return rc;
}

int fl_rwsem_bias_unlock_read(fl_rwsem_t *s)
{
  struct row *r = my_row();
  int32_t id = fl_load_relaxed(&s->bias_id);
  int32_t *e = r != NULL && id != 0 ? row_find(r, id) : NULL;

  if (e == NULL)
    return fl_rwsem_count_up_read(s);
  if ((fl_load_relaxed(e) >> 24) & DEPTH_MAX)
    slot_depth(e, -DEPTH_ONE);
  else
    slot_clear(e);
  return 0;
}

int fl_rwsem_biased_up_read(fl_rwsem_t *s)
{
  if ((fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_WATCHED)
      && fl_load_relaxed(&fl_tools_active) != 0)
    return fl_rwsem_tool_up_read(s);
  return fl_rwsem_bias_unlock_read(s);
}

int fl_rwsem_bias_held(const fl_rwsem_t *s)
{
  int32_t id = fl_load_relaxed(&s->bias_id);

  return id != 0 && my_row() != NULL && row_find(my_row(), id) != NULL;
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

/* Wait until slot e no longer names the lock id.  */
static int slot_wait(int32_t *e, int32_t id, const struct fl_rwsem_wait *w)
{
  struct timespec poll;
  const struct timespec *until;
  int spin;

  for (spin = 0;; spin++) {
    /* Acquire: the reader's critical section, which ended with the
     * release that emptied (or reused) the slot, happens before ours.  */
    int32_t v = fl_load_acquire(e);

    if (!names(v, id))
      return 0;
    if (w->how == FL_RWSEM_TRY)
      return EBUSY;
    if (spin < REVOKE_SPIN) {
      fl_cpu_relax();
      continue;
    }
    if (!(v & SLEEPER)) {
      if (fl_atomic_cmpxchg_relaxed(e, v, v | SLEEPER) != v)
        continue;
      v |= SLEEPER;
    }
    poll = fl_deadline_after_ns(w->clock, REVOKE_POLL_NS);
    until = &poll;
    if (w->abstime != NULL && !fl_rwsem_after(w->abstime, &poll))
      until = w->abstime;
    if (fl_futex_wait((uint32_t *)e, (uint32_t)v, 0, w->clock, until)
            == ETIMEDOUT
        && until == w->abstime)
      return ETIMEDOUT;
  }
}

/* Set the bias word's ON bit to on (1) or off (0) by CAS, keeping the
 * rest; returns the word it replaced.  */
static int32_t bias_set(fl_rwsem_t *s, int on)
{
  int32_t b = fl_load_relaxed(&s->bias);

  for (;;) {
    int32_t want = on ? (b | FL_RWSEM_BIAS_ON) : (b & ~FL_RWSEM_BIAS_ON);
    int32_t seen;

    if (want == b)
      return b;
    /* Release: see restore().  Relaxed would do for "off" (a reader that
     * still sees ON enters the table, where the revocation finds it).  */
    seen = fl_atomic_cmpxchg_release(&s->bias, b, want);
    if (seen == b)
      return b;
    b = seen;
  }
}

void fl_rwsem_bias_close(fl_rwsem_t *s)
{
  bias_set(s, 0);
}

int fl_rwsem_bias_revoke(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int32_t id = fl_load_relaxed(&s->bias_id);
  int32_t i, j, high, b;
  int64_t start, spent;
  uint32_t inhibit;
  int rc = 0;

  start = fl_clock_ns(CLOCK_MONOTONIC);
  b = bias_set(s, 0);
  count_and_not(s, FL_RWSEM_BIASED);
  /* Store->load: "off" before the scan; the readers fence between their
   * slot and their look at the bias.  */
  fl_smp_mb();
  if (fl_rwsem_bias_held(s))
    rc = w->how == FL_RWSEM_TRY ? EBUSY : EDEADLK;
  high = fl_load_acquire(&rows_high);
  for (i = 0; rc == 0 && i < high; i++)
    for (j = 0; rc == 0 && j < ROW_SLOTS; j++)
      rc = slot_wait(&rows[i].e[j], id, w);
  if (rc != 0) {
    /* Back to how it was: no sleeper marks of ours, BIASED, then the
     * bias as it was (on, or closed by a waiting writer).  */
    for (i = 0; i < high; i++)
      for (j = 0; j < ROW_SLOTS; j++) {
        int32_t v = fl_load_relaxed(&rows[i].e[j]);
        if (names(v, id) && (v & SLEEPER))
          fl_atomic_cmpxchg_relaxed(&rows[i].e[j], v, v & ~SLEEPER);
      }
    count_or(s, FL_RWSEM_BIASED);
    if (b & FL_RWSEM_BIAS_ON)
      bias_set(s, 1);
    return rc;
  }
  spent = fl_clock_ns(CLOCK_MONOTONIC) - start;
  inhibit = (uint32_t)(((uint64_t)spent * INHIBIT_FACTOR) >> TICK_SHIFT);
  if (inhibit > INHIBIT_MAX)
    inhibit = INHIBIT_MAX;
  /* The time before which the bias stays off, by CAS: close() and a
   * tool's WATCHED may change the flags meanwhile.  */
  b = fl_load_relaxed(&s->bias);
  for (;;) {
    int32_t want =
        (int32_t)((((now_ticks() + inhibit) & TICK_MASK) << BIAS_TIME_SHIFT)
                  | ((uint32_t)b & BIAS_FLAGS));
    int32_t seen = fl_atomic_cmpxchg_relaxed(&s->bias, b, want);
    if (seen == b)
      break;
    b = seen;
  }
  return 0;
}
