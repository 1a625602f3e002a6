/* src/pthread/annotate.c: telling helgrind and drd what the drop-in does.
 *
 * Valgrind's tools intercept pthread_mutex_lock and friends by the soname
 * of the library that defines them (libc.so.*, libpthread.so.*).  With
 * the drop-in in front they never see those calls, so, in the default
 * build and at run time, each out-of-line entry point reports what it did
 * through client requests: a mutex or rwlock acquired or released (as an
 * rwlock, which both tools model), a happens-before edge for a semaphore
 * post and a condition signal, and its own lock words hidden from both
 * tools, whose view of our atomics is wrong.  Outside Valgrind a client
 * request is a few no-op instructions, and fl_pt_under_vg() skips even
 * those after one probe.
 *
 * The requests are tool-specific: the running tool is the one whose
 * preload library Valgrind put in LD_PRELOAD.  */
#include "config.h"

#include <fastlock/common.h>

#include "pthread/internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(HAVE_VALGRIND_HELGRIND_H) && defined(HAVE_VALGRIND_DRD_H)
# include <valgrind/helgrind.h>
# include <valgrind/drd.h>
# define FL_PT_VALGRIND 1
#else
# define FL_PT_VALGRIND 0
#endif

/* -1: not probed yet; 0: not under Valgrind; 1: under helgrind; 2: under
 * drd; 3: under another Valgrind tool (nothing to say); 4: not under
 * Valgrind, but fl_tools_active is set (the lock-order checker, or
 * FASTLOCK_TOOLS=1) or the program has ThreadSanitizer (tsan.c):
 * nothing to say either, but the mutex's inline paths, which skip the
 * checker and glibc, must step aside.  fl_tools_active is set by the
 * core's constructor (src/sys/tools.c), which runs before ours.  */
int fl_pt_vg = -1;

enum { VG_NONE = 0, VG_HELGRIND = 1, VG_DRD = 2, VG_OTHER = 3, VG_WATCHED = 4 };

int fl_pt_vg_probe(void)
{
  int tool = VG_NONE;
#if FL_PT_VALGRIND
  if (RUNNING_ON_VALGRIND) {
    const char *preload = getenv("LD_PRELOAD"); /* getenv allocates nothing */
    tool = VG_OTHER;
    if (preload != NULL && strstr(preload, "vgpreload_helgrind") != NULL)
      tool = VG_HELGRIND;
    else if (preload != NULL && strstr(preload, "vgpreload_drd") != NULL)
      tool = VG_DRD;
  }
#endif
  if (tool == VG_NONE && (fl_load_relaxed(&fl_tools_active) != 0 || fl_pt_tsan))
    tool = VG_WATCHED;
  /* Every thread computes the same value: a relaxed store suffices.  */
  __atomic_store_n(&fl_pt_vg, tool, __ATOMIC_RELAXED);
  /* The tools cannot see that this word is written once, before anyone
   * acts on it: hide it.  */
  fl_pt_vg_hide(&fl_pt_vg, sizeof fl_pt_vg);
  return tool != VG_NONE;
}

/* Probe while the process is still single-threaded as a rule; a lock
 * taken in an earlier constructor probes lazily instead.  */
__attribute__((constructor)) static void probe_at_load(void)
{
  fl_pt_vg_probe();
}

#if FL_PT_VALGRIND
# define REQ(id, a, b) VALGRIND_DO_CLIENT_REQUEST_STMT(id, a, b, 0, 0, 0)

void fl_pt_vg_hide(void *addr, unsigned long size)
{
  if (fl_pt_vg == VG_HELGRIND)
    REQ(_VG_USERREQ__HG_ARANGE_MAKE_UNTRACKED, addr, size);
  else if (fl_pt_vg == VG_DRD)
    REQ(VG_USERREQ__DRD_START_SUPPRESSION, addr, size);
}

void fl_pt_vg_acquired(void *lock, int writer)
{
  if (fl_pt_vg == VG_HELGRIND)
    REQ(_VG_USERREQ__HG_PTHREAD_RWLOCK_ACQUIRED, lock, writer);
  else if (fl_pt_vg == VG_DRD)
    REQ(VG_USERREQ__DRD_ANNOTATE_RWLOCK_ACQUIRED, lock, writer);
}

void fl_pt_vg_released(void *lock, int writer)
{
  if (fl_pt_vg == VG_HELGRIND)
    REQ(_VG_USERREQ__HG_PTHREAD_RWLOCK_RELEASED, lock, writer);
  else if (fl_pt_vg == VG_DRD)
    REQ(VG_USERREQ__DRD_ANNOTATE_RWLOCK_RELEASED, lock, writer);
}

void fl_pt_vg_destroyed(void *lock)
{
  if (fl_pt_vg == VG_HELGRIND)
    REQ(_VG_USERREQ__HG_PTHREAD_RWLOCK_DESTROY_PRE, lock, 0);
  else if (fl_pt_vg == VG_DRD)
    REQ(VG_USERREQ__DRD_ANNOTATE_RWLOCK_DESTROY, lock, 0);
}

void fl_pt_vg_happens_before(void *obj)
{
  if (fl_pt_vg == VG_HELGRIND)
    REQ(_VG_USERREQ__HG_USERSO_SEND_PRE, obj, 0);
  else if (fl_pt_vg == VG_DRD)
    REQ(VG_USERREQ__DRD_ANNOTATE_HAPPENS_BEFORE, obj, 0);
}

void fl_pt_vg_happens_after(void *obj)
{
  if (fl_pt_vg == VG_HELGRIND)
    REQ(_VG_USERREQ__HG_USERSO_RECV_POST, obj, 0);
  else if (fl_pt_vg == VG_DRD)
    REQ(VG_USERREQ__DRD_ANNOTATE_HAPPENS_AFTER, obj, 0);
}
#else
void fl_pt_vg_hide(void *addr, unsigned long size)
{
  (void)addr;
  (void)size;
}
void fl_pt_vg_acquired(void *lock, int writer)
{
  (void)lock;
  (void)writer;
}
void fl_pt_vg_released(void *lock, int writer)
{
  (void)lock;
  (void)writer;
}
void fl_pt_vg_destroyed(void *lock)
{
  (void)lock;
}
void fl_pt_vg_happens_before(void *obj)
{
  (void)obj;
}
void fl_pt_vg_happens_after(void *obj)
{
  (void)obj;
}
#endif
