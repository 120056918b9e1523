#!/usr/bin/env bash
# The lineage explorer's front end (web/explorer, docs/explorer.md, ADR 0047).
#   scripts/explorer.sh build   npm ci (when package-lock.json changed) + type check + vite build into web/explorer/dist
#   scripts/explorer.sh check   build, then fail when the committed dist differs (the Go binary embeds it; `make test`)
#   scripts/explorer.sh unit    the graph-model tests (vitest; `make test`)
#   scripts/explorer.sh e2e     the browser tests in headless Chromium against a running headwater serve; run by the
#                               Go test e2e/explorer_test.go, which starts the server and sets HW_* (see there)
# Needs Node 20.19+ and npm (the registry: `npm ci` installs exactly package-lock.json). e2e also needs Debian's
# chromium, installed with apt-get when missing (as root), like the stack installs Redis. No browser download.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=web/explorer
STATE=${HEADWATER_STATE_DIR:-$PWD/.state}
log() { printf 'explorer: %s\n' "$*" >&2; }
die() { printf 'explorer: error: %s\n' "$*" >&2; exit 1; }

deps() {
  command -v npm >/dev/null 2>&1 || die "npm is not installed (Node 20.19+ with npm is needed for the explorer's build and tests)"
  # npm ci only when the lock changed since the last install: it deletes node_modules first (~15 s).
  local stamp=$DIR/node_modules/.headwater-lock.sha256 want
  want=$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "npm ci in $DIR"
    (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error) >&2
    echo "$want" >"$stamp"
  fi
}

chromium_path() {
  local c
  for c in "${HEADWATER_CHROMIUM:-}" chromium chromium-browser; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return 0; }
  done
  return 1
}

ensure_chromium() {
  chromium_path >/dev/null && return 0
  log "installing chromium from Debian"
  mkdir -p "$STATE/logs"
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
      >"$STATE/logs/apt-chromium.log" 2>&1 || die "apt-get install chromium failed; see $STATE/logs/apt-chromium.log"
  else
    die "chromium is not installed; run: sudo apt-get install chromium"
  fi
  chromium_path >/dev/null || die "chromium not found after installing it"
}

build() {
  deps
  (cd "$DIR" && npm run --silent build) >&2
}

case "${1:-}" in
  build) build ;;
  check)
    build
    if ! git diff --exit-code --stat -- "$DIR/dist" || [ -n "$(git ls-files --others --exclude-standard -- "$DIR/dist")" ]; then
      die "rebuilding the explorer changed $DIR/dist (above); run 'scripts/explorer.sh build' and commit"
    fi
    log "built assets are up to date"
    ;;
  unit) deps; (cd "$DIR" && npm run --silent test) ;;
  e2e)
    deps; ensure_chromium
    export HW_CHROMIUM; HW_CHROMIUM=$(chromium_path)
    (cd "$DIR" && npm run --silent e2e)
    ;;
  *) die "usage: scripts/explorer.sh build|check|unit|e2e" ;;
esac
