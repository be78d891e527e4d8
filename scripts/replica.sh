#!/usr/bin/env bash
# replica.sh runs a hot standby of the local PostgreSQL cluster (make
# db-start), for trying queryd on a streaming replica on one machine.
#
#   replica.sh start   create (once, with pg_basebackup -R) and start the
#                      standby beside the cluster (var/pg-replica), on its
#                      own loopback port; write QUERYD_READ_DATABASE_URL (the
#                      queryd role on the standby) to var/replica.env
#   replica.sh stop    stop it
#   replica.sh remove  stop it and delete its folder
#
# queryd reads from the standby when started with that variable:
#   set -a; . var/replica.env; set +a; ./bin/queryd serve
# Its ledger (receipts, interactions) stays on QUERYD_DATABASE_URL, the
# primary. docs/scale.md has the rest.
#
# The port is chosen once (the first free one from 15532 up) and kept in
# the standby's configuration. Passwords are never printed: the URL shows
# masked, and var/replica.env is mode 600. Options through the environment:
# DB_ENV_FILE (default var/db.env, written by db.sh), REPLICA_ENV_FILE
# (default var/replica.env).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
db_env=${DB_ENV_FILE:-$root/var/db.env}
out_env=${REPLICA_ENV_FILE:-$(dirname "$db_env")/replica.env}
cmd=${1:-}

die() { echo "replica.sh: $*" >&2; exit 1; }
[[ -x $PG_BIN/pg_basebackup ]] || die "PostgreSQL 15 server not found in $PG_BIN: run 'make setup' first"

as_pg() {
	if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

env_var() { sed -n "s/^$1=//p" "$db_env" 2>/dev/null | tail -n1; }
shown() { sed -E 's#://([^:/@]+):[^@]*@#://\1:***@#' <<<"$1"; }

[[ -f $db_env ]] || die "$db_env not found: run 'make db-start' first"
primary_dir=$(env_var STRATA_PG_DIR)
[[ -n $primary_dir ]] || die "$db_env names no STRATA_PG_DIR: run 'make db-start' again"
dir="$(dirname "$primary_dir")/$(basename "$primary_dir")-replica"

# resolve_dir makes the standby's folder, the postgres user's when running
# as root; where that user cannot enter it (a private home directory), the
# standby goes to a per-checkout folder under /tmp, as db.sh's cluster does.
resolve_dir() {
	mkdir -p "$dir"
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres:postgres "$dir"
		if ! runuser -u postgres -- test -w "$dir" 2>/dev/null; then
			dir="/tmp/stratakb-pg-replica-$(printf '%s' "$dir" | sha256sum | cut -c1-12)"
			mkdir -p "$dir" && chown postgres:postgres "$dir"
			echo "replica.sh: postgres cannot write beside the cluster; using $dir" >&2
		fi
	fi
	chmod 700 "$dir"
	data="$dir/data"
}
resolve_dir

port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && [[ ! -e "/tmp/.s.PGSQL.$1" ]]
}

running() { [[ -f $data/postmaster.pid ]] && as_pg "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; }

configured_port() {
	sed -n "s/^port *= *\([0-9]*\).*/\1/p" "$data/postgresql.auto.conf" 2>/dev/null | tail -n1
}

# create makes the standby from a base backup of the running cluster. The
# backup copies the primary's configuration; the port and the socket
# folder written after it win.
create() {
	local owner port
	owner=$(env_var DATABASE_URL)
	[[ -n $owner ]] || die "$db_env names no DATABASE_URL"
	# db.sh start refreshes the cluster's pg_hba.conf, which allows
	# replication from loopback, and starts it when it is down.
	DB_ENV_FILE="$db_env" bash "$root/scripts/db.sh" start "$primary_dir" >/dev/null
	echo "replica.sh: base backup of $(shown "$owner") into $data"
	as_pg mkdir -p "$dir/run"
	as_pg chmod 700 "$dir/run"
	as_pg "$PG_BIN/pg_basebackup" -d "$owner" -D "$data" -R -X stream -c fast ||
		{ as_pg rm -rf "$data"; die "pg_basebackup failed"; }
	port=15532
	while ! port_free "$port"; do
		port=$((port + 1))
		((port < 15732)) || die "no free port in 15532-15731"
	done
	printf "\n# scripts/replica.sh\nport = %s\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nhot_standby = on\n" \
		"$port" "$dir/run" | as_pg tee -a "$data/postgresql.auto.conf" >/dev/null
}

start() {
	[[ -f $data/PG_VERSION ]] || create
	local port
	port=$(configured_port)
	[[ -n $port ]] || die "no port in $data/postgresql.auto.conf"
	if running; then
		echo "replica.sh: already running on port $port"
	else
		as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 start >/dev/null ||
			{ tail -20 "$dir/postgres.log" >&2; die "the standby did not start (log: $dir/postgres.log)"; }
		echo "replica.sh: standby started on port $port"
	fi
	local q
	q=$(env_var QUERYD_DATABASE_URL)
	[[ -n $q ]] || die "$db_env names no QUERYD_DATABASE_URL"
	q=$(sed -E "s#@127\.0\.0\.1:[0-9]+/#@127.0.0.1:$port/#" <<<"$q")
	(umask 077 && printf 'QUERYD_READ_DATABASE_URL=%s\n' "$q" >"$out_env")
	echo "replica.sh: QUERYD_READ_DATABASE_URL=$(shown "$q") written to $out_env"
	echo "replica.sh: queryd reads from the standby with: set -a; . $out_env; set +a; ./bin/queryd serve"
}

stop() {
	if running; then
		as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
		echo "replica.sh: stopped"
	else
		echo "replica.sh: not running"
	fi
}

case $cmd in
start) start ;;
stop) stop ;;
remove)
	stop
	as_pg rm -rf "$data"
	rm -f "$out_env"
	echo "replica.sh: removed $data"
	;;
*) die "usage: replica.sh start|stop|remove" ;;
esac
