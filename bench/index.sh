#!/usr/bin/env bash
# The workspace index benchmark, one command: `bench/index.sh [REAL_REPO_DIR]`.
#
# Builds the release binary and the retrieval eval, generates corpora of 20, 20,000 and
# 50,000 files (bench/gen_corpus.py, cached in .tmp/bench-index/), then for each of them
# and for REAL_REPO_DIR (any checkout, e.g. `git archive` of rust-lang/cargo into .tmp/)
# measures the cold build, the warm start, the server's time to ready and idle RSS,
# bytes on disk and the latency of an ask with no model (bench/index_bench.py), and
# finally recall on the eval set. Writes the table to .tmp/bench-index/summary.md.
# Environment: BENCH_SIZES (default 20,20000,50000), BENCH_ASKS (default 40).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$REPO/.tmp/bench-index"
mkdir -p "$OUT"
echo "== building release" >&2
cargo build --release -p copilot-ls --bin copilot-ls --example retrieval_eval \
    --manifest-path "$REPO/Cargo.toml" >&2
args=("$REPO/target/release/copilot-ls" "$OUT" --sizes "${BENCH_SIZES:-20,20000,50000}"
      --asks "${BENCH_ASKS:-40}")
if [ $# -ge 1 ]; then
    args+=(--real "$(cd "$1" && pwd)")
fi
python3 "$REPO/bench/index_bench.py" "${args[@]}" | tee "$OUT/summary.md"
echo >> "$OUT/summary.md"
"$REPO/target/release/examples/retrieval_eval" | grep -E '^(recall|MRR)' | tee -a "$OUT/summary.md"
"$REPO/target/release/examples/retrieval_eval" --holdout | grep -E '^(recall|MRR)' \
    | sed 's/^/holdout /' | tee -a "$OUT/summary.md"
