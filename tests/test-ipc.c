/* tests/test-ipc.c: <fastlock/ipc.h> in one process: every call, every
 * error path, the semantics of each object type, wait-any and wait-all,
 * and the region layout 32- and 64-bit processes must agree on.  The
 * tests with dead processes are in test-ipc-death.c.  */
#include "config.h"

#include <fastlock/ipc.h>

#include <fastlock/arch/atomic.h>
#include <fastlock/common.h>

#include "ipc/ipc-internal.h"
#include "sys/clock.h"

#include "fl-check.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define LONG_NS (30 * (int64_t)FL_NSEC_PER_SEC) /* "never" for a test */

static char region_name[64];
static fl_ipc_t *r;

static void setup(void)
{
  snprintf(region_name, sizeof region_name, "/fl-test-ipc-%d", (int)getpid());
  fl_ipc_unlink(region_name);
  ck_assert_int_eq(fl_ipc_create(region_name, 64, 8, &r), 0);
}

static void teardown(void)
{
  ck_assert_int_eq(fl_ipc_close(r), 0);
  fl_ipc_unlink(region_name);
}

static struct timespec past_deadline(void)
{
  return fl_deadline_after_ns(CLOCK_MONOTONIC, -1);
}

/* The number of waiting threads, read as the library reads it.  */
static uint32_t waiting(void)
{
  uint32_t n;

  fl_ipc_lock(r);
  n = fl_ipc_hdr(r)->nwaiting;
  fl_ipc_unlock(r);
  return n;
}

static struct timespec later(int64_t ns)
{
  return fl_deadline_after_ns(CLOCK_MONOTONIC, ns);
}

/* ------------------------------------------------------------------ */

START_TEST(layout_fixed)
{
  /* The same in every ABI: only 32-bit words, no pointers.  */
  ck_assert_uint_eq(sizeof(struct fl_ipc_hdr), 128);
  ck_assert_uint_eq(sizeof(struct fl_ipc_undo), 8);
  ck_assert_uint_eq(sizeof(struct fl_ipc_client), 80);
  ck_assert_uint_eq(sizeof(struct fl_ipc_object), 128);
  ck_assert_uint_eq(offsetof(struct fl_ipc_object, a),
                    16); /* (a, b) 8-aligned */
  ck_assert_uint_eq(offsetof(struct fl_ipc_object, rwsem), 32);
  ck_assert_uint_eq(sizeof(struct fl_ipc_wait), 288);
  ck_assert_uint_eq(sizeof(fl_ipc_obj_t), 8);
}
END_TEST

START_TEST(region_size_errors)
{
  size_t size;

  ck_assert_int_eq(fl_ipc_region_size(0, 1, &size), EINVAL);
  ck_assert_int_eq(fl_ipc_region_size(1, 0, &size), EINVAL);
  ck_assert_int_eq(fl_ipc_region_size(FL_IPC_OBJECTS_MAX + 1, 1, &size),
                   EINVAL);
  ck_assert_int_eq(fl_ipc_region_size(1, FL_IPC_CLIENTS_MAX + 1, &size),
                   EINVAL);
  ck_assert_int_eq(fl_ipc_region_size(16, 4, &size), 0);
  ck_assert_uint_gt(size, 16 * sizeof(struct fl_ipc_object));
}
END_TEST

START_TEST(create_open_errors)
{
  fl_ipc_t *r2;

  ck_assert_int_eq(fl_ipc_create(region_name, 4, 4, &r2), EEXIST);
  ck_assert_int_eq(fl_ipc_create(NULL, 4, 4, &r2), EINVAL);
  ck_assert_int_eq(fl_ipc_create("/fl-test-ipc-x", 0, 4, &r2), EINVAL);
  ck_assert_int_eq(fl_ipc_open("/fl-test-ipc-does-not-exist", &r2), ENOENT);
  ck_assert_int_eq(fl_ipc_open(NULL, &r2), EINVAL);
  ck_assert_int_eq(fl_ipc_unlink("/fl-test-ipc-does-not-exist"), ENOENT);
  ck_assert_int_eq(fl_ipc_unlink(NULL), EINVAL);
  ck_assert_int_eq(fl_ipc_close(NULL), EINVAL);
}
END_TEST

/* A shared memory object that is not (yet) a region.  */
static int foreign_shm(const char *name, size_t size, uint32_t word0,
                       uint32_t word1)
{
  int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
  uint32_t words[2] = { word0, word1 };

  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
  if (size >= sizeof words)
    ck_assert_int_eq(pwrite(fd, words, sizeof words, 0), (ssize_t)sizeof words);
  return fd;
}

START_TEST(open_not_a_region)
{
  const char *name = "/fl-test-ipc-foreign";
  fl_ipc_t *r2;

  close(foreign_shm(name, 0, 0, 0));
  ck_assert_int_eq(fl_ipc_open(name, &r2), EAGAIN); /* not sized yet */
  close(foreign_shm(name, 4096, 0, 0));
  ck_assert_int_eq(fl_ipc_open(name, &r2), EAGAIN); /* not formatted */
  close(foreign_shm(name, 4096, 0xdeadbeef, 1));
  ck_assert_int_eq(fl_ipc_open(name, &r2), EBADMSG);
  close(foreign_shm(name, 4096, FL_IPC_MAGIC, FL_IPC_VERSION + 1));
  ck_assert_int_eq(fl_ipc_open(name, &r2), EPROTO);
  close(foreign_shm(name, 4096, FL_IPC_MAGIC, FL_IPC_VERSION));
  ck_assert_int_eq(fl_ipc_open(name, &r2), EBADMSG); /* sizes wrong */
  fl_ipc_unlink(name);
}
END_TEST

START_TEST(open_second_view)
{
  fl_ipc_t *r2;
  fl_ipc_obj_t s, s2;
  uint32_t count;

  ck_assert_int_eq(fl_ipc_sem_create(r, "sem", 2, 5, &s), 0);
  ck_assert_int_eq(fl_ipc_open(region_name, &r2), 0);
  ck_assert_uint_ne(fl_ipc_client_id(r2), fl_ipc_client_id(r));
  ck_assert_int_eq(fl_ipc_obj_open(r2, "sem", &s2), 0);
  ck_assert_uint_eq(s2.id, s.id);
  ck_assert_int_eq(fl_ipc_sem_release(r2, s2, 1, NULL), 0);
  ck_assert_int_eq(fl_ipc_sem_read(r, s, &count, NULL), 0);
  ck_assert_uint_eq(count, 3);
  ck_assert_int_eq(fl_ipc_close(r2), 0);
}
END_TEST

