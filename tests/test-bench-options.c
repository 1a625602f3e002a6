/* tests/test-bench-options.c: the command lines of fastlock-bench and
 * fastlock-stress (every error path: a one-line message naming what is
 * valid, and nothing run), and fastlock-bench's table of
 * implementations.  */
#include "config.h"

#include "../stress/bench-plan.h"
#include "../stress/stress.h"

#include "fl-check.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 16

/* argv from a NULL-terminated list; the parsers may permute it.  */
static char **make_argv(const char *prog, const char *first, va_list ap,
                        int *argc)
{
  static char *argv[MAX_ARGS + 2];
  static char store[MAX_ARGS + 1][128];
  const char *a;
  int n = 0;

  snprintf(store[n], sizeof store[n], "%s", prog);
  argv[n] = store[n];
  n++;
  for (a = first; a != NULL; a = va_arg(ap, const char *)) {
    ck_assert_int_lt(n, MAX_ARGS + 1);
    snprintf(store[n], sizeof store[n], "%s", a);
    argv[n] = store[n];
    n++;
  }
  argv[n] = NULL;
  *argc = n;
  return argv;
}

static struct bench_plan plan;
static char err[2048];

/* fastlock-bench ARGS... NULL  */
static enum bench_parse_result bench(const char *first, ...)
{
  enum bench_parse_result r;
  va_list ap;
  char **argv;
  int argc;

  va_start(ap, first);
  argv = make_argv("fastlock-bench", first, ap, &argc);
  va_end(ap);
  bench_plan_free(&plan);
  err[0] = '\0';
  r = bench_plan_parse(argc, argv, &plan, err, sizeof err);
  if (r != BENCH_PARSE_ERROR)
    ck_assert_str_eq(err, "");
  return r;
}

static struct stress_cfg cfg;

static enum stress_parse_result stress(const char *first, ...)
{
  enum stress_parse_result r;
  va_list ap;
  char **argv;
  int argc;

  va_start(ap, first);
  argv = make_argv("fastlock-stress", first, ap, &argc);
  va_end(ap);
  err[0] = '\0';
  r = stress_parse(argc, argv, &cfg, err, sizeof err);
  if (r != STRESS_PARSE_ERROR)
    ck_assert_str_eq(err, "");
  return r;
}

/* An error must be one line that names what is wrong and what is valid. */
static void assert_error(const char *must_contain, const char *valid)
{
  ck_assert_msg(err[0] != '\0', "no error message");
  ck_assert_msg(strchr(err, '\n') == NULL, "message is not one line: %s", err);
  ck_assert_msg(strstr(err, must_contain) != NULL, "'%s' not in: %s",
                must_contain, err);
  if (valid != NULL)
    ck_assert_msg(strstr(err, valid) != NULL, "'%s' not in: %s", valid, err);
}

static const struct bench_test *find_test(const char *name)
{
  size_t i;

  for (i = 0; i < plan.ntests; i++)
    if (strcmp(plan.tests[i].name, name) == 0)
      return &plan.tests[i];
  return NULL;
}

static int plan_has_impl(const char *name)
{
  size_t i;

  for (i = 0; i < plan.nimpls; i++)
    if (strcmp(plan.impls[i]->name, name) == 0)
      return 1;
  return 0;
}

