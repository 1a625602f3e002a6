/* stress/tls-probe.h: does this runtime keep a thread's TLS across a
 * signal handler?  (Shared by fastlock-stress and the counter torture.)  */
#ifndef FASTLOCK_STRESS_TLS_PROBE_H
#define FASTLOCK_STRESS_TLS_PROBE_H

/* 1 if a thread that runs a handler for sig comes back with its own TLS,
 * 0 if not: qemu-i386 user mode (7.2) keeps the guest's GDT in memory
 * shared by all threads and reloads %gs from it on sigreturn, so such a
 * thread comes back with the TLS of the last thread created (errno,
 * pthread_self(), the rseq area, fastlock's per-thread state:
 * everything); the same emulator now and then also aborts in its
 * translator after a sigreturn ("i386_tr_init_disas_context: assertion
 * failed").  Programs that find 0 should send no signals to their
 * threads.  Installs and then restores the default action for sig; call
 * it before installing a handler of one's own.  */
int fl_signals_keep_tls(int sig);

/* What to say where it returns 0, after "no signals: " or the like.  */
#define FL_TLS_LOST_WHY                                                        \
 "a thread that runs a signal handler comes back with another "                \
 "thread's TLS here (qemu-i386 user mode does this)"

#endif /* FASTLOCK_STRESS_TLS_PROBE_H */
