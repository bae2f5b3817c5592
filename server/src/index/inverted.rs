//! The inverted index: the term dictionary, postings per term, chunk and file records,
//! and replacing one file's chunks cheaply.
//!
//! Files are analysed (chunked and tokenized) against a private `Vocabulary`, so several
//! threads can analyse at once without sharing anything, and the results are merged by
//! remapping term ids. Removing a file only marks its chunks dead and fixes the
//! document frequencies; dead postings are skipped by search and purged in one sweep
//! once they outnumber the live ones, so an editor sending every keystroke costs
//! O(size of that file), not O(size of the index).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::chunk::{chunk_file, ChunkSpan, Definition};
use super::rank::FileKind;
use super::tokenize::{for_each_word_term, words};

pub type TermId = u32;
pub type ChunkId = u32;
pub type FileId = u32;

/// Term frequencies of one term in one chunk, per field, saturating at 255 (BM25
/// saturates long before). Definition names and doc comments also count in `body`;
/// their own fields say where else the term occurred. Eight bytes: postings are most
/// of the index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Posting {
    pub chunk: ChunkId,
    pub body: u8,
    pub doc: u8,
    pub def: u8,
}

/// FxHash (rustc's hasher): the term maps hash millions of short strings per build,
/// and SipHash's flooding resistance buys nothing for the workspace's own words.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        for &byte in chunks.remainder() {
            self.add(u64::from(byte));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxBuildHasher = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuildHasher>;

#[derive(Debug)]
pub struct ChunkRecord {
    pub file: FileId,
    /// 0-based; `end_line` exclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    /// Number of body terms, BM25's document length.
    pub len: u32,
    pub symbol: Option<Box<str>>,
    pub definitions: Box<[Definition]>,
    pub in_test_module: bool,
    pub alive: bool,
    /// Distinct terms, to fix document frequencies when the chunk dies.
    terms: Box<[TermId]>,
}

#[derive(Debug)]
pub struct FileRecord {
    pub path: String,
    pub text: String,
    pub kind: FileKind,
    pub chunks: Vec<ChunkId>,
    pub path_terms: Box<[TermId]>,
}

/// Term strings to dense ids, and a cache from raw words to their term ids: code
/// repeats its words so much that splitting and stemming each occurrence was most of
/// the build time.
#[derive(Debug, Default)]
pub struct Vocabulary {
    ids: FxHashMap<Box<str>, TermId>,
    words: Vec<Box<str>>,
    word_terms: FxHashMap<Box<str>, Box<[TermId]>>,
}

impl Vocabulary {
    /// Calls `emit` with the id of every term of `text`, interning new terms.
    pub fn for_each_term_id(&mut self, text: &str, mut emit: impl FnMut(TermId)) {
        for word in words(text) {
            if let Some(ids) = self.word_terms.get(word) {
                ids.iter().for_each(|&id| emit(id));
                continue;
            }
            let mut ids = Vec::new();
            for_each_word_term(word, |term| ids.push(self.intern(term)));
            ids.iter().for_each(|&id| emit(id));
            self.word_terms.insert(word.into(), ids.into_boxed_slice());
        }
    }

    pub fn intern(&mut self, word: &str) -> TermId {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        let id = self.words.len() as TermId;
        self.words.push(word.into());
        self.ids.insert(word.into(), id);
        id
    }

    /// The terms interned since the vocabulary had `start` of them.
    pub fn words_from(&self, start: usize) -> &[Box<str>] {
        &self.words[start..]
    }

    pub fn get(&self, word: &str) -> Option<TermId> {
        self.ids.get(word).copied()
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }
}

/// A file chunked and tokenized against a private vocabulary, ready to merge.
#[derive(Debug)]
pub struct AnalyzedFile {
    pub path: String,
    text: String,
    chunks: Vec<AnalyzedChunk>,
    path_terms: Vec<TermId>,
}

