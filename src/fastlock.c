/* src/fastlock.c: what the library says about itself.  */
#include "config.h"

#include <fastlock/fastlock.h>

const char *fl_version(void)
{
  return FL_VERSION_STRING;
}

const char *fl_build_config(void)
{
  return FL_CONFIG_SUMMARY;
}
