#!/bin/sh
# fetch-traces.sh DIR puts the public traces that `hitratio -traces DIR`
# replays in DIR, from the two public repositories that hold them:
#
#   DIR/arc/NAME.lis.zst    the ARC paper's traces (Megiddo and Modha, FAST
#                           2003), from github.com/moka-rs/cache-trace, arc/.
#                           Their terms: cite the ARC paper.
#   DIR/lirs/NAME.trace.gz  the LIRS paper's traces (Jiang and Zhang,
#                           SIGMETRICS 2002), from github.com/ben-manes/caffeine,
#                           simulator/src/main/resources/.../parser/lirs/.
#
# It needs git (2.27 or later, for a sparse, blob-less clone: only the
# files asked for are downloaded) and nothing else; hitratio reads .zst
# and .gz itself. ARC="OLTP P3" fetches only those ARC traces; the default
# is every one but ConCat, MergeP, MergeS and SPC1 (490M and 41M requests,
# hundreds of megabytes each), about 500 MB in all. The traces are data for
# the simulator: keep them out of this repository. CACHE_TRACE_REPO and
# CAFFEINE_REPO give other places to clone the two from (a mirror).
set -eu

dir=${1:?usage: fetch-traces.sh DIR}
arc=${ARC:-"OLTP P1 P2 P3 P4 P5 P6 P7 P8 P9 P10 P11 P12 P13 P14 S1 S2 S3 DS1"}
lirs="2_pools cpp cs gli loop multi1 multi2 multi3 ps sprite"
lirsdir=simulator/src/main/resources/com/github/benmanes/caffeine/cache/simulator/parser/lirs

mkdir -p "$dir/arc" "$dir/lirs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# sparse REPO CLONE FILE... clones REPO into CLONE with only FILEs checked out.
sparse() {
	repo=$1 clone=$2
	shift 2
	git clone --quiet --depth 1 --filter=blob:none --no-checkout "$repo" "$clone"
	git -C "$clone" sparse-checkout set --no-cone "$@"
	git -C "$clone" checkout --quiet
}

set --
for t in $arc; do set -- "$@" "arc/$t.lis.zst"; done
sparse "${CACHE_TRACE_REPO:-https://github.com/moka-rs/cache-trace}" "$tmp/arc" "$@"
for t in $arc; do
	if [ -f "$tmp/arc/arc/$t.lis.zst" ]; then
		cp "$tmp/arc/arc/$t.lis.zst" "$dir/arc/"
	else
		echo "fetch-traces: no arc/$t.lis.zst in moka-rs/cache-trace" >&2
	fi
done

set --
for t in $lirs; do set -- "$@" "$lirsdir/$t.trace.gz"; done
sparse "${CAFFEINE_REPO:-https://github.com/ben-manes/caffeine}" "$tmp/lirs" "$@"
for t in $lirs; do cp "$tmp/lirs/$lirsdir/$t.trace.gz" "$dir/lirs/"; done

ls -l "$dir/arc" "$dir/lirs"
