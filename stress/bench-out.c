/* stress/bench-out.c: fastlock-bench's results as aligned tables, CSV,
 * JSON (fields documented in fastlock-bench.1) and a gnuplot drawing.  */
#include "config.h"

#include "bench-plan.h"
#include "context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

const struct bench_run *bench_cell_median(const struct bench_cell *c)
{
  double key[BENCH_MAX_REPS], sorted[BENCH_MAX_REPS], mid;
  int i;

  for (i = 0; i < c->nruns; i++)
    key[i] = sorted[i] =
        c->test->timed ? bench_run_rate(&c->runs[i]) : c->runs[i].ns_per_op;
  qsort(sorted, (size_t)c->nruns, sizeof sorted[0], cmp_double);
  mid = sorted[(c->nruns - 1) / 2];
  for (i = 0; i < c->nruns; i++)
    if (key[i] == mid)
      break;
  return &c->runs[i];
}

int bench_cell_starved_runs(const struct bench_cell *c, int cls)
{
  int i, n = 0;

  for (i = 0; i < c->nruns; i++)
    n += c->runs[i].cls[cls].starved;
  return n;
}

const struct bench_cell *bench_cell_reference(const struct bench_cell *cells,
                                              size_t ncells,
                                              const struct bench_cell *c)
{
  size_t i;

  for (i = 0; i < ncells; i++)
    if (cells[i].test == c->test && cells[i].impl->reference)
      return &cells[i];
  return NULL;
}

double bench_loop_target(const struct bench_plan *p)
{
  return bench_quarter(p->duration, 0.01, 0.2);
}

/* The name of the reference implementation of a kind.  */
static const char *reference_name(enum bench_kind kind)
{
  size_t i;

  for (i = 0; i < bench_impl_count(); i++)
    if (bench_impl_at(i)->kind == kind && bench_impl_at(i)->reference)
      return bench_impl_at(i)->name;
  return "-";
}

static double ticks_to_ns(const struct fl_context *ctx, uint64_t ticks)
{
  return ctx->ticks_per_ns > 0 ? (double)ticks / ctx->ticks_per_ns
                               : (double)ticks;
}

/* Value with a K, M or G suffix, 3 significant digits or more.  */
static const char *si(char *buf, size_t size, double v)
{
  if (v >= 1e9)
    snprintf(buf, size, "%.2fG", v / 1e9);
  else if (v >= 1e6)
    snprintf(buf, size, "%.2fM", v / 1e6);
  else if (v >= 1e3)
    snprintf(buf, size, "%.1fK", v / 1e3);
  else
    snprintf(buf, size, "%.1f", v);
  return buf;
}

static const char *duration_ns(char *buf, size_t size, double ns)
{
  if (ns >= 1e9)
    snprintf(buf, size, "%.2fs", ns / 1e9);
  else if (ns >= 1e6)
    snprintf(buf, size, "%.2fms", ns / 1e6);
  else if (ns >= 1e3)
    snprintf(buf, size, "%.2fus", ns / 1e3);
  else
    snprintf(buf, size, "%.0fns", ns);
  return buf;
}

static const char *ratio(char *buf, size_t size, double num, double den)
{
  if (den > 0)
    snprintf(buf, size, "%.2f", num / den);
  else
    snprintf(buf, size, "-");
  return buf;
}

static const char *section_title(const struct bench_test *t)
{
  static const char *const titles[BENCH_NKINDS][2] = {
    { "rwsem, uncontended: one thread, time per pair",
      "rwsem: readers and writers on one rwsem, operations per second" },
    { "spin, uncontended: one thread, time per lock + unlock",
      "spin: threads taking one lock, acquisitions per second" },
    { "counter: one thread, time per call",
      "counter: threads adding to one counter, adds per second" },
  };
  return titles[t->kind][t->timed];
}

