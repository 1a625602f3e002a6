## src/spinlock/module.mk: the spinlock module's part of the build (included from Makefile.am).
libfastlock_core_la_SOURCES += src/spinlock/spinlock.c src/spinlock/ticket.c \
	src/spinlock/qspinlock.c src/spinlock/qspinlock.h \
	src/spinlock/wait.c src/spinlock/wait.h src/spinlock/internal.h
fastlockinclude_HEADERS += include/fastlock/spinlock.h
fastlockbits_HEADERS += include/fastlock/bits/spinlock.h

fl_unit_tests += tests/test-spinlock tests/test-spinlock-ticket tests/test-spinlock-qspin
fl_spinlock_torture = tests/test-spinlock-torture.c tests/test-spinlock-torture.h \
	stress/tls-probe.c stress/tls-probe.h
tests_test_spinlock_SOURCES = tests/test-spinlock.c $(fl_spinlock_torture)
tests_test_spinlock_ticket_SOURCES = tests/test-spinlock-ticket.c $(fl_spinlock_torture)
tests_test_spinlock_qspin_SOURCES = tests/test-spinlock-qspin.c $(fl_spinlock_torture)
