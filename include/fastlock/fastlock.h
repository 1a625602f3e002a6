/* <fastlock/fastlock.h>: fastlock's umbrella header.
 *
 * fastlock is a library of reader-writer semaphores, spinlocks and
 * per-CPU counters built on one atomic shim with hand-written fastpaths
 * per architecture (<fastlock/arch/atomic.h>).  Conventions every
 * primitive keeps: names start with fl_, an all-zero object is a valid
 * unlocked lock, functions return 0 or a positive errno value.  */
#ifndef FASTLOCK_FASTLOCK_H
#define FASTLOCK_FASTLOCK_H

#include <fastlock/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, e.g. "0.1.0".  */
FL_EXPORT const char *fl_version(void);

/* The configure choices the library was built with, in the form of
 * FL_CONFIG_SUMMARY ("arch=x86 atomics=asm release=xadd").  A program
 * whose <fastlock/config.h> says otherwise was compiled against headers
 * from another build: its inline fastpaths and the library's slowpaths
 * may not agree.  */
FL_EXPORT const char *fl_build_config(void);

#ifdef __cplusplus
}
#endif

#endif /* FASTLOCK_FASTLOCK_H */
