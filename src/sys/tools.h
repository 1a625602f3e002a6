/* src/sys/tools.h: the run-time switch's setter (src/sys/tools.c).  */
#ifndef FASTLOCK_SYS_TOOLS_H
#define FASTLOCK_SYS_TOOLS_H

#include "lockdep/lockdep.h"

/* Turn the watched paths on (fl_tools_active = FL_TOOLS_ON) or off.  */
void fl_tools_set(int on);

/* What the library does as it loads: set the switch from the environment
 * and from the race tool it runs under, if any (tests call it again).  */
void fl_tools_detect(void);

#endif /* FASTLOCK_SYS_TOOLS_H */
