#!/usr/bin/env bash
# The benchmark, one command: `bench/run.sh` (from anywhere).
#
# 1. search: `copilot-ls tool search_code` vs `rg` on a generated corpus of 20,000+ files
#    (hyperfine, warm cache), for a rare literal, a common literal and a regex;
# 2. edits: 10,000 incremental edits on a 10 MB vs a 10 KB document, in process and over
#    LSP stdio (server/benches/edits.rs).
# Prints a summary and writes it to .tmp/bench/summary.md.
#
# Environment: BENCH_FILES (the corpus's tracked files, default 20000; 50000 is the size
# the search target is checked at), BENCH_RUNS (hyperfine runs per command and round, default 10),
# BENCH_ROUNDS (default 3; the order of the two tools alternates), BENCH_SKIP_EDITS=1,
# BENCH_SKIP_SEARCH=1, BENCH_SKIP_LSP=1 (edits in process only).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FILES="${BENCH_FILES:-20000}"
SUFFIX=""
[ "$FILES" = 20000 ] || SUFFIX="-$FILES"
CORPUS="$REPO/.tmp/bench-corpus$SUFFIX"
STAMP="$REPO/.tmp/bench-corpus$SUFFIX.stamp"
OUT="$REPO/.tmp/bench"
BIN="$REPO/target/release/copilot-ls"
RUNS="${BENCH_RUNS:-10}"
ROUNDS="${BENCH_ROUNDS:-3}"
mkdir -p "$OUT"

need_apt=()
command -v rg >/dev/null || need_apt+=(ripgrep)
command -v hyperfine >/dev/null || need_apt+=(hyperfine)
if [ ${#need_apt[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "== installing ${need_apt[*]}" >&2
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

echo "== building release" >&2
cargo build --release --bin copilot-ls --manifest-path "$REPO/Cargo.toml" >&2

# The corpus is cached; it is remade only when missing or when the generator changed.
want="$(sha256sum "$REPO/bench/gen_corpus.py" | cut -d' ' -f1)"
if [ ! -d "$CORPUS" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
    echo "== generating corpus in $CORPUS" >&2
    rm -rf "$CORPUS" "$STAMP"
    python3 "$REPO/bench/gen_corpus.py" "$CORPUS" --files "$FILES"
    echo "$want" >"$STAMP"
fi

# Same files, same mode: copilot-ls includes hidden files, honours .gitignore even
# without a .git (require_git off), ignores the global gitignore and skips binary files;
# rg -n prints line numbers as we do; the explicit `.` keeps rg from searching stdin
# when that is a pipe. Each query: name, our JSON arguments, rg flags, pattern.
NAMES=(rare common regex)
ARGS=(
    '{"pattern":"flux_capacitor_overdrive"}'
    '{"pattern":"config"}'
    '{"pattern":"self\\.(cache|token)\\w*","regex":true,"case_sensitive":true}'
)
FLAGS=('-i -F' '-i -F' '')
PATTERNS=('flux_capacitor_overdrive' 'config' 'self\.(cache|token)\w*')
RG="rg --hidden --no-require-git --no-ignore-global -n"

# Our total: the "(N more matches not shown, TOTAL in F files; …)" line, else the lines.
our_count() {
    "$BIN" tool search_code "$1" --workspace "$CORPUS" </dev/null | python3 -c '
import re, sys
lines = sys.stdin.read().splitlines()
m = re.search(r", (\d+) in \d+ files;", lines[-1]) if lines else None
if m: print(m.group(1))
elif lines and lines[0].startswith("(no matches"): print(0)
else: print(len(lines))'
}

if [ -z "${BENCH_SKIP_SEARCH:-}" ]; then
    cd "$CORPUS"
    rm -f "$OUT"/search-*.json
    for i in "${!NAMES[@]}"; do
        name="${NAMES[$i]}" args="${ARGS[$i]}" flags="${FLAGS[$i]}" pattern="${PATTERNS[$i]}"
        ours="$(our_count "$args")"
        # shellcheck disable=SC2086
        theirs="$($RG $flags -c -- "$pattern" . </dev/null | awk -F: '{s += $NF} END {print s + 0}')"
        echo "== search '$name': copilot-ls $ours matching lines, rg $theirs" >&2
        if [ "$ours" != "$theirs" ]; then
            echo "error: the two tools disagree on '$name'; the comparison would be unfair" >&2
            exit 1
        fi
        echo "$ours" >"$OUT/search-$name.count"
        # Rounds alternate the order of the two commands, so a burst of load from
        # elsewhere on the machine does not land on one tool only. -N: no shell in
        # between; both outputs go to /dev/null (hyperfine's default).
        rg_cmd=(--command-name "rg $name" "$RG $flags -- '$pattern' .")
        our_cmd=(--command-name "copilot-ls $name" "$BIN tool search_code '$args' --workspace .")
        for round in $(seq 1 "$ROUNDS"); do
            if [ $((round % 2)) -eq 1 ]; then order=("${rg_cmd[@]}" "${our_cmd[@]}"); else order=("${our_cmd[@]}" "${rg_cmd[@]}"); fi
            hyperfine -N --warmup 3 --runs "$RUNS" --style basic \
                --export-json "$OUT/search-$name-$round.json" "${order[@]}" >&2
        done
    done
    cd "$REPO"
fi

if [ -z "${BENCH_SKIP_EDITS:-}" ]; then
    echo "== edit benchmark" >&2
    rm -f "$OUT/edits.json"
    BENCH_JSON="$OUT/edits.json" cargo bench -q -p copilot-ls --bench edits \
        --manifest-path "$REPO/Cargo.toml" >&2
fi

python3 "$REPO/bench/summarize.py" "$OUT" "$CORPUS" | tee "$OUT/summary.md"
