/* <fastlock/ipc.h>: Win32-style synchronisation objects in shared memory.
 *
 * For a Wine-server-style program: one server and many client processes
 * share a region of memory; in it live named semaphores, mutexes, events
 * and rwsems that every process waits on and releases directly, without
 * a round trip to the server.  The semantics are those of the Win32 calls
 * (and of Linux's ntsync driver, which implements them for Wine):
 *
 *   semaphore  a count and a maximum (below 2^31).  Waiting takes one
 *              unit; release(n) gives back n and fails with EOVERFLOW,
 *              count unchanged, if the count would pass the maximum.
 *   mutex      an owner (a thread of a process: unique in the region,
 *              whatever PID namespace each process lives in) and a
 *              recursion count.  Only the owner may release it (EPERM).
 *              The mutex is *abandoned* when the owning process dies
 *              (or closes the region, or is cut off by
 *              fl_ipc_client_died), and when the owning thread exits
 *              (return, pthread_exit, cancellation) while its process
 *              goes on: the next thread that acquires it gets it with
 *              EOWNERDEAD (Win32's WAIT_ABANDONED) and a recursion count
 *              of one.
 *   event      manual-reset (stays signalled until reset: wakes every
 *              waiter) or auto-reset (a waiter that acquires it resets
 *              it); set, reset and pulse (satisfy whoever waits now, as
 *              if set, and leave it reset; a pulser that dies mid-pulse
 *              may have satisfied only some, never leaves it set).
 *   rwsem      an fl_rwsem_t (<fastlock/rwsem.h>, FL_PSHARED | FL_ROBUST)
 *              kept in the region by name like the others; it is used
 *              through the rwsem API, not waited on here.  A writer that
 *              dies holding it is found by the next writer (EOWNERDEAD:
 *              fl_rwsem(3)); read holders that die are not.
 *
 * fl_ipc_wait_any acquires one of up to FL_IPC_WAIT_MAX objects (the
 * first one in the array that can be acquired) and says which;
 * fl_ipc_wait_all acquires all of them at once or none: no process ever
 * sees some of them acquired by the waiter and others not.  Waiters are
 * served first come, first served among those an object can satisfy.
 *
 * Dead processes never wedge the others: a waiter notices by itself
 * within FL_IPC_PROBE_MS milliseconds that the owner of a mutex it waits
 * for, or the process holding the region's internal lock, has died
 * (fl_ipc(3), DEATH DETECTION, says how), and a server that learns of a death
 * sooner (a closed socket, a readable pidfd) calls fl_ipc_client_died.
 *
 * The region holds only 32-bit integers at fixed offsets (no pointers),
 * so processes that map it at different addresses, 32- and 64-bit
 * processes together, share its objects.  Its header carries a magic
 * number and a layout version; a region of another version is refused
 * with EPROTO, anything else with EBADMSG.
 *
 * Cost: a wait for one semaphore or mutex that can be acquired at once,
 * and a release that no waiter is owed, are one compare-and-swap on the
 * object (no system call, no region-wide lock); everything else takes
 * the region's internal lock (fl_ipc(3), IMPLEMENTATION).
 *
 * Memory ordering: every acquisition is an acquire operation and every
 * release, set or pulse a release operation: what a process did before
 * releasing an object happens before what the next acquirer does after.
 *
 * Handles: an fl_ipc_t is one process's view of a region (not inherited
 * by fork: a child opens or attaches the region itself); an fl_ipc_obj_t
 * names an object the process has opened.  Every function returns 0 or a
 * positive errno value.  Errors shared by all object functions:
 *   EBADF      the handle is not an open object of this region: of another
 *              region, closed by this process, or stale (the object was
 *              freed and the slot reused);
 *   EINVAL     the handle is of the wrong type for the call;
 *   ENOTCONN   fl_ipc_client_died disconnected this process.
 * The man page fl_ipc(3) lists every call's errors.  */
