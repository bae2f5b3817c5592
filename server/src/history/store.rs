//! Where the commits read from a repository are kept: a tantivy index of its own beside
//! the workspace index (`<index dir>.history/`, or in memory), one document per commit,
//! and a meta file saying which HEAD it was read at and how complete it is.
//!
//! A commit's message is searched by its words (BM25, the terms made by the index's own
//! tokenizer, handed over with a space after each, as the workspace index does); its
//! changed paths, each with its folders, are terms a path filter matches; the rest is
//! stored. Tantivy does what a search engine does (scoring, persistence, deletes) so
//! this file only says what goes in.

use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, Value, FAST,
    STORED, STRING,
};
use tantivy::{doc, Index, IndexReader, IndexWriter, Order, TantivyDocument, Term};

use super::{ChangedFile, CommitRecord, Reason};

/// Bump when the schema or what a commit record holds changes.
const FORMAT: u32 = 3;
const META_FILE: &str = "history.json";
/// The renames of the store (`Store::renames`), written with the meta file.
const RENAMES_FILE: &str = "renames.tsv";
/// One indexing thread with tantivy's smallest useful arena: commits are small.
const WRITER_BUDGET: usize = 16 * 1024 * 1024;

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    /// Author time, seconds since the epoch.
    time: Field,
    /// Walk order: higher is newer (HEAD's own commit highest).
    seq: Field,
    author: Field,
    subject: Field,
    body: Field,
    /// The message's terms, subject and body together: what the ranking's vote searches.
    words: Field,
    /// The subject's terms and the body's, apart: `git_log`'s field-weighted ranking
    /// (`History::rank_messages`) reads their lengths.
    subject_words: Field,
    body_words: Field,
    paths: Field,
    files: Field,
    /// "1" for a commit that renamed a file: the renames are read from those alone.
    renamed: Field,
}

fn schema() -> (Schema, Fields) {
    let mut schema = Schema::builder();
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("whitespace")
            .set_index_option(IndexRecordOption::WithFreqs)
            .set_fieldnorms(true),
    );
    let number = NumericOptions::default().set_stored().set_fast();
    let fields = Fields {
        id: schema.add_text_field("id", STRING | STORED),
        time: schema.add_i64_field("time", number.clone()),
        seq: schema.add_u64_field("seq", number | FAST),
        author: schema.add_text_field("author", STORED),
        subject: schema.add_text_field("subject", STORED),
        body: schema.add_text_field("body", STORED),
        words: schema.add_text_field("words", words.clone()),
        subject_words: schema.add_text_field("subject_words", words.clone()),
        body_words: schema.add_text_field("body_words", words),
        paths: schema.add_text_field("paths", STRING),
        files: schema.add_text_field("files", STORED),
        renamed: schema.add_text_field("renamed", STRING),
    };
    (schema.build(), fields)
}

/// What the meta file says: the HEAD the store was read at and how complete it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Meta {
    pub format: u32,
    /// Hex id of the HEAD commit read, `None` before the first read.
    pub head: Option<String>,
    /// The highest `seq` given so far.
    pub seq: u64,
    pub reason: Option<Reason>,
}

/// How much more a word of the subject counts than one of the body: the subject is
/// what the author chose to say the commit is about.
pub const SUBJECT_WEIGHT: f32 = 3.0;

/// A message's terms as the store indexes them: each followed by a space.
#[derive(Default)]
pub struct MessageWords {
    pub subject: String,
    pub body: String,
}

/// The store's statistics for a field-weighted ranking (`Store::message_stats`); several
/// roots' are summed, so their commits rank as one store of them all would rank them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageStats {
    pub commits: u64,
    pub subject_terms: u64,
    pub body_terms: u64,
    /// For each query term, the commits whose message holds it.
    pub holding: Vec<u64>,
}

