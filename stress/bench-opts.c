/* stress/bench-opts.c: fastlock-bench's command line, made into a plan.
 * Nothing here prints or exits, so that tests/test-bench-options.c can
 * check every error path: bad input yields BENCH_PARSE_ERROR and one line
 * saying what is valid, before anything has run.  */
#include "config.h"

#include "bench-plan.h"
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Workloads, as bits of a test's membership.  */
enum {
  WL_RWSEM = 1u << 0,
  WL_SPIN = 1u << 1,
  WL_COUNTER = 1u << 2,
  WL_UNCONTENDED = 1u << 3,
  WL_ALL = WL_RWSEM | WL_SPIN | WL_COUNTER | WL_UNCONTENDED,
};

static const struct {
  const char *name;
  unsigned bits;
} workloads[] = {
  { "rwsem", WL_RWSEM },     { "spin", WL_SPIN },
  { "counter", WL_COUNTER }, { "uncontended", WL_UNCONTENDED },
  { "all", WL_ALL },
};
#define NWORKLOADS (sizeof workloads / sizeof workloads[0])

/* The rwsem table of the 2001 i386 rwsem thread (Howells' rwsem-opt4
 * against Arcangeli's 00_rwsem-9, linux-kernel, April 2001).  */
static const struct {
  const char *name;
  int readers, writers;
} rwsem_2001[] = {
  { "rwsem-r1", 1, 0 },    { "rwsem-r2", 2, 0 },   { "rwsem-ro", 4, 0 },
  { "rwsem-w1", 0, 1 },    { "rwsem-wo", 0, 4 },   { "rwsem-rw", 4, 2 },
  { "rwsem-worm", 30, 1 }, { "rwsem-xx", 30, 15 },
};
#define NRWSEM_2001 (sizeof rwsem_2001 / sizeof rwsem_2001[0])

#define MAX_LIST 64

struct options {
  const char *impl_arg;
  const char *threads_arg;
  const char *rw_arg;
  int threads[MAX_LIST], nthreads;
  int rw[MAX_LIST][2], nrw;
};

/* Bad input: the one-line error, and BENCH_PARSE_ERROR.  */
#define fail(err, size, ...) cli_fail(err, size, BENCH_PARSE_ERROR, __VA_ARGS__)