START_TEST(clients_full)
{
  const char *name = "/fl-test-ipc-full";
  fl_ipc_t *a, *b;

  fl_ipc_unlink(name);
  ck_assert_int_eq(fl_ipc_create(name, 4, 1, &a), 0);
  ck_assert_int_eq(fl_ipc_open(name, &b), EUSERS);
  ck_assert_int_eq(fl_ipc_close(a), 0);
  ck_assert_int_eq(fl_ipc_open(name, &b), 0); /* slot free again */
  ck_assert_int_eq(fl_ipc_close(b), 0);
  ck_assert_int_eq(fl_ipc_unlink(name), 0);
}
END_TEST

START_TEST(attach_memfd)
{
  size_t size;
  void *mem;
  fl_ipc_t *a, *b;
  fl_ipc_obj_t e, e2;
  int fd, prev;

  ck_assert_int_eq(fl_ipc_region_size(8, 4, &size), 0);
  fd = memfd_create("fl-test-ipc", MFD_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
  mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ck_assert_ptr_ne(mem, MAP_FAILED);
  ck_assert_int_eq(fl_ipc_attach(mem, size, fd, &a), EAGAIN);
  ck_assert_int_eq(fl_ipc_format(mem, size - 1, 8, 4), ENOSPC);
  ck_assert_int_eq(fl_ipc_format((char *)mem + 1, size, 8, 4), EINVAL);
  ck_assert_int_eq(fl_ipc_format(mem, size, 0, 4), EINVAL);
  ck_assert_int_eq(fl_ipc_format(mem, size, 8, 4), 0);
  ck_assert_int_eq(fl_ipc_attach(mem, size, -1, &a), EBADF);
  ck_assert_int_eq(fl_ipc_attach(NULL, size, fd, &a), EINVAL);
  ck_assert_int_eq(fl_ipc_attach(mem, 64, fd, &a), EBADMSG);
  ck_assert_int_eq(fl_ipc_attach(mem, size, fd, &a), 0);
  ck_assert_int_eq(fl_ipc_attach(mem, size, fd, &b), 0);
  ck_assert_int_eq(fl_ipc_event_create(a, "ev", 1, 0, &e), 0);
  ck_assert_int_eq(fl_ipc_obj_open(b, "ev", &e2), 0);
  ck_assert_int_eq(fl_ipc_event_set(b, e2, &prev), 0);
  ck_assert_int_eq(prev, 0);
  ck_assert_int_eq(fl_ipc_event_read(a, e, &prev), 0);
  ck_assert_int_eq(prev, 1);
  ck_assert_int_eq(fl_ipc_close(b), 0);
  ck_assert_int_eq(fl_ipc_close(a), 0);
  munmap(mem, size);
  close(fd);
}
END_TEST

/* ------------------------------------------------------------------ */

START_TEST(names_and_references)
{
  fl_ipc_obj_t m, m2, anon, anon2;
  char longname[FL_IPC_NAME_MAX + 2];
  int type;

  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  ck_assert_int_eq(fl_ipc_mutex_create(r, longname, 0, &m), ENAMETOOLONG);
  ck_assert_int_eq(fl_ipc_obj_open(r, longname, &m), ENAMETOOLONG);
  longname[FL_IPC_NAME_MAX] = '\0';
  ck_assert_int_eq(fl_ipc_mutex_create(r, longname, 0, &m), 0);
  ck_assert_int_eq(fl_ipc_obj_close(r, m), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m2), EEXIST);
  ck_assert_int_eq(fl_ipc_sem_create(r, "m", 0, 1, &m2), EEXIST);
  ck_assert_int_eq(fl_ipc_obj_open(r, "nothing", &m2), ENOENT);
  ck_assert_int_eq(fl_ipc_obj_open(r, "", &m2), EINVAL);
  ck_assert_int_eq(fl_ipc_obj_open(r, NULL, &m2), EINVAL);
  ck_assert_int_eq(fl_ipc_obj_open(r, "m", &m2), 0);
  ck_assert_int_eq(fl_ipc_obj_type(r, m2, &type), 0);
  ck_assert_int_eq(type, FL_IPC_MUTEX);
  ck_assert_int_eq(fl_ipc_obj_dup(r, m2), 0);
  /* Three references: the object outlives two closes.  */
  ck_assert_int_eq(fl_ipc_obj_close(r, m), 0);
  ck_assert_int_eq(fl_ipc_obj_close(r, m), 0);
  ck_assert_int_eq(fl_ipc_obj_open(r, "m", &m2), 0);
  ck_assert_int_eq(fl_ipc_obj_close(r, m2), 0);
  ck_assert_int_eq(fl_ipc_obj_close(r, m2), 0);
  /* Freed: the name is gone and the handle is stale.  */
  ck_assert_int_eq(fl_ipc_obj_open(r, "m", &m2), ENOENT);
  ck_assert_int_eq(fl_ipc_obj_close(r, m), EBADF);
  ck_assert_int_eq(fl_ipc_obj_type(r, m, &type), EBADF);
  ck_assert_int_eq(fl_ipc_obj_dup(r, m), EBADF);
  /* Anonymous objects do not collide.  */
  ck_assert_int_eq(fl_ipc_event_create(r, NULL, 0, 0, &anon), 0);
  ck_assert_int_eq(fl_ipc_event_create(r, "", 0, 0, &anon2), 0);
  ck_assert_uint_ne(anon.id, anon2.id);
  /* The slot of m is reused by a new object: m stays stale.  */
  ck_assert_int_eq(fl_ipc_obj_type(r, m, &type), EBADF);
}
END_TEST

START_TEST(table_full)
{
  fl_ipc_obj_t o;
  int i, rc = 0;

  for (i = 0; i < 64 && rc == 0; i++)
    rc = fl_ipc_sem_create(r, NULL, 0, 1, &o);
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 0, 1, &o), ENOSPC);
}
END_TEST

