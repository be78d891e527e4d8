#!/usr/bin/env bash
# setup-e2e.sh installs the real clients that the end-to-end tests drive:
# the official MCP TypeScript SDK and the MCP Inspector's CLI (e2e/mcp), and
# playwright-core, which drives Debian's Chromium in the explorer's browser
# tests (e2e/ui; the browser itself comes from scripts/setup-browser.sh,
# never from Playwright's download). All from npm, at pinned versions, into
# the git-ignored var/e2e. It is idempotent: a second run checks the
# installed versions and exits in well under a second.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/var/e2e"
log() { printf '==> %s\n' "$*"; }

SDK_VERSION=1.32.2
INSPECTOR_CLI_VERSION=1.0.3
PLAYWRIGHT_CORE_VERSION=1.64.1

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "setup-e2e: node and npm are required (scripts/setup.sh installs them)" >&2
	exit 1
fi

installed() { # package version
	local f="$dest/node_modules/$1/package.json"
	[[ -f $f ]] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$f" "$2"
}

mkdir -p "$dest"
if [[ ! -f "$dest/package.json" ]]; then
	printf '{\n  "name": "stratakb-e2e-clients",\n  "private": true,\n  "description": "MCP clients for the end-to-end tests; installed by scripts/setup-e2e.sh"\n}\n' >"$dest/package.json"
fi

npm_install() { # spec...
	# --ignore-scripts: install scripts are not needed for CLI use (and the
	# Inspector's fails under npm 11).
	(cd "$dest" && npm install --save-exact --no-audit --no-fund --ignore-scripts --loglevel=error "$@" >/dev/null)
}

if installed @modelcontextprotocol/sdk "$SDK_VERSION"; then
	log "MCP TypeScript SDK $SDK_VERSION present"
else
	log "installing @modelcontextprotocol/sdk@$SDK_VERSION into var/e2e"
	npm_install "@modelcontextprotocol/sdk@$SDK_VERSION"
fi

if installed @modelcontextprotocol/inspector-cli "$INSPECTOR_CLI_VERSION"; then
	log "MCP Inspector CLI $INSPECTOR_CLI_VERSION present"
else
	log "installing @modelcontextprotocol/inspector-cli@$INSPECTOR_CLI_VERSION into var/e2e"
	npm_install "@modelcontextprotocol/inspector-cli@$INSPECTOR_CLI_VERSION"
fi

if installed playwright-core "$PLAYWRIGHT_CORE_VERSION"; then
	log "playwright-core $PLAYWRIGHT_CORE_VERSION present"
else
	# playwright-core has no install script and downloads no browser.
	log "installing playwright-core@$PLAYWRIGHT_CORE_VERSION into var/e2e"
	npm_install "playwright-core@$PLAYWRIGHT_CORE_VERSION"
fi

installed @modelcontextprotocol/sdk "$SDK_VERSION" || { echo "setup-e2e: SDK $SDK_VERSION not installed" >&2; exit 1; }
installed @modelcontextprotocol/inspector-cli "$INSPECTOR_CLI_VERSION" || { echo "setup-e2e: Inspector CLI $INSPECTOR_CLI_VERSION not installed" >&2; exit 1; }
installed playwright-core "$PLAYWRIGHT_CORE_VERSION" || { echo "setup-e2e: playwright-core $PLAYWRIGHT_CORE_VERSION not installed" >&2; exit 1; }
