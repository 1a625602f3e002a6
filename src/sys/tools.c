/* src/sys/tools.c: fl_tools_active, the run-time switch of the watched
 * paths (<fastlock/common.h>), and what sets it.
 *
 * At load, before main, the library looks for what would watch this
 * process:
 *
 *   helgrind or drd    Valgrind's client requests answer only under
 *                      Valgrind (RUNNING_ON_VALGRIND), and each tool
 *                      answers one request that the others do not:
 *                      helgrind's GET_ABITS, drd's thread id.
 *                      Other Valgrind tools (memcheck, callgrind, which
 *                      `make count-instructions` runs) see the fastpaths.
 *   FASTLOCK_LOCKDEP   set to 1: the lock-order checker (src/lockdep/),
 *                      which needs the watched paths whatever else says.
 *   FASTLOCK_TOOLS     1: take the watched paths whatever runs (for a
 *                      tool this library cannot detect); 0: never (to see
 *                      what a tool reports without fastlock's help).
 *
 * fl_tools_active is 0 or FL_TOOLS_ON and changes only here and in
 * fl_lockdep_enable().  A lock taken on a fastpath before it was set is
 * released on the watched path, which copes (the checker ignores the
 * release of a lock it never saw taken).  */
#include "config.h"

#include <fastlock/common.h>

#include "sys/annotate.h"
#include "sys/tools.h"

#include <stdlib.h>

int fl_tools_active;

/* Nonzero under helgrind or drd.  */
static int fl_tools_race_tool(void)
{
#if FL_VALGRIND
  char probe = 0;

  if (!RUNNING_ON_VALGRIND)
    return 0;
  /* GET_ABITS answers the number of addressable bytes (here 1) under
   * helgrind, something else elsewhere; drd's thread ids start at 1.  */
  if (VALGRIND_HG_GET_ABITS(&probe, NULL, 1) == 1)
    return 1;
  return DRD_GET_VALGRIND_THREADID != 0;
#else
  return 0;
#endif
}

/* "1" or "0" in the environment variable name; -1 for anything else.  */
static int fl_tools_env(const char *name)
{
  const char *v = getenv(name);

  if (v == NULL || v[0] == '\0' || v[1] != '\0')
    return -1;
  return v[0] == '1' ? 1 : v[0] == '0' ? 0 : -1;
}

void fl_tools_set(int on)
{
  __atomic_store_n(&fl_tools_active, on ? FL_TOOLS_ON : 0, __ATOMIC_RELAXED);
}

void fl_tools_detect(void)
{
  int forced = fl_tools_env("FASTLOCK_TOOLS");

  if (fl_tools_env("FASTLOCK_LOCKDEP") == 1)
    fl_lockdep_enable();
  else if (forced >= 0)
    fl_tools_set(forced);
  else if (fl_tools_race_tool())
    fl_tools_set(1);
}

/* At load, with priority 101: before this library's constructors without
 * one, which may read the switch (the drop-in's probe,
 * src/pthread/annotate.c).  */
static void fl_tools_at_load(void) __attribute__((constructor(101)));

static void fl_tools_at_load(void)
{
  fl_tools_detect();
}
