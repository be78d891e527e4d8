#!/usr/bin/env bash
# db.sh manages the local PostgreSQL cluster StrataKB runs on by default.
#
#   db.sh start [DIR]   create (once) and start a cluster with pgvector in DIR
#                       (default var/pg); write the connection strings to
#                       var/db.env: DATABASE_URL (the owner, for ingestd) and
#                       QUERYD_DATABASE_URL (the read-only queryd role)
#   db.sh stop [DIR]    stop it
#   db.sh url [DIR]     print the owner's connection string of a running cluster
#
# The port is chosen once, when the cluster is created (the first free one
# from 15432 up, below Linux's ephemeral range 32768-60999, where outgoing
# connections take their local ports), and kept in the cluster's own
# configuration: a restart never moves the cluster, so a running queryd
# reconnects to the same address.
#
# TCP connections need a password (scram-sha-256). The passwords of the
# owner (postgres) and of the queryd role are generated once, kept in files
# beside the env file (var/secrets/, mode 600) and never printed. The unix
# socket in DIR/run, reachable only by the cluster's owner and root, trusts
# its users; db.sh uses it for its own statements.
#
# Options through the environment: DB_NAME (default stratakb), DB_THROWAWAY=1
# (no fsync, and trust on TCP: for test clusters only), DB_ENV_FILE (where to
# write the URLs).
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
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && [[ ! -e "/tmp/.s.PGSQL.$1" ]] &&
		! grep -qi ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

running_port() {
	[[ -f $data/postmaster.pid ]] || return 1
	as_pg "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1 || return 1
	sed -n '4p' "$data/postmaster.pid"
}

secrets="$(dirname "$env_file")/secrets"

# secret NAME prints the password kept in $secrets/NAME, making it once.
secret() {
	local f="$secrets/$1.password"
	if [[ ! -s $f ]]; then
		mkdir -p "$secrets" && chmod 700 "$secrets"
		(umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=\n' >"$f")
	fi
	cat "$f"
}

# url_for PORT [ROLE]: the connection string for ROLE (default postgres).
url_for() {
	local role=${2:-postgres}
	echo "postgres://$role:$(secret "$role")@127.0.0.1:$1/$DB_NAME?sslmode=disable"
}

# shown prints a URL with its password masked, for messages.
shown() { sed -E 's#://([^:/@]+):[^@]*@#://\1:***@#' <<<"$1"; }

# write_hba makes TCP need a password (trust for throwaway test clusters)
# and lets the unix socket, in a folder only the owner can enter, trust.
# Streaming replication (pg_basebackup, a standby: scripts/replica.sh) is
# allowed from loopback on the same terms; PostgreSQL 15's defaults
# (wal_level=replica, max_wal_senders=10) need no change.
write_hba() {
	local host_auth=scram-sha-256
	[[ ${DB_THROWAWAY:-0} == 1 ]] && host_auth=trust
	as_pg tee "$data/pg_hba.conf" >/dev/null <<HBA
# Written by scripts/db.sh; rewritten at every start.
local   all  all                 trust
host    all  all  127.0.0.1/32   $host_auth
host    all  all  ::1/128        $host_auth
host    replication  all  127.0.0.1/32  $host_auth
HBA
}

# configured_port prints the port kept in the cluster's configuration.
configured_port() {
	sed -n "s/^port *= *\([0-9]*\).*/\1/p" "$data/postgresql.auto.conf" 2>/dev/null | tail -n1
}

# has_pgvector: the extension's control file is in this server's share
# folder. Checked before anything starts, so a missing pgvector leaves no
# cluster running behind the error.
has_pgvector() {
	local share
	share=$("$PG_BIN/pg_config" --sharedir 2>/dev/null) || share=/usr/share/postgresql/15
	[[ -f $share/extension/vector.control ]]
}

# replaced_binary: the running server's executable is no longer the one on
# disk (a package upgrade, such as the one 'make setup' may install, replaced
# it). Such a server still runs, but loads the new version's libraries
# (plpgsql among them) and fails on the first function it needs.
replaced_binary() {
	local pid
	pid=$(sed -n '1p' "$data/postmaster.pid" 2>/dev/null) || return 1
	[[ -n $pid ]] || return 1
	[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == *" (deleted)" ]]
}

