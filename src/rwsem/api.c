/* src/rwsem/api.c: the rwsem's out-of-line entry points, and the one
 * place that tells helgrind, drd and ThreadSanitizer what it does.
 *
 * The inline functions of <fastlock/rwsem.h> come here (fl_rwsem_tool_*)
 * while fl_tools_active is set (helgrind, drd, the lock-order checker),
 * when fastlock is built --enable-annotations, or when the caller is
 * compiled with -fsanitize=thread; the timed calls, downgrade, init and
 * destroy always do.  A read lock taken here while fl_tools_active is set
 * marks the lock's bias word WATCHED, and a write lock puts OWNER_SLOW in
 * owner: so the inline up_read and up_write, which test nothing, come
 * back here for the release (<fastlock/bits/rwsem.h>).  Each acquisition hides the object from the Valgrind tools
 * (whose view of its atomics is wrong; a zero-filled lock never goes
 * through fl_rwsem_init) and reports the acquisition after it succeeded;
 * each release is reported before it happens, so that a tool never sees
 * the next holder's acquisition first.
 *
 * A tool told of an acquisition that then fails, or of the release of a
 * lock the thread does not hold, reports an error of its own.  So the
 * misuse the lock itself would refuse is refused here first, with the
 * same answer, before any tool hears of it: EDEADLK (EBUSY for a
 * trylock) for the write holder, EPERM for a release of what is not
 * held.  Elsewhere those checks are in the slowpaths.  */
#include "config.h"

#include "rwsem/rwsem-internal.h"

#include "lockdep/lockdep.h"
#include "sys/annotate.h"
#include "sys/clock.h"

#include <errno.h>

/* The ThreadSanitizer flags of an acquisition.  A macro: without TSan the
 * annotation macros drop their arguments, and a function would be unused. */
#define TSAN_HOW(how) ((how) == FL_RWSEM_BLOCK ? 0u : FL_TSAN_TRY)

static int read_held_by_me(const fl_rwsem_t *s)
{
  return (fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_MODE)
         && fl_rwsem_bias_held(s);
}

/* A read lock exists that the caller could be releasing.  */
static int read_held(const fl_rwsem_t *s)
{
  return FL_RWSEM_READERS(fl_load_relaxed(&s->count)) != 0
         || read_held_by_me(s);
}

/* The lock-order checker's flags for an acquisition of s that may wait.
 * A read lock asked for while a writer waits, in a mode where readers
 * queue behind it, is the classic self-deadlock when the thread already
 * reads s: the checker reports it.  */
static unsigned lockdep_flags(const fl_rwsem_t *s, int read)
{
  unsigned f = read ? FL_LOCKDEP_READ : 0;

  if (read && !(fl_load_relaxed(&s->mode) & FL_RWSEM_PREFER_READER)
      && (fl_load_relaxed(&s->count) & FL_RWSEM_WPEND))
    f |= FL_LOCKDEP_WRITER_WAITS;
  return f;
}

/* Tell the checker of an acquisition: before a wait (undone if the wait
 * fails), or after a trylock succeeded.  */
static void lockdep_before(const fl_rwsem_t *s, int how, int read)
{
  if (how != FL_RWSEM_TRY)
    fl_lockdep_acquire(s, "fl_rwsem_t", lockdep_flags(s, read));
}

static void lockdep_after(const fl_rwsem_t *s, int how, int read, int rc)
{
  if (how == FL_RWSEM_TRY) {
    if (rc == 0 || rc == EOWNERDEAD)
      fl_lockdep_acquire(s, "fl_rwsem_t",
                         (read && rc == 0 ? FL_LOCKDEP_READ : 0)
                             | FL_LOCKDEP_TRY);
  } else if (rc != 0 && rc != EOWNERDEAD) {
    fl_lockdep_release(s);
  }
}

static int refuse(int how)
{
  return how == FL_RWSEM_TRY ? EBUSY : EDEADLK;
}

/* Send the inline up_read of s here from now on (by CAS: the bias word
 * changes only so).  */
static void watch_readers(fl_rwsem_t *s)
{
  int32_t b = fl_load_relaxed(&s->bias);

  while (fl_load_relaxed(&fl_tools_active) != 0
         && !(b & FL_RWSEM_BIAS_WATCHED)) {
    int32_t seen =
        fl_atomic_cmpxchg_relaxed(&s->bias, b, b | FL_RWSEM_BIAS_WATCHED);
    if (seen == b)
      break;
    b = seen;
  }
}

/* An acquisition that succeeded (EOWNERDEAD: it did, with a warning).  */
static int acquired(int rc)
{
  return rc == 0 || rc == EOWNERDEAD;
}

static int read_lock(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int rc;

  if (fl_rwsem_write_held_by_me(s))
    return refuse(w->how);
  FL_VG_HIDE(s, sizeof *s);
  watch_readers(s);
  FL_TSAN_PRE_LOCK(s, FL_TSAN_READ | TSAN_HOW(w->how));
  lockdep_before(s, w->how, 1);
  if (fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_MODE)
    rc = fl_rwsem_bias_lock_read(s, w);
  else
    rc = fl_rwsem_count_down_read(s, w);
  lockdep_after(s, w->how, 1, rc);
  if (rc == EOWNERDEAD) {
    /* FL_ROBUST: a reader that took over a dead writer's lock holds it
     * for writing.  */
    FL_VG_RWLOCK_ACQUIRED(s, 1);
    FL_TSAN_POST_LOCK(s, TSAN_HOW(w->how));
  } else if (rc == 0) {
    FL_VG_RWLOCK_ACQUIRED(s, 0);
    FL_TSAN_POST_LOCK(s, FL_TSAN_READ | TSAN_HOW(w->how));
  } else {
    FL_TSAN_POST_LOCK(s, FL_TSAN_READ | TSAN_HOW(w->how) | FL_TSAN_TRY_FAILED);
  }
  return rc;
}

