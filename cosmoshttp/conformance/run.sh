#!/bin/sh
# run.sh runs the conformance suite against both pinned SDK versions:
# azcosmos v1.4.1 (go.mod) and v1.5.0 (go15.mod, build tag azcosmos15,
# which adds the change feed and ReadManyItems tests). Extra arguments go to
# go test (e.g. ./run.sh -run TestTTL -v). Exit status is non-zero if
# either run fails.
set -u
cd "$(dirname "$0")"
status=0
echo "== azcosmos v1.4.1"
go test -count=1 "$@" ./... || status=1
echo "== azcosmos v1.5.0"
go test -modfile=go15.mod -tags azcosmos15 -count=1 "$@" ./... || status=1
exit $status
