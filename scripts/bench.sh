#!/usr/bin/env bash
# bench.sh runs the capacity measurements quoted in docs/benchmarks.md:
#
#   1. the probe against the simulator as a SEPARATE process, closed loop:
#      profile fast at -c 500/1000/2000/4000, and profile realistic (streams
#      of seconds) at -c 2000: calls/s, content deltas/s, the streams in
#      flight on average, the CPU of each process, the probe's peak RSS, and
#      the TTFT it measured;
#   2. the simulator's own serving benchmark, when sim/ has one;
#   3. the Go capacity benchmarks of probe/capacity_test.go: streams and the
#      TTFT error against the simulator's schedule, memory per in-flight
#      stream, and memory after 1,000 and after MILLION calls;
#   4. the probe process's peak RSS after 1,000 and after RSS_CALLS calls
#      against a zero-delay simulator.
#
# Usage: scripts/bench.sh            (about 8 minutes on a 2-core machine)
# Knobs (environment): RUNS of section 1, PROFILE:C:N each ("fast:500:20000
# ... realistic:2000:4000"), BENCHTIME of the fast streams benchmarks
# (20000x) and SLOW_BENCHTIME of the realistic ones (4000x), MILLION
# (1000000), RSS_CALLS (100000), OUT (a temporary directory: results and
# logs), and NICE (0): a niceness for this script's session (its Linux
# autogroup, when writable, else plain nice) so that a machine shared with
# other jobs gives the measurements a larger share; restored on exit.
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-"fast:500:20000 fast:1000:20000 fast:2000:20000 fast:4000:20000 realistic:2000:4000"}
BENCHTIME=${BENCHTIME:-20000x}
SLOW_BENCHTIME=${SLOW_BENCHTIME:-4000x}
MILLION=${MILLION:-1000000}
RSS_CALLS=${RSS_CALLS:-100000}
NICE=${NICE:-0}
OUT=${OUT:-$(mktemp -d -t tollgate-bench.XXXXXX)}
mkdir -p "$OUT"
TICK=$(getconf CLK_TCK)

for tool in jq awk; do
	command -v "$tool" >/dev/null || { echo "bench.sh: needs $tool" >&2; exit 2; }
done
TIME=/usr/bin/time
[ -x "$TIME" ] || TIME=

# With autogroup scheduling (the Linux default) nice only ranks processes
# within one session; the session's own niceness ranks it among others.
AUTOGROUP=
if [ "$NICE" != 0 ] && [ -w /proc/$$/autogroup ] && echo "$NICE" >/proc/$$/autogroup 2>/dev/null; then
	AUTOGROUP=/proc/$$/autogroup
	NICE=0
fi
run() { nice -n "$NICE" "$@"; }

SIM_PID=
stop_sim() {
	if [ -n "$SIM_PID" ]; then
		kill "$SIM_PID" 2>/dev/null || true
		wait "$SIM_PID" 2>/dev/null || true
		SIM_PID=
	fi
}
cleanup() {
	stop_sim
	[ -z "$AUTOGROUP" ] || echo 0 >"$AUTOGROUP"
}
trap cleanup EXIT

# start_sim ARGS...: tollgate sim on a free loopback port; sets SIM_PID, SIM_URL.
start_sim() {
	local log="$OUT/sim.$RANDOM.out"
	# nice execs the simulator, so $! is its pid (a function would fork a subshell).
	nice -n "$NICE" "$OUT/tollgate" sim --listen 127.0.0.1:0 --seed 7 "$@" >"$log" 2>&1 &
	SIM_PID=$!
	for _ in $(seq 100); do
		SIM_URL=$(awk '/^  anthropic /{print $2}' "$log")
		[ -n "$SIM_URL" ] && return 0
		sleep 0.1
	done
	echo "bench.sh: the simulator did not start:" >&2
	cat "$log" >&2
	exit 1
}

# sample_conns PORT FILE: every 0.5s, the established connections to the
# simulator's port, one count a line, until killed.
sample_conns() {
	while :; do
		ss -Htn state established "( sport = :$1 )" 2>/dev/null | wc -l >>"$2"
		sleep 0.5
	done
}

# cpu_ticks PID: user+system CPU of a process, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "== machine"
echo "cores: $(nproc)   $(go version)   out: $OUT"
echo "nice: $NICE   session: $(cat "${AUTOGROUP:-/proc/$$/autogroup}" 2>/dev/null || echo none)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -r /proc/pressure/cpu ] && echo "cpu pressure: $(head -1 /proc/pressure/cpu)"

echo "== build"
go build -o "$OUT/tollgate" .
go test -c -o "$OUT/probe.test" ./probe/

