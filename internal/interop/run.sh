#!/usr/bin/env bash
# run.sh runs the interop tests of the mini-me MCP client against servers
# written by others (see doc.go), as CI does: it installs the pinned npm
# servers (setup.sh), builds llama.cpp's llama-server with the shared script
# ../shared/llamacpp/start.sh beside the repository (MINIME_LLAMACPP names
# another copy; about six minutes on two cores the first time on a machine,
# cached after), then runs, in this nested module,
#   MINIME_INTEROP=1 go test -race -count=1 ./...
# so that a missing server is a failure, not a skip. Extra arguments go to
# go test (for example -run TestGoSDK or -v). It prints a summary and exits
# non-zero on any failure. Needs Go, node >= 20 and npm, and for
# llama-server git, cmake (installed with apt-get when run as root), a C++17
# compiler and python3; the network (Go module proxy, npm registry) only the
# first time.
set -uo pipefail
cd "$(dirname "$0")"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

results=()
failed=0
step() { # step NAME COMMAND...
  local name=$1; shift
  local start=$SECONDS
  echo "::: $name"
  if "$@"; then
    results+=("ok    $name ($((SECONDS - start))s)")
  else
    results+=("FAIL  $name ($((SECONDS - start))s)")
    failed=1
  fi
}

interop_tests() {
  MINIME_INTEROP=1 go test -race -count=1 -timeout 15m "$@" ./...
}

step "setup.sh (pinned npm servers)" ./setup.sh
llamacpp=${MINIME_LLAMACPP:-../../../shared/llamacpp/start.sh}
step "llama-server (start.sh prepare, cached)" bash "$llamacpp" prepare
# Even when setup failed: the Go SDK tests need no npm, and the others then
# fail saying what is missing.
step "go test -race ./... (MINIME_INTEROP=1)" interop_tests "$@"

echo
echo "=== interop summary"
printf '%s\n' "${results[@]}"
exit $failed