impl MessageStats {
    pub fn add(&mut self, other: &MessageStats) {
        self.commits += other.commits;
        self.subject_terms += other.subject_terms;
        self.body_terms += other.body_terms;
        if self.holding.len() < other.holding.len() {
            self.holding.resize(other.holding.len(), 0);
        }
        for (mine, theirs) in self.holding.iter_mut().zip(&other.holding) {
            *mine += theirs;
        }
    }
}

pub struct Store {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    dir: Option<PathBuf>,
    pub meta: Meta,
}

impl Store {
    /// The store in `dir` (made when missing; rebuilt when of another format or
    /// unreadable), or one in memory.
    pub fn open(dir: Option<&Path>) -> Store {
        let (schema, fields) = schema();
        let on_disk = dir.and_then(|dir| match open_dir(dir, &schema) {
            Ok(opened) => Some((opened, dir.to_path_buf())),
            Err(error) => {
                tracing::warn!("history kept in memory: {error}");
                None
            }
        });
        let ((index, meta), dir) = match on_disk {
            Some((opened, dir)) => (opened, Some(dir)),
            None => ((Index::create_in_ram(schema), Meta::default()), None),
        };
        let reader = index.reader().unwrap_or_else(|_| {
            Index::create_in_ram(index.schema())
                .reader()
                .expect("a reader over an index in memory")
        });
        Store {
            index,
            reader,
            fields,
            dir,
            meta: Meta {
                format: FORMAT,
                ..meta
            },
        }
    }

    /// A writer for one refresh: `None` when another process holds this store's.
    pub fn writer(&self) -> Option<IndexWriter> {
        self.index.writer_with_num_threads(1, WRITER_BUDGET).ok()
    }

    /// Adds one commit; `words` are its subject's terms and its body's, each followed
    /// by a space.
    pub fn add(&self, writer: &IndexWriter, commit: &CommitRecord, seq: u64, words: &MessageWords) {
        let f = self.fields;
        let mut document = doc!(
            f.id => commit.id.clone(),
            f.time => commit.time,
            f.seq => seq,
            f.author => commit.author.clone(),
            f.subject => commit.subject.clone(),
            f.body => commit.body.clone(),
            f.words => format!("{}{}", words.subject, words.body),
            f.subject_words => words.subject.clone(),
            f.body_words => words.body.clone(),
        );
        let mut files = String::new();
        let mut paths: Vec<&str> = Vec::new();
        for file in &commit.files {
            files.push_str(&file.path);
            if let Some(old) = &file.old_path {
                files.push('\t');
                files.push_str(old);
            }
            files.push('\n');
            paths.push(&file.path);
            paths.extend(file.old_path.as_deref());
        }
        let mut terms: Vec<&str> = Vec::new();
        for path in paths {
            terms.push(path);
            // Every folder holding it, with its trailing `/`.
            for (at, _) in path.match_indices('/') {
                terms.push(&path[..=at]);
            }
        }
        terms.sort_unstable();
        terms.dedup();
        for term in terms {
            document.add_text(f.paths, term);
        }
        if commit.files.iter().any(|file| file.old_path.is_some()) {
            document.add_text(f.renamed, "1");
        }
        document.add_text(f.files, files);
        if let Err(error) = writer.add_document(document) {
            tracing::warn!("history: cannot add a commit: {error}");
        }
    }

    pub fn delete(&self, writer: &IndexWriter, id: &str) {
        writer.delete_term(Term::from_field_text(self.fields.id, id));
    }

    pub fn delete_all(&self, writer: &IndexWriter) {
        let _ = writer.delete_all_documents();
    }