/* "N,N,..." of thread counts.  */
static enum bench_parse_result parse_threads(struct options *o, char *err,
                                             size_t size)
{
  char buf[256], *tok, *save = NULL;

  if (strlen(o->threads_arg) >= sizeof buf)
    return fail(err, size, "--threads: list too long");
  strcpy(buf, o->threads_arg);
  o->nthreads = 0;
  for (tok = strtok_r(buf, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    long v;
    if (o->nthreads == MAX_LIST)
      return fail(err, size, "--threads: at most %d counts", MAX_LIST);
    if (cli_long(tok, 1, BENCH_MAX_THREADS, &v) != 0)
      return fail(err, size,
                  "--threads: '%s' is not a thread count; valid: 1 to %d, "
                  "comma-separated (e.g. 1,2,4)",
                  tok, BENCH_MAX_THREADS);
    o->threads[o->nthreads++] = (int)v;
  }
  if (o->nthreads == 0)
    return fail(err, size,
                "--threads: empty list; valid: 1 to %d, comma-separated",
                BENCH_MAX_THREADS);
  return BENCH_PARSE_RUN;
}

/* "R:W,R:W,..." of reader and writer counts.  */
static enum bench_parse_result parse_rw(struct options *o, char *err,
                                        size_t size)
{
  char buf[256], *tok, *save = NULL;

  if (strlen(o->rw_arg) >= sizeof buf)
    return fail(err, size, "--rw: list too long");
  strcpy(buf, o->rw_arg);
  o->nrw = 0;
  for (tok = strtok_r(buf, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    char *colon = strchr(tok, ':');
    long r, w;
    if (o->nrw == MAX_LIST)
      return fail(err, size, "--rw: at most %d pairs", MAX_LIST);
    if (colon == NULL)
      return fail(err, size, "--rw: '%s' is not READERS:WRITERS (e.g. 8:0,4:2)",
                  tok);
    *colon = '\0';
    if (cli_long(tok, 0, BENCH_MAX_THREADS, &r) != 0
        || cli_long(colon + 1, 0, BENCH_MAX_THREADS, &w) != 0 || r + w < 1
        || r + w > BENCH_MAX_THREADS)
      return fail(err, size,
                  "--rw: '%s:%s' is not valid; READERS and WRITERS are 0 or "
                  "more, together 1 to %d",
                  tok, colon + 1, BENCH_MAX_THREADS);
    o->rw[o->nrw][0] = (int)r;
    o->rw[o->nrw][1] = (int)w;
    o->nrw++;
  }
  if (o->nrw == 0)
    return fail(err, size, "--rw: empty list; valid: READERS:WRITERS,...");
  return BENCH_PARSE_RUN;
}

/* --- Tests.  */
struct gen {
  struct bench_test *tests;
  unsigned *members;
  size_t n, cap;
};

static struct bench_test *add_test(struct gen *g, unsigned members,
                                   const char *workload, enum bench_kind kind,
                                   const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static struct bench_test *add_test(struct gen *g, unsigned members,
                                   const char *workload, enum bench_kind kind,
                                   const char *fmt, ...)
{
  struct bench_test *t;
  va_list ap;

  if (g->n == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 32;
    g->tests = realloc(g->tests, g->cap * sizeof *g->tests);
    g->members = realloc(g->members, g->cap * sizeof *g->members);
    if (g->tests == NULL || g->members == NULL) {
      perror("fastlock-bench");
      exit(1);
    }
  }
  t = &g->tests[g->n];
  memset(t, 0, sizeof *t);
  va_start(ap, fmt);
  vsnprintf(t->name, sizeof t->name, fmt, ap);
  va_end(ap);
  t->workload = workload;
  t->kind = kind;
  g->members[g->n++] = members;
  return t;
}

static void add_loop(struct gen *g, unsigned members, const char *workload,
                     enum bench_kind kind, const char *name, int loop,
                     const char *op)
{
  struct bench_test *t = add_test(g, members, workload, kind, "%s", name);
  t->loop = loop;
  t->op = op;
}

static void add_timed(struct gen *g, unsigned members, enum bench_kind kind,
                      const char *name, int c0, int c1, double seconds)
{
  struct bench_test *t =
      add_test(g, members, bench_kind_name(kind), kind, "%s", name);
  t->timed = 1;
  t->threads[0] = c0;
  t->threads[1] = c1;
  t->seconds = seconds;
}

/* Every test the options define, in the order the tables print.  */
static void generate(struct gen *g, const struct options *o,
                     const struct bench_plan *p)
{
  static const int default_threads[] = { 1, 2, 4 };
  const int *threads = o->nthreads ? o->threads : default_threads;
  int nthreads = o->nthreads ? o->nthreads : 3;
  char name[40];
  size_t i;
  int k;

  add_loop(g, WL_UNCONTENDED, "uncontended", BENCH_RWSEM, "rwsem-read-pair", 0,
           "down_read + up_read");
  add_loop(g, WL_UNCONTENDED, "uncontended", BENCH_RWSEM, "rwsem-write-pair", 1,
           "down_write + up_write");
  if (o->nrw) {
    for (k = 0; k < o->nrw; k++) {
      snprintf(name, sizeof name, "rwsem-%dr%dw", o->rw[k][0], o->rw[k][1]);
      add_timed(g, WL_RWSEM, BENCH_RWSEM, name, o->rw[k][0], o->rw[k][1],
                p->original_durations ? BENCH_ORIGINAL_DURATION : p->duration);
    }
  } else {
    for (i = 0; i < NRWSEM_2001; i++)
      add_timed(g, WL_RWSEM, BENCH_RWSEM, rwsem_2001[i].name,
                rwsem_2001[i].readers, rwsem_2001[i].writers,
                !p->original_durations ? p->duration
                : strcmp(rwsem_2001[i].name, "rwsem-xx") == 0
                    ? BENCH_ORIGINAL_DURATION_XX
                    : BENCH_ORIGINAL_DURATION);
  }
  add_loop(g, WL_SPIN | WL_UNCONTENDED, "uncontended", BENCH_SPIN, "spin-pair",
           0, "lock + unlock");
  for (k = 0; k < nthreads; k++) {
    snprintf(name, sizeof name, "spin-%d", threads[k]);
    add_timed(g, WL_SPIN, BENCH_SPIN, name, threads[k], 0, p->duration);
  }
  add_loop(g, WL_COUNTER, "counter", BENCH_COUNTER, "counter-add", 0, "add 1");
  add_loop(g, WL_COUNTER, "counter", BENCH_COUNTER, "counter-read", 1,
           "approximate read");
  add_loop(g, WL_COUNTER, "counter", BENCH_COUNTER, "counter-sum", 2,
           "exact sum");
  for (k = 0; k < nthreads; k++) {
    snprintf(name, sizeof name, "counter-%d", threads[k]);
    add_timed(g, WL_COUNTER, BENCH_COUNTER, name, threads[k], 0, p->duration);
  }
}

int bench_impl_runs(const struct bench_impl *impl,
                    const struct bench_test *test)
{
  if (impl->kind != test->kind)
    return 0;
  if (test->timed)
    return impl->thread[0] != NULL
           && (test->threads[1] == 0 || impl->thread[1] != NULL);
  return impl->loop[test->loop] != NULL;
}

/* --- Implementations.  */
static int glob_match(const char *pattern, const char *name)
{
  size_t len = strlen(pattern);
  return len > 0 && pattern[len - 1] == '*'
         && strncmp(pattern, name, len - 1) == 0;
}

static void list_names(char *buf, size_t size)
{
  size_t i, used = 0;

  buf[0] = '\0';
  for (i = 0; i < bench_impl_count() && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " " : "",
                             bench_impl_at(i)->name);
}

static enum bench_parse_result
select_impls(struct bench_plan *p, const char *arg, char *err, size_t size)
{
  size_t n = bench_impl_count(), i;
  char *want = calloc(n, 1), buf[1024], *tok, *save = NULL;

  p->impls = malloc(n * sizeof *p->impls);
  if (want == NULL || p->impls == NULL) {
    perror("fastlock-bench");
    exit(1);
  }
  if (arg == NULL) {
    for (i = 0; i < n; i++)
      want[i] = bench_impl_unavailable(bench_impl_at(i)) == NULL;
  } else {
    if (strlen(arg) >= sizeof buf) {
      free(want);
      return fail(err, size, "--impl: list too long");
    }
    strcpy(buf, arg);
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
      const struct bench_impl *named = bench_impl_find(tok);
      const char *why = named != NULL ? bench_impl_unavailable(named) : NULL;
      int matched = 0;
      if (why != NULL) {
        enum bench_parse_result r =
            fail(err, size, "--impl: %s is not available here: %s", tok, why);
        free(want);
        return r;
      }
      for (i = 0; i < n; i++) {
        const struct bench_impl *im = bench_impl_at(i);
        if (im == named
            || (bench_impl_unavailable(im) == NULL
                && (strcmp(tok, im->family) == 0
                    || glob_match(tok, im->name)))) {
          want[i] = 1;
          matched = 1;
        }
      }
      if (!matched) {
        char names[768];
        list_names(names, sizeof names);
        free(want);
        return fail(
            err, size,
            "--impl: unknown implementation '%s'; valid: %s; a family: "
            "fastlock glibc ck baseline dropin; or a prefix ending in '*'",
            tok, names);
      }
    }
  }
  p->nimpls = 0;
  for (i = 0; i < n; i++)
    if (want[i])
      p->impls[p->nimpls++] = bench_impl_at(i);
  free(want);
  return BENCH_PARSE_RUN;
}

void bench_usage(FILE *out)
{
  fprintf(
      out,
      "usage: fastlock-bench [OPTION]... [WORKLOAD|TEST]...\n"
      "Runs fastlock's primitives and their peers (glibc, Concurrency Kit) side by\n"
      "side on this machine: interleaved, repeated, the median reported.\n"
      "\n"
      "Workloads: rwsem (rwsem-r1 ... rwsem-xx of the 2001 i386 rwsem thread), spin,\n"
      "counter (the strategies of the ia64 light-weight counter thread), uncontended\n"
      "(one lock/unlock pair of every primitive), all (default).\n"
      "A test name (see --list) runs that test alone.\n"
      "fastlock-bench ipc and fastlock-bench pthread run the IPC objects' and the\n"
      "libpthread drop-in's own tables (each takes --help).\n"
      "\n"
      "  --impl LIST      implementations to run: names, families (fastlock, glibc,\n"
      "                   ck, baseline) or prefixes ending in '*' (default: all)\n"
      "  --duration SEC   length of one timed run (default %g)\n"
      "  --reps N         repetitions of each test and implementation (default %d)\n"
      "  --original-durations\n"
      "                   the 2001 thread's durations for the rwsem tests: 10 s,\n"
      "                   50 s for rwsem-xx (old spelling: --seed-table)\n"
      "  --threads LIST   thread counts of the spin and counter tests (default 1,2,4)\n"
      "  --rw LIST        READERS:WRITERS pairs replacing the rwsem-r1 ... rwsem-xx tests\n"
      "  --csv            comma-separated values instead of tables\n"
      "  --json           one JSON document instead of tables\n"
      "  --plot FILE      also draw FILE (.svg or .png) with gnuplot\n"
      "  --quiet          no progress line on stderr\n"
      "  --list           list the implementations and tests, then exit\n"
      "  --help, --version\n"
      "\n"
      "Exit status: 0 done, 1 a run failed, 2 bad input (nothing was run).\n"
      "See fastlock-bench(1).\n",
      BENCH_DEFAULT_DURATION, BENCH_DEFAULT_REPS);
}

/* Where gnuplot would run from, by the PATH.  */
static int have_program(const char *prog)
{
  const char *path = getenv("PATH");
  char dir[4096];

  while (path != NULL && *path != '\0') {
    size_t len = strcspn(path, ":");
    if (len > 0 && len + strlen(prog) + 2 <= sizeof dir) {
      snprintf(dir, sizeof dir, "%.*s/%s", (int)len, path, prog);
      if (access(dir, X_OK) == 0)
        return 1;
    }
    path += len + (path[len] == ':');
  }
  return 0;
}

enum bench_parse_result bench_plan_parse(int argc, char **argv,
                                         struct bench_plan *p, char *err,
                                         size_t errsize)
{
  enum {
    O_IMPL = 256,
    O_DURATION,
    O_REPS,
    O_ORIGINAL,
    O_THREADS,
    O_RW,
    O_CSV,
    O_JSON,
    O_PLOT,
    O_QUIET,
    O_LIST,
    O_HELP,
    O_VERSION
  };
  static const struct option longopts[] = {
    { "impl", required_argument, NULL, O_IMPL },
    { "duration", required_argument, NULL, O_DURATION },
    { "reps", required_argument, NULL, O_REPS },
    { "original-durations", no_argument, NULL, O_ORIGINAL },
    { "seed-table", no_argument, NULL, O_ORIGINAL },
    { "threads", required_argument, NULL, O_THREADS },
    { "rw", required_argument, NULL, O_RW },
    { "csv", no_argument, NULL, O_CSV },
    { "json", no_argument, NULL, O_JSON },
    { "plot", required_argument, NULL, O_PLOT },
    { "quiet", no_argument, NULL, O_QUIET },
    { "list", no_argument, NULL, O_LIST },
    { "help", no_argument, NULL, O_HELP },
    { "version", no_argument, NULL, O_VERSION },
    { NULL, 0, NULL, 0 },
  };
  static const char valid_options[] =
      "--impl --duration --reps --original-durations --threads --rw --csv --json --plot "
      "--quiet --list --help --version";
  struct options o;
  struct gen g = { NULL, NULL, 0, 0 };
  enum bench_parse_result r;
  unsigned selected = 0;
  char *named;
  int c, csv = 0, json = 0, i;
  size_t t;

  memset(p, 0, sizeof *p);
  memset(&o, 0, sizeof o);
  p->duration = BENCH_DEFAULT_DURATION;
  p->reps = BENCH_DEFAULT_REPS;
  optind = 0; /* GNU: start afresh (the tests parse often) */
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    long v;
    switch (c) {
      case O_IMPL:
        o.impl_arg = optarg;
        break;
      case O_DURATION:
        if (cli_seconds(optarg, 0, BENCH_MAX_DURATION, &p->duration) != 0)
          return fail(
              err, errsize,
              "--duration: '%s' is not a duration; valid: seconds, more than "
              "0 and at most %g (e.g. 0.5)",
              optarg, BENCH_MAX_DURATION);
        break;
      case O_REPS:
        if (cli_long(optarg, 1, BENCH_MAX_REPS, &v) != 0)
          return fail(err, errsize, "--reps: '%s' is not valid; valid: 1 to %d",
                      optarg, BENCH_MAX_REPS);
        p->reps = (int)v;
        break;
      case O_ORIGINAL:
        p->original_durations = 1;
        break;
      case O_THREADS:
        o.threads_arg = optarg;
        break;
      case O_RW:
        o.rw_arg = optarg;
        break;
      case O_CSV:
        csv = 1;
        break;
      case O_JSON:
        json = 1;
        break;
      case O_PLOT:
        p->plot = optarg;
        break;
      case O_QUIET:
        p->quiet = 1;
        break;
      case O_LIST:
        return BENCH_PARSE_LIST;
      case O_HELP:
        return BENCH_PARSE_HELP;
      case O_VERSION:
        return BENCH_PARSE_VERSION;
      default:
        if (optopt != 0 && optopt < O_IMPL)
          return fail(err, errsize, "unknown option '-%c'; valid: %s", optopt,
                      valid_options);
        if (optopt >= O_IMPL)
          return fail(err, errsize, "option '%s' needs a value; valid: %s",
                      argv[optind - 1], valid_options);
        return fail(err, errsize, "unknown option '%s'; valid: %s",
                    argv[optind - 1], valid_options);
    }
  }
  if (csv && json)
    return fail(err, errsize,
                "--csv and --json exclude each other; choose one");
  p->format = json  ? BENCH_FORMAT_JSON
              : csv ? BENCH_FORMAT_CSV
                    : BENCH_FORMAT_TABLE;
  if (p->plot != NULL) {
    size_t len = strlen(p->plot);
    if (len < 5
        || (strcmp(p->plot + len - 4, ".svg") != 0
            && strcmp(p->plot + len - 4, ".png") != 0))
      return fail(err, errsize, "--plot: '%s' must end in .svg or .png",
                  p->plot);
    if (!have_program("gnuplot"))
      return fail(err, errsize,
                  "--plot needs gnuplot, which is not in PATH (Debian: apt-get "
                  "install gnuplot-nox)");
  }
  if (o.threads_arg != NULL
      && (r = parse_threads(&o, err, errsize)) != BENCH_PARSE_RUN)
    return r;
  if (o.rw_arg != NULL && (r = parse_rw(&o, err, errsize)) != BENCH_PARSE_RUN)
    return r;

  generate(&g, &o, p);
  named = calloc(g.n, 1);
  if (named == NULL) {
    perror("fastlock-bench");
    exit(1);
  }
  for (i = optind; i < argc; i++) {
    size_t w;
    int found = 0;
    for (w = 0; w < NWORKLOADS; w++)
      if (strcmp(argv[i], workloads[w].name) == 0) {
        selected |= workloads[w].bits;
        found = 1;
      }
    for (t = 0; t < g.n; t++)
      if (strcmp(argv[i], g.tests[t].name) == 0) {
        named[t] = 1;
        found = 1;
      }
    if (!found) {
      r = fail(err, errsize,
               "unknown workload or test '%s'; valid: rwsem spin counter "
               "uncontended all, or a test name (fastlock-bench --list)",
               argv[i]);
      goto out;
    }
  }
  if (optind == argc)
    selected = WL_ALL;

  r = select_impls(p, o.impl_arg, err, errsize);
  if (r != BENCH_PARSE_RUN)
    goto out;

  p->tests = malloc((g.n ? g.n : 1) * sizeof *p->tests);
  if (p->tests == NULL) {
    perror("fastlock-bench");
    exit(1);
  }
  for (t = 0; t < g.n; t++) {
    size_t k;
    int runnable = 0;
    if (!(g.members[t] & selected) && !named[t])
      continue;
    for (k = 0; k < p->nimpls; k++)
      runnable |= bench_impl_runs(p->impls[k], &g.tests[t]);
    if (runnable)
      p->tests[p->ntests++] = g.tests[t];
  }
  if (p->ntests == 0)
    r = fail(err, errsize,
             "nothing to run: no selected implementation runs the selected "
             "tests (see fastlock-bench --list)");
out:
  free(named);
  free(g.tests);
  free(g.members);
  return r;
}

void bench_plan_free(struct bench_plan *p)
{
  free(p->tests);
  free(p->impls);
  memset(p, 0, sizeof *p);
}
