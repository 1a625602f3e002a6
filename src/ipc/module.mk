## src/ipc/module.mk: the IPC module's part of the build (included from Makefile.am).
libfastlock_core_la_SOURCES += src/ipc/ipc-internal.h src/ipc/region.c \
	src/ipc/lock.c src/ipc/liveness.c src/ipc/objects.c src/ipc/sem.c \
	src/ipc/mutex.c src/ipc/event.c src/ipc/wait.c src/ipc/supervise.c \
	src/ipc/fastpath.c
fastlockinclude_HEADERS += include/fastlock/ipc.h
fl_unit_tests += tests/test-ipc
tests_test_ipc_SOURCES = tests/test-ipc.c
fl_unit_tests += tests/test-ipc-death
tests_test_ipc_death_SOURCES = tests/test-ipc-death.c

# The torture, briefly in make check; for 30 s in check-ipc-torture
# (part of check-all).  The deadline slack natively: 250 ms, ten times the
# worst overrun seen (23 ms: a dead holder of the region lock is found
# within FL_IPC_PROBE_MS, 20 ms, plus scheduling) on two cores loaded
# besides with six busy loops, or three and a second torture; an
# emulator's (FL_TEST_RUNNER) slowness is no fault of the library: 2 s
# there.
TESTS += tests/test-ipc-stress.sh
EXTRA_DIST += tests/test-ipc-stress.sh
check-ipc-torture: fastlock-stress$(EXEEXT)
	slack=250; test -z '$(FL_TEST_RUNNER)' || slack=2000; \
	$(FL_TEST_RUNNER) ./fastlock-stress$(EXEEXT) ipc --duration 30 \
	  --slack-ms $$slack
.PHONY: check-ipc-torture

# The worked example (examples/): built by make and installed, the
# programs in $(pkglibexecdir), their sources and the demo script in
# $(docdir)/examples (sh ipc-demo.sh $(pkglibexecdir) runs it there); the
# demo runs in make check.
pkglibexec_PROGRAMS = examples/ipc-server examples/ipc-client
fastlockexamplesdir = $(docdir)/examples
dist_fastlockexamples_DATA = examples/ipc-server.c examples/ipc-client.c \
	examples/ipc-common.h examples/ipc-demo.sh
examples_ipc_server_SOURCES = examples/ipc-server.c examples/ipc-common.h
examples_ipc_server_LDADD = libfastlock.la
examples_ipc_client_SOURCES = examples/ipc-client.c examples/ipc-common.h
examples_ipc_client_LDADD = libfastlock.la
TESTS += examples/ipc-demo.sh

man3_MANS += doc/fl_ipc.3

# The same for 30 s with every second worker a 32-bit (i686) process.
EXTRA_DIST += tools/check-ipc-mixed
check-ipc-mixed: fastlock-stress$(EXEEXT)
	$(SHELL) $(srcdir)/tools/check-ipc-mixed $(abs_top_srcdir) $(abs_top_builddir)
.PHONY: check-ipc-mixed
