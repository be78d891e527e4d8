#!/usr/bin/env bash
# db.sh manages the local PostgreSQL cluster StrataKB runs on by default.
#
#   db.sh start [DIR]   create (once) and start a cluster with pgvector in DIR
#                       (default var/pg), on a free port from 55432 up; write
#                       the connection string to var/db.env (DATABASE_URL=...)
#   db.sh stop [DIR]    stop it
#   db.sh url [DIR]     print the connection string of a running cluster
#
# Options through the environment: DB_NAME (default stratakb), DB_THROWAWAY=1
# (no fsync: for test clusters only), DB_ENV_FILE (where to write the URL).
# As root the cluster runs as the postgres user, since initdb refuses root.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DB_NAME=${DB_NAME:-stratakb}
cmd=${1:-}
dir=${2:-$root/var/pg}
env_file=${DB_ENV_FILE:-$root/var/db.env}

die() { echo "db.sh: $*" >&2; exit 1; }
[[ -x $PG_BIN/pg_ctl ]] || die "PostgreSQL 15 server not found in $PG_BIN: run 'make setup' first"

as_pg() {
	if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The cluster directory must be reachable by the postgres user. When the
# checkout lives somewhere that user cannot enter (a private home directory),
# the cluster goes to a per-checkout folder under /tmp instead.
resolve_dir() {
	mkdir -p "$dir"
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres:postgres "$dir"
		if ! runuser -u postgres -- test -w "$dir" 2>/dev/null; then
			local alt
			alt="/tmp/stratakb-pg-$(printf '%s' "$dir" | sha256sum | cut -c1-12)"
			mkdir -p "$alt" && chown postgres:postgres "$alt" && chmod 700 "$alt"
			echo "db.sh: postgres cannot write $dir; using $alt" >&2
			dir=$alt
		fi
	fi
	data="$dir/data"
	sock="$dir/run"
}

port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && [[ ! -e "/tmp/.s.PGSQL.$1" ]]
}

running_port() {
	[[ -f $data/postmaster.pid ]] || return 1
	as_pg "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1 || return 1
	sed -n '4p' "$data/postmaster.pid"
}

url_for() { echo "postgres://postgres@127.0.0.1:$1/$DB_NAME?sslmode=disable"; }

start() {
	resolve_dir
	if [[ ! -f $data/PG_VERSION ]]; then
		echo "db.sh: creating cluster in $data"
		as_pg mkdir -p "$data" "$sock"
		as_pg "$PG_BIN/initdb" -D "$data" -U postgres -E UTF8 --locale=C.UTF-8 --auth=trust >/dev/null
	fi
	as_pg mkdir -p "$sock"
	local port
	if port=$(running_port); then
		echo "db.sh: already running on port $port"
	else
		port=55432
		while ! port_free "$port"; do
			port=$((port + 1))
			((port < 55632)) || die "no free port in 55432-55631"
		done
		local opts="-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$sock -c max_connections=200"
		if [[ ${DB_THROWAWAY:-0} == 1 ]]; then
			opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
		fi
		as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$dir/postgres.log" -o "$opts" -w -t 60 start >/dev/null ||
			{ tail -20 "$dir/postgres.log" >&2; die "PostgreSQL did not start (log: $dir/postgres.log)"; }
		echo "db.sh: started on port $port"
	fi
	local psql=("$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -v ON_ERROR_STOP=1)
	if [[ -z $("${psql[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'") ]]; then
		"${psql[@]}" -d postgres -c "CREATE DATABASE \"$DB_NAME\""
	fi
	"${psql[@]}" -d "$DB_NAME" -c "CREATE EXTENSION IF NOT EXISTS vector" ||
		die "pgvector is not installed for PostgreSQL 15: run 'make setup'"
	mkdir -p "$(dirname "$env_file")"
	printf 'DATABASE_URL=%s\nSTRATA_PG_DIR=%s\n' "$(url_for "$port")" "$dir" >"$env_file"
	echo "db.sh: DATABASE_URL=$(url_for "$port") (written to $env_file)"
}

stop() {
	resolve_dir
	if running_port >/dev/null; then
		as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
		echo "db.sh: stopped"
	else
		echo "db.sh: not running"
	fi
}

case $cmd in
start) start ;;
stop) stop ;;
url)
	resolve_dir
	port=$(running_port) || die "no cluster running in $data: run 'make db-start'"
	url_for "$port"
	;;
*) die "usage: db.sh start|stop|url [DIR]" ;;
esac