START_TEST(bench_default_plan_is_the_2001_tables)
{
  static const struct {
    const char *name;
    int r, w;
  } table[] = {
    { "rwsem-r1", 1, 0 },    { "rwsem-r2", 2, 0 },   { "rwsem-ro", 4, 0 },
    { "rwsem-w1", 0, 1 },    { "rwsem-wo", 0, 4 },   { "rwsem-rw", 4, 2 },
    { "rwsem-worm", 30, 1 }, { "rwsem-xx", 30, 15 },
  };
  static const char *const others[] = {
    "rwsem-read-pair", "rwsem-write-pair", "spin-pair",   "spin-1",
    "spin-2",          "spin-4",           "counter-add", "counter-read",
    "counter-sum",     "counter-1",        "counter-2",   "counter-4",
  };
  size_t i;

  ck_assert_int_eq(bench(NULL), BENCH_PARSE_RUN);
  ck_assert_int_eq(plan.reps, BENCH_DEFAULT_REPS);
  ck_assert_int_ge(plan.reps, 3);
  ck_assert_int_eq(plan.format, BENCH_FORMAT_TABLE);
  ck_assert_ptr_null(plan.plot);
  for (i = 0; i < sizeof table / sizeof table[0]; i++) {
    const struct bench_test *t = find_test(table[i].name);
    ck_assert_msg(t != NULL, "%s missing", table[i].name);
    ck_assert(t->timed);
    ck_assert_int_eq(t->kind, BENCH_RWSEM);
    ck_assert_int_eq(t->threads[0], table[i].r);
    ck_assert_int_eq(t->threads[1], table[i].w);
    ck_assert(t->seconds == BENCH_DEFAULT_DURATION);
  }
  for (i = 0; i < sizeof others / sizeof others[0]; i++)
    ck_assert_msg(find_test(others[i]) != NULL, "%s missing", others[i]);
  ck_assert_uint_eq(plan.ntests, sizeof table / sizeof table[0]
                                     + sizeof others / sizeof others[0]);
  /* Every available implementation, the peers among them.  */
  ck_assert(plan_has_impl("glibc-rwlock"));
  ck_assert(plan_has_impl("glibc-rwlock-pw"));
  ck_assert(plan_has_impl("glibc-spin"));
  ck_assert(plan_has_impl("glibc-mutex"));
  ck_assert_int_eq(plan_has_impl("ck-rwlock"),
                   bench_impl_find("ck-rwlock")->unavailable == NULL);
  ck_assert_int_eq(plan_has_impl("ck-mcs"),
                   bench_impl_find("ck-mcs")->unavailable == NULL);
#if HAVE_CK && (defined(__x86_64__) || defined(__i386__))
  ck_assert(plan_has_impl("ck-rwlock"));
#endif
}
END_TEST

START_TEST(bench_options_shape_the_plan)
{
  const struct bench_test *t;

  ck_assert_int_eq(bench("--original-durations", "rwsem", NULL),
                   BENCH_PARSE_RUN);
  ck_assert_uint_eq(plan.ntests, 8);
  ck_assert(find_test("rwsem-r1")->seconds == BENCH_ORIGINAL_DURATION);
  ck_assert(find_test("rwsem-xx")->seconds == BENCH_ORIGINAL_DURATION_XX);
  /* The old spelling still works.  */
  ck_assert_int_eq(bench("--seed-table", "rwsem", NULL), BENCH_PARSE_RUN);
  ck_assert(find_test("rwsem-xx")->seconds == BENCH_ORIGINAL_DURATION_XX);

  ck_assert_int_eq(bench("--duration", "0.5", "--reps", "7", "--threads", "3,8",
                         "spin", "counter", NULL),
                   BENCH_PARSE_RUN);
  ck_assert(plan.duration == 0.5);
  ck_assert_int_eq(plan.reps, 7);
  ck_assert_ptr_nonnull(find_test("spin-pair"));
  ck_assert_ptr_null(find_test("spin-2"));
  ck_assert_ptr_null(find_test("rwsem-r1"));
  t = find_test("spin-8");
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(t->threads[0], 8);
  ck_assert(t->seconds == 0.5);
  ck_assert_ptr_nonnull(find_test("counter-3"));

  ck_assert_int_eq(bench("--rw", "3:1,16:0", NULL), BENCH_PARSE_RUN);
  ck_assert_ptr_null(find_test("rwsem-rw"));
  t = find_test("rwsem-3r1w");
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(t->threads[0], 3);
  ck_assert_int_eq(t->threads[1], 1);
  ck_assert_ptr_nonnull(find_test("rwsem-16r0w"));

  /* A test by name, options after it, a family and a prefix.  */
  ck_assert_int_eq(bench("rwsem-xx", "--impl", "glibc-spin,baseline,glibc-rw*",
                         "--csv", NULL),
                   BENCH_PARSE_RUN);
  ck_assert_uint_eq(plan.ntests, 1);
  ck_assert_str_eq(plan.tests[0].name, "rwsem-xx");
  ck_assert_int_eq(plan.format, BENCH_FORMAT_CSV);
  ck_assert(plan_has_impl("glibc-rwlock"));
  ck_assert(plan_has_impl("glibc-rwlock-pw"));
  ck_assert(plan_has_impl("glibc-spin"));
  ck_assert(plan_has_impl("tls-plain"));
  ck_assert(!plan_has_impl("glibc-mutex"));
  /* Every shim variant of this build, with and without READ_BIAS.  */
  ck_assert_int_eq(bench("--impl", "fastlock", NULL), BENCH_PARSE_RUN);
  {
    size_t i, rwsem = 0, bias = 0;
    for (i = 0; i < plan.nimpls; i++) {
      const char *name = plan.impls[i]->name;
      ck_assert_str_eq(plan.impls[i]->family, "fastlock");
      if (strncmp(name, "fl-rwsem-", 9) == 0)
        rwsem++;
      if (strstr(name, "-bias") != NULL)
        bias++;
    }
    ck_assert_uint_gt(rwsem, 0);
    ck_assert_uint_eq(rwsem, 2 * bias);
  }

  ck_assert_int_eq(bench("--json", "--quiet", "uncontended", NULL),
                   BENCH_PARSE_RUN);
  ck_assert_int_eq(plan.format, BENCH_FORMAT_JSON);
  ck_assert(plan.quiet);
  ck_assert_ptr_nonnull(find_test("spin-pair"));
  ck_assert_ptr_nonnull(find_test("rwsem-write-pair"));
  ck_assert_ptr_null(find_test("spin-1"));

  ck_assert_int_eq(bench("--help", NULL), BENCH_PARSE_HELP);
  ck_assert_int_eq(bench("--list", NULL), BENCH_PARSE_LIST);
  ck_assert_int_eq(bench("--version", NULL), BENCH_PARSE_VERSION);
}
END_TEST

