/* stress/context.h: the machine a number was measured on (a figure
 * without its CPU and clock means nothing: Boessenkool, linuxppc-dev,
 * October 2019, "Re: [RFC PATCH] powerpc/32: Switch VDSO to C
 * implementation.").  */
#ifndef FASTLOCK_STRESS_CONTEXT_H
#define FASTLOCK_STRESS_CONTEXT_H

#include <stdio.h>

struct fl_context {
  char cpu_model[128];
  long online_cpus;
  double ticks_per_ns;     /* fl_cycles() rate, measured */
  char kernel[3 * 65 + 3]; /* sysname release machine */
  char libc[64];
  const char *compiler;
  const char *fastlock;   /* version */
  const char *config;     /* configure choices of the library */
  const char *ticks_name; /* what fl_cycles counts */
};

/* Fill c in (measuring the tick rate takes about 100 ms).  */
void fl_context_probe(struct fl_context *c);

/* On a uniprocessor build (--enable-uniprocessor) the shim is correct
 * only while one thread runs at a time: keep this process and the threads
 * it starts afterwards on the CPU it runs on.  Returns that CPU, or -1 on
 * any other build (or if the kernel refused).  */
int fl_context_pin_uniprocessor(void);

/* Print c as "key: value" lines, each after prefix.  */
void fl_context_print(FILE *out, const struct fl_context *c,
                      const char *prefix);

#endif /* FASTLOCK_STRESS_CONTEXT_H */
