#!/usr/bin/env bash
# run.sh runs every ttlstore-vs-peers workload, writes the raw `go test
# -bench` output to results/<date>.txt and prints a summary: benchstat's
# table (medians with confidence intervals, stores as columns, deltas
# against ttlstore) and benchsummary's (ttlstore/peer ratios and ttlstore's
# targets).
#
#   ./run.sh                    # -count 6, 14-17 minutes on 2 cores
#   BENCH_COUNT=10 ./run.sh     # more samples
#   BENCH_QUICK=1 ./run.sh      # smoke test: -count 1, short benchtimes
#
# It needs only Go: benchstat is run at a pinned version with `go run`.
set -euo pipefail
cd "$(dirname "$0")"

BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

count=${BENCH_COUNT:-6}
quick=${BENCH_QUICK:-0}
if [[ $quick == 1 ]]; then
	count=1
fi

mkdir -p results
out=results/$(date +%Y-%m-%d).txt
if [[ -e $out ]]; then
	out=results/$(date +%Y-%m-%d-%H%M%S).txt
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== sanity tests (adapters must store, find and expire)" >&2
go test -count=1 ./... >&2
echo "== building the benchmark binaries" >&2
go test -c -o "$tmp/bench.test" .
(cd .. && go test -c -o "$tmp/lib.test" .)

commit=$(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C .. status --porcelain -- . ':!bench/results' 2>/dev/null) ]]; then
	commit="$commit+dirty"
fi
{
	echo "goversion: $(go env GOVERSION)"
	echo "ttlstore-commit: $commit"
	echo "# run.sh count=$count quick=$quick started $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$out"

# group PATTERN BENCHTIME QUICK_BENCHTIME runs the benchmarks matching
# PATTERN in a process of their own (a fresh heap for each group).
# (BIN=lib.test for the library's own benchmarks).
group() {
	local pattern=$1 benchtime=$2
	if [[ $quick == 1 ]]; then
		benchtime=$3
	fi
	echo "== $pattern (-benchtime $benchtime -count $count)" >&2
	echo "# loadavg before $pattern: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)" >>"$out"
	"$tmp/${BIN:-bench.test}" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" \
		-test.count "$count" -test.timeout 0 | tee -a "$out" >&2
}

SECONDS=0
group '^Benchmark(Insert|Overwrite|ReadHit|ReadHitParallel|ReadHitExpiryClock|ReadExpired)$' 1s 100ms
group '^BenchmarkReadHitScale$' 1s 100ms
group '^BenchmarkIterate$' 500ms 50ms
group '^BenchmarkSweepNothing$' 500ms 50ms
group '^BenchmarkSweepExpired$' 10x 2x
group '^BenchmarkReadDuringSweep$' 1x 1x
group '^BenchmarkMemory$' 1x 1x
group '^BenchmarkSetDefaultTTL$' 5x 1x
BIN=lib.test group '^BenchmarkSweepBatchHold$' 1x 1x
echo "# run.sh finished after ${SECONDS}s" >>"$out"
echo "== done in ${SECONDS}s; raw output in bench/$out" >&2

summary=${out%.txt}.summary.txt
{
	echo "benchstat -col /store $out"
	go run "$BENCHSTAT" -col /store "$out"
	echo
	echo "go run ./cmd/benchsummary $out"
	go run ./cmd/benchsummary "$out"
} | tee "$summary"
echo "== summary also in bench/$summary" >&2