START_TEST(bench_bad_input_is_one_line_naming_what_is_valid)
{
  ck_assert_int_eq(bench("rwsem", "nosuch", NULL), BENCH_PARSE_ERROR);
  assert_error("nosuch", "rwsem spin counter uncontended all");
  ck_assert_int_eq(bench("--impl", "nosuch", NULL), BENCH_PARSE_ERROR);
  assert_error("nosuch", "glibc-rwlock");
  ck_assert_int_eq(bench("--bogus", NULL), BENCH_PARSE_ERROR);
  assert_error("--bogus", "--duration");
  ck_assert_int_eq(bench("-x", NULL), BENCH_PARSE_ERROR);
  assert_error("-x", "--impl");
  ck_assert_int_eq(bench("--reps", NULL), BENCH_PARSE_ERROR);
  assert_error("needs a value", "--reps");
  ck_assert_int_eq(bench("--duration", "0", NULL), BENCH_PARSE_ERROR);
  assert_error("--duration", "more than 0");
  ck_assert_int_eq(bench("--duration", "-2", NULL), BENCH_PARSE_ERROR);
  assert_error("--duration", "more than 0");
  ck_assert_int_eq(bench("--duration", "1s", NULL), BENCH_PARSE_ERROR);
  assert_error("--duration", "seconds");
  ck_assert_int_eq(bench("--reps", "0", NULL), BENCH_PARSE_ERROR);
  assert_error("--reps", "1 to");
  ck_assert_int_eq(bench("--threads", "2,0", NULL), BENCH_PARSE_ERROR);
  assert_error("--threads", "1 to 512");
  ck_assert_int_eq(bench("--threads", "-1", NULL), BENCH_PARSE_ERROR);
  assert_error("--threads", "1 to 512");
  ck_assert_int_eq(bench("--threads", "513", NULL), BENCH_PARSE_ERROR);
  assert_error("--threads", "1 to 512");
  ck_assert_int_eq(bench("--rw", "400:200", NULL), BENCH_PARSE_ERROR);
  assert_error("--rw", "1 to 512");
  ck_assert_int_eq(bench("--rw", "0:0", NULL), BENCH_PARSE_ERROR);
  assert_error("--rw", "READERS");
  ck_assert_int_eq(bench("--rw", "4", NULL), BENCH_PARSE_ERROR);
  assert_error("--rw", "READERS:WRITERS");
  ck_assert_int_eq(bench("--csv", "--json", NULL), BENCH_PARSE_ERROR);
  assert_error("--csv", "--json");
  ck_assert_int_eq(bench("--plot", "out.pdf", NULL), BENCH_PARSE_ERROR);
  assert_error("out.pdf", ".svg or .png");
  /* Nothing of the selection runs the selected tests.  */
  ck_assert_int_eq(bench("--impl", "glibc-spin", "rwsem", NULL),
                   BENCH_PARSE_ERROR);
  assert_error("nothing to run", "--list");
#if !HAVE_CK
  ck_assert_int_eq(bench("--impl", "ck-rwlock", NULL), BENCH_PARSE_ERROR);
  assert_error("not available", "Concurrency Kit");
#endif
}
END_TEST