#[derive(Debug)]
struct AnalyzedChunk {
    span: ChunkSpan,
    start_byte: u32,
    end_byte: u32,
    len: u32,
    /// Sorted by term id; `Posting::chunk` is unused here.
    postings: Vec<(TermId, Posting)>,
}

/// Chunks and tokenizes one file. `path` is workspace-relative with `/` separators.
pub fn analyze(path: String, text: String, vocab: &mut Vocabulary) -> AnalyzedFile {
    // Line boundaries by hand rather than `str::lines`, to keep byte offsets; a `\r`
    // before the `\n` is not part of the line.
    let mut lines: Vec<&str> = Vec::new();
    let mut line_starts: Vec<usize> = Vec::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        line_starts.push(offset);
        lines.push(line);
        offset += raw.len();
    }
    let markdown = is_markdown(&path);
    let chunked = chunk_file(&lines, markdown);

    let mut counts: FxHashMap<TermId, Posting> = FxHashMap::default();
    let mut chunks = Vec::with_capacity(chunked.chunks.len());
    for span in chunked.chunks {
        counts.clear();
        let mut len = 0u32;
        let range = span.start_line..span.end_line;
        for (line, &doc) in lines[range.clone()].iter().zip(&chunked.doc_lines[range]) {
            vocab.for_each_term_id(line, |term| {
                let entry = counts.entry(term).or_default();
                entry.body = entry.body.saturating_add(1);
                if doc {
                    entry.doc = entry.doc.saturating_add(1);
                }
                len += 1;
            });
        }
        for definition in &span.definitions {
            vocab.for_each_term_id(&definition.name, |term| {
                let entry = counts.entry(term).or_default();
                entry.def = entry.def.saturating_add(1);
            });
        }
        let mut postings: Vec<(TermId, Posting)> = counts.drain().collect();
        postings.sort_unstable_by_key(|(term, _)| *term);
        let last = span.end_line - 1;
        chunks.push(AnalyzedChunk {
            start_byte: line_starts[span.start_line] as u32,
            end_byte: (line_starts[last] + lines[last].len()) as u32,
            len,
            postings,
            span,
        });
    }

    let mut path_terms = Vec::new();
    vocab.for_each_term_id(&path, |id| {
        if !path_terms.contains(&id) {
            path_terms.push(id);
        }
    });
    AnalyzedFile {
        path,
        text,
        chunks,
        path_terms,
    }
}

fn is_markdown(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown") || lower.ends_with(".mdx")
}

#[derive(Debug, Default)]
pub struct InvertedIndex {
    pub vocab: Vocabulary,
    pub postings: Vec<Vec<Posting>>,
    /// Live chunks containing each term.
    pub chunk_df: Vec<u32>,
    /// Live files whose path contains each term.
    pub file_df: Vec<u32>,
    pub chunks: Vec<ChunkRecord>,
    pub files: Vec<Option<FileRecord>>,
    pub live_chunks: usize,
    pub live_files: usize,
    pub total_len: u64,
    by_path: HashMap<String, FileId>,
    free_files: Vec<FileId>,
    /// Dead chunk ids whose postings are gone, ready for reuse.
    free_chunks: Vec<ChunkId>,
    /// Dead chunk ids that may still appear in postings.
    unpurged: Vec<ChunkId>,
    dead_postings: usize,
    live_postings: usize,
}

impl InvertedIndex {
    /// Adds files analysed against `local`, replacing any already indexed under the
    /// same paths.
    pub fn insert_batch(&mut self, files: Vec<AnalyzedFile>, local: &Vocabulary) {
        let remap = self.remap(local);
        for file in files {
            self.insert(file, &remap);
        }
    }

    /// Interns a private vocabulary: the result maps its ids to the index's ids.
    pub fn remap(&mut self, local: &Vocabulary) -> Vec<TermId> {
        let mut remap = Vec::new();
        self.extend_remap(&mut remap, &local.words);
        remap
    }

