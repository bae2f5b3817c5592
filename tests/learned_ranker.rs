//! End-to-end through the binary: the learned file ranker (index/learned.rs) and its
//! switch (`COPILOT_LS_LEARNED_RANKER=PATH`, or `off`). A model written here, one tree
//! that puts today's first file last (an order no signal of the hand-set ranking gives),
//! must order a report's places; a question asked of the code keeps the hand-set order
//! whatever the model says; a model that reads other features than the binary computes is
//! not used; `off`, or no switch, is the hand-set ranking. The committed model
//! (`train/rank/out/ranker.txt`) orders a report's places where it differs from the
//! hand-set order. None is on by default (docs/retrieval.md, "The learned ranker").

use std::path::Path;

use copilot_ls_test_support::ask::{ask_without_model, cited_files};

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

/// A report, not a question asked of the code: the learned ranker orders its places.
const REPORT: &str = "Tokens are refilled in the bucket too slowly after the rate changes";

fn first_place(workspace: &Path, question: &str, model: &Path) -> String {
    places(workspace, question, Some(model)).remove(0)
}

/// The files an ask's citations name, in their order, each once; `model` is the switch's
/// value (none: the switch unset).
fn places(workspace: &Path, question: &str, model: Option<&Path>) -> Vec<String> {
    let model = model.map(|model| model.to_str().unwrap());
    let env: Vec<(&str, &str)> = model
        .map(|model| ("COPILOT_LS_LEARNED_RANKER", model))
        .into_iter()
        .collect();
    cited_files(&ask_without_model(
        Path::new(BIN),
        workspace,
        question,
        &env,
    ))
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
fn the_learned_ranker_orders_a_reports_places() {
    let ws = workspace();
    let models = tempfile::tempdir().unwrap();
    let model = models.path().join("first-last.txt");
    std::fs::write(&model, first_last(NAMES)).unwrap();
    let off = Path::new("off");
    // The hand-set ranking: the bucket that refills.
    assert_eq!(first_place(ws.path(), REPORT, off), "src/bucket.py");
    // The model's order: today's first file last.
    assert_eq!(first_place(ws.path(), REPORT, &model), "src/pool.py");
    // A question asked of the code is left to the hand-set order.
    let question = "How are tokens refilled in the bucket?";
    assert_eq!(first_place(ws.path(), question, off), "src/bucket.py");
    assert_eq!(first_place(ws.path(), question, &model), "src/bucket.py");
    // A model of other features is refused, and the hand-set ranking stands.
    let other = models.path().join("other.txt");
    std::fs::write(
        &other,
        first_last(&NAMES.replace("kind_docs", "kind_manual")),
    )
    .unwrap();
    assert_eq!(first_place(ws.path(), REPORT, &other), "src/bucket.py");
}

/// Six modules of generated words, and a report of five of them. Every word is in one
/// module's definitions (`field_index.py`), and two of them (one also in its path) in
/// another's single short definition (`evict_retry.py`): the hand-set order puts the short
/// dense match first, the committed model the module that holds the whole report.
const MODULES: &[(&str, &str)] = &[
    ("src/evict_config.py", "def socket_cache(x):\n    \"\"\"field column.\"\"\"\n    return x.row\n\ndef delay_load(x):\n    \"\"\"field cache socket stream buffer frame shutdown load.\"\"\"\n    return x.lookup\n"),
    ("src/evict_retry.py", "def table_delay(x):\n    \"\"\"retry header entry frame queue token stream.\"\"\"\n    return x.stream\n"),
    ("src/field_index.py", "def shutdown_buffer(x):\n    \"\"\"cache column token buffer load offset config delay.\"\"\"\n    return x.index\n\ndef config_column(x):\n    \"\"\"evict index value queue table delay worker shutdown.\"\"\"\n    return x.retry\n\ndef index_record(x):\n    \"\"\"header buffer frame field stream shutdown value table.\"\"\"\n    return x.lookup\n"),
    ("src/row_queue.py", "def delay_config(x):\n    \"\"\"column socket shutdown header value.\"\"\"\n    return x.shutdown\n"),
    ("src/socket_load.py", "def lookup_stream(x):\n    \"\"\"load evict column field.\"\"\"\n    return x.load\n\ndef load_value(x):\n    \"\"\"buffer field column offset frame.\"\"\"\n    return x.socket\n\ndef value_retry(x):\n    \"\"\"evict entry token.\"\"\"\n    return x.socket\n"),
    ("src/stream_header.py", "def frame_field(x):\n    \"\"\"load shutdown worker.\"\"\"\n    return x.record\n\ndef config_delay(x):\n    \"\"\"load parse buffer offset index record row shutdown.\"\"\"\n    return x.token\n\ndef frame_retry(x):\n    \"\"\"lookup buffer evict value.\"\"\"\n    return x.table\n\ndef retry_column(x):\n    \"\"\"load worker buffer table frame config shutdown stream.\"\"\"\n    return x.cache\n"),
];

#[test]
fn the_committed_model_orders_a_report_and_none_is_on_by_default() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    for (path, text) in MODULES {
        std::fs::write(ws.path().join(path), text).unwrap();
    }
    let report = "lookup retry token value record";
    let places = |model: Option<&str>| places(ws.path(), report, model.map(Path::new));
    let hand_set = places(Some("off"));
    assert_eq!(
        hand_set[..2],
        ["src/evict_retry.py", "src/field_index.py"],
        "{hand_set:?}"
    );
    let committed = concat!(env!("CARGO_MANIFEST_DIR"), "/../train/rank/out/ranker.txt");
    let learned = places(Some(committed));
    assert_eq!(
        learned[..2],
        ["src/field_index.py", "src/evict_retry.py"],
        "{learned:?}"
    );
    // No switch: the hand-set order.
    assert_eq!(places(None), hand_set);
}