START_TEST(handle_errors)
{
  const char *name = "/fl-test-ipc-other";
  fl_ipc_t *other;
  fl_ipc_obj_t s, foreign, rw, bogus;
  uint32_t index;

  fl_ipc_unlink(name);
  ck_assert_int_eq(fl_ipc_create(name, 4, 2, &other), 0);
  ck_assert_int_eq(fl_ipc_sem_create(other, "s", 1, 1, &foreign), 0);
  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 1, 1, &s), 0);
  ck_assert_int_eq(fl_ipc_rwsem_create(r, "rw", &rw), 0);
  /* Foreign: same slot, another region.  */
  ck_assert_int_eq(fl_ipc_sem_release(r, foreign, 1, NULL), EBADF);
  ck_assert_int_eq(
      fl_ipc_wait_any(r, 1, &foreign, CLOCK_MONOTONIC, NULL, &index), EBADF);
  bogus = s;
  bogus.id = 1000; /* index out of range */
  ck_assert_int_eq(fl_ipc_sem_release(r, bogus, 1, NULL), EBADF);
  /* Wrong type.  */
  ck_assert_int_eq(fl_ipc_mutex_release(r, s, NULL), EINVAL);
  ck_assert_int_eq(fl_ipc_event_set(r, s, NULL), EINVAL);
  ck_assert_int_eq(fl_ipc_mutex_read(r, s, NULL, NULL, NULL), EINVAL);
  ck_assert_int_eq(fl_ipc_event_read(r, s, NULL), EINVAL);
  ck_assert_int_eq(fl_ipc_sem_read(r, rw, NULL, NULL), EINVAL);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &rw, CLOCK_MONOTONIC, NULL, &index),
                   EINVAL);
  /* Closed by this process.  */
  ck_assert_int_eq(fl_ipc_obj_close(r, s), 0);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 1, NULL), EBADF);
  ck_assert_int_eq(fl_ipc_wait_all(r, 1, &s, CLOCK_MONOTONIC, NULL, NULL),
                   EBADF);
  ck_assert_int_eq(fl_ipc_close(other), 0);
  fl_ipc_unlink(name);
}
END_TEST

/* ------------------------------------------------------------------ */

START_TEST(semaphore)
{
  fl_ipc_obj_t s;
  uint32_t prev, count, max, index;
  struct timespec now = past_deadline();

  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 2, 0, &s), EINVAL);
  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 3, 2, &s), EINVAL);
  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 1, 3, &s), 0);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 0, &prev), EINVAL);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 2, &prev), 0);
  ck_assert_uint_eq(prev, 1);
  prev = 77;
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 1, &prev), EOVERFLOW);
  ck_assert_uint_eq(prev, 77);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, UINT32_MAX, NULL), EOVERFLOW);
  ck_assert_int_eq(fl_ipc_sem_read(r, s, &count, &max), 0);
  ck_assert_uint_eq(count, 3);
  ck_assert_uint_eq(max, 3);
  for (count = 0; count < 3; count++)
    ck_assert_int_eq(fl_ipc_wait_any(r, 1, &s, CLOCK_MONOTONIC, &now, &index),
                     0);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &s, CLOCK_MONOTONIC, &now, &index),
                   ETIMEDOUT);
  ck_assert_int_eq(fl_ipc_sem_read(r, s, &count, NULL), 0);
  ck_assert_uint_eq(count, 0);
}
END_TEST

/* A thread that lingers (on set) stays, owning what it took, from the end
 * of its work (it posts done) until it is let go (go): a thread's exit
 * abandons the mutexes it owns.  */
struct linger {
  int on;
  sem_t done, go;
};

static void linger_init(struct linger *l)
{
  if (l->on) {
    ck_assert_int_eq(sem_init(&l->done, 0, 0), 0);
    ck_assert_int_eq(sem_init(&l->go, 0, 0), 0);
  }
}

/* In the lingering thread, its work done.  */
static void linger_here(struct linger *l)
{
  if (l->on) {
    sem_post(&l->done);
    while (sem_wait(&l->go) != 0)
      continue;
  }
}

/* The lingering thread's work is done (it still runs).  */
static void linger_done(struct linger *l)
{
  while (sem_wait(&l->done) != 0)
    continue;
}

/* Let the lingering thread t go and join it.  */
static void linger_go(struct linger *l, pthread_t t)
{
  sem_post(&l->go);
  pthread_join(t, NULL);
  sem_destroy(&l->done);
  sem_destroy(&l->go);
}

struct waiter {
  fl_ipc_obj_t objs[4];
  uint32_t n;
  int all;
  int rc;
  uint32_t index;
  struct linger linger;
};

static void *wait_thread(void *arg)
{
  struct waiter *w = arg;
  struct timespec d = later(LONG_NS);

  w->rc = w->all ? fl_ipc_wait_all(r, w->n, w->objs, CLOCK_MONOTONIC, &d, NULL)
                 : fl_ipc_wait_any(r, w->n, w->objs, CLOCK_MONOTONIC, &d,
                                   &w->index);
  linger_here(&w->linger);
  return NULL;
}

/* Start a waiter thread and return once it sleeps in a wait slot.  */
static pthread_t start_waiter(struct waiter *w, uint32_t waiting_before)
{
  pthread_t t;

  linger_init(&w->linger);
  ck_assert_int_eq(pthread_create(&t, NULL, wait_thread, w), 0);
  while (waiting() == waiting_before)
    usleep(1000);
  return t;
}

START_TEST(mutex)
{
  fl_ipc_obj_t m;
  uint32_t prev, owner, tid, rec, index;
  struct timespec now = past_deadline();
  struct waiter w = { .n = 1, .linger.on = 1 };

  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 1, &m), 0);
  ck_assert_int_eq(fl_ipc_mutex_read(r, m, &owner, &tid, &rec), 0);
  ck_assert_uint_eq(owner, fl_ipc_client_id(r));
  ck_assert_uint_eq(tid, (uint32_t)gettid());
  ck_assert_uint_eq(rec, 1);
  /* Recursion.  */
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &now, &index), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, &prev), 0);
  ck_assert_uint_eq(prev, 2);
  /* Another thread of the same process is not the owner.  */
  w.objs[0] = m;
  pthread_t t = start_waiter(&w, 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, &prev), 0);
  ck_assert_uint_eq(prev, 1);
  linger_done(&w.linger);
  ck_assert_int_eq(w.rc, 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, &prev), EPERM);
  ck_assert_int_eq(fl_ipc_mutex_read(r, m, &owner, &tid, &rec), 0);
  ck_assert_uint_eq(owner, fl_ipc_client_id(r));
  ck_assert_uint_ne(tid, (uint32_t)gettid());
  ck_assert_uint_eq(rec, 1);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &now, &index),
                   ETIMEDOUT);
  /* It exits owning the mutex: abandoned.  */
  linger_go(&w.linger, t);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &now, &index),
                   EOWNERDEAD);
}
END_TEST

START_TEST(mutex_free_release)
{
  fl_ipc_obj_t m;

  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, NULL), EPERM);
}
END_TEST

