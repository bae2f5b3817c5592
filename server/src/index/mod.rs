//! Lexical retrieval (BM25) over chunks of workspace files: the index, its upkeep as
//! documents change, and the search API.
//!
//! The agent asks this before the first model call (to put the few most relevant
//! chunks in the prompt) and, with no provider configured, to answer on its own with a
//! list of places. It is lexical on purpose: no model, no network, no keys, built in
//! well under a second for a typical repository.
//!
//! - `tokenize`: words → terms (identifier splitting, stemming, stop words).
//! - `chunk`: a file → chunks around definitions, with their doc comments.
//! - `index`: the inverted index, and replacing one file's chunks.
//! - `rank`: BM25 plus definition, doc, path and file-kind signals.

mod chunk;
mod inverted;
mod rank;
mod tokenize;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use self::inverted::{analyze, AnalyzedFile, InvertedIndex, Vocabulary};
pub use self::rank::Ranking;
use crate::workspace::read::read_index_text;
use crate::workspace::sandbox::{is_refused_name, Sandbox};
use crate::workspace::walk;

/// Files larger than this are generated data or bundles, not something to cite.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// A NUL byte in this prefix marks a file as binary (ripgrep's heuristic).
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// A searchable index of a workspace's text files. Build it once, keep it current with
/// `update_file`/`remove_file`, and share it behind a lock: it is `Send + Sync` and
/// searching needs only `&self`.
#[derive(Debug, Default)]
pub struct RetrievalIndex {
    index: InvertedIndex,
}

/// One chunk found for a question.
#[derive(Clone, Debug)]
pub struct RetrievalHit {
    /// Workspace-relative, `/` separators.
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: usize,
    /// 1-based, inclusive.
    pub end_line: usize,
    pub score: f32,
    /// The definition the chunk is about, if any.
    pub symbol: Option<String>,
    /// The chunk text: the lines `start_line..=end_line`, without the final newline.
    pub text: String,
}

impl RetrievalIndex {
    /// Walks the workspace with the shared walker (gitignore-aware, never `.git/` or
    /// secrets), skips binary and very large files, and chunks and indexes every text
    /// file. Unreadable files are skipped, not errors: a partial index still helps.
    pub fn build(sandbox: &Sandbox) -> RetrievalIndex {
        let started = Instant::now();
        let paths = workspace_files(sandbox);
        let walked = started.elapsed();

        // Reading and tokenizing dominate, so they run on every core, each thread with
        // its own vocabulary. Batches stream to this thread, which merges them while
        // the others keep reading; the bounded channel keeps memory flat.
        const BATCH_FILES: usize = 32;
        struct Batch {
            worker: usize,
            new_words: Vec<Box<str>>,
            files: Vec<AnalyzedFile>,
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8)
            .min(paths.len() / BATCH_FILES + 1);
        let next = AtomicUsize::new(0);
        let mut index = InvertedIndex::default();
        std::thread::scope(|scope| {
            let (sender, receiver) = std::sync::mpsc::sync_channel::<Batch>(threads * 2);
            for worker in 0..threads {
                let sender = sender.clone();
                let (next, paths) = (&next, &paths);
                scope.spawn(move || {
                    let mut vocab = Vocabulary::default();
                    let mut sent_words = 0;
                    let mut files = Vec::new();
                    let mut flush = |files: &mut Vec<AnalyzedFile>, vocab: &Vocabulary| {
                        let new_words = vocab.words_from(sent_words).to_vec();
                        sent_words += new_words.len();
                        let files = std::mem::take(files);
                        // The receiver only stops early if the building thread panicked.
                        let _ = sender.send(Batch {
                            worker,
                            new_words,
                            files,
                        });
                    };
                    while let Some((relative, absolute)) =
                        paths.get(next.fetch_add(1, Ordering::Relaxed))
                    {
                        if let Some(text) = read_index_text(absolute, MAX_FILE_BYTES) {
                            files.push(analyze(relative.clone(), text, &mut vocab));
                            if files.len() == BATCH_FILES {
                                flush(&mut files, &vocab);
                            }
                        }
                    }
                    flush(&mut files, &vocab);
                });
            }
            drop(sender);
            let mut remaps: Vec<Vec<u32>> = vec![Vec::new(); threads];
            for batch in receiver {
                let remap = &mut remaps[batch.worker];
                index.extend_remap(remap, &batch.new_words);
                for file in batch.files {
                    index.insert(file, remap);
                }
            }
        });
        index.shrink_to_fit();
        tracing::debug!(
            files = index.live_files,
            chunks = index.live_chunks,
            terms = index.vocab.len(),
            walk_ms = walked.as_millis() as u64,
            total_ms = started.elapsed().as_millis() as u64,
            "retrieval index built"
        );
        RetrievalIndex { index }
    }

