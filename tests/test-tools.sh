#!/bin/sh
# tests/test-tools.sh: fastlock-bench and fastlock-stress, briefly, as a
# user runs them: bad input exits 2 with one line and runs nothing; a
# short benchmark prints its table, CSV with a constant number of fields,
# and JSON with exactly the fields fastlock-bench(1) documents; the stress
# tool ends in SUCCESS on every primitive, mode and implementation this
# build has, and in FAILURE on the broken lock of each primitive (the
# negative control).
#
# Run from the build directory (make check does).  The programs run
# through $FL_TEST_RUNNER (qemu-user for a foreign build, see
# tools/check-cross); the script itself runs on the build machine.

set -u

runner=${FL_TEST_RUNNER:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fl-tools.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

pass() {
	echo "ok: $*"
}

# run NAME PROGRAM ARGS...: run one of the tools; output in $tmp/NAME.out
# and .err, exit status in $rc.
run() {
	name=$1
	shift
	checks=$((checks + 1))
	# shellcheck disable=SC2086  # the runner is a command with arguments
	$runner "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}

for prog in ./fastlock-bench ./fastlock-stress; do
	if [ ! -f "$prog" ]; then
		echo "ERROR: $prog is not built (run from the build directory)"
		exit 99
	fi
done
run version ./fastlock-stress --version
if [ $rc -ne 0 ]; then
	echo "ERROR: ./fastlock-stress --version failed ($rc): $(cat "$tmp/version.err")"
	if [ -z "$runner" ]; then
		echo "ERROR: FL_TEST_RUNNER is empty; a program built for another machine needs it" \
		     "(Makefile.am: AM_TESTS_ENVIRONMENT += FL_TEST_RUNNER='\$(FL_TEST_RUNNER)'; export FL_TEST_RUNNER;)"
	fi
	exit 99
fi

# What this build can run.  A uniprocessor build (the MIPS BEQL trick)
# is correct only while one thread runs at a time: natively the tools pin
# their threads to one CPU, but under QEMU a preempted thread leaves no
# trace the trick could see.  The sysmips variant has no system call
# under QEMU.  There the fastlock implementations are left out, and for
# sysmips the runs of several processes too: the library's fork handler
# (the queued lock's thread indices) stores through the shim.
config=include/fastlock/config.h
fastlock=yes
forks=yes
if [ -n "$runner" ]; then
	if grep -q '^#define FL_UNIPROCESSOR 1' "$config"; then
		fastlock=no
		echo "note: uniprocessor build under $runner: fastlock's primitives left out"
	elif grep -q '^#define FL_ATOMICS_ASM 1' "$config" &&
	     grep -q '^#define FL_MIPS_SYSMIPS 1' "$config"; then
		fastlock=no
		forks=no
		echo "note: sysmips build under $runner (no sysmips system call): fastlock's primitives and runs of several processes left out"
	fi
fi

# --- Bad input: exit status 2, one line on stderr, nothing on stdout.
bad_input() {
	name=$1
	shift
	run "$name" "$@"
	if [ $rc -ne 2 ]; then
		fail "$* exited $rc, not 2"
	elif [ -s "$tmp/$name.out" ]; then
		fail "$* printed on stdout (ran something?)"
	elif [ "$(wc -l <"$tmp/$name.err")" -ne 1 ] || ! grep -q 'valid\|needs\|applies\|exclude\|must\|nothing to run' "$tmp/$name.err"; then
		fail "$*: not one line saying what is valid: $(cat "$tmp/$name.err")"
	else
		pass "$* -> 2: $(cat "$tmp/$name.err")"
	fi
}
# Under an emulator every run costs a start of QEMU: there, one bad input
# per tool (tests/test-bench-options checks them all, natively and under
# the emulator alike), and fewer modes below.
bad_input b1 ./fastlock-bench nosuch-workload
bad_input s1 ./fastlock-stress nosuch-primitive
if [ -z "$runner" ]; then
	bad_input b2 ./fastlock-bench --impl nosuch-impl
	bad_input b3 ./fastlock-bench --duration 0
	bad_input b4 ./fastlock-bench --threads 0
	bad_input b5 ./fastlock-bench --threads 100000
	bad_input b6 ./fastlock-bench --frobnicate
	bad_input b7 ./fastlock-bench --csv --json
	bad_input s2 ./fastlock-stress rwsem --duration -1
	bad_input s3 ./fastlock-stress spin --threads 0
	bad_input s4 ./fastlock-stress rwsem --readers 1000 --writers 1000
	bad_input s5 ./fastlock-stress counter --impl nosuch
	bad_input s6 ./fastlock-stress rwsem --frobnicate
fi

for prog in ./fastlock-bench ./fastlock-stress; do
	run help "$prog" --help
	if [ $rc -ne 0 ] || ! grep -q '^usage: ' "$tmp/help.out"; then
		fail "$prog --help"
	fi
done

# --- fastlock-bench, a few short tests of every kind: the table and CSV
# with glibc's locks, the JSON with everything this build has.
run list ./fastlock-bench --list
impls=glibc,baseline
if grep -q '^  ck-rwlock ' "$tmp/list.out" && ! grep '^  ck-rwlock ' "$tmp/list.out" | grep -q 'not available'; then
	impls=$impls,ck
fi
if [ $fastlock = yes ] && grep -q '^  fl-' "$tmp/list.out"; then
	impls=$impls,fastlock
fi
tests="rwsem-rw spin-pair spin-2 counter-add counter-2"
short="--duration 0.01 --reps 1 --quiet --impl glibc $tests rwsem-w1"

# shellcheck disable=SC2086 # $short, $impls, $tests: lists of words
run table ./fastlock-bench $short
if [ $rc -ne 0 ]; then
	fail "fastlock-bench table run exited $rc: $(cat "$tmp/table.err")"
elif ! grep -q '^  cpu: ' "$tmp/table.out" || ! grep -q '^rwsem-rw ' "$tmp/table.out" ||
     ! grep -q '^spin-2 ' "$tmp/table.out" || ! grep -q '^counter-add ' "$tmp/table.out" ||
     ! grep -q '^ *glibc-rwlock-pw  *write ' "$tmp/table.out"; then
	fail "fastlock-bench table lacks its context, a test or an implementation's name"
	cat "$tmp/table.out"
elif [ -s "$tmp/table.err" ]; then
	fail "fastlock-bench --quiet wrote on stderr: $(cat "$tmp/table.err")"
else
	pass "fastlock-bench table"
fi

# shellcheck disable=SC2086
run csv ./fastlock-bench --csv $short
if [ $rc -ne 0 ]; then
	fail "fastlock-bench --csv exited $rc: $(cat "$tmp/csv.err")"
elif ! awk -F, '/^#/ { next }
	!header { header = NF; next }
	NF != header { print "line " NR " has " NF " fields, the header " header; bad = 1 }
	{ rows++ }
	END { exit bad || rows < 9 }' "$tmp/csv.out"; then
	fail "fastlock-bench --csv is not rectangular"
else
	pass "fastlock-bench --csv"
fi

# shellcheck disable=SC2086
run json ./fastlock-bench --json --duration 0.01 --reps 2 --quiet --impl "$impls" $tests
if [ $rc -ne 0 ]; then
	fail "fastlock-bench --json exited $rc: $(cat "$tmp/json.err")"
elif ! command -v python3 >/dev/null; then
	fail "python3 is needed to validate fastlock-bench --json"
elif ! python3 - "$tmp/json.out" <<'EOF'
# The fields fastlock-bench(1) documents, exactly.
import json, sys

doc = json.load(open(sys.argv[1]))
num = (int, float)

def keys(obj, want, where):
    if set(obj) != set(want):
        sys.exit("%s: fields %s, documented %s" % (where, sorted(obj), sorted(want)))
    for k, t in want.items():
        if not isinstance(obj[k], t) or (t is num and isinstance(obj[k], bool)):
            sys.exit("%s: %s is %r" % (where, k, obj[k]))

keys(doc, {"tool": str, "format": int, "version": str, "context": dict,
           "method": dict, "results": list}, "top")
assert doc["tool"] == "fastlock-bench" and doc["format"] == 1
keys(doc["context"], {"cpu": str, "online_cpus": int, "ticks": str, "ticks_per_ns": num,
                      "kernel": str, "libc": str, "compiler": str, "config": str},
     "context")
keys(doc["method"], {"duration_s": num, "warmup_s": num, "original_durations": bool, "reps": int,
                     "latency_sample_every": int, "loop_target_s": num}, "method")
common = {"test": str, "kind": str, "type": str, "impl": str, "family": str,
          "reference": str, "reps": int, "ran_as": (str, type(None))}
seen = set()
timed_ops = 0
for r in doc["results"]:
    where = "%s/%s" % (r.get("test"), r.get("impl"))
    assert r.get("kind") in ("rwsem", "spin", "counter"), where
    if r.get("type") == "loop":
        keys(r, dict(common, operation=str, iterations=int, ns_per_op=num,
                     ticks_per_op=num, ratio=(int, float, type(None)),
                     runs_ns_per_op=list), where)
        assert r["iterations"] > 0 and r["ns_per_op"] > 0, where
        assert len(r["runs_ns_per_op"]) == r["reps"] == 2, where
    else:
        assert r.get("type") == "timed", where
        keys(r, dict(common, seconds=num, runs_ops_per_s=list, classes=list), where)
        assert r["seconds"] > 0 and len(r["runs_ops_per_s"]) == r["reps"] == 2, where
        # A 10 ms window may see no acquisition at all of a spinning peer
        # whose holder the scheduler preempted (ck-rwlock, 6 threads on 2
        # CPUs): the run as a whole must count some, below.
        assert r["classes"], where
        timed_ops += sum(c["ops"] for c in r["classes"])
        for c in r["classes"]:
            keys(c, {"class": str, "threads": int, "ops": int, "ops_per_s": num,
                     "ratio": (int, float, type(None)), "thread_min_ops_per_s": num,
                     "thread_max_ops_per_s": num, "starved": bool, "starved_reps": int,
                     "latency_ns": (dict, type(None))}, where)
            assert c["threads"] > 0 and c["ops"] >= 0, where
            assert c["thread_min_ops_per_s"] <= c["thread_max_ops_per_s"], where
            assert 0 <= c["starved_reps"] <= r["reps"], where
            if c["latency_ns"] is not None:
                keys(c["latency_ns"], {"samples": int, "p50": num, "p99": num, "max": num},
                     where + " latency")
                l = c["latency_ns"]
                assert l["samples"] > 0 and 0 <= l["p50"] <= l["p99"] <= l["max"], where
    if r["impl"] == r["reference"] and r.get("ratio", 1) is not None:
        assert r.get("ratio", 1) == 1, where
    seen.add((r["test"], r["impl"]))
assert timed_ops > 0, "no timed run counted an operation"
rw = [r for r in doc["results"] if r["test"] == "rwsem-rw"]
assert rw and all([c["class"] for c in r["classes"]] == ["read", "write"] and
                  [c["threads"] for c in r["classes"]] == [4, 2] for r in rw), "rwsem-rw"
for want in (("rwsem-rw", "glibc-rwlock"), ("spin-2", "glibc-spin"),
             ("spin-pair", "glibc-mutex"), ("counter-2", "glibc-mutex-counter")):
    assert want in seen, "missing %s/%s" % want
EOF
then
	fail "fastlock-bench --json does not match its documentation"
else
	pass "fastlock-bench --json"
fi

# The spin workload begins with its untimed test (spin-pair): the plot
# still has a column for every implementation of the timed ones.
if [ -z "$runner" ] && command -v gnuplot >/dev/null; then
	run plot ./fastlock-bench --plot "$tmp/plot.svg" --duration 0.01 --reps 1 --quiet \
		--threads 2 --impl glibc-spin,glibc-mutex spin
	if [ $rc -ne 0 ] || ! grep -q '<svg' "$tmp/plot.svg" 2>/dev/null ||
		! grep -q 'glibc-mutex' "$tmp/plot.svg"; then
		fail "fastlock-bench --plot: $rc $(cat "$tmp/plot.err")"
	else
		pass "fastlock-bench --plot"
	fi
fi

# --- The pthread drop-in's rows: its rwlock and mutex in the main tables
# beside glibc's, and fastlock-bench pthread, whose producer/consumer rows
# fail the run if an item is lost.  They open the drop-in's shared
# library, which a build with --disable-shared (every cross build) does
# not have: there tests/test-pthread-prodcons runs the same workloads on
# the drop-in linked in.  Elsewhere the rows must be available; with the
# drop-in preloaded (make check-preload) glibc's locks are not there to
# compare with, and the subcommand must say so.
if [ $fastlock = no ]; then
	echo "note: the drop-in's rows left out (fastlock's primitives are, above)"
elif [ ! -e .libs/libfastlock-pthread.so.0 ] && [ -z "${FASTLOCK_PTHREAD_LIB:-}" ]; then
	echo "note: the drop-in's rows left out: this build has no shared drop-in (--disable-shared); tests/test-pthread-prodcons runs its workloads"
elif grep -q '^  dropin-rwlock .*not available' "$tmp/list.out"; then
	fail "the drop-in's rows are not available: $(grep '^  dropin-rwlock ' "$tmp/list.out")"
else
	run dropin ./fastlock-bench --duration 0.01 --reps 1 --quiet --impl dropin,glibc-rwlock,glibc-mutex \
		rwsem-rw spin-2
	if [ $rc -ne 0 ] || ! grep -q '^ *dropin-rwlock  *read ' "$tmp/dropin.out" ||
	     ! grep -q '^ *dropin-rwlock-pw  *read ' "$tmp/dropin.out" ||
	     ! grep -q '^ *dropin-mutex  *lock ' "$tmp/dropin.out"; then
		fail "fastlock-bench --impl dropin: $rc $(cat "$tmp/dropin.err")"
		cat "$tmp/dropin.out"
	else
		pass "fastlock-bench --impl dropin"
	fi
	run pthread ./fastlock-bench pthread --reps 1 --scale 0.01
	case "${LD_PRELOAD:-}" in
	*fastlock-pthread*)
		if [ $rc -eq 2 ] && grep -q 'interposed' "$tmp/pthread.err"; then
			pass "fastlock-bench pthread refuses to run with the drop-in preloaded"
		else
			fail "fastlock-bench pthread with the drop-in preloaded: $rc $(cat "$tmp/pthread.err")"
		fi ;;
	*)
		if [ $rc -ne 0 ] || [ "$(grep -c 'glibc: all items arrived | fastlock: all items arrived' "$tmp/pthread.out")" -ne 2 ]; then
			fail "fastlock-bench pthread: $rc $(cat "$tmp/pthread.err")"
			cat "$tmp/pthread.out"
		else
			pass "fastlock-bench pthread (producer/consumer: every item arrived)"
		fi ;;
	esac