START_TEST(events)
{
  fl_ipc_obj_t a, m;
  struct timespec now = past_deadline();
  uint32_t index;
  int prev;

  ck_assert_int_eq(fl_ipc_event_create(r, "auto", 0, 1, &a), 0);
  ck_assert_int_eq(fl_ipc_event_create(r, "manual", 1, 0, &m), 0);
  ck_assert_int_eq(fl_ipc_event_read(r, a, NULL), EINVAL);
  /* Auto-reset: one wait takes it.  */
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &a, CLOCK_MONOTONIC, &now, &index), 0);
  ck_assert_int_eq(fl_ipc_event_read(r, a, &prev), 0);
  ck_assert_int_eq(prev, 0);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &a, CLOCK_MONOTONIC, &now, &index),
                   ETIMEDOUT);
  /* Manual-reset: stays set for every wait.  */
  ck_assert_int_eq(fl_ipc_event_set(r, m, &prev), 0);
  ck_assert_int_eq(prev, 0);
  ck_assert_int_eq(fl_ipc_event_set(r, m, &prev), 0);
  ck_assert_int_eq(prev, 1);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &now, &index), 0);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &now, &index), 0);
  ck_assert_int_eq(fl_ipc_event_reset(r, m, &prev), 0);
  ck_assert_int_eq(prev, 1);
  ck_assert_int_eq(fl_ipc_event_reset(r, m, &prev), 0);
  ck_assert_int_eq(prev, 0);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &m, CLOCK_MONOTONIC, &now, &index),
                   ETIMEDOUT);
  /* Pulse with nobody waiting: nothing stays set, even if it was.  */
  ck_assert_int_eq(fl_ipc_event_pulse(r, m, &prev), 0);
  ck_assert_int_eq(prev, 0);
  ck_assert_int_eq(fl_ipc_event_read(r, m, &prev), 0);
  ck_assert_int_eq(prev, 0);
  ck_assert_int_eq(fl_ipc_event_set(r, m, NULL), 0);
  ck_assert_int_eq(fl_ipc_event_pulse(r, m, &prev), 0);
  ck_assert_int_eq(prev, 1);
  ck_assert_int_eq(fl_ipc_event_read(r, m, &prev), 0);
  ck_assert_int_eq(prev, 0);
}
END_TEST

static void pulse_case(int manual, int expect_woken)
{
  struct waiter w[3];
  pthread_t t[3];
  fl_ipc_obj_t e;
  int i, woken = 0, prev;

  ck_assert_int_eq(fl_ipc_event_create(r, "pulse", manual, 0, &e), 0);
  for (i = 0; i < 3; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].objs[0] = e;
    w[i].n = 1;
    t[i] = start_waiter(&w[i], (uint32_t)i);
  }
  ck_assert_int_eq(fl_ipc_event_pulse(r, e, &prev), 0);
  ck_assert_int_eq(prev, 0);
  ck_assert_int_eq(fl_ipc_event_read(r, e, &prev), 0);
  ck_assert_int_eq(prev, 0);
  /* The waiters not granted still wait: set the event for them (manual)
   * or once each (auto), and count who the pulse woke by slot state.  */
  woken = 3 - (int)waiting();
  ck_assert_int_eq(woken, expect_woken);
  for (i = 0; i < 3 - expect_woken; i++)
    ck_assert_int_eq(fl_ipc_event_set(r, e, NULL), 0);
  for (i = 0; i < 3; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(w[i].rc, 0);
  }
}

START_TEST(pulse_manual)
{
  pulse_case(1, 3);
}
END_TEST

START_TEST(pulse_auto)
{
  pulse_case(0, 1);
}
END_TEST

START_TEST(wait_any_order)
{
  fl_ipc_obj_t o[3];
  struct timespec now = past_deadline();
  uint32_t index = 99;

  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 0, 1, &o[0]), 0);
  ck_assert_int_eq(fl_ipc_event_create(r, NULL, 1, 1, &o[1]), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &o[2]), 0);
  ck_assert_int_eq(fl_ipc_wait_any(r, 3, o, CLOCK_MONOTONIC, &now, &index), 0);
  ck_assert_uint_eq(index, 1);
  ck_assert_int_eq(fl_ipc_event_reset(r, o[1], NULL), 0);
  ck_assert_int_eq(fl_ipc_wait_any(r, 3, o, CLOCK_REALTIME, NULL, &index), 0);
  ck_assert_uint_eq(index, 2);
  ck_assert_int_eq(fl_ipc_wait_any(r, 3, o, CLOCK_MONOTONIC, &now, &index), 0);
  ck_assert_uint_eq(index, 2); /* recursion */
}
END_TEST

START_TEST(wait_errors)
{
  fl_ipc_obj_t o[FL_IPC_WAIT_MAX + 1];
  struct timespec bad = { 0, FL_NSEC_PER_SEC };
  struct timespec now = past_deadline();
  uint32_t i, index;

  for (i = 0; i < FL_IPC_WAIT_MAX; i++)
    ck_assert_int_eq(fl_ipc_event_create(r, NULL, 1, 1, &o[i]), 0);
  o[FL_IPC_WAIT_MAX] = o[1];
  ck_assert_int_eq(fl_ipc_wait_any(r, 0, o, CLOCK_MONOTONIC, NULL, &index),
                   EINVAL);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, NULL, CLOCK_MONOTONIC, NULL, &index),
                   EINVAL);
  ck_assert_int_eq(fl_ipc_wait_any(NULL, 1, o, CLOCK_MONOTONIC, NULL, &index),
                   EINVAL);
  ck_assert_int_eq(
      fl_ipc_wait_any(r, FL_IPC_WAIT_MAX + 1, o, CLOCK_MONOTONIC, NULL, &index),
      E2BIG);
  ck_assert_int_eq(
      fl_ipc_wait_all(r, FL_IPC_WAIT_MAX + 1, o, CLOCK_MONOTONIC, NULL, NULL),
      E2BIG);
  ck_assert_int_eq(
      fl_ipc_wait_any(r, 1, o, CLOCK_PROCESS_CPUTIME_ID, NULL, &index), EINVAL);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, o, CLOCK_MONOTONIC, &bad, &index),
                   EINVAL);
  bad.tv_nsec = -1;
  ck_assert_int_eq(fl_ipc_wait_all(r, 1, o, CLOCK_MONOTONIC, &bad, NULL),
                   EINVAL);
  /* 64 at once is fine; a duplicate is refused by wait-all only.  */
  ck_assert_int_eq(
      fl_ipc_wait_all(r, FL_IPC_WAIT_MAX, o, CLOCK_MONOTONIC, &now, NULL), 0);
  ck_assert_int_eq(
      fl_ipc_wait_any(r, FL_IPC_WAIT_MAX, o + 1, CLOCK_MONOTONIC, &now, &index),
      0);
  ck_assert_uint_eq(index, 0);
  ck_assert_int_eq(
      fl_ipc_wait_all(r, FL_IPC_WAIT_MAX, o + 1, CLOCK_MONOTONIC, &now, NULL),
      EINVAL);
}
END_TEST

