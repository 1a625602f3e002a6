/* stress/stress-opts.c: fastlock-stress's command line.  Nothing here
 * prints or exits, so that tests/test-bench-options.c can check every
 * error path.  */
#include "config.h"

#include "cli.h"
#include "stress.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STRESS_DEFAULT_DURATION 5.0
#define STRESS_MAX_DURATION 86400.0

/* Bad input: the one-line error, and STRESS_PARSE_ERROR.  */
#define fail(err, size, ...)                                                   \
 cli_fail(err, size, STRESS_PARSE_ERROR, __VA_ARGS__)

/* The index of s in names[n], or -1.  */
static int lookup(const char *s, const char *const *names, int n)
{
  int i;

  for (i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  return -1;
}

void stress_usage(FILE *out)
{
  fprintf(
      out,
      "usage: fastlock-stress rwsem [--readers N] [--writers M] [--mode MODE] [--read-bias]\n"
      "       fastlock-stress spin [--threads N] [--type tas|ticket|queued]\n"
      "       fastlock-stress counter [--threads N] [--strategy STRATEGY]\n"
      "       fastlock-stress ipc [--processes N] [--kill-ms MS] ... (fastlock-stress(1))\n"
      "  common options: [--impl IMPL] [--duration SEC] [--interval SEC]\n"
      "                  [--pshared [--processes P]] [--seed N] [--fail-on-starvation]\n"
      "Tortures one primitive, in the manner of the kernel's locktorture: threads\n"
      "take it with random hold times and random try, timed and downgrade\n"
      "operations, an occasional long hold forcing pile-ups, and check in every\n"
      "critical section that no writer overlaps anyone (and, for fastlock's rwsem,\n"
      "that the lock's state breaks none of its invariants).  Progress every\n"
      "--interval seconds; the final report ends in \"End of test: SUCCESS\" or\n"
      "\"FAILURE\".\n"
      "\n"
      "  rwsem:   --readers N (default 4), --writers M (default 2),\n"
      "           --mode fair|prefer-reader|prefer-writer (default: fair; pthread:\n"
      "           prefer-reader), --read-bias (FL_RWSEM_READ_BIAS)\n"
      "  spin:    --threads N (default 4), --type tas|ticket|queued (default tas)\n"
      "  counter: --threads N (default 4), --strategy auto|shared|percpu-atomic|\n"
      "           perthread-sigsafe|percpu-rseq (default auto); threads exit and\n"
      "           are replaced, signal handlers add too, the exact sum is checked\n"
      "  --impl IMPL      rwsem and spin: fastlock, pthread; counter: fastlock,\n"
      "                   atomic (default: fastlock)\n"
      "  --duration SEC   length of the run (default %g)\n"
      "  --interval SEC   seconds between progress lines, 0 for none (default 1)\n"
      "  --pshared        the lock lives in shared memory (FL_PSHARED)\n"
      "  --processes P    P processes, each mapping the memory at its own address\n"
      "                   and running all the threads asked for (default 1)\n"
      "  --seed N         random seed (default: from the clock; printed)\n"
      "  --kill-ms MS     rwsem, with --processes: SIGKILL a random process every\n"
      "                   MS ms and start another (the lock made FL_ROBUST); every\n"
      "                   200 ms all pause and the dead's locks are accounted for\n"
      "  --fail-on-starvation  starvation (?\?\?) is a failure, not only a warning\n"
      "\n"
      "Exit status: 0 SUCCESS, 1 FAILURE, 2 bad input (nothing was run).\n"
      "See fastlock-stress(1).\n",
      STRESS_DEFAULT_DURATION);
}

enum stress_parse_result stress_parse(int argc, char **argv,
                                      struct stress_cfg *cfg, char *err,
                                      size_t errsize)
{
  enum {
    O_READERS = 256,
    O_WRITERS,
    O_THREADS,
    O_MODE,
    O_READ_BIAS,
    O_TYPE,
    O_STRATEGY,
    O_IMPL,
    O_DURATION,
    O_INTERVAL,
    O_PSHARED,
    O_PROCESSES,
    O_SEED,
    O_KILL,
    O_STARVATION,
    O_HELP,
    O_VERSION
  };
  static const struct option longopts[] = {
    { "readers", required_argument, NULL, O_READERS },
    { "writers", required_argument, NULL, O_WRITERS },
    { "threads", required_argument, NULL, O_THREADS },
    { "mode", required_argument, NULL, O_MODE },
    { "read-bias", no_argument, NULL, O_READ_BIAS },
    { "type", required_argument, NULL, O_TYPE },
    { "strategy", required_argument, NULL, O_STRATEGY },
    { "impl", required_argument, NULL, O_IMPL },
    { "duration", required_argument, NULL, O_DURATION },
    { "interval", required_argument, NULL, O_INTERVAL },
    { "pshared", no_argument, NULL, O_PSHARED },
    { "processes", required_argument, NULL, O_PROCESSES },
    { "seed", required_argument, NULL, O_SEED },
    { "kill-ms", required_argument, NULL, O_KILL },
    { "fail-on-starvation", no_argument, NULL, O_STARVATION },
    { "help", no_argument, NULL, O_HELP },
    { "version", no_argument, NULL, O_VERSION },
    { NULL, 0, NULL, 0 },
  };
  static const char *const prims[] = { "rwsem", "spin", "counter" };
  static const char *const modes[] = { "fair", "prefer-reader",
                                       "prefer-writer" };
  static const char *const types[] = { "tas", "ticket", "queued" };
  static const char valid_options[] =
      "--readers --writers --threads --mode --read-bias --type --strategy --impl "
      "--duration --interval --pshared --processes --seed --kill-ms "
      "--fail-on-starvation --help "
      "--version";
  /* The last rwsem-only option given, and which others were given.  */
  const char *rwsem_opt = NULL;
  int threads_given = 0, type_given = 0, strategy_given = 0;
  int c, prim;
  long v;
  const char *why = NULL;

  memset(cfg, 0, sizeof *cfg);
  cfg->readers = 4;
  cfg->writers = 2;
  cfg->threads = 4;
  cfg->mode = -1;
  cfg->duration = STRESS_DEFAULT_DURATION;
  cfg->interval = 1.0;
  cfg->processes = 1;
  cfg->seed = (uint64_t)time(NULL);
  optind = 0; /* GNU: start afresh (the tests parse often) */
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case O_READERS:
      case O_WRITERS:
        if (cli_long(optarg, 0, STRESS_MAX_THREADS, &v) != 0)
          return fail(err, errsize, "--%s: '%s' is not valid; valid: 0 to %d",
                      c == O_READERS ? "readers" : "writers", optarg,
                      STRESS_MAX_THREADS);
        *(c == O_READERS ? &cfg->readers : &cfg->writers) = (int)v;
        rwsem_opt = c == O_READERS ? "--readers" : "--writers";
        break;
      case O_THREADS:
        if (cli_long(optarg, 1, STRESS_MAX_THREADS, &v) != 0)
          return fail(err, errsize,
                      "--threads: '%s' is not valid; valid: 1 to %d", optarg,
                      STRESS_MAX_THREADS);
        cfg->threads = (int)v;
        threads_given = 1;
        break;
      case O_MODE:
        if ((cfg->mode = lookup(optarg, modes, 3)) < 0)
          return fail(err, errsize,
                      "--mode: unknown mode '%s'; valid: fair prefer-reader "
                      "prefer-writer",
                      optarg);
        rwsem_opt = "--mode";
        break;
      case O_READ_BIAS:
        cfg->read_bias = 1;
        rwsem_opt = "--read-bias";
        break;
      case O_TYPE:
        if ((cfg->type = lookup(optarg, types, 3)) < 0)
          return fail(err, errsize,
                      "--type: unknown spinlock type '%s'; valid: tas ticket "
                      "queued",
                      optarg);
        type_given = 1;
        break;
      case O_STRATEGY:
        if ((cfg->strategy =
                 lookup(optarg, stress_strategy_names, STRESS_NSTRATEGIES))
            < 0)
          return fail(err, errsize,
                      "--strategy: unknown strategy '%s'; valid: auto shared "
                      "percpu-atomic perthread-sigsafe percpu-rseq",
                      optarg);
        strategy_given = 1;
        break;
      case O_IMPL:
        cfg->impl = optarg;
        break;
      case O_DURATION:
        if (cli_seconds(optarg, 0, STRESS_MAX_DURATION, &cfg->duration) != 0)
          return fail(err, errsize,
                      "--duration: '%s' is not valid; valid: seconds, more "
                      "than 0 and at most %g",
                      optarg, STRESS_MAX_DURATION);
        break;
      case O_INTERVAL:
        if (strcmp(optarg, "0") == 0)
          cfg->interval = 0;
        else if (cli_seconds(optarg, 0, STRESS_MAX_DURATION, &cfg->interval)
                 != 0)
          return fail(err, errsize,
                      "--interval: '%s' is not valid; valid: seconds, 0 for "
                      "no progress lines",
                      optarg);
        break;
      case O_PSHARED:
        cfg->pshared = 1;
        break;
      case O_PROCESSES:
        if (cli_long(optarg, 1, STRESS_MAX_PROCESSES, &v) != 0)
          return fail(err, errsize,
                      "--processes: '%s' is not valid; valid: 1 to %d", optarg,
                      STRESS_MAX_PROCESSES);
        cfg->processes = (int)v;
        break;
      case O_SEED:
        if (cli_long(optarg, 0, 2147483647L, &v) != 0)
          return fail(err, errsize,
                      "--seed: '%s' is not valid; valid: 0 to 2147483647",
                      optarg);
        cfg->seed = (uint64_t)v;
        break;
      case O_KILL:
        if (cli_long(optarg, 1, 60000, &v) != 0)
          return fail(err, errsize,
                      "--kill-ms: '%s' is not valid; valid: 1 to 60000",
                      optarg);
        cfg->kill_ms = (int)v;
        rwsem_opt = "--kill-ms";
        break;
      case O_STARVATION:
        cfg->fail_on_starvation = 1;
        break;
      case O_HELP:
        return STRESS_PARSE_HELP;
      case O_VERSION:
        return STRESS_PARSE_VERSION;
      default:
        if (optopt != 0 && optopt < O_READERS)
          return fail(err, errsize, "unknown option '-%c'; valid: %s", optopt,
                      valid_options);
        if (optopt >= O_READERS)
          return fail(err, errsize, "option '%s' needs a value; valid: %s",
                      argv[optind - 1], valid_options);
        return fail(err, errsize, "unknown option '%s'; valid: %s",
                    argv[optind - 1], valid_options);
    }
  }

  if (optind == argc)
    return fail(err, errsize, "which primitive? valid: rwsem spin counter");
  if (optind + 1 < argc)
    return fail(err, errsize, "unexpected argument '%s' after the primitive",
                argv[optind + 1]);
  if ((prim = lookup(argv[optind], prims, 3)) < 0)
    return fail(err, errsize,
                "unknown primitive '%s'; valid: rwsem spin counter",
                argv[optind]);
  cfg->prim = (enum stress_prim)prim;
  cfg->prim_name = prims[prim];

  if (rwsem_opt != NULL && cfg->prim != STRESS_RWSEM)
    return fail(err, errsize, "%s applies to rwsem only", rwsem_opt);
  if (threads_given && cfg->prim == STRESS_RWSEM)
    return fail(err, errsize,
                "--threads applies to spin and counter; rwsem takes "
                "--readers and --writers");
  if (type_given && cfg->prim != STRESS_SPIN)
    return fail(err, errsize, "--type applies to spin only");
  if (strategy_given && cfg->prim != STRESS_COUNTER)
    return fail(err, errsize, "--strategy applies to counter only");
  if (cfg->prim == STRESS_RWSEM && cfg->readers + cfg->writers < 1)
    return fail(err, errsize,
                "--readers and --writers: at least one thread in all");
  if ((cfg->prim == STRESS_RWSEM ? cfg->readers + cfg->writers : cfg->threads)
      > STRESS_MAX_THREADS)
    return fail(err, errsize, "at most %d threads in all", STRESS_MAX_THREADS);
  if (cfg->processes > 1 && !cfg->pshared)
    return fail(err, errsize, "--processes needs --pshared");
  if (cfg->pshared && cfg->prim == STRESS_COUNTER)
    return fail(err, errsize,
                "--pshared: counters are per process; valid for rwsem "
                "and spin");

  if (cfg->impl == NULL)
    cfg->impl = "fastlock";
  if (cfg->prim == STRESS_COUNTER) {
    cfg->counter = stress_find_counter(cfg->impl, &why);
    if (cfg->counter == NULL)
      goto bad_impl;
    if (strategy_given && strcmp(cfg->impl, "fastlock") != 0)
      return fail(err, errsize, "--strategy applies to --impl fastlock");
    return STRESS_PARSE_RUN;
  }
  cfg->lock = stress_find_lock(cfg->prim, cfg->impl, cfg->type);
  if (cfg->lock == NULL)
    goto bad_impl;
  if (strcmp(cfg->impl, "pthread") == 0) {
    if (type_given)
      return fail(err, errsize,
                  "--type applies to --impl fastlock; pthread has "
                  "pthread_spinlock_t only");
    if (cfg->read_bias)
      return fail(err, errsize, "--read-bias applies to --impl fastlock");
    if (cfg->mode == STRESS_FAIR)
      return fail(err, errsize,
                  "--impl pthread has no fair mode; valid: prefer-reader "
                  "(glibc's default) prefer-writer");
  }
  if (cfg->mode < 0)
    cfg->mode =
        strcmp(cfg->impl, "pthread") == 0 ? STRESS_PREFER_READER : STRESS_FAIR;
  if (cfg->pshared && !cfg->lock->pshared_ok)
    return fail(err, errsize, "--pshared: %s is process-private",
                cfg->lock->what);
  if (cfg->pshared && cfg->read_bias)
    return fail(err, errsize,
                "--read-bias is for process-private rwsems; drop "
                "--pshared or --read-bias");
  if (cfg->kill_ms > 0 && cfg->processes < 2)
    return fail(err, errsize,
                "--kill-ms kills processes: give --pshared --processes 2 "
                "or more");
  if (cfg->kill_ms > 0 && cfg->lock->reader_died == NULL)
    return fail(err, errsize,
                "--kill-ms: %s has no robust process-shared mode; valid: "
                "--impl fastlock",
                cfg->lock->what);
  return STRESS_PARSE_RUN;

bad_impl:
  if (why != NULL)
    return fail(err, errsize, "--impl %s: not available in this build: %s",
                cfg->impl, why);
  return fail(err, errsize,
              "--impl: unknown implementation '%s' of %s; valid: %s", cfg->impl,
              cfg->prim_name, stress_impl_names(cfg->prim));
}