static void print_method(FILE *out, const struct bench_plan *p,
                         const struct fl_context *ctx, const char *prefix)
{
  fprintf(
      out,
      "%smethod:     timed runs of %gs%s, each after an uncounted warm-up "
      "(%gs: a quarter of the run, 0.02s to 0.1s); %d repetitions, implementations "
      "interleaved, the median run reported; acquire latency timed with %s, "
      "1 in %d at first and half as often each time 8192 samples fill up; "
      "untimed loops of about %gs\n",
      prefix, p->duration,
      p->original_durations
          ? " (rwsem tests: the 2001 thread's 10s, 50s for rwsem-xx)"
          : "",
      bench_warmup_s(p->duration), p->reps, ctx->ticks_name, BENCH_SAMPLE_EVERY,
      bench_loop_target(p));
}

void bench_print_table(FILE *out, const struct bench_plan *p,
                       const struct fl_context *ctx,
                       const struct bench_cell *cells, size_t ncells)
{
  const struct bench_test *last = NULL;
  int wt = 4, wi = 4, any_actual = 0;
  size_t i;

  for (i = 0; i < ncells; i++) {
    int lt = (int)strlen(cells[i].test->name),
        li = (int)strlen(cells[i].impl->name);
    wt = lt > wt ? lt : wt;
    wi = li > wi ? li : wi;
  }
  fprintf(out, "fastlock-bench %s: fastlock and its peers on this machine\n",
          ctx->fastlock);
  fl_context_print(out, ctx, "  ");
  print_method(out, p, ctx, "  ");

  for (i = 0; i < ncells; i++) {
    const struct bench_cell *c = &cells[i];
    const struct bench_test *t = c->test;
    const struct bench_run *m = bench_cell_median(c);
    const struct bench_cell *ref = bench_cell_reference(cells, ncells, c);
    const struct bench_run *rm = ref != NULL ? bench_cell_median(ref) : NULL;
    char a[32], b[32], d[32], e[32], f[32], g[32];
    int cls, named;

    if (last == NULL || t->kind != last->kind || t->timed != last->timed) {
      fprintf(out, "\n== %s; ref: %s\n", section_title(t),
              reference_name(t->kind));
      if (t->timed)
        fprintf(out, "%-*s  %-*s  %-5s %4s %9s %8s %21s %7s %9s %9s %9s\n", wt,
                "test", wi, "impl", "class", "thr", "ops/s", "vs ref",
                "per-thread min..max", "starved", "lat p50", "p99", "max");
      else
        fprintf(out, "%-*s  %-*s  %9s %10s %8s  %s\n", wt, "test", wi, "impl",
                "ns/op", "ticks/op", "vs ref", "operation");
    } else if (t != last && t->timed) {
      fprintf(out, "\n");
    }
    if (m->actual != NULL)
      any_actual = 1;

    if (!t->timed) {
      fprintf(out, "%-*s  %-*s  %9.2f %10.2f %8s  %s%s%s\n", wt,
              t != last ? t->name : "", wi, c->impl->name, m->ns_per_op,
              m->ticks_per_op,
              ratio(a, sizeof a, m->ns_per_op, rm != NULL ? rm->ns_per_op : 0),
              t->op, m->actual != NULL ? ", ran as " : "",
              m->actual != NULL ? m->actual : "");
      last = t;
      continue;
    }
    /* The implementation's name on its first class row only (a
     * write-only test has no read row).  */
    for (cls = 0, named = 0; cls < 2; cls++) {
      const struct bench_class_run *k = &m->cls[cls];
      char minmax[48], starved[16];
      if (t->threads[cls] == 0)
        continue;
      snprintf(minmax, sizeof minmax, "%s..%s",
               si(a, sizeof a, (double)k->min / m->seconds),
               si(b, sizeof b, (double)k->max / m->seconds));
      if (k->threads > 1)
        snprintf(starved, sizeof starved, "%d/%d",
                 bench_cell_starved_runs(c, cls), c->nruns);
      else
        snprintf(starved, sizeof starved, "-");
      if (k->samples > 0) {
        duration_ns(d, sizeof d, ticks_to_ns(ctx, k->p50));
        duration_ns(e, sizeof e, ticks_to_ns(ctx, k->p99));
        duration_ns(f, sizeof f, ticks_to_ns(ctx, k->pmax));
      } else {
        strcpy(d, "-");
        strcpy(e, "-");
        strcpy(f, "-");
      }
      fprintf(out, "%-*s  %-*s  %-5s %4d %9s %8s %21s %7s %9s %9s %9s%s%s\n",
              wt, t != last ? t->name : "", wi,
              named++ == 0 ? c->impl->name : "", bench_class_name(t->kind, cls),
              k->threads, si(g, sizeof g, (double)k->ops / m->seconds),
              ratio(a, sizeof a, (double)k->ops / m->seconds,
                    rm != NULL ? (double)rm->cls[cls].ops / rm->seconds : 0),
              minmax, starved, d, e, f, m->actual != NULL ? "  ran as " : "",
              m->actual != NULL ? m->actual : "");
      last = t;
    }
  }
  fprintf(
      out,
      "\nvs ref: the value divided by the reference implementation's in the\n"
      "same test (ops/s: above 1 is faster; ns/op: below 1 is faster).\n"
      "per-thread: each thread's own rate in the median run.  starved: runs in\n"
      "which a thread of the class did less than half the work of the busiest\n"
      "(max/2 > min).  lat: time to acquire (median, 99th percentile, largest\n"
      "sampled).\n");
  if (any_actual)
    fprintf(out,
            "ran as: the counter strategy the library actually used here.\n");
  if (ctx->online_cpus > 0)
    fprintf(out,
            "This machine has %ld online CPUs: tests with more threads are "
            "oversubscribed, and\ntheir fairness is partly the scheduler's.\n",
            ctx->online_cpus);
}