echo
echo "== 1. probe -> simulator (separate processes), N measured calls after C warmup calls"
printf '%-9s %5s %6s %8s %9s %12s %9s %8s %9s %9s %9s %s\n' profile c N calls/s deltas/s flight/conns probe-cpu sim-cpu probe-MiB ttft-p50 ttft-p99 outcomes
for spec in $RUNS; do
	IFS=: read -r prof c n <<<"$spec"
	start_sim --profile "$prof"
	conns="$OUT/conns.$prof.$c"
	: >"$conns"
	SAMPLER=
	if command -v ss >/dev/null; then
		sample_conns "${SIM_URL##*:}" "$conns" &
		SAMPLER=$!
	fi
	sim0=$(cpu_ticks "$SIM_PID")
	t0=$(date +%s.%N)
	probe=("$OUT/tollgate" probe --target "$SIM_URL" --api anthropic --model m
		-c "$c" -n "$n" --warmup "$c" --seed 7 -q -o "$OUT/probe.$prof.$c.json")
	if [ -n "$TIME" ]; then
		run "$TIME" -f '%U %S %M' -o "$OUT/time.$prof.$c" "${probe[@]}" >/dev/null
	else
		run "${probe[@]}" >/dev/null
		echo "0 0 0" >"$OUT/time.$prof.$c"
	fi
	t1=$(date +%s.%N)
	sim1=$(cpu_ticks "$SIM_PID")
	[ -z "$SAMPLER" ] || { kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null || true; }
	peak=$(sort -n "$conns" | tail -1)
	stop_sim
	read -r usr sys rss <"$OUT/time.$prof.$c"
	jq -r --arg prof "$prof" --arg c "$c" --arg n "$n" --arg t0 "$t0" --arg t1 "$t1" \
		--arg usr "$usr" --arg sys "$sys" --arg rss "$rss" \
		--arg sim "$(( sim1 - sim0 ))" --arg tick "$TICK" --arg peak "${peak:--}" '
		(($t1|tonumber) - ($t0|tonumber)) as $wall |
		.paths.stream as $p |
		(($n|tonumber) + ($c|tonumber)) as $calls |
		($calls / $wall) as $rate |
		[$prof, $c, $n,
		 ($rate | floor),
		 (($p.metrics.output_tokens.count * $p.metrics.output_tokens.mean) / $p.calls * $rate | floor),
		 (($rate * $p.metrics.total.mean / 1000 | floor | tostring) + "/" + $peak),
		 ((($usr|tonumber) + ($sys|tonumber)) / $wall * 100 | floor | tostring + "%"),
		 (($sim|tonumber) / ($tick|tonumber) / $wall * 100 | floor | tostring + "%"),
		 (($rss|tonumber) / 1024 | floor),
		 ($p.metrics.ttft.p50 | tostring + "ms"),
		 ($p.metrics.ttft.p99 | tostring + "ms"),
		 ($p.outcomes | to_entries | map("\(.key)=\(.value)") | join(","))]
		| @tsv' "$OUT/probe.$prof.$c.json" |
		awk -F'\t' '{printf "%-9s %5s %6s %8s %9s %12s %9s %8s %9s %9s %9s %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}'
done
echo "(rates over the whole run, warmup and drain included; flight/conns: streams in flight on average"
echo " (calls/s x mean total time) / peak of connections open at the simulator (sampled every 0.5s);"
echo " cpu: share of ONE core, so 200% is both; the simulator draws TTFT 1-3ms on fast, p50 640ms on realistic)"

echo
echo "== 2. the simulator's own serving benchmark"
# (captured first: with pipefail, grep -q closing the pipe early would fail go test)
serve=$(go test -list '^BenchmarkServe' ./sim/ 2>/dev/null || true)
if grep -q '^BenchmarkServe' <<<"$serve"; then
	run go test -run '^$' -bench Serve -benchmem ./sim/ | grep -E '^Benchmark|^ok'
else
	echo "(sim/ has no BenchmarkServe yet)"
fi

bench() {
	run "$OUT/probe.test" -test.run '^$' -test.bench "$1" -test.benchtime "$2" | grep -E '^Benchmark' |
		awk '{printf "%s", $1; for (i = 5; i < NF; i += 2) printf "  %s %s", $(i+1), $i; print ""}'
}

echo
echo "== 3a. BenchmarkCapacityStreams (simulator in the probe's process), benchtime $BENCHTIME / $SLOW_BENCHTIME"
bench 'CapacityStreams/fast' "$BENCHTIME"
bench 'CapacityStreams/realistic' "$SLOW_BENCHTIME"
echo
echo "== 3b. BenchmarkCapacityMemory (simulator in another process)"
bench CapacityMemory 1x
echo
echo "== 3c. BenchmarkCapacityMillion, $MILLION calls"
bench CapacityMillion "${MILLION}x"

echo
echo "== 4. probe process peak RSS against a zero-delay simulator"
cat >"$OUT/zero.yaml" <<'EOF'
name: zero
head: {dist: constant, value: 0s}
ttft: {dist: constant, value: 0s}
gap: {dist: constant, value: 0s}
output_tokens: {dist: constant, value: 4}
EOF
if [ -n "$TIME" ]; then
	start_sim --profile-file "$OUT/zero.yaml"
	for n in 1000 "$RSS_CALLS"; do
		run "$TIME" -f '%e %M' -o "$OUT/rss.$n" \
			"$OUT/tollgate" probe --target "$SIM_URL" --api anthropic --model m \
			-c 64 -n "$n" -q -o "$OUT/rss.$n.json" >/dev/null
		read -r wall rss <"$OUT/rss.$n"
		printf '%8s calls: peak RSS %6s MiB in %ss (%s ok)\n' "$n" "$((rss / 1024))" "$wall" \
			"$(jq '.paths.stream.outcomes.ok' "$OUT/rss.$n.json")"
	done
	stop_sim
else
	echo "(no /usr/bin/time: skipped)"
fi
echo
echo "done; results and logs in $OUT"