/* Every wait slot of the region taken by a sleeping waiter: one more wait
 * that would sleep is EAGAIN at once, one that need not sleep still
 * succeeds, and the sleepers are all served afterwards.  */
START_TEST(wait_slots_full)
{
  enum { N = 8 * FL_IPC_WAITS_PER_CLIENT }; /* setup's region: 8 clients */
  static struct waiter w[N];
  pthread_t t[N];
  fl_ipc_obj_t s, e;
  struct timespec d = later(LONG_NS);
  uint32_t i, index, count;

  ck_assert_uint_eq(fl_ipc_hdr(r)->nwaits, N);
  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 0, N, &s), 0);
  ck_assert_int_eq(fl_ipc_event_create(r, NULL, 1, 1, &e), 0);
  for (i = 0; i < N; i++) {
    w[i] = (struct waiter){ .n = 1, .objs = { s } };
    t[i] = start_waiter(&w[i], i);
  }
  ck_assert_uint_eq(waiting(), N);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &s, CLOCK_MONOTONIC, &d, &index),
                   EAGAIN);
  ck_assert_int_eq(fl_ipc_wait_all(r, 1, &s, CLOCK_MONOTONIC, NULL, NULL),
                   EAGAIN);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &e, CLOCK_MONOTONIC, &d, &index), 0);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, N, NULL), 0);
  for (i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(w[i].rc, 0);
  }
  ck_assert_uint_eq(waiting(), 0);
  ck_assert_int_eq(fl_ipc_sem_read(r, s, &count, NULL), 0);
  ck_assert_uint_eq(count, 0);
}
END_TEST

START_TEST(wait_all_none_or_all)
{
  fl_ipc_obj_t o[2];
  struct timespec now = past_deadline();
  struct waiter w = { .n = 2, .all = 1, .linger.on = 1 };
  uint32_t owner, count;
  pthread_t t;

  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &o[0]), 0);
  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 0, 2, &o[1]), 0);
  /* The semaphore is empty: the free mutex is not taken either.  */
  ck_assert_int_eq(fl_ipc_wait_all(r, 2, o, CLOCK_MONOTONIC, &now, NULL),
                   ETIMEDOUT);
  ck_assert_int_eq(fl_ipc_mutex_read(r, o[0], &owner, NULL, NULL), 0);
  ck_assert_uint_eq(owner, 0);
  /* A thread waits for both; one unit makes it take both at once.  */
  w.objs[0] = o[0];
  w.objs[1] = o[1];
  t = start_waiter(&w, 0);
  ck_assert_int_eq(fl_ipc_mutex_read(r, o[0], &owner, NULL, NULL), 0);
  ck_assert_uint_eq(owner, 0);
  ck_assert_int_eq(fl_ipc_sem_release(r, o[1], 1, NULL), 0);
  linger_done(&w.linger);
  ck_assert_int_eq(w.rc, 0);
  ck_assert_int_eq(fl_ipc_mutex_read(r, o[0], &owner, NULL, NULL), 0);
  ck_assert_uint_eq(owner, fl_ipc_client_id(r));
  ck_assert_int_eq(fl_ipc_sem_read(r, o[1], &count, NULL), 0);
  ck_assert_uint_eq(count, 0);
  linger_go(&w.linger, t);
}
END_TEST

START_TEST(wait_timeout)
{
  fl_ipc_obj_t s;
  struct timespec d;
  uint32_t index;
  int64_t t0;

  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 0, 1, &s), 0);
  t0 = fl_clock_ns(CLOCK_REALTIME);
  d = fl_deadline_after_ns(CLOCK_REALTIME, 50 * 1000000);
  ck_assert_int_eq(fl_ipc_wait_any(r, 1, &s, CLOCK_REALTIME, &d, &index),
                   ETIMEDOUT);
  ck_assert_int_ge(fl_clock_ns(CLOCK_REALTIME) - t0, 50 * 1000000);
  /* The wait slot is free again and the semaphore untouched.  */
  ck_assert_uint_eq(waiting(), 0);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 1, NULL), 0);
}
END_TEST

START_TEST(fifo_grants)
{
  struct waiter w[2];
  pthread_t t[2];
  fl_ipc_obj_t s;
  int i;

  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 0, 2, &s), 0);
  for (i = 0; i < 2; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].objs[0] = s;
    w[i].n = 1;
    t[i] = start_waiter(&w[i], (uint32_t)i);
  }
  /* One unit: the first waiter (older ticket) gets it.  */
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 1, NULL), 0);
  pthread_join(t[0], NULL);
  ck_assert_int_eq(w[0].rc, 0);
  ck_assert_uint_eq(waiting(), 1);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 1, NULL), 0);
  pthread_join(t[1], NULL);
  ck_assert_int_eq(w[1].rc, 0);
}
END_TEST

START_TEST(rwsem_object)
{
  fl_ipc_obj_t rw, rw2;
  fl_rwsem_t *p, *p2;
  int type;

  ck_assert_int_eq(fl_ipc_rwsem_create(r, "rw", &rw), 0);
  ck_assert_int_eq(fl_ipc_obj_type(r, rw, &type), 0);
  ck_assert_int_eq(type, FL_IPC_RWSEM);
  ck_assert_int_eq(fl_ipc_rwsem(r, rw, &p), 0);
  ck_assert_int_eq(fl_ipc_rwsem(r, rw, NULL), EINVAL);
  ck_assert_int_eq(fl_rwsem_down_write(p), 0);
  ck_assert_int_eq(fl_ipc_obj_open(r, "rw", &rw2), 0);
  ck_assert_int_eq(fl_ipc_rwsem(r, rw2, &p2), 0);
  ck_assert_ptr_eq(p, p2);
  ck_assert_int_eq(fl_rwsem_down_write_trylock(p2), EBUSY);
  ck_assert_int_eq(fl_rwsem_up_write(p), 0);
  ck_assert_int_eq(fl_ipc_sem_create(r, "s", 0, 1, &rw2), 0);
  ck_assert_int_eq(fl_ipc_rwsem(r, rw2, &p2), EINVAL);
}
END_TEST