fi

# --- fastlock-stress: SUCCESS on everything this build has.
stress_ok() {
	name=$1
	shift
	case " $* " in
	*" --processes "*)
		if [ $forks = no ]; then
			echo "note: fastlock-stress $*: left out (see above)"
			return
		fi ;;
	esac
	run "$name" ./fastlock-stress "$@" --duration 0.12 --interval 0.03
	if [ $rc -eq 2 ] && grep -q 'not available in this build' "$tmp/$name.err"; then
		echo "note: fastlock-stress $*: $(cat "$tmp/$name.err")"
	elif [ $rc -ne 0 ] || [ "$(tail -n 1 "$tmp/$name.out")" != "End of test: SUCCESS" ]; then
		fail "fastlock-stress $* exited $rc"
		cat "$tmp/$name.out" "$tmp/$name.err"
	elif ! grep -q '^fastlock-stress: .*Total: ' "$tmp/$name.out"; then
		fail "fastlock-stress $*: no progress lines"
	else
		pass "fastlock-stress $*"
	fi
}

# glibc's rwlock under QEMU user mode: once in a CI run on powerpc64le
# the two processes of its process-shared run hung (one reader never got
# in), and once on 32-bit PowerPC (2026-12-02) four threads of its
# prefer-reader run never returned from it, the fastlock rwsem's same
# runs passing.  It is the peer, not ours to test there: natively only.
if [ -z "$runner" ]; then
	stress_ok p1 rwsem --impl pthread --mode prefer-reader
	stress_ok p2 rwsem --impl pthread --mode prefer-writer --pshared --processes 2
