/* tests/test-pthread-prodcons.c: the producer/consumer workloads of
 * J. Stezenbach's linux-mips timings (July 2002, glibc LinuxThreads'
 * examples) on the drop-in, for correctness: a 16-slot bounded buffer
 * between one producer and one consumer thread, on a mutex and two
 * condition variables, and on two counting semaphores.  The consumer must
 * see every item, once, in order.
 *
 * Unlike the drop-in's other tests this one runs in every build, under
 * QEMU too (check-cross): it needs no robust list, and where the drop-in
 * is a static archive (the cross builds) its definitions are linked into
 * this program, which is what the binding check below accepts.
 * fastlock-bench pthread times the same workloads against glibc's.  */
#define _GNU_SOURCE 1
#include "config.h"

#include "fl-check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>

#define SLOTS 16

struct buffer {
  pthread_mutex_t m;
  pthread_cond_t not_full, not_empty;
  sem_t free_slots, full_slots;
  long slot[SLOTS];
  unsigned head, tail, count;
  long n, wrong; /* items to pass; items that arrived out of order */
};

/* The function at fn is not glibc's: the drop-in's, in its shared library
 * or linked into this program.  */
static void assert_not_glibc(void *fn, const char *name)
{
  Dl_info info;

  ck_assert_msg(dladdr(fn, &info) != 0, "%s: dladdr found nothing", name);
  ck_assert_msg(strstr(info.dli_fname, "libc.so") == NULL
                    && strstr(info.dli_fname, "libpthread") == NULL,
                "%s is glibc's (%s), not the drop-in's", name, info.dli_fname);
}
#define ASSERT_NOT_GLIBC(f) assert_not_glibc((void *)(f), #f)

static void *cond_producer(void *p)
{
  struct buffer *b = p;
  long i;

  for (i = 0; i < b->n; i++) {
    ck_assert_int_eq(pthread_mutex_lock(&b->m), 0);
    while (b->count == SLOTS)
      ck_assert_int_eq(pthread_cond_wait(&b->not_full, &b->m), 0);
    b->slot[b->head] = i;
    b->head = (b->head + 1) % SLOTS;
    b->count++;
    ck_assert_int_eq(pthread_cond_signal(&b->not_empty), 0);
    ck_assert_int_eq(pthread_mutex_unlock(&b->m), 0);
  }
  return NULL;
}

static void *cond_consumer(void *p)
{
  struct buffer *b = p;
  long i;

  for (i = 0; i < b->n; i++) {
    ck_assert_int_eq(pthread_mutex_lock(&b->m), 0);
    while (b->count == 0)
      ck_assert_int_eq(pthread_cond_wait(&b->not_empty, &b->m), 0);
    b->wrong += b->slot[b->tail] != i;
    b->tail = (b->tail + 1) % SLOTS;
    b->count--;
    ck_assert_int_eq(pthread_cond_signal(&b->not_full), 0);
    ck_assert_int_eq(pthread_mutex_unlock(&b->m), 0);
  }
  return NULL;
}

static void *sem_producer(void *p)
{
  struct buffer *b = p;
  long i;

  for (i = 0; i < b->n; i++) {
    ck_assert_int_eq(sem_wait(&b->free_slots), 0);
    b->slot[b->head] = i;
    b->head = (b->head + 1) % SLOTS;
    ck_assert_int_eq(sem_post(&b->full_slots), 0);
  }
  return NULL;
}

static void *sem_consumer(void *p)
{
  struct buffer *b = p;
  long i;

  for (i = 0; i < b->n; i++) {
    ck_assert_int_eq(sem_wait(&b->full_slots), 0);
    b->wrong += b->slot[b->tail] != i;
    b->tail = (b->tail + 1) % SLOTS;
    ck_assert_int_eq(sem_post(&b->free_slots), 0);
  }
  return NULL;
}

/* Run producer and consumer over a fresh buffer; every item must arrive
 * in order, and the buffer end empty.  */
static void run(void *(*producer)(void *), void *(*consumer)(void *))
{
  static struct buffer b;
  pthread_t tp, tc;
  int value;

  memset(&b, 0, sizeof b);
  b.n = fl_test_iterations(20000);
  ck_assert_int_eq(pthread_mutex_init(&b.m, NULL), 0);
  ck_assert_int_eq(pthread_cond_init(&b.not_full, NULL), 0);
  ck_assert_int_eq(pthread_cond_init(&b.not_empty, NULL), 0);
  ck_assert_int_eq(sem_init(&b.free_slots, 0, SLOTS), 0);
  ck_assert_int_eq(sem_init(&b.full_slots, 0, 0), 0);
  ck_assert_int_eq(pthread_create(&tc, NULL, consumer, &b), 0);
  ck_assert_int_eq(pthread_create(&tp, NULL, producer, &b), 0);
  ck_assert_int_eq(pthread_join(tp, NULL), 0);
  ck_assert_int_eq(pthread_join(tc, NULL), 0);
  ck_assert_int_eq(b.wrong, 0);
  ck_assert_uint_eq(b.count, 0);
  ck_assert_int_eq(sem_getvalue(&b.free_slots, &value), 0);
  ck_assert_int_eq(value, SLOTS);
  ck_assert_int_eq(sem_getvalue(&b.full_slots, &value), 0);
  ck_assert_int_eq(value, 0);
  ck_assert_int_eq(sem_destroy(&b.full_slots), 0);
  ck_assert_int_eq(sem_destroy(&b.free_slots), 0);
  ck_assert_int_eq(pthread_cond_destroy(&b.not_empty), 0);
  ck_assert_int_eq(pthread_cond_destroy(&b.not_full), 0);
  ck_assert_int_eq(pthread_mutex_destroy(&b.m), 0);
}

START_TEST(the_workloads_run_on_the_drop_in)
{
  ASSERT_NOT_GLIBC(pthread_mutex_lock);
  ASSERT_NOT_GLIBC(pthread_cond_wait);
  ASSERT_NOT_GLIBC(pthread_cond_signal);
  ASSERT_NOT_GLIBC(sem_wait);
  ASSERT_NOT_GLIBC(sem_post);
}
END_TEST

START_TEST(bounded_buffer_on_a_mutex_and_two_conditions)
{
  run(cond_producer, cond_consumer);
}
END_TEST

START_TEST(bounded_buffer_on_two_semaphores)
{
  run(sem_producer, sem_consumer);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("pthread-prodcons");
  TCase *tc = tcase_create("threads");

  tcase_set_tags(tc, FL_TAG_THREADS);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, the_workloads_run_on_the_drop_in);
  tcase_add_test(tc, bounded_buffer_on_a_mutex_and_two_conditions);
  tcase_add_test(tc, bounded_buffer_on_two_semaphores);
  suite_add_tcase(s, tc);
  return fl_check_run(s);
}
