#!/usr/bin/env bash
# Runs the MCP tests: the real `copilot-ls mcp` driven by the official MCP Python SDK
# (`mcp` from PyPI) and by the MCP Inspector's command line (`@modelcontextprotocol/
# inspector` from npm). Installs the SDK, jsonschema and pytest into a venv, and the
# Inspector into node_modules, under $REPO/.tmp/ on first use.
# Env: COPILOT_LS_BIN (default: $REPO/target/debug/copilot-ls).
# Last lines: pytest's "N passed", then "mcp: N passed, N failed".
set -uo pipefail

TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$TEST_DIR/../.." && pwd)
VENV=$REPO/.tmp/.venv-mcp
NODE_DIR=$REPO/.tmp/mcp-inspector

export COPILOT_LS_BIN=${COPILOT_LS_BIN:-$REPO/target/debug/copilot-ls}
export MCP_INSPECTOR_BIN=$NODE_DIR/node_modules/.bin/mcp-inspector

log() { printf 'mcp tests: %s\n' "$*" >&2; }
summary() { printf 'mcp: %d passed, %d failed\n' "$1" "$2"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get -o DPkg::Lock::Timeout=600 update -q >&2 \
    && as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@" >&2
}

install_python() {
  local stamp=$VENV/.requirements
  if [ -x "$VENV/bin/python" ] && cmp -s "$TEST_DIR/requirements.txt" "$stamp"; then
    return 0
  fi
  log "installing $(grep -v '^#' "$TEST_DIR/requirements.txt" | tr '\n' ' ')into $VENV"
  mkdir -p "$REPO/.tmp"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    apt_install python3-venv python3-pip && python3 -m venv "$VENV" || return 1
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$TEST_DIR/requirements.txt" >&2 \
    || { log "pip install failed"; return 1; }
  cp "$TEST_DIR/requirements.txt" "$stamp"
}

install_inspector() {
  local stamp=$NODE_DIR/.package.json
  if [ -x "$MCP_INSPECTOR_BIN" ] && cmp -s "$TEST_DIR/package.json" "$stamp"; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm || return 1
  fi
  log "installing the MCP Inspector into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  cp "$TEST_DIR/package.json" "$NODE_DIR/package.json"
  (cd "$NODE_DIR" && npm install --silent --no-audit --no-fund >&2) \
    || { log "npm install failed"; return 1; }
  cp "$TEST_DIR/package.json" "$stamp"
}

if ! install_python || ! install_inspector; then
  summary 0 1
  exit 1
fi
if [ ! -x "$COPILOT_LS_BIN" ]; then
  log "missing $COPILOT_LS_BIN (cargo build --workspace --bins, or set COPILOT_LS_BIN)"
  summary 0 1
  exit 1
fi

# No provider: `locate` and the tools never call a model; the caller's keys stay out.
unset OPENAI_API_KEY ANTHROPIC_API_KEY COPILOT_LS_PROVIDER COPILOT_LS_BASE_URL \
  COPILOT_LS_MODEL COPILOT_LS_MAX_STEPS COPILOT_LS_STREAM COPILOT_LS_TIMEOUT_SECS

# shellcheck source=../support/pytest_counts.sh
. "$TEST_DIR/../support/pytest_counts.sh"
run_pytest "$VENV" "$TEST_DIR" "$@"
summary "$passed" "$failed"
exit $status