    /// Replaces one file's text (an open document's unsaved editor text); `relative_path`
    /// is workspace-relative with `/` separators. Adds the file if it was not indexed.
    /// Paths the sandbox refuses (`.git/`, secrets) and binary or huge texts are not
    /// indexed (and drop any earlier version).
    pub fn update_file(&mut self, relative_path: &str, text: &str) {
        let refused = relative_path.split('/').any(is_refused_name);
        let too_big = text.len() as u64 > MAX_FILE_BYTES;
        let binary = text.as_bytes()[..text.len().min(BINARY_SNIFF_BYTES)].contains(&0);
        if refused || too_big || binary {
            self.index.remove(relative_path);
            return;
        }
        let mut vocab = Vocabulary::default();
        let file = analyze(relative_path.to_string(), text.to_string(), &mut vocab);
        self.index.insert_batch(vec![file], &vocab);
    }

    pub fn remove_file(&mut self, relative_path: &str) {
        self.index.remove(relative_path);
    }

    /// Best chunks for a natural-language question, best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<RetrievalHit> {
        self.search_with(query, limit, Ranking::Tuned)
    }

    /// `search` with a chosen ranking; `Ranking::PlainBm25` is the baseline the eval
    /// compares against.
    pub fn search_with(&self, query: &str, limit: usize, ranking: Ranking) -> Vec<RetrievalHit> {
        rank::rank(&self.index, query, limit, ranking)
            .into_iter()
            .map(|scored| {
                let chunk = &self.index.chunks[scored.chunk as usize];
                let file = self.index.file(chunk.file);
                RetrievalHit {
                    path: file.path.clone(),
                    start_line: chunk.start_line as usize + 1,
                    end_line: chunk.end_line as usize,
                    score: scored.score,
                    symbol: rank::best_symbol(&self.index, scored.chunk, query),
                    text: file.text[chunk.start_byte as usize..chunk.end_byte as usize].to_string(),
                }
            })
            .collect()
    }

    pub fn file_count(&self) -> usize {
        self.index.live_files
    }

    /// Number of live chunks (for reports).
    pub fn chunk_count(&self) -> usize {
        self.index.live_chunks
    }

    /// Approximate heap bytes held: file texts, postings and chunk records (for
    /// reports; the term dictionary and hash-table overhead are not counted).
    pub fn approximate_bytes(&self) -> usize {
        let texts: usize = self
            .index
            .files
            .iter()
            .flatten()
            .map(|f| f.text.len())
            .sum();
        let postings: usize = self
            .index
            .postings
            .iter()
            .map(|p| p.capacity() * std::mem::size_of::<inverted::Posting>())
            .sum();
        let chunks = self.index.chunks.len() * std::mem::size_of::<inverted::ChunkRecord>();
        texts + postings + chunks
    }
}

/// Every file the walker admits, as (workspace-relative path, absolute path), sorted
/// so that builds are deterministic.
fn workspace_files(sandbox: &Sandbox) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for entry in walk::builder(sandbox.root()).build() {
        let Ok(entry) = entry else {
            continue;
        };
        if !walk::is_file(&entry) || !walk::admits(sandbox, &entry) {
            continue;
        }
        if let Some(relative) = sandbox.relative(entry.path()) {
            files.push((relative, entry.into_path()));
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // `src/lib.rs` and `.gitignore`; not ignored, secret, binary or .git files.
        assert_eq!(index.file_count(), 2);
        let hits = index.search("how are requests retried with backoff", 5);
        assert_eq!(paths(&hits), ["src/lib.rs"]);
        let hit = &hits[0];
        assert_eq!((hit.start_line, hit.end_line), (1, 4));
        assert_eq!(hit.symbol.as_deref(), Some("retry_with_backoff"));
        assert!(hit.text.starts_with("/// Retries") && hit.text.ends_with('}'));
    }

    #[test]
    fn updates_follow_the_editor() {
        let dir = workspace(&[("src/a.rs", b"pub fn parse_config() {}\n")]);
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let mut index = RetrievalIndex::build(&sandbox);
        assert_eq!(paths(&index.search("parse config", 5)), ["src/a.rs"]);

        // Unsaved edits replace the file's chunks; new files are added.
        index.update_file("src/a.rs", "pub fn render_page() {}\n");
        index.update_file("src/new.rs", "pub fn parse_config_file() {}\n");
        assert_eq!(paths(&index.search("parse config", 5)), ["src/new.rs"]);
        assert_eq!(paths(&index.search("render page", 5)), ["src/a.rs"]);
        assert_eq!(index.file_count(), 2);

        index.remove_file("src/new.rs");
        assert!(index.search("parse config", 5).is_empty());
        // Refused or binary texts are never indexed.
        index.update_file(".env", "parse config\n");
        index.update_file("src/blob.rs", "parse\0config");
        assert!(index.search("parse config", 5).is_empty());
        assert_eq!(index.file_count(), 1);
    }

    #[test]
    fn empty_queries_and_workspaces_find_nothing() {
        let dir = workspace(&[]);
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let index = RetrievalIndex::build(&sandbox);
        assert!(index.search("anything", 5).is_empty());
        let mut index = index;
        index.update_file("a.rs", "fn a() {}\n");
        assert!(index.search("", 5).is_empty());
        assert!(index.search("the of and", 5).is_empty());
        assert!(index.search("fn", 0).is_empty());
    }

    #[test]
    fn index_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<RetrievalIndex>();
    }
}
