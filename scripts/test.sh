#!/usr/bin/env bash
# test.sh runs the test suite against a throwaway PostgreSQL cluster that it
# creates, and removes it afterwards even when tests fail. Extra arguments go
# to `go test` (default ./..., which ends with a line counting the skipped
# tests: those that need the shared folder say STRATA_SHARED_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

tmp=$(mktemp -d /tmp/stratakb-test.XXXXXX)
chmod 755 "$tmp"
cleanup() {
	DB_ENV_FILE="$tmp/db.env" bash scripts/db.sh stop "$tmp" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

DB_THROWAWAY=1 DB_NAME=stratakb_test DB_ENV_FILE="$tmp/db.env" bash scripts/db.sh start "$tmp"
TEST_DATABASE_URL=$(sed -n 's/^DATABASE_URL=//p' "$tmp/db.env")
export TEST_DATABASE_URL
echo "test.sh: TEST_DATABASE_URL=$(sed -E 's#://([^:/@]+):[^@]*@#://\1:***@#' <<<"$TEST_DATABASE_URL")"

if (($# == 0)); then
	# Plain go test's output, then one line counting the skipped tests and
	# naming STRATA_SHARED_DIR for those that need the shared folder
	# (scripts/testsummary): skips must not hide behind "ok".
	go build -o "$tmp/testsummary" ./scripts/testsummary
	go test -count=1 -timeout 20m -json ./... | "$tmp/testsummary"
	# The tests of concurrent access are only worth their name under the
	# race detector.
	go test -count=1 -race -timeout 10m -run 'Concurrent' ./queryd/internal/retrieve/
	exit
fi
go test -count=1 -timeout 20m "$@"
