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
#   DIR/caffeine/FILE       production traces that Caffeine's simulator
#                           ships, from the same repository's
#                           .../parser/FAMILY/ (the CAFFEINE list below):
#                           cache2k's web and orm traces (CC BY 4.0,
#                           headissue GmbH, Jens Wilke: their LICENSE.txt
#                           comes along as DIR/caffeine/cache2k-LICENSE.txt),
#                           Scarab Research's, R3 Corda's vault service,
#                           CloudPhysics' w106 (as LIRS2 has it), UCSD's SPEC
#                           CPU address traces and AdaptSize's requests.
#                           traces_caffeine.go says where each comes from.
#
# It needs git (2.27 or later, for a sparse, blob-less clone: only the
# files asked for are downloaded) and nothing else; hitratio reads .zst,
# .xz and .gz itself. ARC="OLTP P3" fetches only those ARC traces; the
# default is every one but ConCat, MergeP, MergeS and SPC1 (490M and 41M
# requests, hundreds of megabytes each), about 500 MB in all; Caffeine's
# add 12 MB (73 MB uncompressed). CAFFEINE="cache2k/web07.trace.xz" fetches
# only that one of them (FAMILY/FILE, as under .../parser/). The traces are
# data for the simulator: keep them out of this repository.
# CACHE_TRACE_REPO and CAFFEINE_REPO give other places to clone the two
# from (a mirror).
set -eu

dir=${1:?usage: fetch-traces.sh DIR}
arc=${ARC:-"OLTP P1 P2 P3 P4 P5 P6 P7 P8 P9 P10 P11 P12 P13 P14 S1 S2 S3 DS1"}
lirs="2_pools cpp cs gli loop multi1 multi2 multi3 ps sprite"
caffeine=${CAFFEINE:-"cache2k/web07.trace.xz cache2k/web12.trace.xz cache2k/orm-busy.trace.xz
	cache2k/orm-night.trace.xz scarab/scarab-recs.trace.xz corda/trace_vaultservice.gz
	cloud_physics/w106.trace.xz address/gcc.trace.gz address/gzip.trace.gz address/mcf.trace.gz
	address/swim.trace.gz address/twolf.trace.gz adapt_size/request.trace.xz"}
parserdir=simulator/src/main/resources/com/github/benmanes/caffeine/cache/simulator/parser
lirsdir=$parserdir/lirs

mkdir -p "$dir/arc" "$dir/lirs" "$dir/caffeine"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# take FILE DIR FROM copies FILE into DIR, or says that FROM lacks it.
take() {
	if [ -f "$1" ]; then
		cp "$1" "$2/"
	else
		echo "fetch-traces: no ${1##*/} in $3" >&2
	fi
}

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
for t in $arc; do take "$tmp/arc/arc/$t.lis.zst" "$dir/arc" moka-rs/cache-trace; done

# One clone of Caffeine for the LIRS traces and its own, with cache2k's
# licence, which its traces must travel with.
set --
for t in $lirs; do set -- "$@" "$lirsdir/$t.trace.gz"; done
for t in $caffeine; do set -- "$@" "$parserdir/$t"; done
sparse "${CAFFEINE_REPO:-https://github.com/ben-manes/caffeine}" "$tmp/caffeine" "$@" "$parserdir/cache2k/LICENSE.txt"
for t in $lirs; do cp "$tmp/caffeine/$lirsdir/$t.trace.gz" "$dir/lirs/"; done
for t in $caffeine; do take "$tmp/caffeine/$parserdir/$t" "$dir/caffeine" ben-manes/caffeine; done
cp "$tmp/caffeine/$parserdir/cache2k/LICENSE.txt" "$dir/caffeine/cache2k-LICENSE.txt"

ls -l "$dir/arc" "$dir/lirs" "$dir/caffeine"
