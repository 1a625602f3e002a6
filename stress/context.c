/* stress/context.c: probing and printing the machine's context.  */
#include "config.h"

#include "context.h"

#include "sys/clock.h"
#include "sys/cpu.h"

#include <fastlock/fastlock.h>

#include <gnu/libc-version.h>
#include <sched.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The CPU's name as /proc/cpuinfo gives it: "model name" on x86 and
 * aarch64 (newer kernels), "cpu" on PowerPC and MIPS ("cpu model").  */
static void probe_cpu_model(char *buf, size_t size)
{
  static const char *const keys[] = { "model name", "cpu model", "cpu" };
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[256];
  size_t k;

  snprintf(buf, size, "unknown");
  if (f == NULL)
    return;
  for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    size_t len = strlen(keys[k]);
    rewind(f);
    while (fgets(line, sizeof line, f) != NULL) {
      char *colon = strchr(line, ':');
      if (strncmp(line, keys[k], len) != 0 || colon == NULL
          || (line[len] != ' ' && line[len] != '\t' && line[len] != ':'))
        continue;
      colon += strspn(colon + 1, " \t") + 1;
      colon[strcspn(colon, "\n")] = '\0';
      snprintf(buf, size, "%s", colon);
      fclose(f);
      return;
    }
  }
  fclose(f);
}

static double measure_ticks_per_ns(void)
{
  int64_t t0 = fl_clock_ns(CLOCK_MONOTONIC), t1;
  uint64_t c0 = fl_cycles(), c1;
  struct timespec pause = { 0, 100 * 1000 * 1000 };

  nanosleep(&pause, NULL);
  c1 = fl_cycles();
  t1 = fl_clock_ns(CLOCK_MONOTONIC);
  return t1 > t0 ? (double)(c1 - c0) / (double)(t1 - t0) : 0.0;
}

void fl_context_probe(struct fl_context *c)
{
  struct utsname u;

  memset(c, 0, sizeof *c);
  probe_cpu_model(c->cpu_model, sizeof c->cpu_model);
  c->online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  c->ticks_per_ns = measure_ticks_per_ns();
  c->ticks_name = FL_CYCLES_NAME;
  if (uname(&u) == 0)
    snprintf(c->kernel, sizeof c->kernel, "%s %s %s", u.sysname, u.release,
             u.machine);
  snprintf(c->libc, sizeof c->libc, "glibc %s", gnu_get_libc_version());
#if defined(__clang__)
  c->compiler = "clang " __clang_version__;
#else
  c->compiler = "gcc " __VERSION__;
#endif
  c->fastlock = fl_version();
  c->config = fl_build_config();
}

int fl_context_pin_uniprocessor(void)
{
#if FL_UNIPROCESSOR
  cpu_set_t one;
  int cpu = sched_getcpu();

  if (cpu < 0)
    cpu = 0;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
#else
  return -1;
#endif
}

void fl_context_print(FILE *out, const struct fl_context *c, const char *prefix)
{
  fprintf(out, "%scpu:        %s\n", prefix, c->cpu_model);
  fprintf(out, "%sonline:     %ld CPUs\n", prefix, c->online_cpus);
  fprintf(out, "%scounter:    %s at %.3f GHz (measured)\n", prefix,
          c->ticks_name, c->ticks_per_ns);
  fprintf(out, "%skernel:     %s\n", prefix, c->kernel);
  fprintf(out, "%slibc:       %s\n", prefix, c->libc);
  fprintf(out, "%scompiler:   %s\n", prefix, c->compiler);
  fprintf(out, "%sfastlock:   %s (%s)\n", prefix, c->fastlock, c->config);
}