START_TEST(undo_log)
{
  fl_ipc_obj_t s;
  struct fl_ipc_object *o;
  uint32_t count;

  /* The log records, checkpoints drop: what a taker would undo.  */
  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 1, 9, &s), 0);
  o = &fl_ipc_objects(r)[FL_IPC_ID_INDEX(s.id)];
  fl_ipc_lock(r);
  fl_ipc_set(r, &o->a, 5);
  fl_ipc_set(r, &o->a, 6);
  fl_ipc_set(r, &o->a, 6); /* no change: no entry */
  ck_assert_uint_eq(fl_ipc_hdr(r)->log_n, 2);
  ck_assert_uint_eq(fl_ipc_log(r)[0].old, 1);
  ck_assert_uint_eq(fl_ipc_log(r)[1].old, 5);
  fl_ipc_unlock(r);
  ck_assert_uint_eq(fl_ipc_hdr(r)->log_n, 0);
  ck_assert_int_eq(fl_ipc_sem_read(r, s, &count, NULL), 0);
  ck_assert_uint_eq(count, 6);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The fastpath and the SLOW bit (src/ipc/fastpath.c).                 */

static struct fl_ipc_object *object_of(fl_ipc_obj_t h)
{
  return &fl_ipc_objects(r)[FL_IPC_ID_INDEX(h.id)];
}

/* The object's word as the fastpaths see it.  */
static uint32_t word_of(fl_ipc_obj_t h)
{
  return __atomic_load_n(&object_of(h)->a, __ATOMIC_ACQUIRE);
}

static int wait_one(fl_ipc_obj_t h, const struct timespec *d)
{
  uint32_t index;

  return fl_ipc_wait_any(r, 1, &h, CLOCK_MONOTONIC, d, &index);
}

START_TEST(fastpath_slow_bit)
{
  fl_ipc_obj_t s, m;
  struct timespec now = past_deadline();
  uint32_t prev, rec;

  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 0, FL_IPC_SLOW, &s), EINVAL);
  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 0, FL_IPC_SLOW - 1, &s), 0);
  /* A wait that timed out held the semaphore; no one waits, so its
   * unlock let go.  */
  ck_assert_int_eq(wait_one(s, &now), ETIMEDOUT);
  ck_assert_uint_eq(word_of(s), 0);
  ck_assert_uint_eq(object_of(s)->waiters, 0);
  /* A holder that died leaves SLOW: the next operation takes the lock,
   * whose unlock lets go.  */
  __atomic_fetch_or(&object_of(s)->a, FL_IPC_SLOW, __ATOMIC_SEQ_CST);
  ck_assert_int_eq(fl_ipc_sem_release(r, s, 2, &prev), 0);
  ck_assert_uint_eq(prev, 0);
  ck_assert_uint_eq(word_of(s), 2);
  ck_assert_int_eq(wait_one(s, &now), 0);
  ck_assert_uint_eq(word_of(s), 1);
  /* The mutex: a fastpath owner is its tag alone in the word.  */
  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &m), 0);
  ck_assert_int_eq(wait_one(m, &now), 0);
  ck_assert_uint_eq(word_of(m), fl_ipc_client_id(r));
  ck_assert_uint_eq(object_of(m)->b, (uint32_t)gettid());
  /* Recursion goes through the lock both ways; each unlock lets go.  */
  ck_assert_int_eq(wait_one(m, &now), 0);
  ck_assert_int_eq(fl_ipc_mutex_read(r, m, NULL, NULL, &rec), 0);
  ck_assert_uint_eq(rec, 2);
  ck_assert_uint_eq(word_of(m), fl_ipc_client_id(r));
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, &prev), 0);
  ck_assert_uint_eq(prev, 2);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, &prev), 0);
  ck_assert_uint_eq(prev, 1);
  ck_assert_uint_eq(word_of(m), 0);
  ck_assert_uint_eq(object_of(m)->b, 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, &prev), EPERM);
  ck_assert_uint_eq(word_of(m), 0);
}
END_TEST

/* A mutex whose owner's client is not LIVE: what a process cut off by
 * fl_ipc_client_died leaves when its fastpath acquire passed the
 * clean-up's scan.  The next waiter abandons it.  */
START_TEST(owner_not_live_is_abandoned)
{
  fl_ipc_obj_t m;
  struct timespec d = later(LONG_NS);
  struct fl_ipc_object *o;
  uint32_t owner, rec, dead = 6 | 1u << 16; /* client slot 5, never claimed */

  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &m), 0);
  o = object_of(m);
  fl_ipc_lock(r);
  fl_ipc_hold(r, FL_IPC_ID_INDEX(m.id));
  fl_ipc_set(r, &o->a, dead | FL_IPC_SLOW);
  fl_ipc_set(r, &o->b, 4242);
  fl_ipc_unlock(r);
  ck_assert_uint_eq(word_of(m), dead);
  ck_assert_int_eq(wait_one(m, &d), EOWNERDEAD);
  ck_assert_int_eq(fl_ipc_mutex_read(r, m, &owner, NULL, &rec), 0);
  ck_assert_uint_eq(owner, fl_ipc_client_id(r));
  ck_assert_uint_eq(rec, 1);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, NULL), 0);
  ck_assert_int_eq(wait_one(m, &d), 0);
  ck_assert_uint_eq(word_of(m), fl_ipc_client_id(r));
}
END_TEST

/* Uncontended pairs on the fastpath need no region lock: they complete
 * while this thread holds it.  */
static void *fast_pairs(void *arg)
{
  const fl_ipc_obj_t *h = arg;
  struct timespec d = later(LONG_NS);
  int i;

  for (i = 0; i < 1000; i++) {
    if (wait_one(h[0], &d) != 0 || fl_ipc_sem_release(r, h[0], 1, NULL) != 0)
      return (void *)1;
#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8)
    if (wait_one(h[1], &d) != 0 || fl_ipc_mutex_release(r, h[1], NULL) != 0)
      return (void *)1;
#endif
  }
  return NULL;
}

START_TEST(fastpath_needs_no_region_lock)
{
  fl_ipc_obj_t h[2];
  struct timespec d;
  pthread_t t;
  void *ret;
  int rc;

  if (fl_load_relaxed(&fl_tools_active) != 0)
    return; /* the race tools' runs take the lock on purpose */
  ck_assert_int_eq(fl_ipc_sem_create(r, NULL, 1, 1, &h[0]), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &h[1]), 0);
  fl_ipc_lock(r);
  ck_assert_int_eq(pthread_create(&t, NULL, fast_pairs, h), 0);
  /* A guard against a hang, not a timing: a pair that needed the lock
   * would wait for it forever.  */
  d = fl_deadline_after_ns(CLOCK_REALTIME, LONG_NS);
  rc = pthread_timedjoin_np(t, &ret, &d);
  fl_ipc_unlock(r);
  if (rc != 0)
    pthread_join(t, &ret);
  ck_assert_int_eq(rc, 0);
  ck_assert_ptr_null(ret);
}
END_TEST

