/* stress/bench-fl-3.c: fastlock's benchmark entries in shim slot 3
 * (bench-variant.h says which variant that is on each architecture).  */
#define FL_BENCH_SLOT 3
#define FL_BENCH_TABLE bench_fl_impls_3
#include "bench-fl.h"