#ifndef FASTLOCK_IPC_H
#define FASTLOCK_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <fastlock/common.h>
#include <fastlock/rwsem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One process's view of a region (opaque, process-local).  */
typedef struct fl_ipc fl_ipc_t;

/* An object handle: a value, valid in every process that opened the
 * object.  region identifies the region, id the object slot and its
 * generation.  */
typedef struct fl_ipc_obj {
  uint32_t region;
  uint32_t id;
} fl_ipc_obj_t;

#define FL_IPC_WAIT_MAX 64 /* objects in one wait */
#define FL_IPC_NAME_MAX 63 /* bytes of an object's name */
#define FL_IPC_PROBE_MS 20 /* a dead process is found within this */
/* fl_ipc_client_died reports the handles of at most this many of a dead
 * client's abandoned mutexes (and counts them all).  */
#define FL_IPC_DIED_REPORT_MAX 14
#define FL_IPC_OBJECTS_MAX 65535
#define FL_IPC_CLIENTS_MAX 4096

/* ------------------------------------------------------------------ */
/* Regions.                                                            */
/* ------------------------------------------------------------------ */

/* fl_ipc_region_size: the bytes a region for nobjects objects and
 * nclients processes at once needs.  Errors: EINVAL for 0 or more than
 * FL_IPC_OBJECTS_MAX objects or FL_IPC_CLIENTS_MAX clients.  */
FL_EXPORT int fl_ipc_region_size(uint32_t nobjects, uint32_t nclients,
                                 size_t *size);

/* fl_ipc_create: create the POSIX shared memory object name (shm_open
 * rules: "/name"), size and format it for nobjects objects and nclients
 * processes, and open it.  Errors: EEXIST if it exists, EINVAL, and those
 * of shm_open, ftruncate and mmap.  */
FL_EXPORT int fl_ipc_create(const char *name, uint32_t nobjects,
                            uint32_t nclients, fl_ipc_t **out);

/* fl_ipc_open: open the region name that fl_ipc_create made.  Errors:
 * ENOENT; EAGAIN while its creator has not finished formatting it;
 * EBADMSG if it is not a fastlock region; EPROTO if it has another layout
 * version; EUSERS when nclients processes have it open already.  */
FL_EXPORT int fl_ipc_open(const char *name, fl_ipc_t **out);

/* fl_ipc_format: make size bytes at mem an empty region (once, before
 * any process attaches).  mem must be 4-byte aligned.  Errors: EINVAL,
 * ENOSPC if size is smaller than fl_ipc_region_size says.  */
FL_EXPORT int fl_ipc_format(void *mem, size_t size, uint32_t nobjects,
                            uint32_t nclients);

/* fl_ipc_attach: open the region the caller formatted at mem (size bytes,
 * mapped MAP_SHARED), backed by the file fd refers to (a memfd, a shm or
 * tmpfs file: what the processes share).  The library opens fd anew for
 * itself and locks one byte of it per process: that lock is how others
 * learn this process died (fl_ipc(3)), so fd is required.
 * Errors: as fl_ipc_open, and EBADF for a bad fd.  */
FL_EXPORT int fl_ipc_attach(void *mem, size_t size, int fd, fl_ipc_t **out);

/* fl_ipc_close: leave the region: every object this process still has
 * open is closed, every mutex it owns abandoned (as if it had died), and
 * what fl_ipc_create or fl_ipc_open mapped is unmapped.  */
FL_EXPORT int fl_ipc_close(fl_ipc_t *r);

/* fl_ipc_unlink: remove the name of a region (shm_unlink); processes
 * that have it open keep using it.  */
FL_EXPORT int fl_ipc_unlink(const char *name);

