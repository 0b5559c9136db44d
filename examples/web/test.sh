#!/usr/bin/env bash
# test.sh runs the web example's browser test: it installs what the test
# needs when it is missing (Debian's chromium with apt-get, the pinned npm
# MCP Apps servers of testdata/npm with npm ci, into a cache folder named
# after the lockfile's hash), then runs go test -race in this module.
# Screenshots of a failed test go to $MINIME_WEB_ARTIFACTS (default
# ./artifacts).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

if ! command -v chromium >/dev/null; then
  echo "test.sh: installing chromium (apt-get)"
  apt-get -qq update && DEBIAN_FRONTEND=noninteractive apt-get -qq install -y chromium >/dev/null
fi

cache=${MINIME_WEB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mini-me-web}
key=$(sha256sum <testdata/npm/package-lock.json | cut -c1-16)
dest=$cache/npm-$key
if [[ ! -f $dest/.complete ]]; then
  command -v npm >/dev/null || { echo "test.sh: npm is not installed (need node >= 20)" >&2; exit 1; }
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.install.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp testdata/npm/package.json testdata/npm/package-lock.json "$tmp/"
  echo "test.sh: installing the pinned MCP Apps servers (npm ci) into $dest"
  (cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  touch "$tmp/.complete"
  mv -T "$tmp" "$dest" 2>/dev/null || [[ -f $dest/.complete ]]
fi

export MINIME_WEB_NPM=$dest/node_modules
export MINIME_WEB_CHROMIUM=${MINIME_WEB_CHROMIUM:-$(command -v chromium)}
go test -race -count=1 "$@" ./...
