/* src/lockdep/lockdep.c: the lock-order checker (<fastlock/lockdep.h>).
 *
 * After the Linux kernel's lockdep, reduced to what a user-space library
 * needs.  Three tables, all fixed-size and static, so that nothing is
 * allocated after start-up:
 *
 *   classes   one per _init call site, or per statically initialised
 *             lock (keyed by its address); at most FL_LD_CLASSES.
 *   locks     open-addressed hash from a lock's address to its class,
 *             filled by _init and by the first acquisition of a lock
 *             that never went through _init.
 *   graph     a bit matrix, order[a] bit b: some thread took class b
 *             while it held class a; and for each such edge, the stack of
 *             the acquisition that first made it (the edge list).
 *
 * Each thread keeps the locks it holds in a stack in thread-local storage.
 * An acquisition looks up its lock's class (lock-free), and for each held
 * class tests the edge's bit (lock-free): only a new edge takes the
 * checker's own lock, takes a backtrace, searches the graph for a path
 * back (a cycle: report it) and adds the edge.  So the cost of an
 * acquisition in steady state is a hash probe and a few bit tests.
 *
 * The checker's own lock is a test-and-set word taken with the raw
 * atomics, never a watched fastlock path.  A thread that enters the
 * checker again while inside it (a signal handler taking a fastlock)
 * is let through unchecked, so the checker cannot deadlock on itself.
 * backtrace() loads its unwinder (and allocates) on first use, so
 * fl_lockdep_enable() calls it once up front.  */
#include "config.h"

#include <fastlock/arch/atomic.h>

#include "lockdep/lockdep.h"
#include "sys/tools.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if HAVE_EXECINFO_H
# include <execinfo.h>
#endif

#define FL_LD_CLASSES 1024
#define FL_LD_LOCKS 16384 /* power of 2 */
#define FL_LD_EDGES 8192
#define FL_LD_HELD 48
#define FL_LD_STACK 16
/* 32-bit words: 32-bit PowerPC and MIPS have no 64-bit atomics.  */
#define FL_LD_WORDS (FL_LD_CLASSES / 32)

struct fl_ld_class {
  uintptr_t key; /* _init site, or the lock's address */
  const char *kind;
  unsigned flags;    /* FL_LOCKDEP_SPIN; FL_LD_STATIC */
  int spin_reported; /* held across a wait: said once */
};
#define FL_LD_STATIC 0x100u

struct fl_ld_edge {
  uint32_t from, to;
  int depth;
  void *stack[FL_LD_STACK];
};

struct fl_ld_lock {
  uintptr_t lock; /* 0: empty */
  uint32_t cls;   /* 0: destroyed, class unknown */
};

struct fl_ld_held {
  uintptr_t lock;
  uint32_t cls;
  unsigned flags;
};

static int fl_ld_on;
static unsigned long fl_ld_nreports;
static int32_t fl_ld_mutex;

/* Class 0 is "none"; classes are numbered from 1.  */
static struct fl_ld_class fl_ld_class[FL_LD_CLASSES];
static uint32_t fl_ld_nclasses = 1;
static struct fl_ld_lock fl_ld_lock[FL_LD_LOCKS];
static uint32_t fl_ld_order[FL_LD_CLASSES][FL_LD_WORDS];
static struct fl_ld_edge fl_ld_edge[FL_LD_EDGES];
static uint32_t fl_ld_nedges;
/* The graph search's scratch, under fl_ld_mutex.  */
static uint32_t fl_ld_parent[FL_LD_CLASSES];
static uint32_t fl_ld_queue[FL_LD_CLASSES];

static __thread struct {
  int depth;
  int inside;
  int registered;
  struct fl_ld_held held[FL_LD_HELD];
} fl_ld_self __attribute__((tls_model("initial-exec")));

static pthread_key_t fl_ld_exit_key;
static pthread_once_t fl_ld_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------------------
 * The checker's own lock and its reports.
 * --------------------------------------------------------------------- */

