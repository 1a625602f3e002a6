/* tests/test-spinlock-ticket.c: fl_ticketlock_t.
 *
 * Besides every function and error: the word across the wrap of both
 * ticket counters; FIFO order with threads queued one by one; a waiter
 * that is not running passed over (a ticket nobody claims, and a real
 * waiter stopped in a signal handler, which must queue again when it
 * resumes); and the torture, with tickets checked in order.  The FIFO
 * tests make fl_spin_patience infinite: under valgrind or QEMU a running
 * waiter may well not run for a patience, and must not be passed over
 * there.  */
#include "config.h"

#include <fastlock/spinlock.h>

#include "spinlock/internal.h"

#include "fl-check.h"
#include "test-spinlock-torture.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OWNER(v) ((uint32_t)(v)&FL_TICKET_MASK)
#define NEXT(v) (((uint32_t)(v) >> FL_TICKET_NEXT_SHIFT) & FL_TICKET_MASK)
#define WORD(next16, owner) ((int32_t)((uint32_t)(next16) << 16 | (owner)))

FL_TORTURE_ADAPTERS(ticket, fl_ticketlock_t)

static const struct fl_torture_lock way[2] = FL_TORTURE_WAYS(ticket);

static int32_t word_of(fl_ticketlock_t *l)
{
  return fl_load_relaxed(&l->word);
}

START_TEST(size_and_words)
{
  fl_ticketlock_t l = FL_TICKETLOCK_INITIALIZER;

  ck_assert_uint_eq(sizeof(fl_ticketlock_t), 4);
  ck_assert_int_eq(way[_i].lock_fn(&l), 0);
  ck_assert_int_eq(l.word, WORD(1, 0));
  ck_assert_int_eq(way[_i].unlock_fn(&l), 0);
  ck_assert_int_eq(l.word, WORD(1, 1));
  ck_assert_int_eq(way[_i].trylock_fn(&l), 0);
  ck_assert_int_eq(l.word, WORD(2, 1));
  ck_assert_int_eq(way[_i].unlock_fn(&l), 0);
  ck_assert_int_eq(l.word, WORD(2, 2));
  ck_assert_int_eq(fl_ticket_destroy(&l), 0);
}
END_TEST

START_TEST(init_flags)
{
  fl_ticketlock_t l;

  ck_assert_int_eq(fl_ticket_init(&l, 0), 0);
  ck_assert_int_eq(l.word, 0);
  ck_assert_int_eq(fl_ticket_destroy(&l), 0);
  ck_assert_int_eq(fl_ticket_init(&l, FL_PSHARED),
                   FL_SPIN_PSHARED_WORKS ? 0 : ENOTSUP);
  if (!FL_SPIN_PSHARED_WORKS)
    ck_assert_int_eq(fl_ticket_init(&l, 0), 0);
  ck_assert_int_eq(fl_ticket_lock(&l), 0);
  ck_assert_int_eq(fl_ticket_init(&l, 0x2), EINVAL);
  ck_assert_int_eq(fl_ticket_init(&l, 0x100), EINVAL);
  ck_assert_int_eq(l.word, WORD(1, 0));
  ck_assert_int_eq(fl_ticket_unlock(&l), 0);
  ck_assert_int_eq(fl_ticket_destroy(&l), 0);
}
END_TEST

START_TEST(busy_and_bad_unlock)
{
  fl_ticketlock_t l;

  ck_assert_int_eq(fl_ticket_init(&l, 0), 0);
  fl_test_misuse(&way[_i], &l);
  ck_assert_int_eq(l.word, WORD(1, 1));

  /* Granted to ticket 1, not yet claimed: nobody holds it, nobody may
   * unlock it or try it, and it is not free to destroy.  */
  l.word = (int32_t)((uint32_t)WORD(2, 1) | FL_TICKET_PENDING);
  ck_assert_int_eq(way[_i].unlock_fn(&l), EPERM);
  ck_assert_int_eq(way[_i].trylock_fn(&l), EBUSY);
  ck_assert_int_eq(fl_ticket_destroy(&l), EBUSY);
  ck_assert_int_eq(l.word, (int32_t)((uint32_t)WORD(2, 1) | FL_TICKET_PENDING));
  l.word = 0;
  ck_assert_int_eq(fl_ticket_destroy(&l), 0);
}
END_TEST

/* Both counters wrap: owner at 2^15, and the 16-bit next counter, whose
 * carry leaves the word, at 2^16.  Each lock and unlock must move them by
 * one, modulo their widths, and never touch each other.  */
