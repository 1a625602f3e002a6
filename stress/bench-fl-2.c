/* stress/bench-fl-2.c: fastlock's benchmark entries in shim slot 2
 * (bench-variant.h says which variant that is on each architecture).  */
#define FL_BENCH_SLOT 2
#define FL_BENCH_TABLE bench_fl_impls_2
#include "bench-fl.h"