/* Acquire: the tables' contents written by the previous holder are seen. */
static void fl_ld_lock_tables(void)
{
  while (fl_atomic_xchg_acquire(&fl_ld_mutex, 1) != 0)
    sched_yield();
}

/* Release: our changes to the tables are seen by the next holder.  */
static void fl_ld_unlock_tables(void)
{
  fl_store_release(&fl_ld_mutex, 0);
}

static void fl_ld_print(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void fl_ld_print(const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n >= sizeof buf)
    n = sizeof buf - 1;
  if (write(STDERR_FILENO, buf, (size_t)n) < 0)
    return;
}

static void fl_ld_print_stack(void *const *stack, int depth)
{
#if HAVE_EXECINFO_H
  if (depth > 0)
    backtrace_symbols_fd(stack, depth, STDERR_FILENO);
#else
  (void)stack;
  (void)depth;
  fl_ld_print("    (no backtrace on this system)\n");
#endif
}

static int fl_ld_backtrace(void **stack)
{
#if HAVE_EXECINFO_H
  return backtrace(stack, FL_LD_STACK);
#else
  (void)stack;
  return 0;
#endif
}

/* "fl_spinlock_t class 3, initialised at:" and the site; or "... of the
 * statically initialised lock at 0x...".  */
static void fl_ld_print_class(uint32_t cls)
{
  const struct fl_ld_class *c = &fl_ld_class[cls];
  void *site = (void *)c->key;

  if (c->flags & FL_LD_STATIC) {
    fl_ld_print("  class %u: %s, the statically initialised lock at %p\n",
                (unsigned)cls, c->kind, site);
  } else {
    fl_ld_print("  class %u: %s, the locks initialised at\n", (unsigned)cls,
                c->kind);
    fl_ld_print_stack(&site, 1);
  }
}

static void fl_ld_report_start(const char *what)
{
  __atomic_fetch_add(&fl_ld_nreports, 1, __ATOMIC_RELAXED);
  fl_ld_print("fastlock: %s (thread %lu)\n", what,
              (unsigned long)pthread_self());
}

static void fl_ld_report_here(void)
{
  void *stack[FL_LD_STACK];

  fl_ld_print(" at:\n");
  fl_ld_print_stack(stack, fl_ld_backtrace(stack));
}

static void fl_ld_print_held(void)
{
  int i;

  fl_ld_print(" this thread holds %d lock(s):\n", fl_ld_self.depth);
  for (i = 0; i < fl_ld_self.depth; i++) {
    fl_ld_print("  %p%s\n", (void *)fl_ld_self.held[i].lock,
                fl_ld_self.held[i].flags & FL_LOCKDEP_READ ? " (read)" : "");
    fl_ld_print_class(fl_ld_self.held[i].cls);
  }
}

/* ------------------------------------------------------------------------
 * Classes and the lock table.
 * --------------------------------------------------------------------- */

/* Fibonacci hashing of the address: its high bits, which depend on all
 * of the address's bits.  */
static uint32_t fl_ld_hash(uintptr_t lock)
{
  uint64_t h = (uint64_t)lock * UINT64_C(0x9e3779b97f4a7c15);

  return (uint32_t)(h >> 40) & (FL_LD_LOCKS - 1);
}

/* lock's entry, or the empty one where it would go; NULL if the table is
 * full.  Entries are never emptied, so a probe stops at the first empty
 * one.  Acquire on lock: an entry's class is written before its lock.  */
static struct fl_ld_lock *fl_ld_find(uintptr_t lock)
{
  uint32_t i = fl_ld_hash(lock), n;

  for (n = 0; n < FL_LD_LOCKS; n++, i = (i + 1) & (FL_LD_LOCKS - 1)) {
    uintptr_t k = __atomic_load_n(&fl_ld_lock[i].lock, __ATOMIC_ACQUIRE);
    if (k == lock || k == 0)
      return &fl_ld_lock[i];
  }
  return NULL;
}

/* The class keyed key, made if new.  0 when the table is full.  Under
 * fl_ld_mutex.  */