START_TEST(wrap_around)
{
  fl_ticketlock_t l;
  uint32_t next16 = 0xfff0, owner = 0x7ff0;
  int i;

  l.word = WORD(next16, owner);
  /* next16 & FL_TICKET_MASK == owner: free.  */
  ck_assert_uint_eq(NEXT(l.word), OWNER(l.word));
  for (i = 0; i < 40; i++) {
    ck_assert_int_eq(way[_i].lock_fn(&l), 0);
    ck_assert_int_eq(l.word, WORD((next16 + 1) & 0xffff, owner));
    ck_assert_int_eq(way[_i].trylock_fn(&l), EBUSY);
    ck_assert_int_eq(way[_i].unlock_fn(&l), 0);
    next16 = (next16 + 1) & 0xffff;
    owner = (owner + 1) & FL_TICKET_MASK;
    ck_assert_int_eq(l.word, WORD(next16, owner));
  }
}
END_TEST

/* ---- FIFO ------------------------------------------------------------ */

#define FIFO_THREADS 6

struct fifo {
  fl_ticketlock_t lock;
  int32_t turn;
  int32_t order[FIFO_THREADS];
};

struct fifo_arg {
  struct fifo *f;
  int index;
};

static void *fifo_thread(void *p)
{
  struct fifo_arg *a = p;

  fl_ticket_lock(&a->f->lock);
  a->f->order[a->index] = a->f->turn++;
  sched_yield();
  fl_ticket_unlock(&a->f->lock);
  return NULL;
}

struct tickets_out {
  fl_ticketlock_t *lock;
  uint32_t want;
};

static int tickets_taken(void *p)
{
  struct tickets_out *t = p;
  int32_t v = word_of(t->lock);

  return ((NEXT(v) - OWNER(v)) & FL_TICKET_MASK) == t->want;
}

/* Thread k starts only once thread k-1 holds its ticket, so the tickets
 * are in thread order, and so must the turns be.  */
START_TEST(fifo_order)
{
  static struct fifo f;
  struct fifo_arg args[FIFO_THREADS];
  pthread_t t[FIFO_THREADS];
  int32_t patience = fl_load_relaxed(&fl_spin_patience);
  int round, k;

  fl_store_relaxed(&fl_spin_patience, INT32_MAX);
  for (round = 0; round < 3; round++) {
    memset(&f, 0, sizeof f);
    ck_assert_int_eq(fl_ticket_init(&f.lock, 0), 0);
    ck_assert_int_eq(fl_ticket_lock(&f.lock), 0);
    for (k = 0; k < FIFO_THREADS; k++) {
      struct tickets_out out = { &f.lock, (uint32_t)k + 2 };

      args[k].f = &f;
      args[k].index = k;
      ck_assert_int_eq(pthread_create(&t[k], NULL, fifo_thread, &args[k]), 0);
      fl_test_wait_until(tickets_taken, &out);
    }
    ck_assert_int_eq(fl_ticket_unlock(&f.lock), 0);
    for (k = 0; k < FIFO_THREADS; k++)
      pthread_join(t[k], NULL);
    for (k = 0; k < FIFO_THREADS; k++)
      ck_assert_msg(f.order[k] == k, "round %d: thread %d got turn %d", round,
                    k, f.order[k]);
    ck_assert_int_eq(fl_ticket_destroy(&f.lock), 0);
  }
  fl_store_relaxed(&fl_spin_patience, patience);
}
END_TEST

/* ---- waiters that are not running ------------------------------------ */

struct waiter {
  fl_ticketlock_t *lock;
  int32_t done;
  int rc;
};

static void *lock_once(void *p)
{
  struct waiter *w = p;

  w->rc = fl_ticket_lock(w->lock);
  fl_ticket_unlock(w->lock);
  fl_store_release(&w->done, 1);
  return NULL;
}

/* A ticket nobody will claim (its thread, say, was preempted for good)
 * must not stop the waiter behind it; and the thread that took it, when
 * it comes back, must find it was passed over and queue again.  */
START_TEST(unclaimed_grant_is_passed_over)
{
  static fl_ticketlock_t l;
  struct waiter w = { &l, 0, -1 };
  struct tickets_out out = { &l, 3 };
  uint32_t phantom;
  pthread_t t;

  ck_assert_int_eq(fl_ticket_init(&l, 0), 0);
  ck_assert_int_eq(fl_ticket_lock(&l), 0);
  phantom =
      NEXT(fl_atomic_fetch_add_relaxed(&l.word, (int32_t)FL_TICKET_NEXT_ONE));
  ck_assert_uint_eq(phantom, 1);
  ck_assert_int_eq(pthread_create(&t, NULL, lock_once, &w), 0);
  fl_test_wait_until(tickets_taken, &out);
  ck_assert_int_eq(fl_ticket_unlock(&l), 0);
  pthread_join(t, NULL);
  ck_assert_int_eq(w.rc, 0);
  /* Ticket 1 passed over, ticket 2 served: free at owner == next == 3.  */
  ck_assert_int_eq(l.word, WORD(3, 3));
  /* The phantom's thread comes back and queues again (the slowpaths
   * called directly: this is no lock the race detectors were told of).  */
  ck_assert_int_eq(fl_ticket_lock_wait(&l, phantom), 0);
  ck_assert_int_eq(l.word, WORD(4, 3));
  ck_assert_int_eq(fl_ticket_unlock_slowpath(&l), 0);
  ck_assert_int_eq(fl_ticket_destroy(&l), 0);
}
END_TEST

