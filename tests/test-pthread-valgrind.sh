#!/bin/sh
# tests/test-pthread-valgrind.sh: helgrind and drd on a program running
# on the drop-in (tests/pthread-race): zero reports for correct use of
# every object the drop-in replaces, and a seeded race still reported,
# in the default build (the drop-in announces its operations at run time).
# SKIP (77) without Valgrind or under a cross runner.
set -u
prog=tests/pthread-race
supp=${FL_SRCDIR:-..}/src/pthread/fastlock-pthread.supp

if ! command -v valgrind >/dev/null 2>&1; then
	echo "SKIP: valgrind is not installed"; exit 77
fi
if [ -n "${FL_TEST_RUNNER:-}" ]; then
	echo "SKIP: Valgrind runs natively only"; exit 77
fi
status=0
for tool in helgrind drd; do
	valgrind --tool=$tool --suppressions="$supp" --error-exitcode=3 \
		"$prog" clean > clean.$tool.log 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'ERROR SUMMARY: 0 errors' clean.$tool.log; then
		echo "$tool: correct program: no report"
	else
		echo "$tool: correct program: rc=$rc, reports:"; cat clean.$tool.log
		status=1
	fi
	valgrind --tool=$tool --suppressions="$supp" --error-exitcode=3 \
		"$prog" race > race.$tool.log 2>&1
	rc=$?
	if [ $rc -eq 3 ] && grep -q 'pthread-race.c' race.$tool.log; then
		echo "$tool: seeded race: reported"
	else
		echo "$tool: seeded race NOT reported (rc=$rc)"; cat race.$tool.log
		status=1
	fi
	rm -f clean.$tool.log race.$tool.log
done
exit $status
