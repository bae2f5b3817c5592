//! End-to-end through the binary: the learned file ranker's switch
//! (`COPILOT_LS_LEARNED_RANKER=PATH`, index/learned.rs). A model written here, one tree
//! that puts today's first file last (an order no signal of the hand-set
//! ranking gives), must order the answer's places; a model that reads other features than
//! the binary computes is not used; without the switch the hand-set ranking stands. No
//! learned ranker ships yet (docs/retrieval.md, "The learned ranker").

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

/// The feature names the binary computes, in order (index/features.rs `NAMES`).
const NAMES: &str = "fused_rank fused_score lexical_rank lexical_score_share lexical_score bm25 path_bonus coverage name verb named path_ref quoted kind_factor chunks_found vote_share vote_rank found_lexically depth kind_test kind_docs kind_example kind_other question_long question_words question_identifiers question_paths question_errors file_bytes file_chunks file_definitions file_changes file_changed_ago";

/// One tree on `fused_rank` (feature 0): today's first file scores 0, the rest 2, more
/// than today's order weighs for the second place (`TODAY_WEIGHT` 1.5 × ln 2 ≈ 1.04).
fn first_last(names: &str) -> String {
    format!(
        "tree\nversion=v4\nnum_class=1\nmax_feature_idx=32\nobjective=lambdarank\nfeature_names={names}\n\n\
         Tree=0\nnum_leaves=2\nnum_cat=0\nsplit_feature=0\nthreshold=1.5\ndecision_type=2\n\
         left_child=-1\nright_child=-2\nleaf_value=0 2\nshrinkage=1\n\nend of trees\n"
    )
}

fn first_place(workspace: &Path, model: Option<&Path>) -> String {
    let cache = tempfile::tempdir().unwrap();
    let mut command = Command::new(BIN);
    command
        .args(["ask", "--json", "--workspace"])
        .arg(workspace)
        .arg("How are tokens refilled in the bucket?")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_PROVIDER", "none")
        .env("COPILOT_LS_CACHE_DIR", cache.path());
    if let Some(model) = model {
        command.env("COPILOT_LS_LEARNED_RANKER", model);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    result["citations"][0]["path"].as_str().unwrap().to_string()
}

/// Two modules that both refill tokens, one plainly more about the question.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("src/bucket.py"),
        "class Bucket:\n    \"\"\"A token bucket.\"\"\"\n\n    def refill(self):\n        \"\"\"Tokens are refilled in the bucket as time passes.\"\"\"\n        self.tokens = min(self.capacity, self.tokens + self.rate)\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("src/pool.py"),
        "class Pool:\n    def top_up(self):\n        \"\"\"Tokens of the pool are refilled.\"\"\"\n        self.tokens += 1\n",
    )
    .unwrap();
    ws
}

#[test]
fn the_learned_ranker_orders_the_places_when_switched_on() {
    let ws = workspace();
    let models = tempfile::tempdir().unwrap();
    let model = models.path().join("first-last.txt");
    std::fs::write(&model, first_last(NAMES)).unwrap();
    // The hand-set ranking: the bucket that refills.
    assert_eq!(first_place(ws.path(), None), "src/bucket.py");
    // The model's order: today's first file last.
    assert_eq!(first_place(ws.path(), Some(&model)), "src/pool.py");
    // A model of other features is refused, and the hand-set ranking stands.
    let other = models.path().join("other.txt");
    std::fs::write(
        &other,
        first_last(&NAMES.replace("kind_docs", "kind_manual")),
    )
    .unwrap();
    assert_eq!(first_place(ws.path(), Some(&other)), "src/bucket.py");
}