else
	echo "note: fastlock-stress rwsem --impl pthread: natively only (glibc's rwlock under $runner)"
fi
stress_ok p3 spin --impl pthread
stress_ok p4 spin --impl pthread --pshared --processes 2
stress_ok p5 counter --impl atomic
modes="fair prefer-reader prefer-writer"
strategies="auto shared percpu-atomic perthread-sigsafe percpu-rseq"
if [ -n "$runner" ]; then
	modes=fair
	strategies="auto percpu-rseq"
fi
if [ $fastlock = yes ]; then
	for mode in $modes; do
		stress_ok "r-$mode" rwsem --impl fastlock --mode "$mode" --readers 3 --writers 2
	done
	stress_ok r-bias rwsem --impl fastlock --read-bias
	stress_ok r-pshared rwsem --impl fastlock --pshared --processes 2 --readers 2 --writers 1
	for type in tas ticket queued; do
		stress_ok "s-$type" spin --impl fastlock --type $type
	done
	stress_ok s-pshared spin --impl fastlock --type ticket --pshared --processes 2
	for strategy in $strategies; do
		stress_ok "c-$strategy" counter --impl fastlock --strategy "$strategy"
	done
fi

# --- A progress line that fell due while the tool did not run (a loaded
# machine, an emulator) is printed when it runs again, even past the
# end, and only one: stop the run after its first line, let it go on
# past its end, and there must be exactly one line stamped at or after
# the end (2 s).  Natively: the shell stops and continues the program
# itself, not an emulator around it.
if [ -z "$runner" ]; then
	checks=$((checks + 1))
	./fastlock-stress spin --impl pthread --threads 2 --duration 2 --interval 0.4 \
		>"$tmp/late.out" 2>"$tmp/late.err" &
	pid=$!
	tries=0
	while ! grep -q '^fastlock-stress: .*Total: ' "$tmp/late.out" && [ $tries -lt 200 ]; do
		sleep 0.05
		tries=$((tries + 1))
	done
	kill -STOP $pid
	sleep 2.5
	kill -CONT $pid
	wait $pid
	rc=$?
	late=$(awk '/^fastlock-stress: .*Total: / { sub(/s$/, "", $2); if ($2 + 0 >= 2) n++ }
		END { print n + 0 }' "$tmp/late.out")
	if [ $rc -ne 0 ] || [ "$late" -ne 1 ]; then
		fail "fastlock-stress stopped past its end: exit $rc, $late progress lines at or after it, not 1"
		cat "$tmp/late.out" "$tmp/late.err"
	else
		pass "fastlock-stress stopped past its end: one late progress line"
	fi
fi

# --- The negative control: a lock that excludes nobody, a counter that
# loses updates.  The tool must see it.
for prim in rwsem spin counter; do
	run "broken-$prim" ./fastlock-stress $prim --impl broken --duration 0.2 --interval 0
	if [ $rc -ne 1 ] || [ "$(tail -n 1 "$tmp/broken-$prim.out")" != "End of test: FAILURE" ] ||
	   ! grep -q '!!!' "$tmp/broken-$prim.out"; then
		fail "fastlock-stress $prim --impl broken did not report FAILURE (exit $rc)"
		cat "$tmp/broken-$prim.out"
	else
		pass "fastlock-stress $prim --impl broken -> FAILURE"
	fi
done

echo "$checks runs, $failures failed"
[ $failures -eq 0 ]
