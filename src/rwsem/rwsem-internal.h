/* src/rwsem/rwsem-internal.h: what the rwsem's source files share (and
 * what its tests reach inside for).  Nothing here is exported.  */
#ifndef FASTLOCK_RWSEM_INTERNAL_H
#define FASTLOCK_RWSEM_INTERNAL_H

#include <fastlock/rwsem.h>

#include <stdint.h>
#include <time.h>

/* The count word bits that only the library uses (the states and
 * transitions: rwsem.c).  */
#define FL_RWSEM_RTURN 0x4
#define FL_RWSEM_RWAIT 0x8
#define FL_RWSEM_BIASED 0x10
#define FL_RWSEM_SHARED 0x20
/* Bits 7..11: L, the readers that missed a readers' turn and wait for
 * the next one; bits 12..13: E, the epoch of L, which an FL_PSHARED
 * lease advances as it clears L (rwsem.c, LATE READERS).  */
#define FL_RWSEM_LATE 0x80
#define FL_RWSEM_LATE_MASK 0xf80
#define FL_RWSEM_EPOCH 0x1000
#define FL_RWSEM_EPOCH_MASK 0x3000

/* The reader field: 17 bits.  0..FL_RWSEM_READERS_MAX are read locks
 * held, plus fastpath adds about to be undone; READERS_MAX+1..0x17fff an
 * add that found the field full (that reader gets EAGAIN); 0x18000 and
 * above a subtract that found it empty (that up_read gets EPERM): both
 * are undone at once by whoever made them.  */
#define FL_RWSEM_READERS(c)                                                    \
 (((uint32_t)(c) >> FL_RWSEM_READER_SHIFT) & 0x1ffffu)
#define FL_RWSEM_UNDERFLOW 0x18000u

/* mode: the flags of fl_rwsem_init, and FL_ROBUST's state.  */
#define FL_RWSEM_MODE_FLAGS 0xf01u
#define FL_RWSEM_ROBUST_DEAD 0x10000u /* taken with EOWNERDEAD */
#define FL_RWSEM_ROBUST_LOST 0x20000u /* ENOTRECOVERABLE */
/* FL_PSHARED: writers of another PID namespace than owner_ns's have
 * claimed the lock: nobody probes a holder any more (robust.c,
 * NAMESPACES).  Set once, never cleared but by init.  */
#define FL_RWSEM_NS_MIXED 0x40000u

/* The owner word of an FL_PSHARED lock (robust.c: its states and
 * transitions).  A TID is below 2^22 (the kernel's PID_MAX_LIMIT), so
 * bits 22..29 and 31 are free for the stamp and the marks; bit 30 is
 * FL_RWSEM_OWNER_SLOW, always set in a process-shared owner.  */
#define FL_RWSEM_OWNER_TID 0x003fffff
#define FL_RWSEM_OWNER_STAMP 0x0fc00000 /* FL_ROBUST: which thread */
#define FL_RWSEM_OWNER_STAMP_SHIFT 22
/* How many stamps there are: 1..FL_RWSEM_OWNER_STAMPS (0 is none).  */
#define FL_RWSEM_OWNER_STAMPS                                                  \
 (FL_RWSEM_OWNER_STAMP >> FL_RWSEM_OWNER_STAMP_SHIFT)
#define FL_RWSEM_OWNER_PEND 0x10000000 /* about to take WRITER */
#define FL_RWSEM_OWNER_ROB 0x20000000  /* taking over from the dead */
#define FL_RWSEM_OWNER_REL INT32_MIN   /* releasing (bit 31) */
#define FL_RWSEM_OWNER_MARKS                                                   \
 (FL_RWSEM_OWNER_PEND | FL_RWSEM_OWNER_ROB | FL_RWSEM_OWNER_REL)

/* How a slowpath may wait: FL_RWSEM_BLOCK, FL_RWSEM_TRY (never sleeps),
 * or FL_RWSEM_TIMED (sleeps until abstime on clock).  */
#define FL_RWSEM_TIMED 2

struct fl_rwsem_wait {
  int how;
  clockid_t clock;
  const struct timespec *abstime; /* NULL unless how is FL_RWSEM_TIMED */
};

/* The wait of a call with no deadline (FL_RWSEM_BLOCK or FL_RWSEM_TRY):
 * a timed wait whose deadline is NULL.  */
#define FL_RWSEM_NO_DEADLINE(how)                                              \
 {                                                                             \
  (how), CLOCK_MONOTONIC, NULL                                                 \
 }

/* FL_ROBUST: released without fl_rwsem_consistent, ENOTRECOVERABLE for
 * good.  */
static inline int fl_rwsem_lost(const fl_rwsem_t *s)
{
  return (fl_load_relaxed(&s->mode) & (int32_t)FL_RWSEM_ROBUST_LOST) != 0;
}

