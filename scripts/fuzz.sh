#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the module for the given time each.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-30s}
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
		echo "==> $pkg $target ($t)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$t" "$pkg"
	done
done
