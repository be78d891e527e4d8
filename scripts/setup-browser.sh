#!/usr/bin/env bash
# setup-browser.sh installs the browser that the explorer's browser tests
# (e2e/ui) drive: Debian's Chromium, package chromium, at /usr/bin/chromium.
# playwright-core (scripts/setup-e2e.sh) drives it; no test downloads a
# browser of its own. It is not part of `make setup`, so `make run` stays
# as light as it was: .ci/run calls it before `make test`, and a developer
# runs it once to run the browser tests. Idempotent: with the browser there
# it only prints its version.
set -euo pipefail

log() { printf '==> %s\n' "$*"; }
browser=/usr/bin/chromium

if [[ -x $browser ]]; then
	log "$("$browser" --version 2>/dev/null || echo "chromium") present"
	exit 0
fi

sudo=()
if ((EUID != 0)); then
	if ! command -v sudo >/dev/null; then
		echo "setup-browser: installing chromium needs root (or sudo): apt-get install chromium" >&2
		exit 1
	fi
	sudo=(sudo)
fi
log "installing Debian's chromium (apt-get install chromium)"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
[[ -x $browser ]] || { echo "setup-browser: $browser is still missing after apt-get install chromium" >&2; exit 1; }
log "$("$browser" --version) installed"
