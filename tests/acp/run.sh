#!/usr/bin/env bash
# Runs the ACP tests: the real `copilot-ls acp` driven by the official ACP Python SDK
# (`agent-client-protocol` from PyPI) and by acpx (npm, a third-party ACP client)
# against the scripted fake provider, with the reference MCP server from npm
# (`@modelcontextprotocol/server-everything`) as a session's MCP server. Installs the
# SDK and pytest into a venv, and the npm packages of package.json (Node 24 for acpx
# among them) into a folder, under $REPO/.tmp/ on first use.
# Env: COPILOT_LS_BIN, FAKE_PROVIDER_BIN (default: $REPO/target/debug/...).
# Last lines: pytest's "N passed", then "acp: N passed, N failed".
set -uo pipefail

TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$TEST_DIR/../.." && pwd)
VENV=$REPO/.tmp/.venv-acp
NPM_DIR=$REPO/.tmp/npm-acp

export COPILOT_LS_BIN=${COPILOT_LS_BIN:-$REPO/target/debug/copilot-ls}
export FAKE_PROVIDER_BIN=${FAKE_PROVIDER_BIN:-$REPO/target/debug/fake-provider}

log() { printf 'acp tests: %s\n' "$*" >&2; }
summary() { printf 'acp: %d passed, %d failed\n' "$1" "$2"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

install_deps() {
  local stamp=$VENV/.requirements
  if [ -x "$VENV/bin/python" ] && cmp -s "$TEST_DIR/requirements.txt" "$stamp"; then
    return 0
  fi
  log "installing $(grep -v '^#' "$TEST_DIR/requirements.txt" | tr '\n' ' ')into $VENV"
  mkdir -p "$REPO/.tmp"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get -o DPkg::Lock::Timeout=600 update -q >&2 \
      && as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
        python3-venv python3-pip >&2 \
      && python3 -m venv "$VENV" || return 1
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$TEST_DIR/requirements.txt" >&2 \
    || { log "pip install failed"; return 1; }
  cp "$TEST_DIR/requirements.txt" "$stamp"
}

install_npm_deps() {
  local stamp=$NPM_DIR/.package.json
  if [ -x "$NPM_DIR/node_modules/.bin/acpx" ] && cmp -s "$TEST_DIR/package.json" "$stamp"; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get -o DPkg::Lock::Timeout=600 update -q >&2 \
      && as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
        nodejs npm >&2 || return 1
  fi
  log "installing acpx, server-everything and node 24 from npm into $NPM_DIR"
  rm -rf "$NPM_DIR" && mkdir -p "$NPM_DIR"
  cp "$TEST_DIR/package.json" "$NPM_DIR/package.json"
  (cd "$NPM_DIR" && npm install --silent --no-audit --no-fund >&2) \
    || { log "npm install failed"; return 1; }
  cp "$TEST_DIR/package.json" "$stamp"
}

if ! install_deps || ! install_npm_deps; then
  summary 0 1
  exit 1
fi
# acpx runs on Node 24 (first on its PATH); the MCP server runs on the same node.
export ACPX_NODE_DIR=$NPM_DIR/node_modules/.bin
export ACPX_BIN=$NPM_DIR/node_modules/.bin/acpx
export NODE_BIN=$NPM_DIR/node_modules/.bin/node
export MCP_SERVER_EVERYTHING=$NPM_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js
for bin in "$COPILOT_LS_BIN" "$FAKE_PROVIDER_BIN"; do
  if [ ! -x "$bin" ]; then
    log "missing $bin (cargo build --workspace --bins, or set COPILOT_LS_BIN / FAKE_PROVIDER_BIN)"
    summary 0 1
    exit 1
  fi
done

# The tests configure the provider themselves; the caller's keys must not leak in.
unset OPENAI_API_KEY ANTHROPIC_API_KEY COPILOT_LS_PROVIDER COPILOT_LS_BASE_URL \
  COPILOT_LS_MODEL COPILOT_LS_MAX_STEPS COPILOT_LS_STREAM COPILOT_LS_TIMEOUT_SECS

# shellcheck source=../support/pytest_counts.sh
. "$TEST_DIR/../support/pytest_counts.sh"
run_pytest "$VENV" "$TEST_DIR" "$@"
summary "$passed" "$failed"
exit $status