/* --plot without gnuplot says so before anything runs.  */
START_TEST(bench_plot_without_gnuplot)
{
  char *path = getenv("PATH") != NULL ? strdup(getenv("PATH")) : NULL;

  setenv("PATH", "/nonexistent", 1);
  ck_assert_int_eq(bench("--plot", "out.svg", NULL), BENCH_PARSE_ERROR);
  assert_error("gnuplot", "gnuplot-nox");
  if (path != NULL) {
    setenv("PATH", path, 1);
    free(path);
  }
}
END_TEST

/* Each implementation is one complete table entry.  */
START_TEST(bench_registry_is_consistent)
{
  int references[BENCH_NKINDS] = { 0 }, per_kind[BENCH_NKINDS] = { 0 };
  size_t i, j, n = bench_impl_count();

  ck_assert_uint_gt(n, 0);
  for (i = 0; i < n; i++) {
    const struct bench_impl *im = bench_impl_at(i);
    ck_assert_ptr_nonnull(im->name);
    ck_assert_ptr_nonnull(im->family);
    ck_assert_ptr_nonnull(im->about);
    ck_assert_int_lt(im->kind, BENCH_NKINDS);
    ck_assert_ptr_eq(bench_impl_find(im->name), im);
    for (j = 0; j < i; j++)
      ck_assert_str_ne(bench_impl_at(j)->name, im->name);
    references[im->kind] += im->reference;
    /* unavailable may answer either way (the drop-in's entries: whether
     * its library is found); an entry that can run is complete.  */
    if (bench_impl_unavailable(im) != NULL)
      continue;
    per_kind[im->kind]++;
    ck_assert_ptr_nonnull(im->init);
    ck_assert_ptr_nonnull(im->destroy);
    ck_assert_uint_gt(im->size, 0);
    ck_assert_ptr_nonnull(im->thread[0]);
    ck_assert_ptr_nonnull(im->loop[0]);
    if (im->kind == BENCH_RWSEM) {
      ck_assert_ptr_nonnull(im->thread[1]);
      ck_assert_ptr_nonnull(im->loop[1]);
    } else {
      ck_assert_ptr_null(im->thread[1]);
    }
  }
  for (i = 0; i < BENCH_NKINDS; i++) {
    const char *kind = bench_kind_name((enum bench_kind)i);
    ck_assert_msg(references[i] <= 1, "%s has %d references", kind,
                  references[i]);
    ck_assert_msg(per_kind[i] > 0, "no %s implementation", kind);
  }
  ck_assert_int_eq(references[BENCH_RWSEM], 1);
  ck_assert_int_eq(references[BENCH_SPIN], 1);
  ck_assert_ptr_null(bench_impl_find("no-such-impl"));
}
END_TEST