/* --- CSV.  Context and method as leading "# " lines.  */
void bench_print_csv(FILE *out, const struct bench_plan *p,
                     const struct fl_context *ctx,
                     const struct bench_cell *cells, size_t ncells)
{
  size_t i;

  fl_context_print(out, ctx, "# ");
  print_method(out, p, ctx, "# ");
  fprintf(
      out,
      "test,kind,impl,family,reference,class,threads,seconds,reps,ops,ops_per_s,"
      "ratio,thread_min_ops_per_s,thread_max_ops_per_s,starved_reps,lat_samples,"
      "lat_p50_ns,lat_p99_ns,lat_max_ns,iterations,ns_per_op,ticks_per_op,ran_as\n");
  for (i = 0; i < ncells; i++) {
    const struct bench_cell *c = &cells[i];
    const struct bench_test *t = c->test;
    const struct bench_run *m = bench_cell_median(c);
    const struct bench_cell *ref = bench_cell_reference(cells, ncells, c);
    const struct bench_run *rm = ref != NULL ? bench_cell_median(ref) : NULL;
    const char *actual = m->actual != NULL ? m->actual : "";
    int cls;

    if (!t->timed) {
      fprintf(out, "%s,%s,%s,%s,%s,,1,,%d,,,", t->name,
              bench_kind_name(t->kind), c->impl->name, c->impl->family,
              reference_name(t->kind), c->nruns);
      if (rm != NULL && rm->ns_per_op > 0)
        fprintf(out, "%.4f", m->ns_per_op / rm->ns_per_op);
      fprintf(out, ",,,,,,,,%ld,%.4f,%.4f,%s\n", m->iterations, m->ns_per_op,
              m->ticks_per_op, actual);
      continue;
    }
    for (cls = 0; cls < 2; cls++) {
      const struct bench_class_run *k = &m->cls[cls];
      double rate = (double)k->ops / m->seconds;
      if (t->threads[cls] == 0)
        continue;
      fprintf(out, "%s,%s,%s,%s,%s,%s,%d,%.6f,%d,%llu,%.1f,", t->name,
              bench_kind_name(t->kind), c->impl->name, c->impl->family,
              reference_name(t->kind), bench_class_name(t->kind, cls),
              k->threads, m->seconds, c->nruns, (unsigned long long)k->ops,
              rate);
      if (rm != NULL && rm->cls[cls].ops > 0)
        fprintf(out, "%.4f", rate / ((double)rm->cls[cls].ops / rm->seconds));
      fprintf(out, ",%.1f,%.1f,%d,%zu,", (double)k->min / m->seconds,
              (double)k->max / m->seconds, bench_cell_starved_runs(c, cls),
              k->samples);
      if (k->samples > 0)
        fprintf(out, "%.1f,%.1f,%.1f", ticks_to_ns(ctx, k->p50),
                ticks_to_ns(ctx, k->p99), ticks_to_ns(ctx, k->pmax));
      else
        fprintf(out, ",,");
      fprintf(out, ",,,,%s\n", actual);
    }
  }
}

