/* stress/bench-fl-1.c: fastlock's benchmark entries in shim slot 1
 * (bench-variant.h says which variant that is on each architecture).  */
#define FL_BENCH_SLOT 1
#define FL_BENCH_TABLE bench_fl_impls_1
#include "bench-fl.h"
