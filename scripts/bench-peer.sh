#!/usr/bin/env bash
# bench-peer.sh puts StrataKB next to the peer, qmd (BM25 over SQLite FTS5),
# on SciFact's 300 test claims, in one run on this machine (issue 31). The
# peer harness (../shared/bench/qmd-peer) is copied into var/qmd-peer and
# installed there on first use (about 1.1 GB, git-ignored). Each measure is
# taken alternating A B A B (StrataKB, qmd, StrataKB, qmd) for ROUNDS rounds
# (default 2), the same Go driver (scripts/peerload) sending both sides'
# requests:
#   - search p50 / p95, one client, over REST and over MCP (streamable HTTP);
#   - searches/s with 8 clients (SciFact's 809 train claims);
#   - the command line's p50 per call (CLI_RUNS claims, default 20): queryd
#     search with no serve running and with one, qmd search;
#   - index on disk, and nDCG@10 of the REST runs (the harness's evaluator).
# StrataKB answers from a queryd serve on STRATA_BENCH_PEER_DATABASE_URL,
# default the eval_product database of the local cluster (SciFact ingested
# as a user would: see the message below when it is missing); layer
# STRATA_BENCH_PEER_LAYER (default scifact), read only (LEARNING_ENABLED is
# false: queryd records no interaction). A fresh serve is started for
# each of its measures, so that no answer comes from its result cache. qmd
# answers lex-only queries (rerank off) as in the harness; its lex search
# joins a claim's words with AND, so most claims find nothing (its README).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
shared=${STRATA_SHARED_DIR:-$root/../shared}
data=${SCIFACT_DIR:-$shared/bench/scifact}
peer=$root/var/qmd-peer
rounds=${ROUNDS:-2}
cli_runs=${CLI_RUNS:-20}
layer=${STRATA_BENCH_PEER_LAYER:-scifact}
addr=${STRATA_BENCH_PEER_ADDR:-127.0.0.1:18378}
# The benchmark reads the database only: queryd records no interaction.
export LEARNING_ENABLED=false

# The peer: copied and installed once (install.sh is a no-op afterwards).
if [[ ! -x $peer/install.sh ]]; then
	[[ -d $shared/bench/qmd-peer ]] || { echo "bench-peer: no $shared/bench/qmd-peer (set STRATA_SHARED_DIR)" >&2; exit 1; }
	mkdir -p var
	cp -r "$shared/bench/qmd-peer" "$peer"
	chmod -R u+w "$peer"
fi
"$peer/install.sh"
for f in corpus.jsonl queries.jsonl qrels/test.tsv qrels/train.tsv; do
	[[ -f $data/$f ]] || { echo "bench-peer: missing $data/$f (set SCIFACT_DIR)" >&2; exit 1; }
done

# StrataKB's database: the queryd role's URL of eval_product unless given.
url=${STRATA_BENCH_PEER_DATABASE_URL:-}
if [[ -z $url && -f var/db.env ]]; then
	q=$(sed -n 's/^QUERYD_DATABASE_URL=//p' var/db.env)
	url=${q/\/stratakb\?/\/eval_product?}
fi
if [[ -z $url ]] || ! psql "$url" -Atqc "SELECT 1 FROM strata.layers WHERE name = '$layer'" 2>/dev/null | grep -q 1; then
	cat >&2 <<EOF
bench-peer: no database with SciFact's layer '$layer' (default: eval_product of the local cluster).
Make one (about 15 to 20 minutes: ingest and embed 5,183 abstracts with the default model), then run again:
  make db-start
  U=\$(sed -n 's/^DATABASE_URL=//p' var/db.env); E="\${U/\/stratakb?/\/eval_product?}"
  psql "\$U" -c 'CREATE DATABASE eval_product'
  STRATA_EVAL=1 STRATA_EVAL_PRODUCT=1 STRATA_EVAL_DATABASE_URL="\$E" \\
    bash scripts/test.sh -run 'TestEvalSciFactSearch\$' -v -timeout 90m ./queryd/internal/search/
or point STRATA_BENCH_PEER_DATABASE_URL at a database that has the layer.
EOF
	exit 1
fi

