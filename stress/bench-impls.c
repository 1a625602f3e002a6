/* stress/bench-impls.c: every implementation fastlock-bench knows, from
 * the peers' table and the fastlock variant tables, in that order.  */
#include "config.h"

#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int64_t bench_loop_sink;

static const struct bench_impl *const tables[] = {
  bench_fl_impls_1, bench_fl_impls_2,   bench_fl_impls_3,
  bench_peer_impls, bench_dropin_impls,
};

static const struct bench_impl **all;
static size_t nall;

static void gather(void)
{
  size_t t, i, n = 0;

  if (all != NULL)
    return;
  for (t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (i = 0; tables[t][i].name != NULL; i++)
      n++;
  all = malloc(n * sizeof *all);
  if (all == NULL) {
    perror("fastlock-bench");
    exit(1);
  }
  for (t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (i = 0; tables[t][i].name != NULL; i++)
      all[nall++] = &tables[t][i];
}

size_t bench_impl_count(void)
{
  gather();
  return nall;
}

const struct bench_impl *bench_impl_at(size_t i)
{
  gather();
  return i < nall ? all[i] : NULL;
}

const struct bench_impl *bench_impl_find(const char *name)
{
  size_t i;

  gather();
  for (i = 0; i < nall; i++)
    if (strcmp(all[i]->name, name) == 0)
      return all[i];
  return NULL;
}

const char *bench_impl_unavailable(const struct bench_impl *im)
{
  return im->unavailable != NULL ? im->unavailable() : NULL;
}

const char *bench_kind_name(enum bench_kind k)
{
  static const char *const names[BENCH_NKINDS] = { "rwsem", "spin", "counter" };
  return names[k];
}

const char *bench_class_name(enum bench_kind k, int cls)
{
  static const char *const names[BENCH_NKINDS][2] = {
    { "read", "write" },
    { "lock", NULL },
    { "add", NULL },
  };
  return names[k][cls];
}

void bench_op_failed(const char *what, int err)
{
  fprintf(stderr, "fastlock-bench: %s failed: %s\n", what, strerror(err));
  exit(1);
}
