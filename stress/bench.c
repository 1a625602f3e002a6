/* stress/bench.c: fastlock-bench, the main job: the tables of the
 * mailing-list threads fastlock comes from (doc/design.md) on the machine
 * it runs on, fastlock's variants and the peers a user would pick instead
 * side by side, the machine's context first (a figure without its CPU and
 * clock means nothing: Boessenkool, linuxppc-dev, October 2019).
 *
 * Every test runs every selected implementation, repetition by
 * repetition, the implementations interleaved within each repetition so
 * that a drift of the machine (frequency, another process) spreads over
 * all of them rather than landing on one.  The pieces: bench.h.  */
#include "config.h"

#include "bench-plan.h"
#include "context.h"

#include <fastlock/fastlock.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/clock.h"

static void list(FILE *out)
{
  struct bench_plan all;
  char err[1024];
  const char *argv[] = { "fastlock-bench", NULL };
  size_t i, t;

  fprintf(out, "implementations (name, family, what it is):\n");
  for (i = 0; i < bench_impl_count(); i++) {
    const struct bench_impl *im = bench_impl_at(i);
    const char *why = bench_impl_unavailable(im);
    fprintf(out, "  %-26s %-9s %-8s %s", im->name, bench_kind_name(im->kind),
            im->family, im->about);
    if (im->reference)
      fprintf(out, " [reference]");
    if (why != NULL)
      fprintf(out, " [not available: %s]", why);
    fprintf(out, "\n");
  }
  fprintf(out, "tests of the default plan (workload: test):\n");
  if (bench_plan_parse(1, (char **)argv, &all, err, sizeof err)
      == BENCH_PARSE_RUN)
    for (t = 0; t < all.ntests; t++)
      fprintf(out, "  %-12s %s\n",
              all.tests[t].timed ? bench_kind_name(all.tests[t].kind)
                                 : all.tests[t].workload,
              all.tests[t].name);
  bench_plan_free(&all);
}

int main(int argc, char **argv)
{
  struct bench_plan plan;
  struct fl_context ctx;
  struct bench_cell *cells;
  char err[2048];
  size_t ncells = 0, t, i, step = 0, steps = 0;
  int progress, rep, rc = 0, pinned;
  int64_t started;

  if (argc > 1 && strcmp(argv[1], "ipc") == 0)
    return bench_ipc_main(argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "pthread") == 0)
    return bench_pthread_main(argc - 1, argv + 1);
  switch (bench_plan_parse(argc, argv, &plan, err, sizeof err)) {
    case BENCH_PARSE_RUN:
      break;
    case BENCH_PARSE_HELP:
      bench_usage(stdout);
      bench_plan_free(&plan);
      return 0;
    case BENCH_PARSE_LIST:
      list(stdout);
      bench_plan_free(&plan);
      return 0;
    case BENCH_PARSE_VERSION:
      printf("fastlock-bench %s (%s)\n", fl_version(), fl_build_config());
      bench_plan_free(&plan);
      return 0;
    case BENCH_PARSE_ERROR:
      fprintf(stderr, "fastlock-bench: %s\n", err);
      bench_plan_free(&plan);
      return 2;
  }

  cells = calloc(plan.ntests * plan.nimpls, sizeof *cells);
  if (cells == NULL) {
    perror("fastlock-bench");
    return 1;
  }
  for (t = 0; t < plan.ntests; t++)
    for (i = 0; i < plan.nimpls; i++) {
      struct bench_cell *c;
      if (!bench_impl_runs(plan.impls[i], &plan.tests[t]))
        continue;
      c = &cells[ncells++];
      c->test = &plan.tests[t];
      c->impl = plan.impls[i];
      c->runs = calloc((size_t)plan.reps, sizeof *c->runs);
      if (c->runs == NULL) {
        perror("fastlock-bench");
        return 1;
      }
    }
  steps = ncells * (size_t)plan.reps;
  progress = !plan.quiet && isatty(STDERR_FILENO);
  fl_context_probe(&ctx);
  pinned = fl_context_pin_uniprocessor();
  if (pinned >= 0 && plan.format == BENCH_FORMAT_TABLE)
    printf("uniprocessor build: every thread kept on CPU %d\n", pinned);
  started = fl_clock_ns(CLOCK_MONOTONIC);

  /* Test by test; within a test, repetition by repetition, every
   * implementation once per repetition.  */
  for (i = 0; i < ncells;) {
    size_t end = i;
    while (end < ncells && cells[end].test == cells[i].test)
      end++;
    for (rep = 0; rep < plan.reps; rep++) {
      size_t k;
      for (k = i; k < end; k++) {
        struct bench_cell *c = &cells[k];
        if (progress)
          fprintf(stderr, "\r\033[Kfastlock-bench: [%zu/%zu] %s %s, rep %d/%d",
                  ++step, steps, c->test->name, c->impl->name, rep + 1,
                  plan.reps);
        if (c->test->timed)
          bench_run_timed(c->impl, c->test, &c->runs[rep]);
        else
          bench_run_loop(c->impl, c->test, &c->iterations,
                         bench_loop_target(&plan), &c->runs[rep]);
        c->nruns = rep + 1;
      }
    }
    i = end;
  }
  if (progress)
    fprintf(stderr, "\r\033[K");

  switch (plan.format) {
    case BENCH_FORMAT_TABLE:
      bench_print_table(stdout, &plan, &ctx, cells, ncells);
      printf("%zu runs in %.0f s.\n", steps,
             (double)(fl_clock_ns(CLOCK_MONOTONIC) - started) / 1e9);
      break;
    case BENCH_FORMAT_CSV:
      bench_print_csv(stdout, &plan, &ctx, cells, ncells);
      break;
    case BENCH_FORMAT_JSON:
      bench_print_json(stdout, &plan, &ctx, cells, ncells);
      break;
  }
  if (fflush(stdout) != 0) {
    perror("fastlock-bench: stdout");
    rc = 1;
  }
  if (plan.plot != NULL && bench_plot(&plan, &ctx, cells, ncells) != 0)
    rc = 1;

  for (i = 0; i < ncells; i++)
    free(cells[i].runs);
  free(cells);
  bench_plan_free(&plan);
  return rc;
}
