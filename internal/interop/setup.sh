#!/usr/bin/env bash
# setup.sh installs the third-party MCP servers the interop tests run against:
# the npm packages pinned, with every transitive dependency, by
# testdata/npm/package-lock.json (today @modelcontextprotocol/server-everything,
# the TypeScript SDK 1.x twice, recent and 1.12.1, which
# testdata/node/tssdk-server.cjs serves, and oidc-provider, the authorization
# server of the OAuth tests).
#
# They go to $MINIME_INTEROP_CACHE, by default
# ${XDG_CACHE_HOME:-$HOME/.cache}/mini-me-interop, in a folder named after the
# lockfile's hash: npm-<first 16 hex digits of its sha256>. The Go tests look
# for the same folder. Running it again is a no-op; an interrupted run leaves
# nothing half installed (the folder appears by one rename, when complete), and
# two runs at once are safe. Install scripts are not run: the packages ship
# prebuilt JavaScript. Needs node >= 20 and npm; the network only the first time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$here/testdata/npm
cache=${MINIME_INTEROP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mini-me-interop}

die() { echo "setup.sh: $*" >&2; exit 1; }

command -v node >/dev/null || die "node is not installed (need node >= 20 and npm)"
command -v npm >/dev/null || die "npm is not installed (need node >= 20 and npm)"
major=$(node -p 'process.versions.node.split(".")[0]')
((major >= 20)) || die "node $(node --version) is too old: need node >= 20"

key=$(sha256sum <"$src/package-lock.json" | cut -c1-16)
dest=$cache/npm-$key
if [[ -f $dest/.complete ]]; then
  echo "setup.sh: already installed in $dest"
  exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$src/package.json" "$src/package-lock.json" "$tmp/"
echo "setup.sh: installing the pinned npm packages (npm ci) into $dest"
(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
[[ -f $tmp/node_modules/@modelcontextprotocol/server-everything/dist/index.js ]] ||
  die "npm ci finished but server-everything's dist/index.js is missing"
for sdk in @modelcontextprotocol/sdk sdk-1.12.1; do
  [[ -f $tmp/node_modules/$sdk/package.json ]] || die "npm ci finished but $sdk is missing"
done
[[ -f $tmp/node_modules/oidc-provider/lib/index.js ]] ||
  die "npm ci finished but oidc-provider's lib/index.js is missing"
touch "$tmp/.complete"
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
  # Another run finished first: keep its copy.
  [[ -f $dest/.complete ]] || die "cannot move the install into $dest"
fi
echo "setup.sh: installed in $dest"