/* --- JSON.  */
static void json_string(FILE *out, const char *s)
{
  fputc('"', out);
  for (; *s != '\0'; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(out, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(out, "\\u%04x", ch);
    else
      fputc(ch, out);
  }
  fputc('"', out);
}

static void json_number_or_null(FILE *out, int have, double v)
{
  if (have)
    fprintf(out, "%.6g", v);
  else
    fprintf(out, "null");
}

void bench_print_json(FILE *out, const struct bench_plan *p,
                      const struct fl_context *ctx,
                      const struct bench_cell *cells, size_t ncells)
{
  size_t i;
  int r;

  fprintf(
      out,
      "{\n  \"tool\": \"fastlock-bench\",\n  \"format\": 1,\n  \"version\": ");
  json_string(out, ctx->fastlock);
  fprintf(out, ",\n  \"context\": {\n    \"cpu\": ");
  json_string(out, ctx->cpu_model);
  fprintf(out,
          ",\n    \"online_cpus\": %ld,\n    \"ticks\": ", ctx->online_cpus);
  json_string(out, ctx->ticks_name);
  fprintf(out, ",\n    \"ticks_per_ns\": %.6g,\n    \"kernel\": ",
          ctx->ticks_per_ns);
  json_string(out, ctx->kernel);
  fprintf(out, ",\n    \"libc\": ");
  json_string(out, ctx->libc);
  fprintf(out, ",\n    \"compiler\": ");
  json_string(out, ctx->compiler);
  fprintf(out, ",\n    \"config\": ");
  json_string(out, ctx->config);
  fprintf(out,
          "\n  },\n  \"method\": {\n    \"duration_s\": %.6g,\n"
          "    \"warmup_s\": %.6g,\n"
          "    \"original_durations\": %s,\n    \"reps\": %d,\n"
          "    \"latency_sample_every\": %d,\n    \"loop_target_s\": %.6g\n"
          "  },\n  \"results\": [",
          p->duration, bench_warmup_s(p->duration),
          p->original_durations ? "true" : "false", p->reps, BENCH_SAMPLE_EVERY,
          bench_loop_target(p));
  for (i = 0; i < ncells; i++) {
    const struct bench_cell *c = &cells[i];
    const struct bench_test *t = c->test;
    const struct bench_run *m = bench_cell_median(c);
    const struct bench_cell *ref = bench_cell_reference(cells, ncells, c);
    const struct bench_run *rm = ref != NULL ? bench_cell_median(ref) : NULL;
    int cls, first = 1, have_ref;

    fprintf(out, "%s\n    {\"test\": ", i ? "," : "");
    json_string(out, t->name);
    fprintf(out, ", \"kind\": \"%s\", \"type\": \"%s\", \"impl\": ",
            bench_kind_name(t->kind), t->timed ? "timed" : "loop");
    json_string(out, c->impl->name);
    fprintf(out, ", \"family\": ");
    json_string(out, c->impl->family);
    fprintf(out, ", \"reference\": ");
    json_string(out, reference_name(t->kind));
    fprintf(out, ", \"reps\": %d, \"ran_as\": ", c->nruns);
    if (m->actual != NULL)
      json_string(out, m->actual);
    else
      fprintf(out, "null");
    if (!t->timed) {
      fprintf(out, ", \"operation\": ");
      json_string(out, t->op);
      fprintf(
          out,
          ", \"iterations\": %ld, \"ns_per_op\": %.6g, \"ticks_per_op\": %.6g, "
          "\"ratio\": ",
          m->iterations, m->ns_per_op, m->ticks_per_op);
      have_ref = rm != NULL && rm->ns_per_op > 0;
      json_number_or_null(out, have_ref,
                          have_ref ? m->ns_per_op / rm->ns_per_op : 0);
      fprintf(out, ", \"runs_ns_per_op\": [");
      for (r = 0; r < c->nruns; r++)
        fprintf(out, "%s%.6g", r ? ", " : "", c->runs[r].ns_per_op);
      fprintf(out, "]}");
      continue;
    }
    fprintf(out, ", \"seconds\": %.6g, \"runs_ops_per_s\": [", m->seconds);
    for (r = 0; r < c->nruns; r++)
      fprintf(out, "%s%.6g", r ? ", " : "", bench_run_rate(&c->runs[r]));
    fprintf(out, "], \"classes\": [");
    for (cls = 0; cls < 2; cls++) {
      const struct bench_class_run *k = &m->cls[cls];
      double rate = (double)k->ops / m->seconds;
      if (t->threads[cls] == 0)
        continue;
      have_ref = rm != NULL && rm->cls[cls].ops > 0;
      fprintf(out,
              "%s\n      {\"class\": \"%s\", \"threads\": %d, \"ops\": %llu, "
              "\"ops_per_s\": %.6g, \"ratio\": ",
              first ? "" : ",", bench_class_name(t->kind, cls), k->threads,
              (unsigned long long)k->ops, rate);
      first = 0;
      json_number_or_null(
          out, have_ref,
          have_ref ? rate / ((double)rm->cls[cls].ops / rm->seconds) : 0);
      fprintf(
          out,
          ", \"thread_min_ops_per_s\": %.6g, \"thread_max_ops_per_s\": %.6g, "
          "\"starved\": %s, \"starved_reps\": %d, \"latency_ns\": ",
          (double)k->min / m->seconds, (double)k->max / m->seconds,
          k->starved ? "true" : "false", bench_cell_starved_runs(c, cls));
      if (k->samples > 0)
        fprintf(
            out,
            "{\"samples\": %zu, \"p50\": %.6g, \"p99\": %.6g, \"max\": %.6g}}",
            k->samples, ticks_to_ns(ctx, k->p50), ticks_to_ns(ctx, k->p99),
            ticks_to_ns(ctx, k->pmax));
      else
        fprintf(out, "null}");
    }
    fprintf(out, "]}");
  }
  fprintf(out, "\n  ]\n}\n");
}

/* --- gnuplot: throughput of every timed test and implementation (log
 * scale), and under it the fairness, the worst class's per-thread
 * min/max.  */
/* Whether cells[i] is the first timed cell of its implementation: the
 * plot's columns are the implementations in the order they first appear
 * in a timed test (most also ran untimed tests before that).  */
static int first_timed(const struct bench_cell *cells, size_t i)
{
  size_t j;

  if (!cells[i].test->timed)
    return 0;
  for (j = 0; j < i; j++)
    if (cells[j].impl == cells[i].impl && cells[j].test->timed)
      return 0;
  return 1;
}

static int write_matrix(const char *path, const struct bench_cell *cells,
                        size_t ncells, int fairness)
{
  FILE *f = fopen(path, "w");
  size_t i;

  if (f == NULL)
    return -1;
  /* Header: the implementations, in the order they first appear.  */
  fprintf(f, "test");
  for (i = 0; i < ncells; i++)
    if (first_timed(cells, i))
      fprintf(f, "\t%s", cells[i].impl->name);
  fprintf(f, "\n");
  for (i = 0; i < ncells; i++) {
    size_t k, m;
    if (!cells[i].test->timed || (i > 0 && cells[i - 1].test == cells[i].test))
      continue;
    fprintf(f, "%s", cells[i].test->name);
    /* One column per implementation of the header, "-" where it did not
     * run this test.  */
    for (k = 0; k < ncells; k++) {
      if (!first_timed(cells, k))
        continue;
      for (m = i; m < ncells && cells[m].test == cells[i].test; m++)
        if (cells[m].impl == cells[k].impl)
          break;
      if (m == ncells || cells[m].test != cells[i].test) {
        fprintf(f, "\t-");
      } else {
        const struct bench_run *r = bench_cell_median(&cells[m]);
        if (!fairness) {
          fprintf(f, "\t%.6g", bench_run_rate(r));
        } else {
          double worst = 1;
          int cls;
          for (cls = 0; cls < 2; cls++)
            if (r->cls[cls].threads > 0 && r->cls[cls].max > 0
                && (double)r->cls[cls].min / (double)r->cls[cls].max < worst)
              worst = (double)r->cls[cls].min / (double)r->cls[cls].max;
          fprintf(f, "\t%.4f", worst);
        }
      }
    }
    fprintf(f, "\n");
  }
  return fclose(f);
}

/* s in a single-quoted gnuplot string.  */
static void gp_quoted(FILE *f, const char *s)
{
  fputc('\'', f);
  for (; *s != '\0'; s++)
    if (*s == '\'')
      fputs("''", f);
    else
      fputc(*s, f);
  fputc('\'', f);
}

int bench_plot(const struct bench_plan *p, const struct fl_context *ctx,
               const struct bench_cell *cells, size_t ncells)
{
  char dir[] = "/tmp/fastlock-bench-XXXXXX", rates[64], fair[64], script[64];
  size_t len = strlen(p->plot), i, nimpl = 0;
  int png = len >= 4 && strcmp(p->plot + len - 4, ".png") == 0, rc = -1,
      status = 0;
  char title[512];
  FILE *f;
  pid_t pid;

  for (i = 0; i < ncells; i++)
    nimpl += first_timed(cells, i);
  if (nimpl == 0) {
    fprintf(stderr,
            "fastlock-bench: --plot: no timed test ran, nothing to draw\n");
    return -1;
  }
  if (mkdtemp(dir) == NULL) {
    fprintf(stderr, "fastlock-bench: --plot: %s: %s\n", dir, strerror(errno));
    return -1;
  }
  snprintf(rates, sizeof rates, "%s/rates", dir);
  snprintf(fair, sizeof fair, "%s/fairness", dir);
  snprintf(script, sizeof script, "%s/plot.gp", dir);
  if (write_matrix(rates, cells, ncells, 0) != 0
      || write_matrix(fair, cells, ncells, 1) != 0
      || (f = fopen(script, "w")) == NULL) {
    fprintf(stderr, "fastlock-bench: --plot: cannot write in %s: %s\n", dir,
            strerror(errno));
    goto out;
  }
  fprintf(f, "set terminal %s size 1400,1000 noenhanced font 'sans,10'\n",
          png ? "pngcairo" : "svg");
  fprintf(f, "set output ");
  gp_quoted(f, p->plot);
  snprintf(title, sizeof title, "fastlock-bench: %s, %ld CPUs, %s",
           ctx->cpu_model, ctx->online_cpus, ctx->config);
  fprintf(
      f,
      "\n"
      "set datafile separator '\\t'\nset datafile missing '-'\n"
      "set style data histograms\nset style histogram clustered gap 1\n"
      "set style fill solid 0.8 border -1\nset key outside right top vertical\n"
      "set xtics rotate by -30 scale 0\nset grid ytics\n"
      "set multiplot layout 2,1 title ");
  gp_quoted(f, title);
  fprintf(f, "\n");
  fprintf(f,
          "set logscale y\nset ylabel 'operations per second (median run)'\n"
          "plot for [i=2:%zu] '%s' using i:xtic(1) title columnheader(i)\n"
          "unset logscale y\nset yrange [0:1.05]\n"
          "set ylabel 'fairness: slowest thread / fastest (worst class)'\n"
          "plot for [i=2:%zu] '%s' using i:xtic(1) title columnheader(i)\n"
          "unset multiplot\n",
          nimpl + 1, rates, nimpl + 1, fair);
  if (fclose(f) != 0) {
    fprintf(stderr, "fastlock-bench: --plot: cannot write %s\n", script);
    goto out;
  }
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    fprintf(stderr,
            "fastlock-bench: --plot: cannot run gnuplot: %s (Debian: apt-get "
            "install gnuplot-nox)\n",
            strerror(errno));
    _exit(127);
  }
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
      || WEXITSTATUS(status) != 0) {
    if (pid > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 127))
      fprintf(stderr, "fastlock-bench: --plot: gnuplot failed drawing %s\n",
              p->plot);
    goto out;
  }
  rc = 0;
out:
  unlink(rates);
  unlink(fair);
  unlink(script);
  rmdir(dir);
  return rc;
}
