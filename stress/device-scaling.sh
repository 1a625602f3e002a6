#!/bin/sh
# stress/device-scaling.sh [BENCH]: reader and thread scaling of an
# already-built fastlock-bench (default ./fastlock-bench) on a machine with
# more CPUs than the 2-core development box.  Builds nothing.  Writes into
# $OUT: machine.txt (what ran where), scaling.json (fastlock-bench --json:
# readers-only rwsem tests of 1, 2, 4, ... CPUs and twice the CPUs, a
# mixed test, spin and counter tests at the same thread counts, and the
# uncontended pairs) and scaling.err.
#
# Environment: DURATION (seconds per run, default 0.3), REPS (default 3).
# With 16 CPUs and the defaults the run takes about three minutes.
set -eu

bench=${1:-./fastlock-bench}
out=${OUT:?set OUT to the directory for the results}
duration=${DURATION:-0.3}
reps=${REPS:-3}
cpus=$(getconf _NPROCESSORS_ONLN)

# 1, 2, 4, ... up to the CPUs, the CPUs themselves, and twice as many.
threads=1
t=2
while [ "$t" -lt "$cpus" ]; do
	threads="$threads,$t"
	t=$((t * 2))
done
[ "$cpus" -gt 1 ] && threads="$threads,$cpus"
threads="$threads,$((2 * cpus))"
rw=$(echo "$threads" | sed 's/\([0-9][0-9]*\)/\1:0/g'),$cpus:$(( (cpus + 7) / 8 ))

mkdir -p "$out"
{
	"$bench" --version
	echo "cpus: $cpus"
	echo "threads: $threads"
	echo "rw: $rw"
	uname -a
	command -v lscpu >/dev/null && lscpu
} >"$out/machine.txt" 2>&1

"$bench" --quiet --json --duration "$duration" --reps "$reps" \
	--threads "$threads" --rw "$rw" rwsem spin counter uncontended \
	>"$out/scaling.json" 2>"$out/scaling.err"
echo "device-scaling: $out/scaling.json written ($cpus CPUs, threads $threads)"