START_TEST(stress_defaults_and_choices)
{
  ck_assert_int_eq(stress("rwsem", NULL), STRESS_PARSE_RUN);
  ck_assert_int_eq(cfg.prim, STRESS_RWSEM);
  ck_assert_int_eq(cfg.readers, 4);
  ck_assert_int_eq(cfg.writers, 2);
  ck_assert_int_eq(cfg.processes, 1);
  ck_assert_ptr_nonnull(cfg.lock);
  ck_assert_str_eq(cfg.impl, "fastlock");
  ck_assert_int_eq(cfg.mode, STRESS_FAIR);

  ck_assert_int_eq(stress("--impl", "pthread", "rwsem", "--readers", "3",
                          "--writers", "0", "--mode", "prefer-writer",
                          "--duration", "0.25", "--pshared", "--processes", "3",
                          "--seed", "42", NULL),
                   STRESS_PARSE_RUN);
  ck_assert_str_eq(cfg.lock->impl, "pthread");
  ck_assert_int_eq(cfg.readers, 3);
  ck_assert_int_eq(cfg.writers, 0);
  ck_assert_int_eq(cfg.mode, STRESS_PREFER_WRITER);
  ck_assert(cfg.duration == 0.25);
  ck_assert(cfg.pshared);
  ck_assert_int_eq(cfg.processes, 3);
  ck_assert_uint_eq(cfg.seed, 42);

  ck_assert_int_eq(stress("spin", "--impl", "pthread", "--threads", "6", NULL),
                   STRESS_PARSE_RUN);
  ck_assert_int_eq(cfg.threads, 6);
  ck_assert_ptr_null(cfg.lock->lock[0]);
  ck_assert_ptr_nonnull(cfg.lock->lock[1]);

  /* The negative control is accepted for every primitive.  */
  ck_assert_int_eq(stress("rwsem", "--impl", "broken", NULL), STRESS_PARSE_RUN);
  ck_assert_str_eq(cfg.lock->impl, "broken");
  ck_assert_int_eq(stress("spin", "--impl", "broken", NULL), STRESS_PARSE_RUN);
  ck_assert_str_eq(cfg.lock->impl, "broken");
  ck_assert_int_eq(
      stress("counter", "--impl", "broken", "--interval", "0", NULL),
      STRESS_PARSE_RUN);
  ck_assert_str_eq(cfg.counter->impl, "broken");
  ck_assert(cfg.interval == 0);

  /* The process-death torture, and its negative control.  */
  ck_assert_int_eq(
      stress("rwsem", "--pshared", "--processes", "3", "--kill-ms", "5", NULL),
      STRESS_PARSE_RUN);
  ck_assert_int_eq(cfg.kill_ms, 5);
  ck_assert_int_eq(stress("rwsem", "--impl", "leaky", "--pshared",
                          "--processes", "2", "--kill-ms", "1", NULL),
                   STRESS_PARSE_RUN);
  ck_assert_str_eq(cfg.lock->impl, "leaky");

  ck_assert_int_eq(stress("--help", NULL), STRESS_PARSE_HELP);
  ck_assert_int_eq(stress("--version", NULL), STRESS_PARSE_VERSION);
}
END_TEST

