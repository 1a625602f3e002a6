/* src/sys/tools.h: the run-time switch's setter (src/sys/tools.c).  */
#ifndef FASTLOCK_SYS_TOOLS_H
#define FASTLOCK_SYS_TOOLS_H

#include "lockdep/lockdep.h"

/* Set fl_tools_active to on (0 or 1).  */
void fl_tools_set(int on);

#endif /* FASTLOCK_SYS_TOOLS_H */
