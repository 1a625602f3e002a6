## src/rwsem/module.mk: the rwsem module's part of the build (included from Makefile.am).
libfastlock_core_la_SOURCES += src/rwsem/rwsem.c src/rwsem/bias.c \
	src/rwsem/api.c src/rwsem/robust.c src/rwsem/rwsem-internal.h
fastlockinclude_HEADERS += include/fastlock/rwsem.h
fastlockbits_HEADERS += include/fastlock/bits/rwsem.h
man3_MANS += doc/fl_rwsem.3
fl_unit_tests += tests/test-rwsem
tests_test_rwsem_SOURCES = tests/test-rwsem.c
fl_unit_tests += tests/test-rwsem-torture
tests_test_rwsem_torture_SOURCES = tests/test-rwsem-torture.c
fl_unit_tests += tests/test-rwsem-pshared
tests_test_rwsem_pshared_SOURCES = tests/test-rwsem-pshared.c
fl_unit_tests += tests/test-rwsem-process
tests_test_rwsem_process_SOURCES = tests/test-rwsem-process.c
# The process-death torture (fastlock-stress rwsem --kill-ms), briefly.
TESTS += tests/test-rwsem-kill.sh
EXTRA_DIST += tests/test-rwsem-kill.sh tests/shared-memory-skip.sh
# The build machine's compilers take the headers with the native
# config.h: a cross build's describes a host they cannot compile for.
if !FL_CROSS
TESTS += tests/headers-standalone.sh
endif
EXTRA_DIST += tests/headers-standalone.sh
