## src/lockdep/module.mk: the lock-order checker's part of the build (included from Makefile.am).
libfastlock_core_la_SOURCES += src/lockdep/lockdep.c src/lockdep/lockdep.h
fastlockinclude_HEADERS += include/fastlock/lockdep.h
man3_MANS += doc/fl_lockdep.3
EXTRA_DIST += doc/fl_lockdep.3

# A program as a user writes it, run under each race tool by
# tools/check-valgrind and tools/check-tsan: built against the public
# headers and linked with the shared library, as installed.
check_PROGRAMS += tests/tools-program
tests_tools_program_SOURCES = tests/tools-program.c
tests_tools_program_CFLAGS = $(AM_CFLAGS) -g
tests_tools_program_LDADD = libfastlock.la
tests_tools_program_LDFLAGS = -no-install

fl_unit_tests += tests/test-lockdep
tests_test_lockdep_SOURCES = tests/test-lockdep.c
