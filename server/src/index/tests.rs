//! The index's own tests: building, following the editor, bulk builds.

use super::*;

/// An index of files written to a fresh directory (kept alive with the index).
pub(crate) struct TestIndex {
    _dir: tempfile::TempDir,
    index: RetrievalIndex,
}

impl std::ops::Deref for TestIndex {
    type Target = RetrievalIndex;
    fn deref(&self) -> &RetrievalIndex {
        &self.index
    }
}

pub(crate) fn index_of(files: &[(&str, &str)]) -> TestIndex {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let index = RetrievalIndex::build(&Sandbox::new(dir.path()).unwrap());
    TestIndex { _dir: dir, index }
}

fn workspace(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

fn paths(hits: &[RetrievalHit]) -> Vec<&str> {
    hits.iter().map(|h| h.path.as_str()).collect()
}

#[test]
fn build_indexes_text_files_and_respects_the_sandbox() {
    let dir = workspace(&[
        ("src/lib.rs", b"/// Retries a request with backoff.\npub fn retry_with_backoff() {\n    sleep();\n}\n"),
        (".gitignore", b"target/\n"),
        ("target/debug/out.rs", b"pub fn retry_with_backoff() {}\n"),
        (".env", b"BACKOFF_SECRET=retry\n"),
        ("image.bin", b"retry\0backoff"),
        (".git/config", b"retry backoff\n"),
    ]);
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let index = RetrievalIndex::build(&sandbox);
    // `src/lib.rs` and `.gitignore` by their text, `image.bin` by its path only; not
    // ignored, secret or .git files.
    assert_eq!(index.file_count(), 3);
    assert_eq!(index.counts().text, 2);
    let hits = index.search("how are requests retried with backoff", 5);
    assert_eq!(paths(&hits), ["src/lib.rs"]);
    let hit = &hits[0];
    assert_eq!((hit.start_line, hit.end_line), (1, 4));
    assert_eq!(hit.symbol.as_deref(), Some("retry_with_backoff"));
    assert!(hit.text.starts_with("/// Retries") && hit.text.ends_with('}'));
}

/// The editor's open documents, settable by the test.
#[derive(Default)]
struct Editor(Mutex<Vec<crate::workspace::OpenDocument>>);

impl crate::workspace::OpenDocuments for Editor {
    fn open_documents(&self) -> Vec<crate::workspace::OpenDocument> {
        lock(&self.0).clone()
    }
}

impl Editor {
    fn open(&self, root: &Path, path: &str, text: &str) {
        lock(&self.0).push(crate::workspace::OpenDocument {
            path: root.join(path),
            language_id: "rust".into(),
            version: 1,
            rope: ropey::Rope::from_str(text),
        });
    }
}

#[test]
fn updates_follow_the_editor() {
    let dir = workspace(&[("src/a.rs", b"pub fn parse_config() {}\n")]);
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let root = sandbox.root().to_path_buf();
    let editor = Arc::new(Editor::default());
    let index = RetrievalIndex::open(Workspace::new(sandbox, editor.clone()), None);
    index.refresh(BOUNDS, &|_| {});
    assert_eq!(paths(&index.search("parse config", 5)), ["src/a.rs"]);

    // Unsaved edits replace the file's chunks; new files are added. Hits show the
    // editor's text.
    editor.open(&root, "src/a.rs", "pub fn render_page() {}\n");
    editor.open(&root, "src/new.rs", "pub fn parse_config_file() {}\n");
    index.update_file("src/a.rs", "pub fn render_page() {}\n");
    index.update_file("src/new.rs", "pub fn parse_config_file() {}\n");
    assert_eq!(paths(&index.search("parse config", 5)), ["src/new.rs"]);
    let hits = index.search("render page", 5);
    assert_eq!(paths(&hits), ["src/a.rs"]);
    assert_eq!(hits[0].text, "pub fn render_page() {}");
    assert_eq!(index.file_count(), 2);

    index.remove_file("src/new.rs");
    assert!(index.search("parse config", 5).is_empty());
    // Refused or binary texts are never indexed.
    index.update_file(".env", "parse config\n");
    index.update_file("src/blob.rs", "parse\0config");
    assert!(index.search("parse config", 5).is_empty());
    assert_eq!(index.file_count(), 1);

    // A refresh does not put the disk's text over the editor's.
    index.refresh(BOUNDS, &|_| {});
    assert_eq!(paths(&index.search("render page", 5)), ["src/a.rs"]);
    // Back to the disk's text once the editor lets go.
    index.apply(vec![Change::Disk {
        path: "src/a.rs".into(),
    }]);
    assert!(index.search("render page", 5).is_empty());
}

#[test]
fn empty_queries_and_workspaces_find_nothing() {
    let dir = workspace(&[]);
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let index = RetrievalIndex::build(&sandbox);
    assert!(index.search("anything", 5).is_empty());
    index.update_file("a.rs", "fn a() {}\n");
    assert!(index.search("", 5).is_empty());
    assert!(index.search("the of and", 5).is_empty());
    assert!(index.search("fn", 0).is_empty());
}

/// A bulk build (more files than `build::BULK_FILES`) ends merged into one segment;
/// nothing may be lost or doubled on the way, and later changes apply to it.
#[test]
fn a_bulk_build_is_merged_whole_and_stays_updatable() {
    let files: Vec<(String, String)> = (0..1_200)
        .map(|i| {
            let name = format!("src/m{i}/mod{i}.rs");
            let text = format!("/// Module {i}.\npub fn handler_{i}_quux() {{}}\n");
            (name, text)
        })
        .collect();
    let borrowed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_bytes()))
        .collect();
    let dir = workspace(&borrowed);
    let index = RetrievalIndex::build(&Sandbox::new(dir.path()).unwrap());
    assert_eq!(index.file_count(), 1_200);
    let segments = index
        .inner
        .store()
        .reader
        .searcher()
        .segment_readers()
        .len();
    assert_eq!(segments, 1, "a bulk build ends in one segment");
    for i in [0, 599, 1_199] {
        let hits = index.search(&format!("handler {i} quux"), 3);
        let path = format!("src/m{i}/mod{i}.rs");
        assert_eq!(paths(&hits[..1]), [path.as_str()], "{i}");
    }
    // Every chunk of every file once: each file's own name finds one chunk of it.
    let hits = index.search("handler 7 quux", 50);
    let sevens = hits.iter().filter(|h| h.path == "src/m7/mod7.rs").count();
    assert_eq!(sevens, 1);
    index.update_file("src/m7/mod7.rs", "pub fn renamed_entirely() {}\n");
    assert!(index
        .search("handler 7 quux", 50)
        .iter()
        .all(|h| h.path != "src/m7/mod7.rs"));
    assert_eq!(
        paths(&index.search("renamed entirely", 3)),
        ["src/m7/mod7.rs"]
    );
    assert_eq!(index.file_count(), 1_200);
}