work=$(mktemp -d /tmp/stratakb-bench-peer.XXXXXX)
spid= qpid=
cleanup() {
	for p in $spid $qpid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
go build -o "$work/queryd" ./queryd
go build -o "$work/peerload" ./scripts/peerload
pl=$work/peerload
py=(python3 "$peer/qmd_scifact.py")
"${py[@]}" queries "$data/queries.jsonl" "$data/qrels/test.tsv" "$work/test.jsonl" >/dev/null
"${py[@]}" queries "$data/queries.jsonl" "$data/qrels/train.tsv" "$work/train.jsonl" >/dev/null

wait_up() {
	local i
	for ((i = 0; i < 300; i++)); do
		curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench-peer: $1 did not answer" >&2
	return 1
}

# StrataKB: a fresh queryd serve (an empty result cache) per measure.
serve_start() {
	QUERYD_DATABASE_URL=$url QUERYD_ADDR=$addr "$work/queryd" serve >>"$work/serve.log" 2>&1 &
	spid=$!
	wait_up "http://$addr/healthz"
}
serve_stop() {
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	spid=
}

# qmd, isolated as its scifact.sh does it: config and index under $work/qmd.
qmd_env() {
	(cd "$work" && env -u QMD_CONFIG_DIR -u INDEX_PATH PATH="$peer/node_modules/.bin:$PATH" HOME="$work/qmd" \
		XDG_CONFIG_HOME="$work/qmd/.config" XDG_CACHE_HOME="$work/qmd/.cache" \
		XDG_DATA_HOME="$work/qmd/.local/share" NO_COLOR=1 "$@")
}
mkdir -p "$work/qmd"
"${py[@]}" docs "$data/corpus.jsonl" "$work/docs" >/dev/null
qmd_env qmd collection add "$work/docs" --name scifact >"$work/qmd-index.log" 2>&1 || { cat "$work/qmd-index.log"; exit 1; }
qport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
# node itself, not the bin/qmd launcher, so that the PID is the server's.
(cd "$work" && exec env -u QMD_CONFIG_DIR -u INDEX_PATH HOME="$work/qmd" XDG_CONFIG_HOME="$work/qmd/.config" \
	XDG_CACHE_HOME="$work/qmd/.cache" XDG_DATA_HOME="$work/qmd/.local/share" NO_COLOR=1 \
	"$peer/node_modules/.bin/node" "$peer/node_modules/@tobilu/qmd/dist/cli/qmd.js" mcp --http \
	--port "$qport" --host 127.0.0.1) >"$work/qmd-server.log" 2>&1 &
qpid=$!
wait_up "http://127.0.0.1:$qport/health"
qurl=http://127.0.0.1:$qport

# record SYSTEM MEASURE ROUND COMMAND...: one line of results.
record() {
	local sys=$1 m=$2 r=$3 out
	shift 3
	out=$("$@")
	echo "$sys $m $r $out" | tee -a "$work/results.txt"
}
cli_strata() {
	QUERYD_DATABASE_URL=$url QUERYD_ADDR=$addr "$pl" -cli -queries "$work/test.jsonl" -max "$cli_runs" -- \
		"$work/queryd" search --layers "$layer" --top-k 10
}
strata() {
	local m=$1 r=$2
	case $m in
	rest | mcp)
		serve_start
		record strata "$m" "$r" "$pl" -target strata -url "http://$addr" -mode "$m" -layer "$layer" \
			-queries "$work/test.jsonl" -warmup "$work/train.jsonl" -run "$work/run.strata-$m.$r.trec"
		serve_stop ;;
	load8)
		serve_start
		record strata "$m" "$r" "$pl" -target strata -url "http://$addr" -clients 8 -layer "$layer" \
			-queries "$work/train.jsonl" -warmup "$work/test.jsonl"
		serve_stop ;;
	cli) record strata cli "$r" cli_strata ;;
	cli-serve)
		serve_start
		QUERYD_DATABASE_URL=$url QUERYD_ADDR=$addr "$work/queryd" search "warm the model up" --layers "$layer" >/dev/null
		record strata cli-serve "$r" cli_strata
		serve_stop ;;
	esac
}
peer() {
	local m=$1 r=$2
	case $m in
	rest | mcp)
		record qmd "$m" "$r" "$pl" -target qmd -url "$qurl" -mode "$m" -queries "$work/test.jsonl" \
			-warmup "$work/train.jsonl" -run "$work/run.qmd-$m.$r.trec" ;;
	load8)
		record qmd "$m" "$r" "$pl" -target qmd -url "$qurl" -clients 8 -queries "$work/train.jsonl" \
			-warmup "$work/test.jsonl" ;;
	cli)
		# qmd's command line uses no server: one figure for both CLI rows.
		record qmd cli "$r" qmd_env "$pl" -cli -queries "$work/test.jsonl" -max "$cli_runs" -- \
			"$peer/node_modules/.bin/qmd" search -n 10 --format json -- ;;
	esac
}

echo "bench-peer: $rounds rounds, each measure StrataKB then qmd; work files in $work"
for ((r = 1; r <= rounds; r++)); do
	for m in rest mcp load8 cli cli-serve; do
		strata "$m" "$r"
		peer "$m" "$r"
	done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# Index on disk: StrataKB's tables (the database holds the one layer) and
# the database; qmd's index.sqlite with its WAL files.
psql "$url" -AtqF' ' -c "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
	JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'strata' AND c.relkind = 'r'
	ORDER BY 2 DESC" >"$work/sizes.txt"
