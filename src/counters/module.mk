## src/counters/module.mk: the counters module's part of the build (included from Makefile.am).
libfastlock_core_la_SOURCES += src/counters/counter.c src/counters/perthread.c \
	src/counters/counter-internal.h
fastlockinclude_HEADERS += include/fastlock/counter.h
fastlockbits_HEADERS += include/fastlock/bits/counter.h

fl_unit_tests += tests/test-counter tests/test-counter-torture
tests_test_counter_SOURCES = tests/test-counter.c
tests_test_counter_torture_SOURCES = tests/test-counter-torture.c \
	stress/tls-probe.c stress/tls-probe.h