static uint32_t fl_ld_class_get(uintptr_t key, const char *kind, unsigned flags)
{
  uint32_t i;

  for (i = 1; i < fl_ld_nclasses; i++)
    if (fl_ld_class[i].key == key && fl_ld_class[i].kind == kind)
      return i;
  if (fl_ld_nclasses == FL_LD_CLASSES)
    return 0;
  fl_ld_class[i].key = key;
  fl_ld_class[i].kind = kind;
  fl_ld_class[i].flags = flags;
  /* Release: a class's fields before its number is published.  */
  __atomic_store_n(&fl_ld_nclasses, i + 1, __ATOMIC_RELEASE);
  return i;
}

/* Record lock as being of class cls.  Under fl_ld_mutex.  */
static void fl_ld_set(uintptr_t lock, uint32_t cls)
{
  struct fl_ld_lock *e = fl_ld_find(lock);

  if (e == NULL)
    return;
  __atomic_store_n(&e->cls, cls, __ATOMIC_RELAXED);
  /* Release: the class before the key that makes the entry found.  */
  __atomic_store_n(&e->lock, lock, __ATOMIC_RELEASE);
}

/* Whether the checker has seen lock initialised or taken: a lock taken
 * before it was turned on may be released after, unseen.  */
static int fl_ld_known(uintptr_t lock)
{
  const struct fl_ld_lock *e = fl_ld_find(lock);

  return e != NULL && __atomic_load_n(&e->lock, __ATOMIC_ACQUIRE) == lock;
}

/* lock's class, making it a class of its own if nothing initialised it.  */
static uint32_t fl_ld_class_of(uintptr_t lock, const char *kind, unsigned flags)
{
  struct fl_ld_lock *e = fl_ld_find(lock);
  uint32_t cls;

  if (e != NULL && __atomic_load_n(&e->lock, __ATOMIC_RELAXED) == lock) {
    cls = __atomic_load_n(&e->cls, __ATOMIC_RELAXED);
    if (cls != 0)
      return cls;
  }
  fl_ld_lock_tables();
  cls = fl_ld_class_get(lock, kind, flags | FL_LD_STATIC);
  if (cls != 0)
    fl_ld_set(lock, cls);
  fl_ld_unlock_tables();
  return cls;
}

/* ------------------------------------------------------------------------
 * The graph.
 * --------------------------------------------------------------------- */

static int fl_ld_has_edge(uint32_t a, uint32_t b)
{
  return (__atomic_load_n(&fl_ld_order[a][b / 32], __ATOMIC_RELAXED)
          >> (b % 32))
         & 1;
}

static const struct fl_ld_edge *fl_ld_edge_of(uint32_t a, uint32_t b)
{
  uint32_t i;

  for (i = 0; i < fl_ld_nedges; i++)
    if (fl_ld_edge[i].from == a && fl_ld_edge[i].to == b)
      return &fl_ld_edge[i];
  return NULL;
}

/* Breadth-first from `from`: 1 if `to` is reachable, with fl_ld_parent
 * giving the path back.  Under fl_ld_mutex.  */
static int fl_ld_path(uint32_t from, uint32_t to)
{
  uint32_t head = 0, tail = 0, n = fl_ld_nclasses, c, w;

  memset(fl_ld_parent, 0, sizeof fl_ld_parent);
  fl_ld_parent[from] = from;
  fl_ld_queue[tail++] = from;
  while (head < tail) {
    c = fl_ld_queue[head++];
    if (c == to)
      return 1;
    for (w = 1; w < n; w++)
      if (fl_ld_parent[w] == 0 && fl_ld_has_edge(c, w)) {
        fl_ld_parent[w] = c;
        fl_ld_queue[tail++] = w;
      }
  }
  return 0;
}

