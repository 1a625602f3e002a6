## stress/module.mk: the stress module's part of the build (included from Makefile.am).

# fastlock-bench: the mailing-list threads' tables (doc/design.md),
# fastlock and its peers side by side.
# bench-fl-1/2/3.c are fastlock's entries compiled once per shim variant
# (stress/bench-variant.h); Concurrency Kit's locks are header-only.
bin_PROGRAMS += fastlock-bench
fastlock_bench_SOURCES = stress/bench.c stress/bench.h stress/bench-plan.h \
	stress/bench-loops.h stress/bench-opts.c stress/bench-impls.c \
	stress/bench-run.c stress/bench-out.c stress/bench-peers.c \
	stress/bench-fl.h stress/bench-variant.h stress/bench-fl-1.c \
	stress/bench-fl-2.c stress/bench-fl-3.c stress/cli.c stress/cli.h \
	stress/context.c stress/context.h stress/bench-ipc.c \
	stress/bench-dropin.c stress/dropin-load.c stress/dropin-load.h \
	stress/bench-pthread.c
fastlock_bench_LDADD = libfastlock-core.la
# Where the drop-in's rows look for libfastlock-pthread once installed.
fastlock_bench_CPPFLAGS = $(AM_CPPFLAGS) -DFL_LIBDIR='"$(libdir)"'

# fastlock-stress: the torture test as a command for any primitive.
bin_PROGRAMS += fastlock-stress
fastlock_stress_SOURCES = stress/stress.c stress/stress.h stress/stress-opts.c \
	stress/stress-drivers.c stress/cli.c stress/cli.h stress/context.c \
	stress/context.h stress/tls-probe.c stress/tls-probe.h stress/stress-ipc.c
fastlock_stress_LDADD = libfastlock-core.la

man1_MANS = stress/fastlock-bench.1 stress/fastlock-stress.1
EXTRA_DIST += $(man1_MANS) stress/device-scaling.sh tests/test-tools.sh

# The tools' tests: their command lines and table of implementations
# (Check), and both tools run briefly, the negative control included.
fl_unit_tests += tests/test-bench-options
tests_test_bench_options_SOURCES = tests/test-bench-options.c \
	stress/bench-opts.c stress/bench-impls.c stress/bench-run.c \
	stress/bench-peers.c stress/bench-fl-1.c stress/bench-fl-2.c \
	stress/bench-fl-3.c stress/stress-opts.c stress/stress-drivers.c \
	stress/cli.c stress/bench-dropin.c stress/dropin-load.c
tests_test_bench_options_CPPFLAGS = $(AM_CPPFLAGS) -DFL_LIBDIR='"$(libdir)"'
TESTS += tests/test-tools.sh

# fastpath-count: one uncontended pair of every primitive per function,
# counted under callgrind by 'make count-instructions'.
noinst_PROGRAMS += fastpath-count
fastpath_count_SOURCES = stress/fastpath-count.c
fastpath_count_LDADD = libfastlock-core.la