START_TEST(stress_bad_input_is_one_line_naming_what_is_valid)
{
  ck_assert_int_eq(stress(NULL), STRESS_PARSE_ERROR);
  assert_error("primitive", "rwsem spin counter");
  ck_assert_int_eq(stress("mutex", NULL), STRESS_PARSE_ERROR);
  assert_error("mutex", "rwsem spin counter");
  ck_assert_int_eq(stress("rwsem", "spin", NULL), STRESS_PARSE_ERROR);
  assert_error("spin", NULL);
  ck_assert_int_eq(stress("rwsem", "--bogus", NULL), STRESS_PARSE_ERROR);
  assert_error("--bogus", "--readers");
  ck_assert_int_eq(stress("rwsem", "--duration", NULL), STRESS_PARSE_ERROR);
  assert_error("needs a value", "--duration");
  ck_assert_int_eq(stress("rwsem", "--duration", "0", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--duration", "more than 0");
  ck_assert_int_eq(stress("rwsem", "--readers", "-1", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--readers", "0 to");
  ck_assert_int_eq(stress("rwsem", "--readers", "0", "--writers", "0", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("at least one", NULL);
  ck_assert_int_eq(
      stress("rwsem", "--readers", "400", "--writers", "400", NULL),
      STRESS_PARSE_ERROR);
  assert_error("at most 512", NULL);
  ck_assert_int_eq(stress("spin", "--threads", "0", NULL), STRESS_PARSE_ERROR);
  assert_error("--threads", "1 to");
  ck_assert_int_eq(stress("rwsem", "--mode", "fifo", NULL), STRESS_PARSE_ERROR);
  assert_error("fifo", "fair prefer-reader prefer-writer");
  ck_assert_int_eq(stress("spin", "--type", "mcs", NULL), STRESS_PARSE_ERROR);
  assert_error("mcs", "tas ticket queued");
  ck_assert_int_eq(stress("counter", "--strategy", "magic", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("magic", "percpu-rseq");
  ck_assert_int_eq(stress("rwsem", "--impl", "nosuch", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("nosuch", "fastlock pthread");
  ck_assert_int_eq(stress("counter", "--impl", "pthread", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("pthread", "fastlock atomic");
  ck_assert_int_eq(stress("spin", "--readers", "2", NULL), STRESS_PARSE_ERROR);
  assert_error("--readers", "rwsem");
  ck_assert_int_eq(stress("counter", "--mode", "fair", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--mode", "rwsem");
  ck_assert_int_eq(stress("rwsem", "--threads", "2", NULL), STRESS_PARSE_ERROR);
  assert_error("--threads", "--readers");
  ck_assert_int_eq(stress("rwsem", "--type", "tas", NULL), STRESS_PARSE_ERROR);
  assert_error("--type", "spin");
  ck_assert_int_eq(stress("rwsem", "--processes", "2", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--processes", "--pshared");
  ck_assert_int_eq(stress("rwsem", "--pshared", "--processes", "65", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--processes", "1 to 64");
  ck_assert_int_eq(stress("counter", "--pshared", NULL), STRESS_PARSE_ERROR);
  assert_error("--pshared", "rwsem and spin");
  ck_assert_int_eq(stress("rwsem", "--impl", "pthread", "--mode", "fair", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("fair", "prefer-writer");
  ck_assert_int_eq(stress("rwsem", "--impl", "pthread", "--read-bias", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--read-bias", "fastlock");
  ck_assert_int_eq(
      stress("spin", "--impl", "pthread", "--type", "ticket", NULL),
      STRESS_PARSE_ERROR);
  assert_error("--type", "fastlock");
  ck_assert_int_eq(stress("rwsem", "--interval", "-1", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--interval", "0 for");
  ck_assert_int_eq(stress("rwsem", "--seed", "x", NULL), STRESS_PARSE_ERROR);
  assert_error("--seed", "0 to");
  ck_assert_int_eq(
      stress("rwsem", "--pshared", "--processes", "2", "--kill-ms", "0", NULL),
      STRESS_PARSE_ERROR);
  assert_error("--kill-ms", "1 to 60000");
  ck_assert_int_eq(stress("rwsem", "--pshared", "--kill-ms", "5", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--kill-ms", "--processes 2");
  ck_assert_int_eq(
      stress("spin", "--pshared", "--processes", "2", "--kill-ms", "5", NULL),
      STRESS_PARSE_ERROR);
  assert_error("--kill-ms", "rwsem only");
  ck_assert_int_eq(stress("rwsem", "--impl", "pthread", "--pshared",
                          "--processes", "2", "--kill-ms", "5", NULL),
                   STRESS_PARSE_ERROR);
  assert_error("--kill-ms", "--impl fastlock");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("bench-options");
  TCase *tc = tcase_create("bench");

  tcase_add_test(tc, bench_default_plan_is_the_2001_tables);
  tcase_add_test(tc, bench_options_shape_the_plan);
  tcase_add_test(tc, bench_bad_input_is_one_line_naming_what_is_valid);
  tcase_add_test(tc, bench_plot_without_gnuplot);
  tcase_add_test(tc, bench_registry_is_consistent);
  suite_add_tcase(s, tc);
  tc = tcase_create("stress");
  tcase_add_test(tc, stress_defaults_and_choices);
  tcase_add_test(tc, stress_bad_input_is_one_line_naming_what_is_valid);
  suite_add_tcase(s, tc);
  /* The shim's probe, although nothing here is a lock: Check forks for
   * every test, and the library's fork handler stores through the shim.  */
  return fl_check_run(s);
}
