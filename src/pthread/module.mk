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
	src/pthread/sem.c src/pthread/sem-named.c
libfastlock_pthread_la_LIBADD = libfastlock-core.la
libfastlock_pthread_la_LDFLAGS = -version-info 0:0:0 -no-undefined \
	-export-symbols-regex '^(pthread_|sem_)'
pkgconfig_DATA += fastlock-pthread.pc
EXTRA_DIST += fastlock-pthread.pc.in
