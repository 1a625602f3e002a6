/* stress/cli.c: the command-line helpers of stress/cli.h.  */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cli_long(const char *s, long lo, long hi, long *out)
{
  char *end;
  long v;

  errno = 0;
  v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

int cli_seconds(const char *s, double lo_excl, double hi, double *out)
{
  char *end;
  double v;

  errno = 0;
  v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v > lo_excl) || v > hi)
    return -1;
  *out = v;
  return 0;
}

int cli_fail(char *err, size_t size, int result, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(err, size, fmt, ap);
  va_end(ap);
  return result;
}