    /// Commits the writer's changes and the meta file with them, then the renames file
    /// for that meta.
    pub fn commit(&mut self, writer: &mut IndexWriter, meta: Meta) -> Result<(), String> {
        writer.commit().map_err(|e| e.to_string())?;
        self.reader.reload().map_err(|e| e.to_string())?;
        self.meta = meta;
        if let Some(dir) = &self.dir {
            let text = serde_json::to_string(&self.meta).unwrap_or_default();
            write_atomically(&dir.join(META_FILE), &text)
                .map_err(|e| format!("cannot write the history's meta file: {e}"))?;
            let renames = self.renames_in_index();
            let file = dir.join(RENAMES_FILE);
            // A path with a tab or a line break in it cannot be written there: the
            // renames are then read from the store each time.
            let plain = |path: &String| !path.contains(['\t', '\n', '\r']);
            let written = if renames.iter().all(|(old, new, _)| plain(old) && plain(new)) {
                write_atomically(&file, &renames_text(&self.meta, &renames))
            } else {
                std::fs::remove_file(&file).or_else(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => Ok(()),
                    _ => Err(e),
                })
            };
            if let Err(error) = written {
                tracing::debug!("history: no renames file: {error}");
            }
        }
        Ok(())
    }

    /// Deletes the `n` oldest commits (by walk order).
    pub fn drop_oldest(&self, writer: &IndexWriter, n: usize) {
        let searcher = self.reader.searcher();
        let collector = TopDocs::with_limit(n).order_by_fast_field::<u64>("seq", Order::Asc);
        let Ok(top) = searcher.search(&tantivy::query::AllQuery, &collector) else {
            return;
        };
        for (_, address) in top {
            if let Ok(document) = searcher.doc::<TantivyDocument>(address) {
                self.delete(writer, &text(&document, self.fields.id));
            }
        }
    }

    pub fn count(&self) -> usize {
        self.reader.searcher().num_docs() as usize
    }

    /// The commits whose messages best match `terms` (term, weight), best first, with
    /// their BM25 scores; only those that changed `path` (a file or a folder ending in
    /// `/`) when one is given.
    pub fn search(
        &self,
        terms: &[(String, f32)],
        path: Option<&[String]>,
        limit: usize,
    ) -> Vec<(f32, CommitRecord)> {
        let f = self.fields;
        let words: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|(term, weight)| {
                let query = TermQuery::new(
                    Term::from_field_text(f.words, term),
                    IndexRecordOption::WithFreqs,
                );
                (
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(query), *weight)) as Box<dyn Query>,
                )
            })
            .collect();
        self.top(words, path, limit)
    }

    /// The best `limit` commits for `words` (any of them), only those that changed one of
    /// `paths` when given, with their scores.
    fn top(
        &self,
        words: Vec<(Occur, Box<dyn Query>)>,
        paths: Option<&[String]>,
        limit: usize,
    ) -> Vec<(f32, CommitRecord)> {
        if words.is_empty() || limit == 0 {
            return Vec::new();
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            vec![(Occur::Must, Box::new(BooleanQuery::new(words)))];
        if let Some(paths) = paths {
            clauses.push((Occur::Must, self.any_path(paths)));
        }
        let searcher = self.reader.searcher();
        let collector = TopDocs::with_limit(limit).order_by_score();
        let Ok(top) = searcher.search(&BooleanQuery::new(clauses), &collector) else {
            return Vec::new();
        };
        top.into_iter()
            .filter_map(|(score, address)| {
                let document: TantivyDocument = searcher.doc(address).ok()?;
                Some((score, self.record(&document)))
            })
            .collect()
    }

    /// What a field-weighted ranking of messages needs to know of the whole store: the
    /// commits, the subjects' and bodies' terms, and how many commits hold each of `terms`.
    pub fn message_stats(&self, terms: &[(String, f32)]) -> MessageStats {
        use tantivy::query::Bm25StatisticsProvider;
        let searcher = self.reader.searcher();
        let f = self.fields;
        MessageStats {
            commits: searcher.num_docs(),
            subject_terms: searcher.total_num_tokens(f.subject_words).unwrap_or(0),
            body_terms: searcher.total_num_tokens(f.body_words).unwrap_or(0),
            holding: terms
                .iter()
                .map(|(term, _)| {
                    searcher
                        .doc_freq(&Term::from_field_text(f.words, term))
                        .unwrap_or(0)
                })
                .collect(),
        }
    }

    /// The commits a field-weighted ranking of `terms` chooses among: the best `limit` by
    /// the subject's and the body's BM25 summed (the subject's weighted), only those
    /// that changed one of `paths` when given. They are scored again, exactly, by
    /// `History::rank_messages`, with every root's statistics.
    pub fn message_candidates(
        &self,
        terms: &[(String, f32)],
        paths: Option<&[String]>,
        limit: usize,
    ) -> Vec<CommitRecord> {
        let f = self.fields;
        let mut words: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (term, weight) in terms {
            for (field, boost) in [(f.subject_words, SUBJECT_WEIGHT), (f.body_words, 1.0)] {
                let query = TermQuery::new(
                    Term::from_field_text(field, term),
                    IndexRecordOption::WithFreqs,
                );
                words.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(query), weight * boost)),
                ));
            }
        }
        self.top(words, paths, limit)
            .into_iter()
            .map(|(_, record)| record)
            .collect()
    }

    /// The newest commits (all, or those that changed one of `paths`), newest first.
    pub fn newest(&self, paths: Option<&[String]>, limit: usize) -> Vec<CommitRecord> {
        let query: Box<dyn Query> = match paths {
            Some(paths) => self.any_path(paths),
            None => Box::new(tantivy::query::AllQuery),
        };
        let searcher = self.reader.searcher();
        let collector =
            TopDocs::with_limit(limit.max(1)).order_by_fast_field::<u64>("seq", Order::Desc);
        let Ok(top) = searcher.search(query.as_ref(), &collector) else {
            return Vec::new();
        };
        top.into_iter()
            .filter_map(|(_, address)| {
                let document: TantivyDocument = searcher.doc(address).ok()?;
                Some(self.record(&document))
            })
            .collect()
    }

    /// One commit by its full hex id.
    pub fn get(&self, id: &str) -> Option<CommitRecord> {
        let query = TermQuery::new(
            Term::from_field_text(self.fields.id, id),
            IndexRecordOption::Basic,
        );
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(1).order_by_score())
            .ok()?;
        let (_, address) = top.into_iter().next()?;
        let document: TantivyDocument = searcher.doc(address).ok()?;
        Some(self.record(&document))
    }

    /// Every rename the store knows, as (old path, new path, seq), oldest first.
    pub fn renames(&self) -> Vec<(String, String, u64)> {
        let saved = self.dir.as_ref().and_then(|dir| {
            let text = std::fs::read_to_string(dir.join(RENAMES_FILE)).ok()?;
            renames_from_text(&self.meta, &text)
        });
        saved.unwrap_or_else(|| self.renames_in_index())
    }

    /// The renames read from the commits that made them: each such commit's stored
    /// document is decompressed, which on a long history cost more than the rest of a
    /// no-model ask's history work (numpy: 14 ms), hence the renames file.
    fn renames_in_index(&self) -> Vec<(String, String, u64)> {
        let searcher = self.reader.searcher();
        let query = TermQuery::new(
            Term::from_field_text(self.fields.renamed, "1"),
            IndexRecordOption::Basic,
        );
        let limit = (searcher.num_docs() as usize).max(1);
        let Ok(top) = searcher.search(&query, &TopDocs::with_limit(limit).order_by_score()) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for (_, address) in top {
            let Ok(document) = searcher.doc::<TantivyDocument>(address) else {
                continue;
            };
            let seq = document
                .get_first(self.fields.seq)
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            for line in text(&document, self.fields.files).lines() {
                if let Some((new, old)) = line.split_once('\t') {
                    found.push((old.to_string(), new.to_string(), seq));
                }
            }
        }
        found.sort_by_key(|(_, _, seq)| *seq);
        found
    }

    fn any_path(&self, paths: &[String]) -> Box<dyn Query> {
        let clauses = paths
            .iter()
            .map(|path| {
                let query = TermQuery::new(
                    Term::from_field_text(self.fields.paths, path),
                    IndexRecordOption::Basic,
                );
                (Occur::Should, Box::new(query) as Box<dyn Query>)
            })
            .collect();
        Box::new(BooleanQuery::new(clauses))
    }

    fn record(&self, document: &TantivyDocument) -> CommitRecord {
        let f = self.fields;
        CommitRecord {
            id: text(document, f.id),
            time: document
                .get_first(f.time)
                .and_then(|v| v.as_i64())
                .unwrap_or(0),
            author: text(document, f.author),
            subject: text(document, f.subject),
            body: text(document, f.body),
            files: text(document, f.files)
                .lines()
                .map(|line| match line.split_once('\t') {
                    Some((path, old)) => ChangedFile {
                        path: path.to_string(),
                        old_path: Some(old.to_string()),
                    },
                    None => ChangedFile {
                        path: line.to_string(),
                        old_path: None,
                    },
                })
                .collect(),
        }
    }
}

