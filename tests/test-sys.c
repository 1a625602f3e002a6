/* tests/test-sys.c: clocks, the cycle counter, the spin hint, the tool
 * annotations of src/sys and the run-time switch that turns them on.  */
#include "config.h"

#include "sys/annotate.h"
#include "sys/clock.h"
#include "sys/cpu.h"
#include "sys/tools.h"

#include <fastlock/fastlock.h>

#include "fl-check.h"

#include <stdlib.h>
#include <string.h>

START_TEST(timespec_validity)
{
  struct timespec ok0 = { 0, 0 }, ok1 = { 5, FL_NSEC_PER_SEC - 1 };
  struct timespec bad0 = { 0, -1 }, bad1 = { 0, FL_NSEC_PER_SEC };

  ck_assert(fl_timespec_valid(&ok0));
  ck_assert(fl_timespec_valid(&ok1));
  ck_assert(!fl_timespec_valid(&bad0));
  ck_assert(!fl_timespec_valid(&bad1));
}
END_TEST

START_TEST(deadline_is_normalised_and_ahead)
{
  int64_t before = fl_clock_ns(CLOCK_MONOTONIC);
  struct timespec d = fl_deadline_after_ns(CLOCK_MONOTONIC, 1999999999L);

  ck_assert(fl_timespec_valid(&d));
  ck_assert((int64_t)d.tv_sec * FL_NSEC_PER_SEC + d.tv_nsec
            >= before + 1999999999L);
}
END_TEST

START_TEST(cycles_never_go_back)
{
  uint64_t prev = fl_cycles(), now;
  int i, advanced = 0;

  for (i = 0; i < 100000; i++) {
    fl_cpu_relax();
    now = fl_cycles();
    ck_assert_msg(now >= prev, "%s went back: %llu then %llu", FL_CYCLES_NAME,
                  (unsigned long long)prev, (unsigned long long)now);
    advanced |= now != prev;
    prev = now;
  }
  ck_assert_msg(advanced, "%s never moved", FL_CYCLES_NAME);
}
END_TEST

/* Where Valgrind's headers were found every Valgrind annotation is a
 * client request, which does nothing outside Valgrind; the TSan ones call
 * the runtime only in a program that has it (not this one).  All must
 * compile and run in plain code.  */
START_TEST(annotations_expand_and_run)
{
  int32_t word = 0;

  FL_VG_RWLOCK_CREATE(&word);
  FL_VG_HIDE(&word, sizeof word);
  FL_VG_RWLOCK_ACQUIRED(&word, 1);
  FL_VG_RWLOCK_RELEASED(&word, 1);
  FL_VG_RWLOCK_DESTROY(&word);
  FL_TSAN_CREATE(&word);
  FL_TSAN_PRE_LOCK(&word, FL_TSAN_TRY);
  FL_TSAN_POST_LOCK(&word, FL_TSAN_TRY);
  FL_TSAN_PRE_UNLOCK(&word, 0);
  FL_TSAN_POST_UNLOCK(&word, 0);
  FL_TSAN_DESTROY(&word);
  ck_assert_int_eq(word, 0);
  ck_assert(!FL_TSAN_PRESENT);
}
END_TEST

/* fl_tools_active as the library's start-up check leaves it with
 * FASTLOCK_TOOLS=value (NULL: unset).  */
static int tools_active_with(const char *value)
{
  if (value != NULL)
    ck_assert_int_eq(setenv("FASTLOCK_TOOLS", value, 1), 0);
  else
    ck_assert_int_eq(unsetenv("FASTLOCK_TOOLS"), 0);
  fl_tools_set(0);
  fl_tools_detect();
  return fl_tools_active;
}

/* Outside helgrind and drd the switch is off unless FASTLOCK_TOOLS=1
 * turns it on; any other value leaves it alone.  */
START_TEST(tools_switch_follows_the_environment)
{
  ck_assert_int_eq(tools_active_with(NULL), 0);
  ck_assert_int_eq(tools_active_with("1"), FL_TOOLS_ON);
  ck_assert_int_eq(tools_active_with("0"), 0);
  ck_assert_int_eq(tools_active_with("yes"), 0);
  ck_assert_int_eq(tools_active_with(""), 0);
  /* Last, since the checker stays on: it needs the watched paths, and
   * takes them whatever FASTLOCK_TOOLS says.  */
  ck_assert_int_eq(setenv("FASTLOCK_LOCKDEP", "1", 1), 0);
  ck_assert(!fl_lockdep_enabled());
  ck_assert_int_eq(tools_active_with("0"), FL_TOOLS_ON);
  ck_assert(fl_lockdep_enabled());
}
END_TEST

/* The library and the headers it is used with must come from one build. */
START_TEST(library_reports_its_build)
{
  ck_assert_str_eq(fl_version(), FL_VERSION_STRING);
  ck_assert_str_eq(fl_build_config(), FL_CONFIG_SUMMARY);
}
END_TEST

static Suite *sys_suite(void)
{
  Suite *s = suite_create("sys");
  TCase *tc = tcase_create("sys");

  tcase_add_test(tc, timespec_validity);
  tcase_add_test(tc, deadline_is_normalised_and_ahead);
  tcase_add_test(tc, cycles_never_go_back);
  tcase_add_test(tc, annotations_expand_and_run);
  tcase_add_test(tc, tools_switch_follows_the_environment);
  tcase_add_test(tc, library_reports_its_build);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  /* Not the lock-order checker: this program checks the switch alone.  */
  unsetenv("FASTLOCK_LOCKDEP");
  return fl_check_run_no_shim(sys_suite());
}