#[test]
fn index_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<RetrievalIndex>();
}

/// A hit carries its file's definitions as the index parsed them, so an answer need
/// not parse the file again; they follow the editor's text; a file with no grammar has
/// none.
#[test]
fn hits_carry_their_files_definitions_as_parsed() {
    let index = index_of(&[
        (
            "src/bucket.rs",
            "/// Refills the bucket.\npub fn refill() {\n    top_up();\n}\n",
        ),
        ("notes.txt", "refill the bucket by hand\n"),
    ]);
    let names = |hits: &[RetrievalHit], path: &str| -> Option<Vec<String>> {
        let hit = hits.iter().find(|h| h.path == path).expect(path);
        let symbols = hit.file_symbols.as_deref()?;
        Some(symbols.iter().map(|s| s.name.clone()).collect())
    };
    let hits = index.search("refill the bucket", 5);
    assert_eq!(
        names(&hits, "src/bucket.rs"),
        Some(vec!["refill".to_string()])
    );
    assert_eq!(names(&hits, "notes.txt"), None);
    index.apply(vec![Change::Editor {
        path: "src/bucket.rs".into(),
        text: "pub fn drain() {}\n\n/// Refills the bucket.\npub fn refill() {\n    top_up();\n}\n"
            .into(),
    }]);
    let hits = index.search("refill the bucket", 5);
    let names = names(&hits, "src/bucket.rs").unwrap();
    assert_eq!(names, ["drain", "refill"]);
}

#[test]
fn a_refresh_keeps_the_stamps_beside_the_index_as_its_doc_store_holds_them() {
    let dir = workspace(&[
        ("src/a.rs", b"pub fn parse_config() {}\n"),
        ("b.py", b"def render():\n    pass\n"),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let open = || {
        let workspace = Workspace::new(sandbox.clone(), Arc::new(NoDocuments));
        RetrievalIndex::open(workspace, Some(cache.path()))
    };
    // The stamps of the commit the index holds, if they are kept beside it, and the
    // doc store's.
    let kept_and_stored = |index: &RetrievalIndex| {
        let store = index.inner.store();
        let Location::Disk(at) = &store.location else {
            panic!("the index is on disk");
        };
        let opstamp = store.index.load_metas().unwrap().opstamp;
        (
            stamps_file::read(at, opstamp),
            store::load_stamps(&store.index, index.inner.fields).unwrap(),
        )
    };
    let index = open();
    index.refresh(BOUNDS, &|_| {});
    let (kept, stored) = kept_and_stored(&index);
    assert_eq!(
        kept.as_ref(),
        Some(&stored),
        "a refresh's commit keeps them"
    );
    assert_eq!(stored.len(), 2);
    // An ask's commit of the editor's changes does not write them: the file is of an
    // older commit now, and not used.
    index.update_file("src/a.rs", "pub fn parse_settings() {}\n");
    index.remove_file("b.py");
    let (kept, stored) = kept_and_stored(&index);
    assert_eq!(kept, None);
    assert_eq!(stored.keys().collect::<Vec<_>>(), ["src/a.rs"]);
    drop(index);
    // The next process reads the doc store, takes the writer and keeps them; the one
    // after reads them from their file, and finds what the first left.
    let again = open();
    let (kept, stored) = kept_and_stored(&again);
    assert_eq!(kept.as_ref(), Some(&stored));
    drop(again);
    let third = open();
    assert_eq!(lock(&third.inner.files).clone(), stored);
    assert_eq!(paths(&third.search("parse settings", 5)), ["src/a.rs"]);
}