    /// Extends a private vocabulary's map with the words it interned since.
    pub fn extend_remap(&mut self, remap: &mut Vec<TermId>, new_words: &[Box<str>]) {
        remap.extend(new_words.iter().map(|w| self.vocab.intern(w)));
        let terms = self.vocab.len();
        self.postings.resize_with(terms, Vec::new);
        self.chunk_df.resize(terms, 0);
        self.file_df.resize(terms, 0);
    }

    /// Gives back the slack of growing vectors once a build is done (postings are
    /// most of the memory, and doubling leaves up to half of it unused).
    pub fn shrink_to_fit(&mut self) {
        self.postings.iter_mut().for_each(Vec::shrink_to_fit);
        self.chunks.shrink_to_fit();
        self.files.shrink_to_fit();
    }

    /// Adds a file analysed against the vocabulary `remap` came from, replacing any
    /// file indexed under the same path.
    pub fn insert(&mut self, file: AnalyzedFile, remap: &[TermId]) {
        self.remove(&file.path);
        let kind = FileKind::of_path(&file.path);
        let file_id = match self.free_files.pop() {
            Some(id) => id,
            None => {
                self.files.push(None);
                (self.files.len() - 1) as FileId
            }
        };
        let path_terms: Box<[TermId]> =
            file.path_terms.iter().map(|&t| remap[t as usize]).collect();
        for &term in path_terms.iter() {
            self.file_df[term as usize] += 1;
        }
        let mut chunk_ids = Vec::with_capacity(file.chunks.len());
        for chunk in file.chunks {
            let terms: Box<[TermId]> = chunk
                .postings
                .iter()
                .map(|(t, _)| remap[*t as usize])
                .collect();
            let record = ChunkRecord {
                file: file_id,
                start_line: chunk.span.start_line as u32,
                end_line: chunk.span.end_line as u32,
                start_byte: chunk.start_byte,
                end_byte: chunk.end_byte,
                len: chunk.len,
                symbol: chunk.span.symbol.map(Into::into),
                definitions: chunk.span.definitions.into_boxed_slice(),
                in_test_module: chunk.span.in_test_module,
                alive: true,
                terms,
            };
            let chunk_id = match self.free_chunks.pop() {
                Some(id) => {
                    self.chunks[id as usize] = record;
                    id
                }
                None => {
                    self.chunks.push(record);
                    (self.chunks.len() - 1) as ChunkId
                }
            };
            for (term, mut posting) in chunk.postings {
                let term = remap[term as usize] as usize;
                posting.chunk = chunk_id;
                self.postings[term].push(posting);
                self.chunk_df[term] += 1;
            }
            self.live_postings += self.chunks[chunk_id as usize].terms.len();
            self.live_chunks += 1;
            self.total_len += u64::from(chunk.len);
            chunk_ids.push(chunk_id);
        }
        self.by_path.insert(file.path.clone(), file_id);
        self.files[file_id as usize] = Some(FileRecord {
            path: file.path,
            text: file.text,
            kind,
            chunks: chunk_ids,
            path_terms,
        });
        self.live_files += 1;
    }

    /// Forgets a file; its postings die now and are purged later.
    pub fn remove(&mut self, path: &str) {
        let Some(file_id) = self.by_path.remove(path) else {
            return;
        };
        let Some(file) = self.files[file_id as usize].take() else {
            return;
        };
        for &term in file.path_terms.iter() {
            self.file_df[term as usize] -= 1;
        }
        for &chunk_id in &file.chunks {
            let chunk = &mut self.chunks[chunk_id as usize];
            chunk.alive = false;
            for &term in chunk.terms.iter() {
                self.chunk_df[term as usize] -= 1;
            }
            self.dead_postings += chunk.terms.len();
            self.live_postings -= chunk.terms.len();
            self.live_chunks -= 1;
            self.total_len -= u64::from(chunk.len);
            chunk.terms = Box::new([]);
            chunk.definitions = Box::new([]);
            chunk.symbol = None;
            self.unpurged.push(chunk_id);
        }
        self.free_files.push(file_id);
        self.live_files -= 1;
        if self.dead_postings > 1024 && self.dead_postings > self.live_postings {
            self.purge();
        }
    }