/* ------------------------------------------------------------------ */
/* Objects.  A name is at most FL_IPC_NAME_MAX bytes (ENAMETOOLONG); NULL
 * or "" makes an anonymous object that only its handle reaches.  Each
 * create and open adds a reference, each close takes one; the object is
 * freed when the last reference goes (also when a process dies or leaves
 * holding references).  Create errors: EEXIST (the name is taken),
 * ENOSPC (no free object slot), EINVAL.  */
/* ------------------------------------------------------------------ */

FL_EXPORT int fl_ipc_sem_create(fl_ipc_t *r, const char *name, uint32_t count,
                                uint32_t max, fl_ipc_obj_t *out);
/* initially_owned: the calling thread owns the new mutex once.  */
FL_EXPORT int fl_ipc_mutex_create(fl_ipc_t *r, const char *name,
                                  int initially_owned, fl_ipc_obj_t *out);
FL_EXPORT int fl_ipc_event_create(fl_ipc_t *r, const char *name,
                                  int manual_reset, int signaled,
                                  fl_ipc_obj_t *out);
/* The rwsem is made with fl_rwsem_init(FL_PSHARED | FL_ROBUST).
 * fl_ipc_sem_create: EINVAL if max is 0 or 2^31 or more, or count > max. */
FL_EXPORT int fl_ipc_rwsem_create(fl_ipc_t *r, const char *name,
                                  fl_ipc_obj_t *out);

/* fl_ipc_obj_open: open the object called name, of any type.  Errors:
 * ENOENT, ENAMETOOLONG, EINVAL (NULL or empty name).  */
FL_EXPORT int fl_ipc_obj_open(fl_ipc_t *r, const char *name, fl_ipc_obj_t *out);

/* fl_ipc_obj_dup: one more reference to an open object (close it apart). */
FL_EXPORT int fl_ipc_obj_dup(fl_ipc_t *r, fl_ipc_obj_t obj);

/* fl_ipc_obj_close: drop one reference this process holds.  A mutex the
 * calling process owns stays owned (as in Win32).  */
FL_EXPORT int fl_ipc_obj_close(fl_ipc_t *r, fl_ipc_obj_t obj);

/* The types fl_ipc_obj_type reports.  */
#define FL_IPC_SEM 1
#define FL_IPC_MUTEX 2
#define FL_IPC_EVENT 3
#define FL_IPC_EVENT_MANUAL 4
#define FL_IPC_RWSEM 5
FL_EXPORT int fl_ipc_obj_type(fl_ipc_t *r, fl_ipc_obj_t obj, int *type);

/* fl_ipc_sem_release: add n (> 0, else EINVAL) to the count; *prev (may
 * be NULL) gets the count before.  EOVERFLOW, count unchanged, if the
 * count would exceed the maximum.  */
FL_EXPORT int fl_ipc_sem_release(fl_ipc_t *r, fl_ipc_obj_t sem, uint32_t n,
                                 uint32_t *prev);
/* fl_ipc_sem_read: the current count and maximum (either may be NULL). */
FL_EXPORT int fl_ipc_sem_read(fl_ipc_t *r, fl_ipc_obj_t sem, uint32_t *count,
                              uint32_t *max);

/* fl_ipc_mutex_release: undo one acquisition by the calling thread;
 * *prev (may be NULL) gets the recursion count before.  EPERM if the
 * calling thread does not own the mutex.  */
FL_EXPORT int fl_ipc_mutex_release(fl_ipc_t *r, fl_ipc_obj_t mutex,
                                   uint32_t *prev);
/* fl_ipc_mutex_read: the owner's client id (0: none; fl_ipc_client_id),
 * its thread id in its own PID namespace, and the recursion count (each
 * pointer may be NULL).  */
FL_EXPORT int fl_ipc_mutex_read(fl_ipc_t *r, fl_ipc_obj_t mutex,
                                uint32_t *owner, uint32_t *tid,
                                uint32_t *recursion);