start() {
	resolve_dir
	has_pgvector || die "pgvector is not installed for PostgreSQL 15: run 'make setup'"
	if [[ ! -f $data/PG_VERSION ]]; then
		echo "db.sh: creating cluster in $data"
		as_pg mkdir -p "$data" "$sock"
		as_pg "$PG_BIN/initdb" -D "$data" -U postgres -E UTF8 --locale=C.UTF-8 --auth=trust >/dev/null
	fi
	as_pg mkdir -p "$sock"
	as_pg chmod 700 "$sock"
	local port
	port=$(configured_port)
	if [[ -z $port ]]; then
		# A new cluster, or one made before db.sh kept the port: a running
		# one keeps the port it has, else the first free one is chosen.
		if ! port=$(running_port); then
			port=15432
			while ! port_free "$port"; do
				port=$((port + 1))
				((port < 15632)) || die "no free port in 15432-15631"
			done
		fi
		printf "port = %s\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nmax_connections = 200\n" "$port" "$sock" |
			as_pg tee -a "$data/postgresql.auto.conf" >/dev/null
		echo "db.sh: the cluster listens on port $port from now on"
	fi
	write_hba
	local running
	if running=$(running_port); then
		[[ $running == "$port" ]] || die "the cluster runs on port $running but is configured for $port; run 'make db-stop' then 'make db-start'"
		if replaced_binary; then
			echo "db.sh: PostgreSQL was upgraded on disk while the cluster ran; restarting it on port $port" >&2
			as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$dir/postgres.log" -m fast -w -t 60 restart >/dev/null ||
				{ tail -20 "$dir/postgres.log" >&2; die "PostgreSQL did not restart (log: $dir/postgres.log)"; }
			echo "db.sh: restarted on port $port"
		else
			as_pg "$PG_BIN/pg_ctl" -D "$data" reload >/dev/null
			echo "db.sh: already running on port $port"
		fi
	else
		port_free "$port" || die "port $port, where this cluster listens, is taken by another program; stop it, or set another port in $data/postgresql.auto.conf"
		local opts=""
		if [[ ${DB_THROWAWAY:-0} == 1 ]]; then
			opts="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
		fi
		as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$dir/postgres.log" -o "$opts" -w -t 60 start >/dev/null ||
			{ tail -20 "$dir/postgres.log" >&2; die "PostgreSQL did not start (log: $dir/postgres.log)"; }
		echo "db.sh: started on port $port"
	fi
	# Statements go over the unix socket, as the postgres user.
	local psql=(as_pg "$PG_BIN/psql" -X -q -h "$sock" -p "$port" -U postgres -v ON_ERROR_STOP=1)
	if [[ -z $("${psql[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'") ]]; then
		"${psql[@]}" -d postgres -c "CREATE DATABASE \"$DB_NAME\""
	fi
	"${psql[@]}" -d "$DB_NAME" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS vector" ||
		die "pgvector is not installed for PostgreSQL 15: run 'make setup'"
	# WAL fit for a local cluster (issue 31): PostgreSQL's defaults keep up
	# to 1 GB of recycled segments (497 MB beside a 229 MB database after a
	# SciFact ingest); 256 MB between checkpoints and 64 MB kept, with
	# compressed full-page images. Set once; a value set since is kept.
	if ! grep -q '^max_wal_size' "$data/postgresql.auto.conf" 2>/dev/null; then
		"${psql[@]}" -d postgres -c "ALTER SYSTEM SET max_wal_size = '256MB'" -c "ALTER SYSTEM SET min_wal_size = '64MB'" \
			-c "ALTER SYSTEM SET wal_compression = 'on'" -c "SELECT pg_reload_conf()" >/dev/null
	fi
	# The owner's password, and the queryd role: it logs in with its own
	# password; its privileges (SELECT only) come from the migrations.
	# The passwords are alphanumeric (see secret) and reach psql on its
	# standard input, not its command line.
	"${psql[@]}" -d postgres >/dev/null <<SQL
\set pw '$(secret postgres)'
\set qpw '$(secret queryd)'
ALTER ROLE postgres PASSWORD :'pw';
SELECT format('CREATE ROLE queryd LOGIN PASSWORD %L', :'qpw')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'queryd') \gexec
ALTER ROLE queryd LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'qpw';
SQL
	mkdir -p "$(dirname "$env_file")"
	(umask 077 && printf 'DATABASE_URL=%s\nQUERYD_DATABASE_URL=%s\nSTRATA_PG_DIR=%s\n' \
		"$(url_for "$port")" "$(url_for "$port" queryd)" "$dir" >"$env_file")
	echo "db.sh: DATABASE_URL=$(shown "$(url_for "$port")") and QUERYD_DATABASE_URL (role queryd) written to $env_file"
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
