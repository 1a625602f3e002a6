## src/pthread/module.mk: libfastlock-pthread, the libpthread drop-in (included from Makefile.am).

# The drop-in carries its own copy of fastlock (the convenience library)
# and exports nothing but the pthread_* and sem_* functions it defines,
# unversioned: an unversioned definition interposes every version a
# program's reference names, GLIBC_2.2.5 (libpthread.so.0) and GLIBC_2.34
# (libc.so.6) alike.
lib_LTLIBRARIES += libfastlock-pthread.la
libfastlock_pthread_la_SOURCES = src/pthread/internal.h src/pthread/self.c \
	src/pthread/delegate.c src/pthread/annotate.c \
	src/pthread/mutex.h src/pthread/mutex.c src/pthread/robust.c \
	src/pthread/cond.c src/pthread/rwlock.h src/pthread/rwlock.c \
	src/pthread/attrs.c src/pthread/spin.c src/pthread/sem.h \
	src/pthread/sem.c src/pthread/sem-named.c src/pthread/tsan.c
libfastlock_pthread_la_LIBADD = libfastlock-core.la
libfastlock_pthread_la_LDFLAGS = -version-info 0:0:0 -no-undefined \
	-export-symbols-regex '^(pthread_|sem_)'
pkgconfig_DATA += fastlock-pthread.pc
EXTRA_DIST += fastlock-pthread.pc.in

# The drop-in's unit tests link it (before libc, as a user would): each
# checks that the functions it calls are bound to the drop-in.  They are
# not among fl_unit_tests, which check-helgrind, check-drd and check-tsan
# run under the tools: they misuse locks on purpose (EPERM, EDEADLK), and
# a TSan program runs the drop-in differently (src/pthread/tsan.c:
# tests/test-pthread-tsan.sh).  The drop-in
# under helgrind and drd is tests/test-pthread-valgrind.sh.
# -no-install: real executables that find the drop-in through their
# run path, so that a runner (the i686 loader of check-cross's i686-dropin
# build) can start them, where a libtool wrapper script could not be.
fl_pthread_tests =
fl_pthread_test_ldadd = libfastlock-pthread.la tests/libfl-check.la $(CHECK_LIBS)
fl_pthread_test_ldflags = -no-install
fl_pthread_test_common = tests/pthread-check.c tests/pthread-check.h
fl_pthread_tests += tests/test-pthread-mutex
tests_test_pthread_mutex_SOURCES = tests/test-pthread-mutex.c $(fl_pthread_test_common)
tests_test_pthread_mutex_LDADD = $(fl_pthread_test_ldadd)
tests_test_pthread_mutex_LDFLAGS = $(fl_pthread_test_ldflags)
fl_pthread_tests += tests/test-pthread-cond
tests_test_pthread_cond_SOURCES = tests/test-pthread-cond.c $(fl_pthread_test_common)
tests_test_pthread_cond_LDADD = $(fl_pthread_test_ldadd)
tests_test_pthread_cond_LDFLAGS = $(fl_pthread_test_ldflags)
fl_pthread_tests += tests/test-pthread-rwlock
tests_test_pthread_rwlock_SOURCES = tests/test-pthread-rwlock.c $(fl_pthread_test_common)
tests_test_pthread_rwlock_LDADD = $(fl_pthread_test_ldadd)
tests_test_pthread_rwlock_LDFLAGS = $(fl_pthread_test_ldflags)
fl_pthread_tests += tests/test-pthread-sem
tests_test_pthread_sem_SOURCES = tests/test-pthread-sem.c $(fl_pthread_test_common)
tests_test_pthread_sem_LDADD = $(fl_pthread_test_ldadd)
tests_test_pthread_sem_LDFLAGS = $(fl_pthread_test_ldflags)
fl_pthread_tests += tests/test-pthread-spin
tests_test_pthread_spin_SOURCES = tests/test-pthread-spin.c $(fl_pthread_test_common)
tests_test_pthread_spin_LDADD = $(fl_pthread_test_ldadd)
tests_test_pthread_spin_LDFLAGS = $(fl_pthread_test_ldflags)
fl_pthread_tests += tests/test-pthread-nomalloc
tests_test_pthread_nomalloc_SOURCES = tests/test-pthread-nomalloc.c $(fl_pthread_test_common)
tests_test_pthread_nomalloc_LDADD = $(fl_pthread_test_ldadd)
tests_test_pthread_nomalloc_LDFLAGS = $(fl_pthread_test_ldflags)

# fastlock-run: LD_PRELOAD the installed drop-in into a command.
bin_SCRIPTS = fastlock-run
fastlock-run: $(srcdir)/tools/fastlock-run.in Makefile
	$(AM_V_GEN)sed -e 's|@libdir[@]|$(libdir)|g' \
	  -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	  $(srcdir)/tools/fastlock-run.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
