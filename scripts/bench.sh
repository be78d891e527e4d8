#!/usr/bin/env bash
# bench.sh runs the benchmarks against a throwaway PostgreSQL and prints a
# table with medians (benchstat over -count runs). BENCH selects benchmarks
# (default: all), COUNT the repetitions (default 3), PKGS the packages.
# The last table repeats the figures of the memory and speed benchmarks
# (docs/ingest.md, docs/embeddings.md) with their before and after settings.
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

# Medians of the memory and speed figures, one line per benchmark and
# metric. A benchmark line is: name iterations value unit value unit ...
awk '
/^Benchmark(IngestPeakRSS|IngestFiles|QueryThreads|SearchModelThreads|LocalModels|EmbedThroughput)/ {
	name = $1
	sub(/-[0-9]+$/, "", name)
	for (i = 3; i + 1 <= NF; i += 2) {
		if ($(i + 1) == "ns/op") continue
		key = name SUBSEP $(i + 1)
		if (!(key in n)) order[++keys] = key
		vals[key, ++n[key]] = $i
	}
}
END {
	if (keys == 0) exit
	printf "\n%-58s %-14s %10s %s\n", "memory and speed", "metric", "median", "runs"
	for (k = 1; k <= keys; k++) {
		key = order[k]
		split(key, parts, SUBSEP)
		m = n[key]
		for (i = 1; i <= m; i++) v[i] = vals[key, i] + 0
		for (i = 2; i <= m; i++) { x = v[i]; j = i - 1; while (j > 0 && v[j] > x) { v[j + 1] = v[j]; j-- } v[j + 1] = x }
		med = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
		printf "%-58s %-14s %10.4g %d\n", parts[1], parts[2], med, m
	}
}' "$out"
