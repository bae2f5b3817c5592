//! The store's renames file, kept for its own HEAD; its per-file change counts.

use super::*;
use crate::history::{ChangedFile, CommitRecord};

fn commit(id: &str, files: &[(&str, Option<&str>)]) -> CommitRecord {
    CommitRecord {
        id: id.to_string(),
        time: 0,
        author: "a".to_string(),
        subject: "s".to_string(),
        body: String::new(),
        files: files
            .iter()
            .map(|(path, old)| ChangedFile {
                path: path.to_string(),
                old_path: old.map(str::to_string),
            })
            .collect(),
    }
}

#[test]
fn the_renames_file_gives_the_stores_renames_and_only_for_its_own_head() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(Some(dir.path()));
    let mut writer = store.writer().unwrap();
    store.add(
        &writer,
        &commit("1", &[("a.py", None)]),
        1,
        &MessageWords::default(),
    );
    store.add(
        &writer,
        &commit("2", &[("b.py", Some("a.py"))]),
        2,
        &MessageWords::default(),
    );
    store.add(
        &writer,
        &commit("3", &[("c/d.py", Some("b.py")), ("e.py", None)]),
        3,
        &MessageWords::default(),
    );
    let meta = Meta {
        format: FORMAT,
        head: Some("3".to_string()),
        seq: 3,
        reason: None,
    };
    store.commit(&mut writer, meta.clone()).unwrap();
    let expected = vec![
        ("a.py".to_string(), "b.py".to_string(), 2),
        ("b.py".to_string(), "c/d.py".to_string(), 3),
    ];
    assert_eq!(store.renames_in_index(), expected);
    let text = std::fs::read_to_string(dir.path().join(RENAMES_FILE)).unwrap();
    assert_eq!(renames_from_text(&meta, &text), Some(expected.clone()));
    assert_eq!(store.renames(), expected);
    // Made for another HEAD, or damaged: not used.
    let other = Meta {
        head: Some("4".to_string()),
        ..meta.clone()
    };
    assert_eq!(renames_from_text(&other, &text), None);
    assert_eq!(renames_from_text(&meta, &format!("{text}garbage\n")), None);
    // A store whose renames file is stale reads them from its documents.
    std::fs::write(
        dir.path().join(RENAMES_FILE),
        renames_text(&other, &[("x".into(), "y".into(), 1)]),
    )
    .unwrap();
    assert_eq!(store.renames(), expected);
}

#[test]
fn a_files_change_count_and_how_many_commits_ago_it_last_changed() {
    let mut store = Store::open(None);
    let mut writer = store.writer().unwrap();
    let words = MessageWords::default();
    store.add(
        &writer,
        &commit("1", &[("a.py", None), ("b.py", None)]),
        1,
        &words,
    );
    store.add(&writer, &commit("2", &[("a.py", None)]), 2, &words);
    store.add(&writer, &commit("3", &[("c.py", None)]), 3, &words);
    let meta = Meta {
        format: FORMAT,
        head: Some("3".to_string()),
        seq: 3,
        reason: None,
    };
    store.commit(&mut writer, meta).unwrap();
    assert_eq!(
        store.change_counts(&["a.py", "b.py", "c.py", "d.py"]),
        [(2, Some(1)), (1, Some(2)), (1, Some(0)), (0, None)]
    );
}