    /// Drops dead postings everywhere and makes their chunk ids reusable.
    fn purge(&mut self) {
        let chunks = &self.chunks;
        for list in &mut self.postings {
            list.retain(|p| chunks[p.chunk as usize].alive);
        }
        self.free_chunks.append(&mut self.unpurged);
        self.dead_postings = 0;
    }

    #[cfg(test)]
    pub fn file_by_path(&self, path: &str) -> Option<&FileRecord> {
        let id = *self.by_path.get(path)?;
        self.files[id as usize].as_ref()
    }

    pub fn file(&self, id: FileId) -> &FileRecord {
        self.files[id as usize]
            .as_ref()
            .expect("a live chunk belongs to a live file")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An index of the given files, for the ranking tests too.
    pub(crate) fn index_of(files: &[(&str, &str)]) -> InvertedIndex {
        let mut vocab = Vocabulary::default();
        let analyzed = files
            .iter()
            .map(|(path, text)| analyze(path.to_string(), text.to_string(), &mut vocab))
            .collect();
        let mut index = InvertedIndex::default();
        index.insert_batch(analyzed, &vocab);
        index
    }

    fn df(index: &InvertedIndex, term: &str) -> u32 {
        index
            .vocab
            .get(term)
            .map_or(0, |t| index.chunk_df[t as usize])
    }

    #[test]
    fn fields_are_counted_separately() {
        let index = index_of(&[(
            "src/a.rs",
            "/// Spawns a worker.\nfn spawn_worker() {\n    spawn();\n}\n",
        )]);
        let term = index.vocab.get("spawn").unwrap();
        let posting = index.postings[term as usize][0];
        assert_eq!((posting.body, posting.doc, posting.def), (3, 1, 1));
        let chunk = &index.chunks[0];
        assert_eq!((chunk.start_line, chunk.end_line), (0, 4));
        let file = index.file(0);
        assert_eq!(
            &file.text[chunk.start_byte as usize..chunk.end_byte as usize],
            file.text.trim_end()
        );
    }

    #[test]
    fn replacing_a_file_keeps_frequencies_right() {
        let mut index = index_of(&[
            ("a.rs", "fn alpha() {}\n"),
            ("b.rs", "fn alpha() {}\nfn beta() {}\n"),
        ]);
        assert_eq!(df(&index, "alpha"), 2);
        for round in 0..3000 {
            let mut vocab = Vocabulary::default();
            let text = format!("fn gamma() {{}}\n// round {round}\n");
            let analyzed = analyze("a.rs".to_string(), text, &mut vocab);
            index.insert_batch(vec![analyzed], &vocab);
        }
        assert_eq!(df(&index, "alpha"), 1);
        assert_eq!(df(&index, "gamma"), 1);
        assert_eq!(index.live_files, 2);
        assert_eq!(index.live_chunks, 2);
        // Purging kept the chunk table from growing with every edit.
        assert!(index.chunks.len() < 1000, "{}", index.chunks.len());
        let live: usize = index
            .postings
            .iter()
            .flatten()
            .filter(|p| index.chunks[p.chunk as usize].alive)
            .count();
        assert_eq!(live, index.live_postings);
        index.remove("a.rs");
        index.remove("missing.rs");
        assert_eq!(df(&index, "gamma"), 0);
        assert_eq!(index.live_files, 1);
        assert!(index.file_by_path("a.rs").is_none());
        assert!(index.file_by_path("b.rs").is_some());
    }

    #[test]
    fn crlf_lines_keep_byte_offsets() {
        let index = index_of(&[("a.py", "def one():\r\n    pass\r\n")]);
        let chunk = &index.chunks[0];
        let file = index.file(0);
        assert_eq!(
            &file.text[chunk.start_byte as usize..chunk.end_byte as usize],
            "def one():\r\n    pass"
        );
    }
}
