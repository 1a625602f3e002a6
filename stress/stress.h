/* stress/stress.h: fastlock-stress, the torture test as a command.
 *
 * A driver is one implementation of one primitive behind a small table of
 * operations (stress-drivers.c): fastlock's, glibc's or another peer's,
 * and deliberately broken ones, the negative controls, which the tool
 * accepts but does not list ("broken"; "leaky" for rwsem --kill-ms).  stress-opts.c turns the command line into a
 * struct stress_cfg, stress.c runs it.  */
#ifndef FASTLOCK_STRESS_STRESS_H
#define FASTLOCK_STRESS_STRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum stress_prim { STRESS_RWSEM, STRESS_SPIN, STRESS_COUNTER };

enum stress_mode { STRESS_FAIR, STRESS_PREFER_READER, STRESS_PREFER_WRITER };

enum stress_spin_type { STRESS_TAS, STRESS_TICKET, STRESS_QUEUED };

/* Counter strategies, numbered as enum fl_counter_strategy.  */
enum { STRESS_NSTRATEGIES = 5 };
extern const char *const stress_strategy_names[STRESS_NSTRATEGIES];

/* The most threads in one process, and processes.  */
#define STRESS_MAX_THREADS 512
#define STRESS_MAX_PROCESSES 64

/* A lock: an rwsem (class 0 readers, 1 writers) or a spinlock (class 1
 * only).  Every operation returns 0 or an errno value.  */
struct stress_lock_ops {
  const char *impl;
  enum stress_prim prim;
  int type;         /* spin: enum stress_spin_type; rwsem: -1 */
  const char *what; /* for the report */
  size_t size;
  int pshared_ok;
  /* pshared: 0, 1 (process-shared) or 2 (process-shared and robust: a
   * dead write holder is found and reported with EOWNERDEAD).  */
  int (*init)(void *obj, int mode, int read_bias, int pshared);
  int (*destroy)(void *obj);
  int (*lock[2])(void *obj);
  int (*trylock[2])(void *obj);
  /* NULL where the implementation has none.  */
  int (*timedlock[2])(void *obj, clockid_t clock,
                      const struct timespec *abstime);
  int (*unlock[2])(void *obj);
  int (*downgrade)(void *obj);
  /* NULL where the implementation has none: its own check of its state,
   * called inside every critical section; 0, or the number of the
   * invariant broken.  */
  int (*check)(void *obj);
  /* rwsem --kill-ms (NULL where the implementation has no robust
   * process-shared lock): the read locks the lock counts, one of them
   * released for a dead reader, and the data marked repaired by the
   * holder that took the lock with EOWNERDEAD; and whether the write
   * lock is held by a holder that cannot be found dead (a thread ID
   * that a live thread has again: fl_rwsem(3)).  */
  int (*read_locks)(void *obj);
  int (*reader_died)(void *obj);
  int (*consistent)(void *obj);
  int (*holder_unfindable)(void *obj);
};

/* A counter.  add must be async-signal-safe: signal handlers add too.  */
struct stress_counter_ops {
  const char *impl;
  const char *what;
  size_t size;
  int (*init)(void *obj, int strategy);
  int (*destroy)(void *obj);
  void (*add)(void *obj, int64_t delta);
  int64_t (*read)(void *obj);
  int64_t (*sum)(void *obj);
  /* The strategy it runs, or NULL.  */
  const char *(*strategy)(void *obj);
};

/* NULL when there is no such driver.  */
const struct stress_lock_ops *stress_find_lock(enum stress_prim prim,
                                               const char *impl, int type);
/* NULL when there is no such driver; *why says why when it exists but
 * cannot run in this build.  */
const struct stress_counter_ops *stress_find_counter(const char *impl,
                                                     const char **why);
/* The implementations of prim the help lists (not the broken ones).  */
const char *stress_impl_names(enum stress_prim prim);

struct stress_cfg {
  enum stress_prim prim;
  const char *prim_name;
  const char *impl;
  const struct stress_lock_ops *lock;       /* rwsem, spin */
  const struct stress_counter_ops *counter; /* counter */
  int readers, writers;                     /* rwsem */
  int threads;                              /* spin, counter */
  int mode;                                 /* rwsem: enum stress_mode */
  int read_bias;
  int type;                  /* spin */
  int strategy;              /* counter */
  double duration, interval; /* seconds */
  int pshared, processes;
  int kill_ms; /* rwsem: SIGKILL a process every kill_ms ms; 0: never */
  uint64_t seed;
  int fail_on_starvation;
};

enum stress_parse_result {
  STRESS_PARSE_RUN,
  STRESS_PARSE_HELP,
  STRESS_PARSE_VERSION,
  STRESS_PARSE_ERROR,
};

/* Make argv into cfg.  Prints nothing: on error err receives one line
 * saying what is valid.  */
enum stress_parse_result stress_parse(int argc, char **argv,
                                      struct stress_cfg *cfg, char *err,
                                      size_t errsize);
void stress_usage(FILE *out);

/* fastlock-stress ipc (stress-ipc.c): its own options, its own run.  */
int stress_ipc_main(int argc, char **argv);

#endif /* FASTLOCK_STRESS_STRESS_H */
