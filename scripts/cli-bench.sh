#!/usr/bin/env bash
# cli-bench.sh measures `queryd search` and `queryd ask` from the command
# line (issue 31, item 3): the median wall time of RUNS calls (default 20)
# of each, once with no queryd serve running (each call loads the embedding
# model in-process) and once with one (each call is a request to it). It
# uses the local database of 'make db-start' (var/db.env) and LAYER
# (default handbook, README's fixtures/handbook); without them it says so
# and exits 0. The serve listens on CLI_BENCH_ADDR (default
# 127.0.0.1:18377), not on a queryd serve's default port.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-20}
layer=${LAYER:-handbook}
addr=${CLI_BENCH_ADDR:-127.0.0.1:18377}
question=${QUESTION:-"How many unused leave days can be carried over?"}
if [[ ! -f var/db.env ]]; then
	echo "cli-bench: no var/db.env ('make db-start' and an ingested $layer layer): skipped"
	exit 0
fi
tmp=$(mktemp -d /tmp/stratakb-cli-bench.XXXXXX)
pid=
cleanup() {
	if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
go build -o "$tmp/queryd" ./queryd
export QUERYD_ADDR=$addr
if ! "$tmp/queryd" search "$question" --layers "$layer" --local >/dev/null 2>"$tmp/err"; then
	echo "cli-bench: queryd search --layers $layer failed ($(head -c 300 "$tmp/err")): skipped"
	exit 0
fi

# median VERB: the median of RUNS calls of queryd VERB QUESTION, in ms.
median() {
	local verb=$1 i t0 t1
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		"$tmp/queryd" "$verb" "$question" --layers "$layer" >/dev/null
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000))
	done | sort -n | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1000}'
}

no_search=$(median search)
no_ask=$(median ask)
# What is left without the model: STRATA_MODEL_DIR names an empty folder,
# so the search answers from the lexical channel only.
mkdir "$tmp/no-model"
no_model=$(STRATA_MODEL_DIR=$tmp/no-model median search)
"$tmp/queryd" serve 2>"$tmp/serve.log" &
pid=$!
for ((i = 0; i < 200; i++)); do
	curl -fsS -o /dev/null "http://$addr/healthz" 2>/dev/null && break
	sleep 0.05
done
# The serve loads its model in the background: one call of each first.
"$tmp/queryd" search "$question" --layers "$layer" >/dev/null
"$tmp/queryd" ask "$question" --layers "$layer" >/dev/null
srv_search=$(median search)
srv_ask=$(median ask)
served=$(grep -c '"tool":"strata_' "$tmp/serve.log" || true)

echo
printf "%-58s %10s %s\n" "command line (p50 of $runs calls, goal <= 150 ms)" "ms" "command"
printf "%-58s %10s %s\n" "queryd search, no queryd serve (in-process)" "$no_search" "queryd search \"$question\" --layers $layer"
printf "%-58s %10s %s\n" "queryd ask, no queryd serve (in-process)" "$no_ask" "queryd ask \"$question\" --layers $layer"
printf "%-58s %10s %s\n" "queryd search, no serve, no model (lexical only)" "$no_model" "STRATA_MODEL_DIR=<empty folder> queryd search ..."
printf "%-58s %10s %s\n" "queryd search, queryd serve running at $addr" "$srv_search" "the same"
printf "%-58s %10s %s\n" "queryd ask, queryd serve running at $addr" "$srv_ask" "the same"
echo "(the serve answered $served calls: $((2 * runs + 2)) expected)"