/* A waiter holds the mutex's word (SLOW) while it waits, so the owner's
 * release goes to the lock and grants it; the grant lets go.  */
START_TEST(waiter_sends_release_to_lock)
{
  fl_ipc_obj_t m;
  struct timespec now = past_deadline();
  struct waiter w = { .n = 1, .linger.on = 1 };
  pthread_t t;

  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &m), 0);
  ck_assert_int_eq(wait_one(m, &now), 0);
  w.objs[0] = m;
  t = start_waiter(&w, 0);
  ck_assert_uint_eq(word_of(m), fl_ipc_client_id(r) | FL_IPC_SLOW);
  ck_assert_uint_eq(object_of(m)->waiters, 1);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, NULL), 0);
  linger_done(&w.linger);
  ck_assert_int_eq(w.rc, 0);
  ck_assert_uint_eq(word_of(m), fl_ipc_client_id(r));
  ck_assert_uint_eq(object_of(m)->waiters, 0);
  ck_assert_uint_ne(object_of(m)->b, (uint32_t)gettid());
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, NULL), EPERM);
  linger_go(&w.linger, t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A thread that exits owning a mutex abandons it (the thread-exit hook,
 * src/ipc/liveness.c), as Win32 and ntsync's mutex-kill do.           */

enum { TAKE_FAST, TAKE_ANY, TAKE_ALL, TAKE_CREATE };

/* What an exiting thread does: take m (how, times over), release all of
 * it if told, linger if told, and end by return or pthread_exit.  */
struct exiter {
  int how, times, release, by_pthread_exit;
  fl_ipc_obj_t m, other; /* other: an event for TAKE_ANY and TAKE_ALL */
  int rc;                /* the first failure, 0 if none */
  struct linger linger;
};

/* Take e->m once as e->how says.  */
static int exiter_take(struct exiter *e, int first)
{
  struct timespec now = past_deadline();
  fl_ipc_obj_t both[2] = { e->other, e->m };
  uint32_t index;

  if (!first || e->how == TAKE_FAST)
    return wait_one(e->m, &now);
  if (e->how == TAKE_ANY)
    return fl_ipc_wait_any(r, 2, both, CLOCK_MONOTONIC, &now, &index);
  if (e->how == TAKE_ALL)
    return fl_ipc_wait_all(r, 2, both, CLOCK_MONOTONIC, &now, NULL);
  return fl_ipc_mutex_create(r, "owned", 1, &e->m);
}

static void *exiter_thread(void *arg)
{
  struct exiter *e = arg;
  int i;

  for (i = 0; i < e->times && e->rc == 0; i++)
    e->rc = exiter_take(e, i == 0);
  for (i = 0; e->release && i < e->times && e->rc == 0; i++)
    e->rc = fl_ipc_mutex_release(r, e->m, NULL);
  linger_here(&e->linger);
  if (e->by_pthread_exit)
    pthread_exit(NULL);
  return NULL;
}

static pthread_t start_exiter(struct exiter *e)
{
  pthread_t t;

  linger_init(&e->linger);
  ck_assert_int_eq(pthread_create(&t, NULL, exiter_thread, e), 0);
  return t;
}

/* m was abandoned: the next wait takes it with EOWNERDEAD, at recursion
 * 1, and only that wait hears of it.  */
static void assert_abandoned_once(fl_ipc_obj_t m)
{
  struct timespec now = past_deadline();
  uint32_t owner, tid, rec;

  ck_assert_int_eq(wait_one(m, &now), EOWNERDEAD);
  ck_assert_int_eq(fl_ipc_mutex_read(r, m, &owner, &tid, &rec), 0);
  ck_assert_uint_eq(owner, fl_ipc_client_id(r));
  ck_assert_uint_eq(tid, (uint32_t)gettid());
  ck_assert_uint_eq(rec, 1);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, NULL), 0);
  ck_assert_int_eq(wait_one(m, &now), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, NULL), 0);
}

/* Each way to take a mutex, and both ways for a thread to end.  */
static const struct exiter exit_cases[] = {
  { .how = TAKE_FAST, .times = 1 },
  { .how = TAKE_FAST, .times = 3, .by_pthread_exit = 1 }, /* recursion */
  { .how = TAKE_ANY, .times = 1 },
  { .how = TAKE_ALL, .times = 1, .by_pthread_exit = 1 },
  { .how = TAKE_CREATE, .times = 2 },
};

START_TEST(thread_exit_abandons)
{
  struct exiter e = exit_cases[_i];
  struct timespec now = past_deadline();
  fl_ipc_obj_t both[2];
  uint64_t mask;

  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &e.m), 0);
  /* A manual event: set for the wait-all, reset for the wait-any (which
   * then takes the mutex on the slow way).  */
  ck_assert_int_eq(fl_ipc_event_create(r, NULL, 1, e.how == TAKE_ALL, &e.other),
                   0);
  pthread_join(start_exiter(&e), NULL);
  ck_assert_int_eq(e.rc, 0);
  if (e.how == TAKE_ALL) {
    /* The wait-all's mask names the abandoned mutex.  */
    both[0] = e.other;
    both[1] = e.m;
    ck_assert_int_eq(fl_ipc_wait_all(r, 2, both, CLOCK_MONOTONIC, &now, &mask),
                     EOWNERDEAD);
    ck_assert_uint_eq(mask, 2);
    ck_assert_int_eq(fl_ipc_mutex_release(r, e.m, NULL), 0);
    ck_assert_int_eq(wait_one(e.m, &now), 0);
    ck_assert_int_eq(fl_ipc_mutex_release(r, e.m, NULL), 0);
    return;
  }
  assert_abandoned_once(e.m);
}
END_TEST

/* A thread asleep on the mutex is granted it, abandoned, by the wake scan
 * of the owner's exit; the client's death report stays empty (no client
 * died).  */
