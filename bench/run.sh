#!/usr/bin/env bash
# run.sh runs the ttlstore-vs-peers workloads, writes the raw `go test
# -bench` output to results/<date>.txt (results/<date>-durable.txt for the
# durable suite) and prints a summary: benchstat's table (medians with
# confidence intervals, stores as columns, deltas against ttlstore) and
# benchsummary's (ttlstore/peer ratios and ttlstore's targets).
#
#   ./run.sh                    # the in-memory caches and ttlstore's modes, -count 6,
#                               #   16-23 minutes on 2 cores (924 s at 034432c)
#   ./run.sh durable            # the durable stores (ttlstore Open, buntdb, badger),
#                               #   on disk in $TMPDIR (or /tmp), about 8 minutes
#   ./run.sh bounded            # the bounded caches (ttlstore MaxDocuments with
#                               #   EvictColdest, otter, ristretto), full at 100k,
#                               #   on 1 and 2 goroutines, about 5 minutes
#   ./run.sh features           # read-through (ReadOrLoad against ttlcache's and
#                               #   otter's loaders) and typed views, about 6 minutes
#   ./run.sh all                # every suite, one after the other: every
#                               #   benchmark family of bench/ and the library's
#   BENCH_COUNT=10 ./run.sh     # more samples
#   BENCH_QUICK=1 ./run.sh      # smoke test: -count 1, short benchtimes
#                               #   (durable: 100k documents instead of 1M)
#   BENCH_DURABLE_N=200000 ./run.sh durable   # the 1M workloads at another size
#
# It needs only Go: benchstat is run at a pinned version with `go run`.
set -euo pipefail
cd "$(dirname "$0")"

BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

suite=${1:-peers}
case $suite in
peers | durable | all | bounded | features) ;;
*)
	echo "usage: $0 [peers|durable|bounded|features|all]" >&2
	exit 2
	;;
esac
count=${BENCH_COUNT:-6}
durable_count=${BENCH_COUNT:-5}
quick=${BENCH_QUICK:-0}
if [[ $quick == 1 ]]; then
	count=1
	durable_count=1
	export BENCH_DURABLE_N=${BENCH_DURABLE_N:-100000}
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== sanity tests (adapters must store, find and expire)" >&2
go test -count=1 ./... >&2
echo "== building the benchmark binaries" >&2
go test -c -o "$tmp/bench.test" .
if [[ $suite == peers || $suite == durable || $suite == all ]]; then
	(cd .. && go test -c -o "$tmp/lib.test" .)
fi

commit=$(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C .. status --porcelain -- . ':!bench/results' 2>/dev/null) ]]; then
	# Name the uncommitted changes too: the hash of their diff.
	commit="$commit+dirty($(git -C .. diff HEAD -- . ':!bench/results' | sha1sum | cut -c1-12))"
fi