fn text(document: &TantivyDocument, field: Field) -> String {
    document
        .get_first(field)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

/// The store in `dir` and its meta, or a fresh one when there is none, it is of another
/// format, or it cannot be read.
fn open_dir(dir: &Path, schema: &Schema) -> Result<(Index, Meta), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let meta: Option<Meta> = std::fs::read_to_string(dir.join(META_FILE))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .filter(|meta: &Meta| meta.format == FORMAT);
    let directory = MmapDirectory::open(dir).map_err(|e| e.to_string())?;
    let usable = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let index = Index::open(directory.clone()).ok()?;
        (index.schema() == *schema).then_some(index)
    }))
    .ok()
    .flatten();
    match (usable, meta) {
        (Some(index), Some(meta)) => Ok((index, meta)),
        _ => {
            // Another format, no meta, or unreadable: start again.
            for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    let _ = std::fs::remove_dir_all(&path);
                } else {
                    let _ = std::fs::remove_file(&path);
                }
            }
            let directory = MmapDirectory::open(dir).map_err(|e| e.to_string())?;
            let index = Index::create(directory, schema.clone(), Default::default())
                .map_err(|e| e.to_string())?;
            Ok((index, Meta::default()))
        }
    }
}

/// The renames file's first line: what it was made for. A file made for another HEAD
/// (another process read the history since, or a read ended before writing it) is not
/// used: the renames are read from the store instead.
fn renames_header(meta: &Meta) -> String {
    format!(
        "copilot-ls renames {FORMAT} {} {}",
        meta.head.as_deref().unwrap_or("-"),
        meta.seq
    )
}

/// Every rename (old path, new path, the renaming commit's seq), oldest first, as the
/// renames file holds them: a header, then `seq\told\tnew` lines.
fn renames_text(meta: &Meta, renames: &[(String, String, u64)]) -> String {
    let mut text = renames_header(meta);
    text.push('\n');
    for (old, new, seq) in renames {
        text.push_str(&format!("{seq}\t{old}\t{new}\n"));
    }
    text
}

/// The renames of a renames file made for `meta`; `None` for one made for another, or
/// damaged.
fn renames_from_text(meta: &Meta, text: &str) -> Option<Vec<(String, String, u64)>> {
    let mut lines = text.lines();
    if lines.next()? != renames_header(meta) {
        return None;
    }
    lines
        .map(|line| {
            let mut parts = line.splitn(3, '\t');
            let seq = parts.next()?.parse().ok()?;
            Some((parts.next()?.to_string(), parts.next()?.to_string(), seq))
        })
        .collect()
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut part = path.as_os_str().to_os_string();
    part.push(".part");
    let part = PathBuf::from(part);
    std::fs::write(&part, text)?;
    std::fs::rename(&part, path)
}

mod counts;
#[cfg(test)]
mod tests;