/* A real waiter stopped while it waits (fl_test_park; where
 * fl_test_signals_reach_waiters).  */
START_TEST(preempted_waiter_queues_again)
{
  static fl_ticketlock_t l;
  struct waiter first = { &l, 0, -1 }, second = { &l, 0, -1 };
  struct tickets_out one = { &l, 2 }, two = { &l, 3 };
  pthread_t t1, t2;

  FL_VG_HIDE(&first.done, sizeof first.done);
  FL_VG_HIDE(&second.done, sizeof second.done);

  ck_assert_int_eq(fl_ticket_init(&l, 0), 0);
  ck_assert_int_eq(fl_ticket_lock(&l), 0);
  ck_assert_int_eq(pthread_create(&t1, NULL, lock_once, &first), 0);
  fl_test_wait_until(tickets_taken, &one);
  ck_assert_int_eq(pthread_create(&t2, NULL, lock_once, &second), 0);
  fl_test_wait_until(tickets_taken, &two);
  fl_test_park(t1);

  /* The grant goes to the parked first waiter; the second passes it over.  */
  ck_assert_int_eq(fl_ticket_unlock(&l), 0);
  fl_test_wait_until(fl_test_flag_set, &second.done);
  ck_assert_int_eq(fl_load_acquire(&first.done), 0);
  fl_test_unpark();
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  ck_assert_int_eq(first.rc, 0);
  ck_assert_int_eq(second.rc, 0);
  /* Tickets 0 (ours), 2 (second) and 3 (first, queued again) were served;
   * 1 was passed over.  */
  ck_assert_int_eq(l.word, WORD(4, 4));
  ck_assert_int_eq(fl_ticket_destroy(&l), 0);
}
END_TEST

/* ---- FL_PSHARED, torture ------------------------------------------- */

START_TEST(pshared_between_processes)
{
  struct fl_torture_lock t = { .name = "fl_ticketlock_t",
                               FL_TORTURE_OPS(ticket) };

  if (FL_SPIN_PSHARED_WORKS)
    fl_test_pshared(&t, fl_test_iterations(100000));
}
END_TEST

/* Inside the critical section owner is the holder's ticket.  */
static uint32_t t_serving(void *l)
{
  return OWNER(fl_load_relaxed(&((fl_ticketlock_t *)l)->word));
}

/* _i: 0 as configured; 1 with patience infinite, where no ticket may be
 * passed over; 2 starting just before both counters wrap.  Without
 * passing over, a thread more than the CPUs can run makes every hand-over
 * to a preempted waiter wait for the scheduler (a few hundred
 * microseconds each, here): the strict run has 2 threads.  */
START_TEST(torture)
{
  static fl_ticketlock_t l;
  static const char *names[] = { "fl_ticketlock_t",
                                 "fl_ticketlock_t, strict FIFO",
                                 "fl_ticketlock_t, across the wrap" };
  struct fl_torture_lock t = {
    .name = names[_i],
    .lock = &l,
    FL_TORTURE_OPS(ticket),
    .serving_fn = t_serving,
    .order_mask = FL_TICKET_MASK,
    .strict_order = _i == 1,
    .plain = 1,
    .yield_every = 64,
  };
  int32_t patience = fl_load_relaxed(&fl_spin_patience);
  long n = fl_test_iterations(_i == 0 ? 20000 : _i == 1 ? 3000 : 5000);

  ck_assert_int_eq(fl_ticket_init(&l, 0), 0);
  if (_i == 1)
    fl_store_relaxed(&fl_spin_patience, INT32_MAX);
  if (_i == 2)
    l.word = WORD(0xfff0, 0x7ff0);
  fl_torture_check(&t, _i == 1 ? 2 : 4, n);
  fl_store_relaxed(&fl_spin_patience, patience);
}
END_TEST

static Suite *ticket_suite(void)
{
  TCase *single, *threads;
  Suite *s = fl_spin_suite("fl_ticketlock_t (" FL_ARCH_ATOMICS_NAME ")",
                           &single, &threads);

  tcase_add_loop_test(single, size_and_words, 0, 2);
  tcase_add_test(single, init_flags);
  tcase_add_loop_test(single, busy_and_bad_unlock, 0, 2);
  tcase_add_loop_test(single, wrap_around, 0, 2);

  tcase_add_test(threads, fifo_order);
  tcase_add_test(threads, unclaimed_grant_is_passed_over);
  if (fl_test_signals_reach_waiters("preempted_waiter_queues_again"))
    tcase_add_test(threads, preempted_waiter_queues_again);
  tcase_add_test(threads, pshared_between_processes);
  tcase_add_loop_test(threads, torture, 0, 3);
  return s;
}

int main(void)
{
  return fl_check_run(ticket_suite());
}