/* The cycle the new edge a -> b closes: b ->* a exists already.  */
static void fl_ld_report_cycle(uint32_t a, uint32_t b, void *const *stack,
                               int depth)
{
  uint32_t c;

  fl_ld_report_start(
      "possible deadlock: locks taken in an order that forms a cycle");
  fl_ld_print(
      " this thread took a lock of class %u while holding one of class %u,"
      " at:\n",
      (unsigned)b, (unsigned)a);
  fl_ld_print_stack(stack, depth);
  fl_ld_print(" and earlier, the reverse order:\n");
  /* The path b ->* a, walked back from a.  */
  for (c = a; c != b; c = fl_ld_parent[c]) {
    const struct fl_ld_edge *e = fl_ld_edge_of(fl_ld_parent[c], c);

    fl_ld_print(" a thread took class %u while holding class %u, at:\n",
                (unsigned)c, (unsigned)fl_ld_parent[c]);
    if (e != NULL)
      fl_ld_print_stack(e->stack, e->depth);
  }
  fl_ld_print(" the classes:\n");
  fl_ld_print_class(a);
  fl_ld_print_class(b);
  for (c = fl_ld_parent[a]; c != b; c = fl_ld_parent[c])
    fl_ld_print_class(c);
}

/* Record "held a, then took b", reporting the cycle it closes if any.  */
static void fl_ld_add_edge(uint32_t a, uint32_t b)
{
  void *stack[FL_LD_STACK];
  int depth;

  if (fl_ld_has_edge(a, b))
    return;
  depth = fl_ld_backtrace(stack);
  fl_ld_lock_tables();
  if (!fl_ld_has_edge(a, b)) {
    if (fl_ld_path(b, a))
      fl_ld_report_cycle(a, b, stack, depth);
    if (fl_ld_nedges < FL_LD_EDGES) {
      struct fl_ld_edge *e = &fl_ld_edge[fl_ld_nedges++];
      e->from = a;
      e->to = b;
      e->depth = depth;
      memcpy(e->stack, stack, sizeof stack);
    }
    __atomic_fetch_or(&fl_ld_order[a][b / 32], UINT32_C(1) << (b % 32),
                      __ATOMIC_RELAXED);
  }
  fl_ld_unlock_tables();
}

/* ------------------------------------------------------------------------
 * The hooks.
 * --------------------------------------------------------------------- */

static void fl_ld_thread_exit(void *unused)
{
  (void)unused;
  if (fl_ld_self.depth > 0) {
    fl_ld_report_start("lock held at thread exit");
    fl_ld_print_held();
  }
}

static void fl_ld_setup(void)
{
#if HAVE_EXECINFO_H
  void *stack[2];

  (void)backtrace(stack, 2);
#endif
  (void)pthread_key_create(&fl_ld_exit_key, fl_ld_thread_exit);
}

int fl_lockdep_enable(void)
{
  pthread_once(&fl_ld_once, fl_ld_setup);
  __atomic_store_n(&fl_ld_on, 1, __ATOMIC_RELEASE);
  fl_tools_set(1);
  return 0;
}

int fl_lockdep_enabled(void)
{
  return __atomic_load_n(&fl_ld_on, __ATOMIC_RELAXED);
}

unsigned long fl_lockdep_reports(void)
{
  return __atomic_load_n(&fl_ld_nreports, __ATOMIC_RELAXED);
}

/* Enter the checker: 0 if it is off, or if this thread is already inside
 * it (a signal handler interrupted it).  */
static int fl_ld_enter(void)
{
  if (!__atomic_load_n(&fl_ld_on, __ATOMIC_ACQUIRE) || fl_ld_self.inside)
    return 0;
  fl_ld_self.inside = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return 1;
}

static void fl_ld_leave(void)
{
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  fl_ld_self.inside = 0;
}

void fl_lockdep_init(const void *lock, const char *kind, unsigned flags,
                     const void *site)
{
  uint32_t cls;

  if (!fl_ld_enter())
    return;
  fl_ld_lock_tables();
  cls = fl_ld_class_get((uintptr_t)site, kind, flags);
  if (cls != 0)
    fl_ld_set((uintptr_t)lock, cls);
  fl_ld_unlock_tables();
  fl_ld_leave();
}

