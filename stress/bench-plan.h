/* stress/bench-plan.h: what fastlock-bench is asked to run (the command
 * line made into tests and implementations), and what one run measured. */
#ifndef FASTLOCK_STRESS_BENCH_PLAN_H
#define FASTLOCK_STRESS_BENCH_PLAN_H

#include "bench.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Defaults: with them, "fastlock-bench" (workload all) takes about a
 * minute on a 2-core machine.  */
#define BENCH_DEFAULT_DURATION 0.12
#define BENCH_DEFAULT_REPS 3
#define BENCH_MAX_REPS 1000
#define BENCH_MAX_DURATION 86400.0
/* The durations of the 2001 rwsem table (Howells and Arcangeli,
 * linux-kernel, April 2001): 10 s, 50 s for rwsem-xx.  */
#define BENCH_ORIGINAL_DURATION 10.0
#define BENCH_ORIGINAL_DURATION_XX 50.0

enum bench_format { BENCH_FORMAT_TABLE, BENCH_FORMAT_CSV, BENCH_FORMAT_JSON };

struct bench_test {
  char name[40];
  const char *workload; /* the table it prints in */
  enum bench_kind kind;
  int timed;      /* 1: threads for a duration; 0: a timed loop */
  int loop;       /* untimed: which of impl->loop */
  const char *op; /* untimed: what one operation is */
  int threads[2]; /* timed: threads per class */
  double seconds; /* timed: length of one run */
};

struct bench_plan {
  struct bench_test *tests;
  size_t ntests;
  const struct bench_impl **impls; /* selected, in table order */
  size_t nimpls;
  double duration;
  int reps;
  int original_durations;
  enum bench_format format;
  const char *plot; /* .svg or .png file, or NULL */
  int quiet;
};

enum bench_parse_result {
  BENCH_PARSE_RUN,     /* run the plan */
  BENCH_PARSE_HELP,    /* --help */
  BENCH_PARSE_LIST,    /* --list */
  BENCH_PARSE_VERSION, /* --version */
  BENCH_PARSE_ERROR,   /* err holds one line saying what is valid */
};

/* Make argv into p (free it with bench_plan_free, whatever the result).
 * Prints nothing: on error err receives the message, without the program
 * name or newline.  */
enum bench_parse_result bench_plan_parse(int argc, char **argv,
                                         struct bench_plan *p, char *err,
                                         size_t errsize);
void bench_plan_free(struct bench_plan *p);

/* Whether impl has what test runs.  */
int bench_impl_runs(const struct bench_impl *impl,
                    const struct bench_test *test);

/* The usage text for --help.  */
void bench_usage(FILE *out);

/* One run (repetition) of one implementation in one test.  */
struct bench_class_run {
  int threads;
  uint64_t ops;            /* all threads of the class */
  uint64_t min, max;       /* per thread */
  int starved;             /* max / 2 > min */
  size_t samples;          /* acquisitions timed */
  uint64_t p50, p99, pmax; /* acquire latency, fl_cycles ticks */
};

struct bench_run {
  double seconds; /* timed: how long the threads ran */
  struct bench_class_run cls[2];
  long iterations; /* untimed: calls timed */
  double ns_per_op, ticks_per_op;
  const char *actual; /* impl->actual's answer, or NULL */
};

/* Total operations per second of a timed run.  */
double bench_run_rate(const struct bench_run *r);

/* A quarter of seconds, but at least lo and at most hi: the length of
 * what comes before or beside a run of seconds.  */
static inline double bench_quarter(double seconds, double lo, double hi)
{
  double q = seconds / 4;

  return q < lo ? lo : q > hi ? hi : q;
}

/* The warm-up before a timed run of seconds: a quarter of it, at least
 * 20 ms and at most 100 ms.  */
double bench_warmup_s(double seconds);
void bench_run_timed(const struct bench_impl *impl,
                     const struct bench_test *test, struct bench_run *out);
/* *iterations 0: find a count that takes about target_s, and keep it. */
void bench_run_loop(const struct bench_impl *impl,
                    const struct bench_test *test, long *iterations,
                    double target_s, struct bench_run *out);

/* The repetitions of one implementation in one test.  */
struct bench_cell {
  const struct bench_test *test;
  const struct bench_impl *impl;
  struct bench_run *runs;
  int nruns;
  long iterations; /* untimed: found by the first run */
};

/* The run a cell reports: the median by total rate (timed) or by time
 * per operation (untimed), so that every column of a row comes from one
 * run.  */
const struct bench_run *bench_cell_median(const struct bench_cell *c);
/* Runs in which class cls starved.  */
int bench_cell_starved_runs(const struct bench_cell *c, int cls);
/* The cell of the reference implementation of c's kind in c's test, or
 * NULL when it did not run.  */
const struct bench_cell *bench_cell_reference(const struct bench_cell *cells,
                                              size_t ncells,
                                              const struct bench_cell *c);

struct fl_context;
void bench_print_table(FILE *out, const struct bench_plan *p,
                       const struct fl_context *ctx,
                       const struct bench_cell *cells, size_t ncells);
void bench_print_csv(FILE *out, const struct bench_plan *p,
                     const struct fl_context *ctx,
                     const struct bench_cell *cells, size_t ncells);
void bench_print_json(FILE *out, const struct bench_plan *p,
                      const struct fl_context *ctx,
                      const struct bench_cell *cells, size_t ncells);
/* Draw p->plot with gnuplot; 0 or -1 after saying why on stderr.  */
int bench_plot(const struct bench_plan *p, const struct fl_context *ctx,
               const struct bench_cell *cells, size_t ncells);

/* How long untimed loops run, from the duration.  */
double bench_loop_target(const struct bench_plan *p);

#endif /* FASTLOCK_STRESS_BENCH_PLAN_H */
