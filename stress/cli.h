/* stress/cli.h: what the command lines of fastlock-bench and
 * fastlock-stress share: numbers checked against their range, and the
 * one-line error that bad input yields before anything runs.  */
#ifndef FASTLOCK_STRESS_CLI_H
#define FASTLOCK_STRESS_CLI_H

#include <stddef.h>

/* A decimal integer in [lo, hi] and nothing else: 0, or -1.  */
int cli_long(const char *s, long lo, long hi, long *out);

/* Seconds: a number above lo_excl and at most hi, nothing else: 0, or -1.  */
int cli_seconds(const char *s, double lo_excl, double hi, double *out);

/* Formats the error into err[size] and returns result (the parser's
 * error code), so that a parser can say "return cli_fail(...)".  */
int cli_fail(char *err, size_t size, int result, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* FASTLOCK_STRESS_CLI_H */