void fl_lockdep_acquire(const void *lock, const char *kind, unsigned flags)
{
  uintptr_t l = (uintptr_t)lock;
  uint32_t cls;
  int i;

  if (!fl_ld_enter())
    return;
  cls = fl_ld_class_of(l, kind, flags & FL_LOCKDEP_SPIN);
  for (i = 0; i < fl_ld_self.depth; i++) {
    const struct fl_ld_held *h = &fl_ld_self.held[i];

    if (h->lock == l) {
      if (!(flags & FL_LOCKDEP_READ) || !(h->flags & FL_LOCKDEP_READ)) {
        fl_ld_report_start(
            "recursive locking: this thread already holds the lock");
      } else if (flags & FL_LOCKDEP_WRITER_WAITS) {
        fl_ld_report_start("recursive locking: a read lock this thread already"
                           " holds, asked for again while a writer waits (fair"
                           " mode: the writer waits for this thread, and this"
                           " thread for the writer)");
      } else {
        continue;
      }
      fl_ld_print_class(cls);
      fl_ld_report_here();
    } else if (!(flags & FL_LOCKDEP_TRY) && h->cls != cls && cls != 0
               && h->cls != 0) {
      /* A trylock cannot wait, so it orders nothing after what is held;
       * locks of one class taken together are not ordered either.  */
      fl_ld_add_edge(h->cls, cls);
    }
  }
  if (fl_ld_self.depth < FL_LD_HELD) {
    struct fl_ld_held *h = &fl_ld_self.held[fl_ld_self.depth++];
    h->lock = l;
    h->cls = cls;
    h->flags = flags;
  }
  if (!fl_ld_self.registered) {
    fl_ld_self.registered = 1;
    (void)pthread_setspecific(fl_ld_exit_key, &fl_ld_self);
  }
  fl_ld_leave();
}

void fl_lockdep_release(const void *lock)
{
  uintptr_t l = (uintptr_t)lock;
  int i;

  if (!fl_ld_enter())
    return;
  for (i = fl_ld_self.depth - 1; i >= 0 && fl_ld_self.held[i].lock != l; i--)
    continue;
  if (i < 0 && fl_ld_known(l)) {
    fl_ld_report_start("release of a lock not held by this thread");
    fl_ld_print("  the lock at %p\n", lock);
    fl_ld_report_here();
  } else if (i >= 0) {
    /* Usually the top of the stack: nothing to move.  */
    for (fl_ld_self.depth--; i < fl_ld_self.depth; i++)
      fl_ld_self.held[i] = fl_ld_self.held[i + 1];
  }
  fl_ld_leave();
}

void fl_lockdep_destroy(const void *lock)
{
  uintptr_t l = (uintptr_t)lock;
  struct fl_ld_lock *e;
  int i;

  if (!fl_ld_enter())
    return;
  for (i = 0; i < fl_ld_self.depth; i++)
    if (fl_ld_self.held[i].lock == l) {
      fl_ld_report_start("destroying a held lock");
      fl_ld_print_class(fl_ld_self.held[i].cls);
      fl_ld_report_here();
      fl_ld_leave();
      return;
    }
  /* Forget its class: the memory may become another lock.  */
  fl_ld_lock_tables();
  e = fl_ld_find(l);
  if (e != NULL && e->lock == l)
    __atomic_store_n(&e->cls, 0, __ATOMIC_RELAXED);
  fl_ld_unlock_tables();
  fl_ld_leave();
}

void fl_lockdep_wait(void)
{
  int i;

  if (!fl_ld_enter())
    return;
  for (i = 0; i < fl_ld_self.depth; i++) {
    struct fl_ld_class *c = &fl_ld_class[fl_ld_self.held[i].cls];

    if ((c->flags & FL_LOCKDEP_SPIN)
        && !__atomic_exchange_n(&c->spin_reported, 1, __ATOMIC_RELAXED)) {
      fl_ld_report_start("spinlock held across a blocking wait");
      fl_ld_print_class(fl_ld_self.held[i].cls);
      fl_ld_report_here();
    }
  }
  fl_ld_leave();
}
