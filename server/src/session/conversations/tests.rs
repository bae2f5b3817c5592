//! Keeping, loading, listing and bounding conversations on disk.

use super::*;
use crate::agent::{AskStats, StopReason};
use crate::providers::AssistantTurn;

fn outcome(question: &str, answer: &str) -> AgentOutcome {
    AgentOutcome {
        answer: answer.to_string(),
        citations: Vec::new(),
        edits: Vec::new(),
        steps: Vec::new(),
        stop_reason: StopReason::Answered,
        history: vec![
            Message::User(question.to_string()),
            Message::Assistant(AssistantTurn {
                text: answer.to_string(),
                tool_calls: Vec::new(),
            }),
        ],
        stats: AskStats::default(),
        notice: None,
    }
}

fn store() -> (tempfile::TempDir, tempfile::TempDir, ConversationStore) {
    let cache = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = ConversationStore::at(Some(cache.path().to_path_buf()));
    (cache, root, store)
}

#[test]
fn a_recorded_conversation_is_loaded_and_listed_with_its_first_question() {
    let (_cache, root, store) = store();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let options = AskOptions::default();
    store.record(
        &root,
        "abc123",
        "What does add do?\nmore",
        &outcome("q1", "It adds."),
        &options,
    );
    store.record(
        &root,
        "abc123",
        "And sub?",
        &outcome("q2", "It subtracts."),
        &options,
    );
    let loaded = store.load(&root, "abc123").unwrap();
    assert_eq!(loaded.title, "What does add do?");
    assert_eq!(loaded.history.len(), 2, "the history is the latest one");
    assert_eq!(loaded.transcript.len(), 4);
    assert!(matches!(&loaded.transcript[2], TranscriptEntry::User { text } if text == "And sub?"));
    let listed = store.list(Some(&root));
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, "abc123");
    assert_eq!(store.list(None).len(), 1);
    assert!(store.list(Some(Path::new("/elsewhere"))).is_empty());
}

#[test]
fn corrupt_files_and_unsafe_ids_are_skipped() {
    let (_cache, root, store) = store();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let options = AskOptions::default();
    store.record(&root, "good", "Q", &outcome("q", "a"), &options);
    let directory = store.directory(&root).unwrap();
    std::fs::write(directory.join("bad.json"), b"{not json").unwrap();
    std::fs::write(directory.join("worse.json"), b"\xff\xfe").unwrap();
    assert!(store.load(&root, "bad").is_none());
    assert_eq!(store.list(Some(&root)).len(), 1);
    assert!(store.load(&root, "../good").is_none());
    store.record(&root, "../escape", "Q", &outcome("q", "a"), &options);
    assert!(!directory.parent().unwrap().join("escape.json").exists());
}

#[test]
fn only_the_most_recent_are_kept_and_none_too_old() {
    let (_cache, root, store) = store();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let options = AskOptions::default();
    store.record(&root, "first", "Q", &outcome("q", "a"), &options);
    let directory = store.directory(&root).unwrap();
    // Older files made by hand, with their times set in the past.
    let old = std::fs::read(directory.join("first.json")).unwrap();
    let now = SystemTime::now();
    for n in 0..MAX_CONVERSATIONS + 5 {
        let path = directory.join(format!("c{n}.json"));
        std::fs::write(&path, &old).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(now - Duration::from_secs(60 + n as u64))
            .unwrap();
    }
    let ancient = directory.join("ancient.json");
    std::fs::write(&ancient, &old).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&ancient)
        .unwrap()
        .set_modified(now - MAX_AGE - Duration::from_secs(60))
        .unwrap();
    store.record(&root, "latest", "Q", &outcome("q", "a"), &options);
    let left = std::fs::read_dir(&directory).unwrap().count();
    assert_eq!(left, MAX_CONVERSATIONS);
    assert!(directory.join("latest.json").exists());
    assert!(!ancient.exists());
    assert!(!directory
        .join(format!("c{}.json", MAX_CONVERSATIONS + 4))
        .exists());
}

#[test]
fn nothing_is_kept_inside_the_workspace() {
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let store = ConversationStore::at(Some(root.join(".cache")));
    store.record(
        &root,
        "abc",
        "Q",
        &outcome("q", "a"),
        &AskOptions::default(),
    );
    assert!(!root.join(".cache").exists());
    assert!(store.load(&root, "abc").is_none());
}

#[test]
fn times_are_rfc3339() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(1_796_157_900), "2026-12-01T20:45:00Z");
}