START_TEST(thread_exit_grants_waiter)
{
  struct exiter e = { .how = TAKE_FAST, .times = 1, .linger.on = 1 };
  struct waiter w = { .n = 1, .linger.on = 1 };
  uint32_t owner, tid, rec;
  pthread_t te, tw;

  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &e.m), 0);
  te = start_exiter(&e);
  linger_done(&e.linger);
  ck_assert_int_eq(e.rc, 0);
  w.objs[0] = e.m;
  tw = start_waiter(&w, 0);
  linger_go(&e.linger, te);
  linger_done(&w.linger);
  ck_assert_int_eq(w.rc, EOWNERDEAD);
  ck_assert_int_eq(fl_ipc_mutex_read(r, e.m, &owner, &tid, &rec), 0);
  ck_assert_uint_eq(owner, fl_ipc_client_id(r));
  ck_assert_uint_ne(tid, (uint32_t)gettid());
  ck_assert_uint_eq(rec, 1);
  ck_assert_uint_eq(fl_ipc_clients(r)[r->client].nabandoned, 0);
  /* The waiter exits owning it in turn.  */
  linger_go(&w.linger, tw);
  assert_abandoned_once(e.m);
}
END_TEST

/* A thread that took a mutex (so it has the hook) and released it exits
 * owning nothing: nothing changes, and its exit needs no region lock.  */
START_TEST(thread_exit_owning_nothing)
{
  struct exiter e = {
    .how = TAKE_FAST, .times = 2, .release = 1, .linger.on = 1
  };
  struct timespec now = past_deadline(), d;
  fl_ipc_obj_t mine;
  uint32_t owner, tid, rec;
  pthread_t t;
  int rc;

  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 1, &mine), 0);
  ck_assert_int_eq(wait_one(mine, &now), 0);
  ck_assert_int_eq(fl_ipc_mutex_create(r, NULL, 0, &e.m), 0);
  t = start_exiter(&e);
  linger_done(&e.linger);
  ck_assert_int_eq(e.rc, 0);
  fl_ipc_lock(r);
  sem_post(&e.linger.go);
  /* A guard against a hang, not a timing.  */
  d = fl_deadline_after_ns(CLOCK_REALTIME, LONG_NS);
  rc = pthread_timedjoin_np(t, NULL, &d);
  fl_ipc_unlock(r);
  if (rc != 0)
    pthread_join(t, NULL);
  ck_assert_int_eq(rc, 0);
  ck_assert_uint_eq(word_of(e.m), 0);
  ck_assert_uint_eq(object_of(e.m)->d, 0);
  ck_assert_int_eq(wait_one(e.m, &now), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, e.m, NULL), 0);
  ck_assert_int_eq(fl_ipc_mutex_read(r, mine, &owner, &tid, &rec), 0);
  ck_assert_uint_eq(owner, fl_ipc_client_id(r));
  ck_assert_uint_eq(tid, (uint32_t)gettid());
  ck_assert_uint_eq(rec, 2);
  ck_assert_uint_eq(fl_ipc_clients(r)[r->client].nabandoned, 0);
}
END_TEST

/* A fork child's only thread keeps the hook its parent thread had: it
 * takes the mutex in the region it opened and ends by pthread_exit, so
 * its hook abandons the mutex before the process ends, and the death's
 * clean-up finds nothing to report.  */
START_TEST(thread_exit_fork_child)
{
  struct timespec now = past_deadline();
  fl_ipc_obj_t m, report[1];
  uint32_t child, n;
  int fd[2], status;
  pid_t pid;

  ck_assert_int_eq(fl_ipc_mutex_create(r, "m", 0, &m), 0);
  ck_assert_int_eq(wait_one(m, &now), 0);
  ck_assert_int_eq(fl_ipc_mutex_release(r, m, NULL), 0);
  ck_assert_int_eq(pipe(fd), 0);
  fflush(NULL);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    fl_ipc_t *r2;
    uint32_t index;

    if (fl_ipc_open(region_name, &r2) != 0 || fl_ipc_obj_open(r2, "m", &m) != 0
        || fl_ipc_wait_any(r2, 1, &m, CLOCK_MONOTONIC, &now, &index) != 0)
      _exit(1);
    child = fl_ipc_client_id(r2);
    if (write(fd[1], &child, sizeof child) != sizeof child)
      _exit(1);
    pthread_exit(NULL); /* the process ends as by exit(0) */
  }
  close(fd[1]);
  ck_assert_int_eq(read(fd[0], &child, sizeof child), (ssize_t)sizeof child);
  close(fd[0]);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_eq(fl_ipc_client_died(r, child, report, 1, &n), 0);
  ck_assert_uint_eq(n, 0);
  assert_abandoned_once(m);
}
END_TEST

static Suite *ipc_suite(void)
{
  Suite *s = suite_create("ipc");
  TCase *tc = tcase_create("api");
  TCase *tt = tcase_create("threads");

  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, layout_fixed);
  tcase_add_test(tc, region_size_errors);
  tcase_add_test(tc, create_open_errors);
  tcase_add_test(tc, open_not_a_region);
  tcase_add_test(tc, open_second_view);
  tcase_add_test(tc, clients_full);
  tcase_add_test(tc, attach_memfd);
  tcase_add_test(tc, names_and_references);
  tcase_add_test(tc, table_full);
  tcase_add_test(tc, handle_errors);
  tcase_add_test(tc, semaphore);
  tcase_add_test(tc, mutex_free_release);
  tcase_add_test(tc, events);
  tcase_add_test(tc, wait_any_order);
  tcase_add_test(tc, wait_errors);
  tcase_add_test(tc, wait_timeout);
  tcase_add_test(tc, rwsem_object);
  tcase_add_test(tc, undo_log);
  tcase_add_test(tc, fastpath_slow_bit);
  tcase_add_test(tc, owner_not_live_is_abandoned);
  suite_add_tcase(s, tc);
  /* Cases with a second thread.  */
  tcase_add_checked_fixture(tt, setup, teardown);
  tcase_set_timeout(tt, 120);
  tcase_set_tags(tt, FL_TAG_THREADS);
  tcase_add_test(tt, mutex);
  tcase_add_test(tt, pulse_manual);
  tcase_add_test(tt, pulse_auto);
  tcase_add_test(tt, wait_all_none_or_all);
  tcase_add_test(tt, wait_slots_full);
  tcase_add_test(tt, fifo_grants);
  tcase_add_test(tt, fastpath_needs_no_region_lock);
  tcase_add_test(tt, waiter_sends_release_to_lock);
  tcase_add_loop_test(tt, thread_exit_abandons, 0,
                      (int)(sizeof exit_cases / sizeof exit_cases[0]));
  tcase_add_test(tt, thread_exit_grants_waiter);
  tcase_add_test(tt, thread_exit_owning_nothing);
  tcase_add_test(tt, thread_exit_fork_child);
  suite_add_tcase(s, tt);
  return s;
}

int main(void)
{
  return fl_check_run(ipc_suite());
}