CLEANFILES += fastlock-run
man1_MANS += doc/fastlock-run.1
man3_MANS += doc/fastlock-pthread.3
EXTRA_DIST += tools/fastlock-run.in

# make check-preload: real Debian programs under fastlock-run, compared
# with a run without it, and fastlock-stress's torture of the drop-in's
# rwlock and spinlock (tools/check-preload); then the whole of make
# check once more with the drop-in preloaded into every test program
# (the test logs of that run go to test-suite-preload.log).
FL_PRELOAD = LD_PRELOAD=$(abs_top_builddir)/.libs/libfastlock-pthread.so.0
check-preload: all
	@rc=0; \
	bash $(srcdir)/tools/check-preload $(abs_top_builddir) || rc=1; \
	$(MAKE) $(AM_MAKEFLAGS) check TEST_SUITE_LOG=test-suite-preload.log \
	  LOG_COMPILER="env $(FL_PRELOAD) $(FL_TEST_RUNNER)" \
	  SH_LOG_COMPILER="env $(FL_PRELOAD) $(SHELL)" || rc=1; \
	exit $$rc
EXTRA_DIST += tools/check-preload
.PHONY: check-preload

# helgrind and drd on a program running on the drop-in: zero reports for
# correct use of every object, and a seeded race still reported.
check_PROGRAMS += tests/pthread-race
tests_pthread_race_SOURCES = tests/pthread-race.c
tests_pthread_race_CFLAGS = $(AM_CFLAGS) -O0 -g
tests_pthread_race_LDADD = libfastlock-pthread.la
# A real executable (not a libtool wrapper script) for Valgrind to run.
tests_pthread_race_LDFLAGS = -no-install
# Valgrind runs natively only (no Valgrind for a foreign host under
# qemu-user): cross builds leave the test out rather than skip it.
if !FL_CROSS
TESTS += tests/test-pthread-valgrind.sh
endif
EXTRA_DIST += tests/test-pthread-valgrind.sh
# The lock-order checker on a plain pthread program running on the
# drop-in (FASTLOCK_LOCKDEP=1, LD_PRELOAD): linked with libc's pthreads
# only, as a user's program is.
check_PROGRAMS += tests/pthread-lockdep
tests_pthread_lockdep_SOURCES = tests/pthread-lockdep.c
tests_pthread_lockdep_LDFLAGS = -no-install
# Natively only, as the drop-in's unit tests below (qemu-user has no
# robust list): cross builds leave it out rather than skip it.
if !FL_CROSS
TESTS += tests/test-pthread-lockdep.sh
endif
EXTRA_DIST += tests/test-pthread-lockdep.sh
# A ThreadSanitizer program on the drop-in (src/pthread/tsan.c): no report,
# the seeded race reported, no hang; natively only, as the others.
if !FL_CROSS
TESTS += tests/test-pthread-tsan.sh
endif
EXTRA_DIST += tests/test-pthread-tsan.sh tests/pthread-tsan.c
fastlockdatadir = $(pkgdatadir)
dist_fastlockdata_DATA = src/pthread/fastlock-pthread.supp
check_PROGRAMS += $(fl_pthread_tests)
# Natively only: the cross builds are static (--disable-shared), and the
# drop-in's tests are about a shared library that comes before libc.  The
# drop-in is still built for every arch, and check-cross's dropin builds
# (one shared build per arch) run these tests on each arch's drop-in:
# under QEMU, whose user mode does not emulate the kernel's robust list
# (set_robust_list is ENOSYS there), test-pthread-mutex leaves out its
# robust cases, and where glibc's own pthread_cancel cannot unwind (qemu-ppc)
# test-pthread-cond and test-pthread-sem leave out their cancellation
# cases; each says so (tests/pthread-check.c).
if !FL_CROSS
TESTS += $(fl_pthread_tests)
endif
# The producer/consumer workloads on the drop-in, for correctness, in
# every build: under QEMU too, and on the static drop-in of a cross build
# (it needs no robust list, and accepts the drop-in linked in).
check_PROGRAMS += tests/test-pthread-prodcons
tests_test_pthread_prodcons_SOURCES = tests/test-pthread-prodcons.c
tests_test_pthread_prodcons_LDADD = $(fl_pthread_test_ldadd)
TESTS += tests/test-pthread-prodcons

# 'make bench-pthread': fastlock-bench pthread (stress/bench-pthread.c:
# the drop-in's mutex, condition variable and semaphore rows against
# glibc's) on the build tree's drop-in, which it finds in .libs/.
bench-pthread: fastlock-bench$(EXEEXT) libfastlock-pthread.la
	./fastlock-bench$(EXEEXT) pthread
.PHONY: bench-pthread

# make bench-programs: real programs timed with glibc's locks and under
# the drop-in, interleaved (tools/bench-programs; a measurement).
EXTRA_DIST += tools/bench-programs
bench-programs: all
	bash $(srcdir)/tools/bench-programs $(abs_top_builddir)
.PHONY: bench-programs