db_bytes=$(psql "$url" -Atqc 'SELECT pg_database_size(current_database())')
qmd_bytes=$(du -cb "$work"/qmd/.cache/qmd/index.sqlite* | tail -1 | cut -f1)
ndcg() { python3 "$peer/treceval.py" "$data/qrels/test.tsv" "$1" --label x | sed -n 's/.*nDCG@10=\([0-9.]*\).*/\1/p'; }

echo
echo "StrataKB (queryd serve, layer $layer) / $(qmd_env qmd --version 2>/dev/null) (BM25, lex only); SciFact test; $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores"
echo "command: make bench-peer (ROUNDS=$rounds CLI_RUNS=$cli_runs); load average before / after: $load_start / $load_end"
awk -v sizes="$work/sizes.txt" -v db="$db_bytes" -v qb="$qmd_bytes" -v runs="$cli_runs" \
	-v sn="$(ndcg "$work/run.strata-rest.1.trec")" -v smn="$(ndcg "$work/run.strata-mcp.1.trec")" \
	-v qn="$(ndcg "$work/run.qmd-rest.1.trec")" '
function med(k,    m, i, j, x, v) {
	m = cnt[k]
	for (i = 1; i <= m; i++) v[i] = val[k, i]
	for (i = 2; i <= m; i++) { x = v[i]; j = i - 1; while (j > 0 && v[j] > x) { v[j + 1] = v[j]; j-- } v[j + 1] = x }
	return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
function lo(k,    i, x) { x = val[k, 1]; for (i = 2; i <= cnt[k]; i++) if (val[k, i] < x) x = val[k, i]; return x }
function hi(k,    i, x) { x = val[k, 1]; for (i = 2; i <= cnt[k]; i++) if (val[k, i] > x) x = val[k, i]; return x }
function row(name, s, q, r) { printf "| %s | %s | %s | %s |\n", name, s, q, r }
function lat(name, m) {
	row(name, sprintf("%.1f / %.1f", med("strata" m "p50"), med("strata" m "p95")),
		sprintf("%.1f / %.1f", med("qmd" m "p50"), med("qmd" m "p95")),
		sprintf("%.2f / %.2f", med("strata" m "p50") / med("qmd" m "p50"), med("strata" m "p95") / med("qmd" m "p95")))
}
{
	for (i = 4; i <= NF; i++) {
		split($i, kv, "=")
		k = $1 $2 (kv[1] == "p50_ms" ? "p50" : kv[1] == "p95_ms" ? "p95" : kv[1] == "per_s" ? "rate" : kv[1])
		val[k, ++cnt[k]] = kv[2] + 0
	}
}
END {
	print "| measure | StrataKB | qmd | ratio |"
	print "|---|---|---|---|"
	lat("search p50 / p95, one client, REST (ms)", "rest")
	lat("search over MCP p50 / p95 (ms)", "mcp")
	row("8 clients, searches/s", sprintf("%.1f–%.1f", lo("strataload8rate"), hi("strataload8rate")),
		sprintf("%.1f–%.1f", lo("qmdload8rate"), hi("qmdload8rate")),
		sprintf("%.2f", med("strataload8rate") / med("qmdload8rate")))
	row("CLI search per call p50, no queryd serve (ms)", sprintf("%.0f", med("strataclip50")),
		sprintf("%.0f", med("qmdclip50")), sprintf("%.2f", med("strataclip50") / med("qmdclip50")))
	row("CLI search per call p50, queryd serve running (ms)", sprintf("%.0f", med("stratacli-servep50")),
		sprintf("%.0f (no server used)", med("qmdclip50")), sprintf("%.2f", med("stratacli-servep50") / med("qmdclip50")))
	n = 0; parts = ""; tables = 0
	while ((getline line < sizes) > 0) {
		split(line, f, " "); tables += f[2]
		if (n++ < 4) parts = parts (parts == "" ? "" : ", ") f[1] " " sprintf("%.1f", f[2] / 1048576)
	}
	row("index on disk (MiB)", sprintf("%.1f (tables %.1f: %s)", db / 1048576, tables / 1048576, parts),
		sprintf("%.1f", qb / 1048576), sprintf("%.1f (tables %.1f)", db / qb, tables / qb))
	row("nDCG@10, SciFact test (REST; MCP)", sn "; " smn, qn, sprintf("%.1f", (qn > 0 ? sn / qn : 0)))
	printf "(empty answers, REST: StrataKB %d, qmd %d of %d; CLI: %d calls a round)\n", med("stratarestempty"), med("qmdrestempty"), med("qmdrestn"), runs
}' "$work/results.txt"
echo "(medians over the rounds; searches/s: the rounds' range, the ratio of their medians; REST and MCP: the 300"
echo " test claims after 10 untimed train claims; 8 clients: the 809 train claims; work files: $work)"
echo "(qmd's lex search joins a claim's words with AND: most claims find nothing, so its times are mostly those of"
echo " empty answers; its harness's OR-ed diagnostic on the same index scores 0.6816: ../shared/bench/qmd-peer/README.md)"