static int write_lock(fl_rwsem_t *s, const struct fl_rwsem_wait *w)
{
  int rc;

  if (fl_rwsem_write_held_by_me(s) || read_held_by_me(s))
    return refuse(w->how);
  FL_VG_HIDE(s, sizeof *s);
  FL_TSAN_PRE_LOCK(s, TSAN_HOW(w->how));
  lockdep_before(s, w->how, 0);
  rc = fl_rwsem_lock_write(s, w);
  lockdep_after(s, w->how, 0, rc);
  if (acquired(rc)) {
    FL_VG_RWLOCK_ACQUIRED(s, 1);
    FL_TSAN_POST_LOCK(s, TSAN_HOW(w->how));
  } else {
    FL_TSAN_POST_LOCK(s, TSAN_HOW(w->how) | FL_TSAN_TRY_FAILED);
  }
  return rc;
}

static int timed_args_valid(clockid_t clock, const struct timespec *abstime)
{
  return (clock == CLOCK_MONOTONIC || clock == CLOCK_REALTIME)
         && abstime != NULL && fl_timespec_valid(abstime);
}

int fl_rwsem_init(fl_rwsem_t *s, unsigned flags)
{
  int rc = fl_rwsem_init_raw(s, flags);

  if (rc == 0) {
    FL_VG_HIDE(s, sizeof *s);
    FL_VG_RWLOCK_CREATE(s);
    FL_TSAN_CREATE(s);
    fl_lockdep_init(s, "fl_rwsem_t", 0, __builtin_return_address(0));
  }
  return rc;
}

int fl_rwsem_destroy(fl_rwsem_t *s)
{
  int rc;

  fl_lockdep_destroy(s);
  rc = fl_rwsem_destroy_raw(s);

  if (rc == 0) {
    FL_VG_RWLOCK_DESTROY(s);
    FL_TSAN_DESTROY(s);
  }
  return rc;
}

int fl_rwsem_down_read_timed(fl_rwsem_t *s, clockid_t clock,
                             const struct timespec *abstime)
{
  struct fl_rwsem_wait w = { FL_RWSEM_TIMED, clock, abstime };

  if (!timed_args_valid(clock, abstime))
    return EINVAL;
  return read_lock(s, &w);
}

int fl_rwsem_down_write_timed(fl_rwsem_t *s, clockid_t clock,
                              const struct timespec *abstime)
{
  struct fl_rwsem_wait w = { FL_RWSEM_TIMED, clock, abstime };

  if (!timed_args_valid(clock, abstime))
    return EINVAL;
  return write_lock(s, &w);
}

int fl_rwsem_downgrade_write(fl_rwsem_t *s)
{
  int rc;

  if (!fl_rwsem_write_held_by_me(s))
    return EPERM;
  FL_VG_RWLOCK_RELEASED(s, 1);
  FL_TSAN_PRE_UNLOCK(s, 0);
  FL_TSAN_POST_UNLOCK(s, 0);
  fl_lockdep_release(s);
  rc = fl_rwsem_downgrade_raw(s);
  fl_lockdep_acquire(s, "fl_rwsem_t", FL_LOCKDEP_READ | FL_LOCKDEP_TRY);
  watch_readers(s);
  FL_TSAN_PRE_LOCK(s, FL_TSAN_READ);
  FL_VG_RWLOCK_ACQUIRED(s, 0);
  FL_TSAN_POST_LOCK(s, FL_TSAN_READ);
  return rc;
}

int fl_rwsem_tool_down_read(fl_rwsem_t *s, int how)
{
  struct fl_rwsem_wait w = FL_RWSEM_NO_DEADLINE(how);
  return read_lock(s, &w);
}

int fl_rwsem_tool_down_write(fl_rwsem_t *s, int how)
{
  struct fl_rwsem_wait w = FL_RWSEM_NO_DEADLINE(how);
  return write_lock(s, &w);
}

int fl_rwsem_tool_up_read(fl_rwsem_t *s)
{
  int rc;

  if (!read_held(s))
    return EPERM;
  FL_VG_RWLOCK_RELEASED(s, 0);
  FL_TSAN_PRE_UNLOCK(s, FL_TSAN_READ);
  fl_lockdep_release(s);
  if (fl_load_relaxed(&s->bias) & FL_RWSEM_BIAS_MODE)
    rc = fl_rwsem_bias_unlock_read(s);
  else
    rc = fl_rwsem_count_up_read(s);
  FL_TSAN_POST_UNLOCK(s, FL_TSAN_READ);
  return rc;
}

int fl_rwsem_tool_up_write(fl_rwsem_t *s)
{
  int rc;

  if (!fl_rwsem_write_held_by_me(s))
    return EPERM;
  FL_VG_RWLOCK_RELEASED(s, 1);
  FL_TSAN_PRE_UNLOCK(s, 0);
  fl_lockdep_release(s);
  rc = fl_rwsem_unlock_write(s);
  FL_TSAN_POST_UNLOCK(s, 0);
  return rc;
}
