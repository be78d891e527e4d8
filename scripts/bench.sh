#!/usr/bin/env bash
# bench.sh runs the benchmarks against a throwaway PostgreSQL and prints a
# table with medians (benchstat over -count runs). BENCH selects benchmarks
# (default: all), COUNT the repetitions (default 3), PKGS the packages.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p var
out=var/bench-$(date +%Y%m%d-%H%M%S).txt
bash scripts/test.sh -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-1x}" -count "${COUNT:-3}" \
	-timeout 60m ${PKGS:-./...} | tee "$out"
echo
echo "raw results: $out"
if go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out" 2>/dev/null; then
	:
else
	echo "(benchstat unavailable: the raw results above are per run)"
fi
