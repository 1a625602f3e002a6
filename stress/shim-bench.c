/* stress/shim-bench.c: fastlock-shim-bench, the atomic shim's own
 * microbenchmark: each operation of the build's shim (hand-written asm
 * on an asm build) against its __atomic builtin twin, uncontended, one
 * thread, in ns and counter ticks per operation (asm against the
 * compiler, with the machine stated first, as Boessenkool and Leroy
 * argued it on linuxppc-dev in October 2019).
 *
 * Method: every operation runs a timed loop of --iterations calls on a
 * private word, asm and builtin alternately, --reps times; the median of
 * the reps is reported.  The loops are generated per operation so the
 * operation is inlined as it would be in a lock's fastpath.  */
#include "config.h"

#include <fastlock/arch/atomic.h>

#include "context.h"
#include "sys/clock.h"
#include "sys/cpu.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* X(name, shim expression, builtin expression) on the int32_t w, with
 * int32_t sink to keep results alive.  */
#define SHIM_OPS(X)                                                            \
 X(empty_loop, sink += (int32_t)i, sink += (int32_t)i)                         \
 X(load_acquire, sink += fl_load_acquire(&w),                                  \
   sink += fl_generic_load_acquire(&w))                                        \
 X(store_release, fl_store_release(&w, (int32_t)i),                            \
   fl_generic_store_release(&w, (int32_t)i))                                   \
 X(fetch_add_relaxed, sink += fl_atomic_fetch_add_relaxed(&w, 1),              \
   sink += fl_generic_fetch_add_relaxed(&w, 1))                                \
 X(fetch_add_acquire, sink += fl_atomic_fetch_add_acquire(&w, 1),              \
   sink += fl_generic_fetch_add_acquire(&w, 1))                                \
 X(fetch_add_release, sink += fl_atomic_fetch_add_release(&w, 1),              \
   sink += fl_generic_fetch_add_release(&w, 1))                                \
 X(add_negative_release, sink += fl_atomic_add_negative_release(&w, -1),       \
   sink += fl_generic_add_negative_release(&w, -1))                            \
 X(cmpxchg_acquire, sink += fl_atomic_cmpxchg_acquire(&w, w, w + 1),           \
   sink += fl_generic_cmpxchg_acquire(&w, w, w + 1))                           \
 X(cmpxchg_acq_rel, sink += fl_atomic_cmpxchg_acq_rel(&w, w, w + 1),           \
   sink += fl_generic_cmpxchg_acq_rel(&w, w, w + 1))                           \
 X(xchg_acquire, sink += fl_atomic_xchg_acquire(&w, (int32_t)i),               \
   sink += fl_generic_xchg_acquire(&w, (int32_t)i))                            \
 X(xchg_release, sink += fl_atomic_xchg_release(&w, (int32_t)i),               \
   sink += fl_generic_xchg_release(&w, (int32_t)i))                            \
 X(smp_mb, fl_smp_mb(), fl_generic_smp_mb())                                   \
 X(smp_rmb, fl_smp_rmb(), fl_generic_smp_rmb())                                \
 X(smp_wmb, fl_smp_wmb(), fl_generic_smp_wmb())

static volatile int32_t bench_sink;

struct sample {
  double ns, ticks;
};

/* One timed loop of n operations expr, named loop_KIND_NAME.  */
#define DEFINE_LOOP(kind, name, expr)                                          \
 static struct sample loop_##kind##_##name(long n)                             \
 {                                                                             \
  int32_t w = 0, sink = 0;                                                     \
  int64_t t0 = fl_clock_ns(CLOCK_MONOTONIC);                                   \
  uint64_t c0 = fl_cycles();                                                   \
  struct sample s;                                                             \
  long i;                                                                      \
  for (i = 0; i < n; i++)                                                      \
   expr;                                                                       \
  s.ticks = (double)(fl_cycles() - c0) / (double)n;                            \
  s.ns = (double)(fl_clock_ns(CLOCK_MONOTONIC) - t0) / (double)n;              \
  bench_sink = sink + w;                                                       \
  return s;                                                                    \
 }
