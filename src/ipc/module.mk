## src/ipc/module.mk: the IPC module's part of the build (included from Makefile.am).
libfastlock_core_la_SOURCES += src/ipc/ipc-internal.h src/ipc/region.c \
	src/ipc/lock.c src/ipc/liveness.c src/ipc/objects.c src/ipc/sem.c \
	src/ipc/mutex.c src/ipc/event.c src/ipc/wait.c src/ipc/supervise.c
fastlockinclude_HEADERS += include/fastlock/ipc.h
fl_unit_tests += tests/test-ipc
tests_test_ipc_SOURCES = tests/test-ipc.c
fl_unit_tests += tests/test-ipc-death
tests_test_ipc_death_SOURCES = tests/test-ipc-death.c