/* Is time a later than time b?  */
static inline int fl_rwsem_after(const struct timespec *a,
                                 const struct timespec *b)
{
  return a->tv_sec > b->tv_sec
         || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* rwsem.c.  Read and write acquisition through the count word, fastpath
 * included, for the out-of-line callers (tools, timed, READ_BIAS).  */
int fl_rwsem_count_down_read(fl_rwsem_t *s, const struct fl_rwsem_wait *w);
int fl_rwsem_count_up_read(fl_rwsem_t *s);
int fl_rwsem_lock_write(fl_rwsem_t *s, const struct fl_rwsem_wait *w);
int fl_rwsem_unlock_write(fl_rwsem_t *s);
/* Does the calling thread hold s for writing?  */
int fl_rwsem_write_held_by_me(const fl_rwsem_t *s);
int fl_rwsem_init_raw(fl_rwsem_t *s, unsigned flags);
int fl_rwsem_destroy_raw(fl_rwsem_t *s);
int fl_rwsem_downgrade_raw(fl_rwsem_t *s);
/* The invariants of the count word (rwsem.c), for the tortures: 0 if c
 * is a legal state of s, else the number of the invariant it breaks.  */
int fl_rwsem_check_invariants(const fl_rwsem_t *s, int32_t c);
/* The calling thread's TID.  */
int32_t fl_rwsem_self_get(void);

/* bias.c.  */
extern const int32_t fl_rwsem_no_row;
/* bias_row of a thread without a row (<fastlock/bits/rwsem.h>): read by
 * the inline paths, never written.  */
#define NO_ROW ((int32_t *)&fl_rwsem_no_row)
int32_t fl_rwsem_bias_new_id(void);
/* down_read of a READ_BIAS lock.  */
int fl_rwsem_bias_lock_read(fl_rwsem_t *s, const struct fl_rwsem_wait *w);
/* up_read of a READ_BIAS lock, without the tool check.  */
int fl_rwsem_bias_unlock_read(fl_rwsem_t *s);
/* With WRITER held and BIASED in the count: turn the bias off and wait
 * for the table's readers.  On failure (EDEADLK: the caller is one of
 * them; EBUSY for a trylock; ETIMEDOUT) BIASED and the bias are back.  */
int fl_rwsem_bias_revoke(fl_rwsem_t *s, const struct fl_rwsem_wait *w);
/* A writer that is about to wait closes the table to new readers.  */
void fl_rwsem_bias_close(fl_rwsem_t *s);
/* Does the calling thread hold s for reading through the table?  */
int fl_rwsem_bias_held(const fl_rwsem_t *s);
/* Does any thread?  */
int fl_rwsem_bias_readers(const fl_rwsem_t *s);

/* robust.c: the owner word of an FL_PSHARED lock.  The calling
 * process's PID namespace (0 if unknown).  */
int32_t fl_rwsem_self_ns(void);
/* The calling thread's stamp, in FL_RWSEM_OWNER_STAMP's place (0 where
 * the kernel cannot say): an FL_ROBUST lock's owner id carries it.  */
int32_t fl_rwsem_self_stamp(void);
/* Thread tid's stamp, as fl_rwsem_self_stamp in that thread.  */
int32_t fl_rwsem_stamp_of(int32_t tid);
/* C1: a writer that found the count word free claims the right to try
 * T5 (id: the caller's TID | OWNER_SLOW, and its stamp on an FL_ROBUST
 * lock; ns: its namespace).  0: done,
 * try T5, then fl_rwsem_owner_hold, or fl_rwsem_owner_unclaim if T5
 * failed; EAGAIN: a writer holds the lock, wait on the count word; EBUSY
 * (a trylock), ETIMEDOUT (w's deadline), or what fl_rwsem_take_over
 * returned (FL_ROBUST: the thread we waited for was dead).  */
int fl_rwsem_owner_claim(fl_rwsem_t *s, int32_t id, int32_t ns,
                         const struct fl_rwsem_wait *w);
void fl_rwsem_owner_hold(fl_rwsem_t *s, int32_t id);
void fl_rwsem_owner_unclaim(fl_rwsem_t *s);
/* C2: before the count word lets WRITER go (up_write, downgrade), and
 * after (before the wake-ups).  */
void fl_rwsem_owner_leaving(fl_rwsem_t *s, int32_t id);
void fl_rwsem_owner_left(fl_rwsem_t *s);
/* C3, C4: on an FL_ROBUST lock, a waiter that has waited a poll (or a
 * trylock) takes the lock over, as id (its owner id, as for the claim), if the
 * thread the owner word names is dead.
 * Returns 0 (nothing taken), EOWNERDEAD (held for writing; its holder
 * died inside), FL_RWSEM_TAKEN_OVER (held for writing; nobody died
 * inside, the data is as the last holder left it) or ENOTRECOVERABLE.  */
int fl_rwsem_take_over(fl_rwsem_t *s, int32_t id);
#define FL_RWSEM_TAKEN_OVER (-2)

/* How long a readers' turn nobody enters, or a WPEND nobody holds for,
 * lasts before a waiter's lease takes it down (T9), in microseconds:
 * 2000.  A variable so that the tests can make it as long as a slow,
 * loaded emulator needs to run a woken reader, when they check the order
 * a turn imposes (the order is the lease's to keep only while the woken
 * run in time).  Read with the shim's relaxed load.  */
extern int32_t fl_rwsem_turn_lease_us;

#endif /* FASTLOCK_RWSEM_INTERNAL_H */