#define DEFINE_LOOPS(name, shim_expr, builtin_expr)                            \
 DEFINE_LOOP(shim, name, shim_expr)                                            \
 DEFINE_LOOP(builtin, name, builtin_expr)
SHIM_OPS(DEFINE_LOOPS)

struct op {
  const char *name;
  struct sample (*shim)(long), (*builtin)(long);
};

#define OP_ENTRY(name, shim_expr, builtin_expr)                                \
 { #name, loop_shim_##name, loop_builtin_##name },
static const struct op ops[] = { SHIM_OPS(OP_ENTRY) };
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *out)
{
  fprintf(
      out,
      "usage: fastlock-shim-bench [--iterations N] [--reps R] [--csv]\n"
      "  Times every atomic-shim operation of this build against its\n"
      "  __atomic builtin twin, one thread, uncontended; prints the\n"
      "  median over R interleaved repetitions (default N=10000000, R=5).\n");
}

static long parse_positive(const char *opt, const char *arg)
{
  char *end;
  long v;

  errno = 0;
  v = strtol(arg, &end, 10);
  if (errno != 0 || *end != '\0' || v <= 0) {
    fprintf(stderr,
            "fastlock-shim-bench: %s needs a positive integer, not '%s'\n", opt,
            arg);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "iterations", required_argument, NULL, 'n' },
    { "reps", required_argument, NULL, 'r' },
    { "csv", no_argument, NULL, 'c' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  long iterations = 10000000, reps = 5;
  int csv = 0, c, i;
  struct fl_context ctx;

  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'n':
        iterations = parse_positive("--iterations", optarg);
        break;
      case 'r':
        reps = parse_positive("--reps", optarg);
        break;
      case 'c':
        csv = 1;
        break;
      case 'h':
        usage(stdout);
        return 0;
      default:
        usage(stderr);
        return 2;
    }
  }
  if (optind != argc) {
    fprintf(stderr, "fastlock-shim-bench: unexpected argument '%s'\n",
            argv[optind]);
    usage(stderr);
    return 2;
  }
  if (reps > 1001) {
    fprintf(stderr, "fastlock-shim-bench: --reps is at most 1001\n");
    return 2;
  }

  fl_context_probe(&ctx);
  if (csv)
    printf("op,shim_ns,builtin_ns,ratio,shim_ticks,builtin_ticks\n");
  else {
    printf(
        "fastlock-shim-bench: atomic shim vs __atomic builtins, 1 thread, uncontended\n");
    fl_context_print(stdout, &ctx, "  ");
    printf("  shim:       %s\n", FL_ARCH_ATOMICS_NAME);
    printf(
        "  method:     %ld calls per timed loop, shim and builtin interleaved,"
        " median of %ld reps\n\n",
        iterations, reps);
    printf("%-22s %10s %10s %7s %11s %11s\n", "operation", "shim ns",
           "builtin ns", "ratio", "shim ticks", "bltin ticks");
  }

  for (i = 0; i < NOPS; i++) {
    double sns[1001], bns[1001], stk[1001], btk[1001];
    double ms, mb, mst, mbt;
    long r;

    for (r = 0; r < reps; r++) {
      struct sample s = ops[i].shim(iterations);
      struct sample b = ops[i].builtin(iterations);
      sns[r] = s.ns;
      stk[r] = s.ticks;
      bns[r] = b.ns;
      btk[r] = b.ticks;
    }
    ms = median(sns, (int)reps);
    mb = median(bns, (int)reps);
    mst = median(stk, (int)reps);
    mbt = median(btk, (int)reps);
    if (csv)
      printf("%s,%.3f,%.3f,%.3f,%.2f,%.2f\n", ops[i].name, ms, mb,
             mb > 0 ? ms / mb : 0.0, mst, mbt);
    else
      printf("%-22s %10.3f %10.3f %7.2f %11.2f %11.2f\n", ops[i].name, ms, mb,
             mb > 0 ? ms / mb : 0.0, mst, mbt);
  }
  if (!csv)
    printf("\nratio = shim ns / builtin ns (below 1: the shim is faster);"
           " empty_loop is the\nloop's own cost, included in every row.\n"
           "Timings under QEMU measure the emulator, not a CPU.\n");
  return 0;
}