/* Events: *prev (may be NULL) gets 1 if the event was signalled before. */
FL_EXPORT int fl_ipc_event_set(fl_ipc_t *r, fl_ipc_obj_t event, int *prev);
FL_EXPORT int fl_ipc_event_reset(fl_ipc_t *r, fl_ipc_obj_t event, int *prev);
FL_EXPORT int fl_ipc_event_pulse(fl_ipc_t *r, fl_ipc_obj_t event, int *prev);
FL_EXPORT int fl_ipc_event_read(fl_ipc_t *r, fl_ipc_obj_t event, int *signaled);

/* fl_ipc_rwsem: the rwsem object's fl_rwsem_t in this process's mapping. */
FL_EXPORT int fl_ipc_rwsem(fl_ipc_t *r, fl_ipc_obj_t rwsem, fl_rwsem_t **out);

/* ------------------------------------------------------------------ */
/* Waiting.  n objects (1..FL_IPC_WAIT_MAX: EINVAL for 0, E2BIG above),
 * until abstime on clock (CLOCK_MONOTONIC or CLOCK_REALTIME, else EINVAL;
 * abstime NULL: no deadline; a deadline already past: try once).
 * Returns 0, or EOWNERDEAD when an abandoned mutex was among what was
 * acquired (it is then owned all the same), or ETIMEDOUT, acquiring
 * nothing.  Objects must be semaphores, mutexes or events (EINVAL for an
 * rwsem).  EINVAL for a timespec out of range; EAGAIN when every wait
 * slot of the region is in use.  */
/* ------------------------------------------------------------------ */

/* fl_ipc_wait_any: *index gets the position in objs of the object
 * acquired: the first one that could be.  */
FL_EXPORT int fl_ipc_wait_any(fl_ipc_t *r, uint32_t n, const fl_ipc_obj_t *objs,
                              clockid_t clock, const struct timespec *abstime,
                              uint32_t *index);

/* fl_ipc_wait_all: all of objs at once.  The same object twice is
 * EINVAL (ntsync's rule: it could never be acquired twice at once).
 * *abandoned (may be NULL) gets bit i set for each objs[i] that was an
 * abandoned mutex (with EOWNERDEAD), 0 otherwise.  */
FL_EXPORT int fl_ipc_wait_all(fl_ipc_t *r, uint32_t n, const fl_ipc_obj_t *objs,
                              clockid_t clock, const struct timespec *abstime,
                              uint64_t *abandoned);

/* ------------------------------------------------------------------ */
/* Supervision.                                                        */
/* ------------------------------------------------------------------ */

/* fl_ipc_client_id: this process's client id in the region (nonzero; a
 * client sends it to its server when it connects).  */
FL_EXPORT uint32_t fl_ipc_client_id(const fl_ipc_t *r);

/* fl_ipc_client_died: the server learned that client died (or must be cut
 * off): every mutex it owned is abandoned, every wait of it cancelled,
 * every reference it held dropped, as ntsync's mutex-kill does.  If the
 * process is in fact alive its later calls fail with ENOTCONN.
 * abandoned (may be NULL) gets handles of the first mutexes abandoned, up
 * to cap and at most FL_IPC_DIED_REPORT_MAX (the region keeps no more per
 * client; handles without a reference: for fl_ipc_mutex_read or a
 * message, not to be closed) and *n their number (which may exceed
 * both).  If the death was
 * already found by a waiter, this reports what that clean-up abandoned.
 * The report lasts until another process claims the client's slot, which
 * a process joining the region does only when no other slot is left:
 * free slots go first, then those whose report this call has read, then
 * (the region is full) the oldest unread report's.
 * Errors: ESRCH if client is unknown or its slot is already reused (its
 * report lost: the region was full when a process joined).  */
FL_EXPORT int fl_ipc_client_died(fl_ipc_t *r, uint32_t client,
                                 fl_ipc_obj_t *abandoned, uint32_t cap,
                                 uint32_t *n);

#ifdef __cplusplus
}
#endif

#endif /* FASTLOCK_IPC_H */
