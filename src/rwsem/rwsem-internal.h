/* src/rwsem/rwsem-internal.h: what the rwsem's source files share (and
 * what its tests reach inside for).  Nothing here is exported.  */
#ifndef FASTLOCK_RWSEM_INTERNAL_H
#define FASTLOCK_RWSEM_INTERNAL_H

#include <fastlock/rwsem.h>

#include <stdint.h>
#include <time.h>

/* The count word bits that only the library uses (the whole layout is
 * documented at the top of rwsem.c).  */
#define FL_RWSEM_RWAIT 0x4
#define FL_RWSEM_WWAIT 0x8
#define FL_RWSEM_WGRANT 0x10
#define FL_RWSEM_BIASED 0x20
#define FL_RWSEM_WWOKEN 0x80
#define FL_RWSEM_WTURN 0x100

/* Where a thread would read the clock on every lock or unlock (leaving
 * the lock while waiters are queued, for the hand-off due time in
 * rwsem.c; taking a READ_BIAS lock through the count word, for the time
 * the bias may come back in bias.c), it reads it on one visit in this
 * many: a read costs 26-45 ns under kvm-clock, more than the lock itself,
 * and what it decides may come a few visits late.  */
#define FL_RWSEM_CLOCK_EVERY 8

/* The reader field: 17 bits, of which values above FL_RWSEM_READERS_MAX
 * are additions or subtractions in flight past either end.  */
#define FL_RWSEM_READERS(c) (((uint32_t)(c) >> FL_RWSEM_READER_SHIFT) & 0x1ffffu)
#define FL_RWSEM_UNDERFLOW 0x18000u

/* rwait and wwait: queued waiters in the low half, a sequence in the high
 * half (see rwsem.c).  */
#define FL_RWSEM_QUEUED(w) ((uint32_t)(w) & 0xffffu)
#define FL_RWSEM_QUEUED_MAX 0xffffu
#define FL_RWSEM_SEQ(w) ((uint32_t)(w) >> 16)

/* How a slowpath may wait: FL_RWSEM_BLOCK, FL_RWSEM_TRY (never sleeps),
 * or FL_RWSEM_TIMED (sleeps until abstime on clock).  */
#define FL_RWSEM_TIMED 2

struct fl_rwsem_wait {
  int how;
  clockid_t clock;
  const struct timespec *abstime;   /* NULL unless how is FL_RWSEM_TIMED */
};

/* Is time a later than time b?  */
static inline int fl_rwsem_after(const struct timespec *a, const struct timespec *b)
{
  return a->tv_sec > b->tv_sec ||
         (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* The read and write acquisitions through the count word, fastpath
 * included, for the out-of-line callers (timed, READ_BIAS fallbacks).  */
int fl_rwsem_count_down_read(fl_rwsem_t *s, const struct fl_rwsem_wait *w);
int fl_rwsem_count_up_read(fl_rwsem_t *s);
int fl_rwsem_lock_write(fl_rwsem_t *s, const struct fl_rwsem_wait *w);

/* fl_rwsem_init, fl_rwsem_destroy and fl_rwsem_downgrade_write without
 * the tool annotations (api.c adds them).  */
int fl_rwsem_init_raw(fl_rwsem_t *s, unsigned flags);
int fl_rwsem_destroy_raw(fl_rwsem_t *s);
int fl_rwsem_downgrade_raw(fl_rwsem_t *s);

/* The calling thread's TID.  */
int32_t fl_rwsem_self_get(void);

/* READ_BIAS (bias.c).  The bias word (s->bias): */
/* FL_RWSEM_BIAS_ON 0x1 (<fastlock/rwsem.h>): readers may use the table */
#define FL_RWSEM_BIAS_MODE 0x2   /* s is a READ_BIAS lock (never cleared) */

/* Give a new READ_BIAS lock its name in the table.  */
int32_t fl_rwsem_bias_new_id(void);
/* down_read of a READ_BIAS lock (up_read: fl_rwsem_biased_up_read).  */
int fl_rwsem_bias_lock_read(fl_rwsem_t *s, const struct fl_rwsem_wait *w);
/* With the write lock held and BIASED in the count: turn the bias off
 * and wait for the readers the table shows.  On failure (EDEADLK: the
 * caller is one of them; EBUSY for a trylock; ETIMEDOUT) the bias is as
 * it was.  */
int fl_rwsem_bias_revoke(fl_rwsem_t *s, const struct fl_rwsem_wait *w);
/* A writer that will not give up queues: no new reader may enter
 * through the table (qlock held).  */
void fl_rwsem_bias_close(fl_rwsem_t *s);
/* Does the calling thread hold s for reading through the table?  */
int fl_rwsem_bias_held(const fl_rwsem_t *s);
/* Does any thread?  */
int fl_rwsem_bias_readers(const fl_rwsem_t *s);

#endif /* FASTLOCK_RWSEM_INTERNAL_H */