mkdir -p results
# start SUFFIX makes results/<date>SUFFIX.txt (or with the time, if taken)
# the output file, out, and writes its header.
start() {
	out=results/$(date +%Y-%m-%d)$1.txt
	if [[ -e $out ]]; then
		out=results/$(date +%Y-%m-%d-%H%M%S)$1.txt
	fi
	{
		echo "goversion: $(go env GOVERSION)"
		echo "ttlstore-commit: $commit"
		echo "# run.sh $suite count=$count durable_count=$durable_count quick=$quick started $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} >"$out"
}

# group PATTERN BENCHTIME QUICK_BENCHTIME [COUNT] runs the benchmarks
# matching PATTERN in a process of their own (a fresh heap for each group),
# -count COUNT (default: $count). BIN=lib.test for the library's own
# benchmarks.
group() {
	local pattern=$1 benchtime=$2 n=${4:-$count}
	if [[ $quick == 1 ]]; then
		benchtime=$3
		n=1
	fi
	echo "== $pattern (-benchtime $benchtime -count $n)" >&2
	echo "# loadavg before $pattern: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)" >>"$out"
	"$tmp/${BIN:-bench.test}" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" \
		-test.count "$n" -test.timeout 0 | tee -a "$out" >&2
}

# tempdir prints a header line that says what holds the Go temporary
# directory ($TMPDIR, or /tmp), where the durable collections are written.
tempdir() {
	local dir=${TMPDIR:-/tmp}
	echo "# tempdir $dir: $(df -PT "$dir" | awk 'NR==2 {print $1, $2, "mounted on", $7}')"
}

# summarize writes results/<name>.summary.txt for the output file.
summarize() {
	local summary=${out%.txt}.summary.txt
	{
		echo "benchstat -col /store $out"
		go run "$BENCHSTAT" -col /store "$out"
		echo
		echo "go run ./cmd/benchsummary $out"
		go run ./cmd/benchsummary "$out"
	} | tee "$summary"
	echo "== summary also in bench/$summary" >&2
}

peers() {
	start ""
	tempdir >>"$out"
	SECONDS=0
	group '^Benchmark(Insert|Overwrite|ReadHit|ReadHitParallel|ReadHitExpiryClock|ReadExpired)$' 1s 100ms
	# The newer groups at 500ms, so that they add about 5 minutes, not 9.
	group '^BenchmarkReadHitAscending(Parallel)?$' 500ms 100ms
	group '^BenchmarkReadHitFresh(Parallel)?$' 300ms 50ms
	group '^Benchmark(Insert|Overwrite)Parallel$' 500ms 100ms
	# ttlstore in memory, durable (SyncNever, in $TMPDIR) and bounded.
	group '^BenchmarkModes$' 500ms 50ms
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
	summarize
}

# durable runs the durable workloads. Their files go to the Go temporary
# directory ($TMPDIR, or /tmp), which must be a disk, not a tmpfs: the
# header records what it is.
durable() {
	start "-durable"
	local dir=${TMPDIR:-/tmp}
	{
		tempdir
		echo "# BENCH_DURABLE_N=${BENCH_DURABLE_N:-1000000 (default)}"
	} >>"$out"
	if df -PT "$dir" | awk 'NR==2 {exit !($2 == "tmpfs" || $2 == "ramfs")}'; then
		echo "run.sh: $dir is a $(df -PT "$dir" | awk 'NR==2 {print $2}'): set TMPDIR to a directory on a disk" >&2
		exit 1
	fi
	SECONDS=0
	group '^BenchmarkDurableWrite$' 1s 100ms "$durable_count"
	# The reads: each store in a process of its own per sample, in
	# alternating order, so that neither the machine's drift nor the heap
	# a previous store left favours one of them.
	local reads='^BenchmarkDurableRead(Hit|HitParallel)$' first second
	for ((i = 0; i < durable_count; i++)); do
		first='^store=ttlstore$' second='^store=ttlstore-durable$'
		if ((i % 2 == 1)); then
			first=$second second='^store=ttlstore$'
		fi
		group "$reads/$first" 1s 100ms 1
		group "$reads/$second" 1s 100ms 1
	done
	# One stall is one sample of a maximum: take three.
	group '^BenchmarkDurableCompactStall$' 1x 1x 3
	group '^BenchmarkDurableReopen$' 1x 1x 3
	group '^BenchmarkDurableMemory$' 1x 1x 3
	# The library's own: a logged sweep of 1M expired documents.
	BIN=lib.test group '^BenchmarkDurableSweep$' 1x 1x 3
	echo "# run.sh finished after ${SECONDS}s" >>"$out"
	echo "== done in ${SECONDS}s; raw output in bench/$out" >&2
	summarize
}

# bounded runs the workloads of the bounded caches. The hit ratios of the
# same policies are cmd/hitratio's (go run ./cmd/hitratio).
bounded() {
	start "-bounded"
	SECONDS=0
	group '^BenchmarkBounded(ReadHit|Write)$' 1s 100ms
	echo "# run.sh finished after ${SECONDS}s" >>"$out"
	echo "== done in ${SECONDS}s; raw output in bench/$out" >&2
	summarize
}

# features runs the workloads of read-through loading and typed views.
features() {
	start "-features"
	SECONDS=0
	group '^BenchmarkLoad(Hit|Miss|Storm)$' 1s 100ms
	group '^BenchmarkTyped(ReadHit|ReadHitParallel|Write)$' 1s 100ms
	echo "# run.sh finished after ${SECONDS}s" >>"$out"
	echo "== done in ${SECONDS}s; raw output in bench/$out" >&2
	summarize
}

case $suite in
peers) peers ;;
durable) durable ;;
bounded) bounded ;;
features) features ;;
all)
	peers
	durable
	bounded
	features
	;;
esac
