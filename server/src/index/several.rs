//! The index of a whole workspace: one [`RetrievalIndex`] per root (each persistent on
//! its own, so adding a folder never rebuilds the others), searched as one index over
//! all of them would be (`search.rs`: the parts' statistics are summed and their
//! candidates ranked together). With several roots every path it returns starts with
//! its root's name (`workspace/roots.rs`); with one root nothing changes.
//!
//! The per-root work (refreshing, taking in changes, the history) stays with each
//! root's `RetrievalIndex`; this is only the view the searches and lookups go through.

use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::{FxHashMap, FxHashSet};

use super::search::{self, Part};
use super::{
    analyze, features, lock, past_changes, semantic, symbol_table, Bounds, Counts, Coverage,
    IndexedSymbol, Progress, Ranking, RefreshReport, RetrievalHit, RetrievalIndex,
};
use crate::syntax::Symbol;
use crate::workspace::{project_root, Workspace};

/// Every root's index, with what its paths are shown as. Cheap to clone.
#[derive(Clone)]
pub struct WorkspaceIndex {
    roots: Arc<[(String, RetrievalIndex)]>,
}

impl WorkspaceIndex {
    /// The index of a one-root workspace: its paths are shown as they are.
    pub fn one(index: RetrievalIndex) -> WorkspaceIndex {
        WorkspaceIndex::of_roots(vec![(String::new(), index)])
    }

    /// The index of several roots, each with the prefix its paths are shown under
    /// (`Sandbox::prefix`), in the workspace's order.
    pub fn of_roots(roots: Vec<(String, RetrievalIndex)>) -> WorkspaceIndex {
        WorkspaceIndex {
            roots: roots.into(),
        }
    }

    /// The index of every root of `workspace` that is a project (`project_root.rs`):
    /// each shared with the process's sessions on that root (`RetrievalIndex::shared`),
    /// or, for a command that only reads or reports it, opened apart. `Err`: why no root
    /// is indexed (the first root's reason).
    pub fn open_roots(
        workspace: &Workspace,
        cache: Option<&Path>,
        shared: bool,
    ) -> Result<WorkspaceIndex, String> {
        let home = project_root::home_dir();
        let sandbox = &workspace.sandbox;
        let mut roots = Vec::new();
        let mut why_not = None;
        for (i, root) in sandbox.roots().iter().enumerate() {
            if let Some(why) = project_root::not_a_project(&root.path, home.as_deref()) {
                why_not.get_or_insert(why);
                continue;
            }
            let index = match shared {
                true => RetrievalIndex::shared(workspace.only(i), cache),
                false => RetrievalIndex::open(workspace.only(i), cache),
            };
            roots.push((sandbox.prefix(i), index));
        }
        match (roots.is_empty(), why_not) {
            (true, why) => Err(why.unwrap_or_else(|| "no workspace root".to_string())),
            (false, why) => {
                // The others are indexed: the callers tell only of none.
                if let Some(why) = why {
                    tracing::warn!("{why}");
                }
                Ok(WorkspaceIndex::of_roots(roots))
            }
        }
    }

    /// Each root's own index, in the workspace's order.
    pub fn roots(&self) -> impl Iterator<Item = &RetrievalIndex> {
        self.roots.iter().map(|(_, index)| index)
    }

    /// Each root's index with its prefix.
    pub fn prefixed(&self) -> impl Iterator<Item = (&str, &RetrievalIndex)> {
        self.roots
            .iter()
            .map(|(prefix, index)| (prefix.as_str(), index))
    }

    /// The root a shown path lies in (its place in `roots()`) and the path inside it.
    pub fn root_of<'p>(&self, shown: &'p str) -> Option<(usize, &'p str)> {
        self.roots
            .iter()
            .enumerate()
            .find_map(|(i, (prefix, _))| shown.strip_prefix(prefix.as_str()).map(|p| (i, p)))
    }

    /// Best chunks for a natural-language question, best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<RetrievalHit> {
        self.search_with(query, limit, Ranking::Tuned)
    }

    /// The learned ranker's features of the files a search of `query` finds, the
    /// lexical ranking's first `limit` chunks and the files past changes vote for
    /// (`features.rs`; `copilot-ls dev features`).
    pub fn file_features(&self, query: &str, limit: usize) -> Vec<features::FileFeatures> {
        let roots: Vec<(&str, &RetrievalIndex)> = self.prefixed().collect();
        file_features(&roots, query, limit)
    }

    /// `search` with a chosen ranking (see [`RetrievalIndex::search_with`]).
    pub fn search_with(&self, query: &str, limit: usize, ranking: Ranking) -> Vec<RetrievalHit> {
        let roots: Vec<(&str, &RetrievalIndex)> = self.prefixed().collect();
        search_roots(&roots, query, limit, ranking)
    }

    /// Files that may use the identifier `name`, as shown; `None` when some root's index
    /// cannot tell.
    pub fn files_with_identifier(&self, name: &str) -> Option<Vec<String>> {
        let mut files = Vec::new();
        for (prefix, index) in self.prefixed() {
            let found = index.files_with_identifier(name)?;
            files.extend(found.into_iter().map(|path| format!("{prefix}{path}")));
        }
        Some(files)
    }

    /// Definitions whose name starts with `prefix` in every root, as shown, unordered.
    pub fn find_symbols(&self, prefix: &str) -> Vec<IndexedSymbol> {
        let mut found = Vec::new();
        for (root, index) in self.prefixed() {
            found.extend(index.find_symbols(prefix).into_iter().map(|mut hit| {
                hit.path.insert_str(0, root);
                hit
            }));
        }
        found
    }

    /// Definitions named exactly `name` (case-sensitive) in every root, as shown.
    pub fn definitions_named(&self, name: &str) -> Vec<IndexedSymbol> {
        let mut found = Vec::new();
        for (root, index) in self.prefixed() {
            found.extend(index.definitions_named(name).into_iter().map(|mut hit| {
                hit.path.insert_str(0, root);
                hit
            }));
        }
        found
    }

    /// The definitions the index recorded for the file shown as `shown`.
    pub fn file_symbols(&self, shown: &str) -> Option<Vec<Symbol>> {
        let (i, path) = self.root_of(shown)?;
        self.roots[i].1.file_symbols(path)
    }

    /// Waits until every root's first refresh has finished, at most `timeout` in all;
    /// whether they have.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let deadline = Instant::now().checked_add(timeout);
        self.roots().all(|index| {
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            index.wait_ready(left)
        })
    }

    /// How much of the workspace a search sees now: every root's together.
    pub fn coverage(&self) -> Coverage {
        let mut total = Coverage {
            complete: true,
            ..Coverage::default()
        };
        let mut definitions: Option<(usize, usize)> = None;
        for index in self.roots() {
            let coverage = index.coverage();
            total.complete &= coverage.complete;
            total.files_indexed += coverage.files_indexed;
            total.files_total += coverage.files_total;
            if let Some((read, all)) = coverage.definitions {
                let (r, a) = definitions.unwrap_or((0, 0));
                definitions = Some((r + read, a + all));
            }
            total.history = match (total.history, coverage.history) {
                (Some(a), Some(b)) => Some(a.and(b)),
                (a, b) => a.or(b),
            };
        }
        total.definitions = definitions;
        total
    }

    /// The first root's fault (an index kept in memory, and why), if any has one.
    pub fn fault(&self) -> Option<String> {
        self.roots().find_map(RetrievalIndex::fault)
    }

    /// What every root's index holds, summed.
    pub fn counts(&self) -> Counts {
        let mut total = Counts::default();
        for index in self.roots() {
            let counts = index.counts();
            total.files += counts.files;
            total.text += counts.text;
            total.chunks += counts.chunks;
            total.symbols += counts.symbols;
        }
        total
    }

    /// Files indexed in every root.
    pub fn file_count(&self) -> usize {
        self.roots().map(RetrievalIndex::file_count).sum()
    }
}

/// Brings `indexes` up to date one after the other (`RetrievalIndex::refresh_or_fall_back`),
/// reported as one refresh: a root's file and definition counts follow those of the
/// roots before it, so the progress only grows. The reports summed (the first
/// truncation, failure and unreached path kept).
pub fn refresh_in_turn<'a>(
    indexes: impl IntoIterator<Item = &'a RetrievalIndex>,
    bounds: Bounds,
    progress: &dyn Fn(Progress),
) -> RefreshReport {
    let mut total = RefreshReport::default();
    // What the roots refreshed before counted: files, definitions.
    let (mut files_before, mut definitions_before) = (0, 0);
    for index in indexes {
        let (files, definitions) = (Cell::new(0), Cell::new(0));
        let report = index.refresh_or_fall_back(bounds, &|reported| {
            progress(match reported {
                Progress::Files { done, total } => {
                    files.set(total);
                    Progress::Files {
                        done: files_before + done,
                        total: files_before + total,
                    }
                }
                Progress::Definitions { done, total } => {
                    definitions.set(total);
                    Progress::Definitions {
                        done: definitions_before + done,
                        total: definitions_before + total,
                    }
                }
                truncated => truncated,
            })
        });
        files_before += files.get();
        definitions_before += definitions.get();
        total.files_read += report.files_read;
        total.seconds += report.seconds;
        total.unreached += report.unreached;
        total.truncated = total.truncated.or(report.truncated);
        total.failed = total.failed.or(report.failed);
        total.unreached_example = total.unreached_example.or(report.unreached_example);
    }
    total
}

/// One root's searchers, held for one search.
struct Held {
    searcher: tantivy::Searcher,
    layer: Option<(tantivy::Searcher, FxHashSet<String>)>,
}

/// The search of `RetrievalIndex::search_with` over several roots' indexes at once, each
/// with the prefix its paths are shown under. A hit whose file can no longer be read is
/// left out.
pub(super) fn search_roots(
    roots: &[(&str, &RetrievalIndex)],
    query: &str,
    limit: usize,
    ranking: Ranking,
) -> Vec<RetrievalHit> {
    let evidence = search::Evidence {
        past: past_changes_of(roots, query, ranking),
        semantic: match ranking {
            Ranking::Tuned => semantic::Semantic::for_question(query),
            Ranking::PlainBm25 => None,
        },
        learned: match ranking {
            Ranking::Tuned => super::learned::current(),
            Ranking::PlainBm25 => None,
        },
        facts: &|paths: &[&str]| file_facts(roots, paths),
    };
    let held = hold(roots);
    let found = found_in(roots, &held, query, limit, ranking, &evidence);
    hits(roots, &held, found)
}

/// The learned ranker's features of the files a question's search finds (`features.rs`):
/// the lexical ranking's first `limit` chunks, and the files past changes vote for, each
/// as numbers of its own rather than fused.
pub(super) fn file_features(
    roots: &[(&str, &RetrievalIndex)],
    query: &str,
    limit: usize,
) -> Vec<features::FileFeatures> {
    let past = past_changes_of(roots, query, Ranking::Tuned);
    let facts = |paths: &[&str]| file_facts(roots, paths);
    let lexical = search::Evidence {
        past: search::PastChanges {
            voted: Vec::new(),
            fusion: past.fusion,
        },
        semantic: None,
        learned: None,
        facts: &facts,
    };
    let held = hold(roots);
    let found = found_in(roots, &held, query, limit, Ranking::Tuned, &lexical);
    features::of_files(
        &found,
        &past.voted,
        &super::query::parse(query),
        past.fusion,
        &facts,
    )
}

/// What each root's index and history know of the files `paths` shows (`FileFacts`):
/// its stamp's size, chunks and definitions, and its change counts. A path no root holds
/// gets the default (all zero).
pub(super) fn file_facts(
    roots: &[(&str, &RetrievalIndex)],
    paths: &[&str],
) -> Vec<features::FileFacts> {
    let mut facts = vec![features::FileFacts::default(); paths.len()];
    for (prefix, index) in roots {
        let mut mine: Vec<(usize, &str)> = Vec::new();
        {
            let files = super::lock(&index.inner.files);
            for (i, shown) in paths.iter().enumerate() {
                let Some(path) = shown.strip_prefix(prefix) else {
                    continue;
                };
                if let Some(stamp) = files.get(path) {
                    facts[i].bytes = stamp.size;
                    facts[i].chunks = stamp.chunks;
                    facts[i].definitions = stamp.symbols;
                    mine.push((i, path));
                }
            }
        }
        let wanted: Vec<&str> = mine.iter().map(|(_, path)| *path).collect();
        let counts = index.inner.history.change_counts(&wanted);
        for ((i, _), (changes, ago)) in mine.iter().zip(counts) {
            facts[*i].changes = changes;
            facts[*i].changed_ago = ago;
        }
    }
    facts
}

/// Every root's searchers, held for one search.
fn hold(roots: &[(&str, &RetrievalIndex)]) -> Vec<Held> {
    roots
        .iter()
        .map(|(_, index)| Held {
            searcher: index.inner.store().reader.searcher(),
            layer: index
                .inner
                .overlay()
                .map(|o| (o.store.reader.searcher(), lock(&o.hidden).clone())),
        })
        .collect()
}

/// The ranked chunks of every root together (empty when the search fails).
fn found_in(
    roots: &[(&str, &RetrievalIndex)],
    held: &[Held],
    query: &str,
    limit: usize,
    ranking: Ranking,
    evidence: &search::Evidence,
) -> Vec<search::Found> {
    let Some((_, first)) = roots.first() else {
        return Vec::new();
    };
    // Each root's index, then its layer (which replaces the paths it hides there).
    let mut parts: Vec<Part> = Vec::new();
    for ((prefix, _), held) in roots.iter().zip(held) {
        parts.push(Part {
            searcher: &held.searcher,
            hidden: held.layer.as_ref().map(|(_, hidden)| hidden),
            prefix,
        });
        if let Some((searcher, _)) = &held.layer {
            parts.push(Part {
                searcher,
                hidden: None,
                prefix,
            });
        }
    }
    // Every root's schema is the one this binary writes, so one root's fields name
    // every root's.
    let fields = &first.inner.fields;
    let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        search::search(&parts, fields, query, limit, ranking, evidence)
    }));
    match found {
        Ok(Ok(found)) => found,
        Ok(Err(error)) => {
            tracing::warn!("index search failed: {error}");
            Vec::new()
        }
        Err(_) => {
            tracing::warn!("index search panicked; the index is likely corrupt");
            Vec::new()
        }
    }
}

/// The chunks found, with their text as the files hold it now.
fn hits(
    roots: &[(&str, &RetrievalIndex)],
    held: &[Held],
    found: Vec<search::Found>,
) -> Vec<RetrievalHit> {
    let Some((_, first)) = roots.first() else {
        return Vec::new();
    };
    let fields = &first.inner.fields;
    // A file with several hits is read once.
    type File = Option<(String, Option<Arc<Vec<Symbol>>>)>;
    let mut files: FxHashMap<String, File> = FxHashMap::default();
    let read_file = |shown: &str| -> File {
        let (i, path) = roots
            .iter()
            .enumerate()
            .find_map(|(i, (prefix, _))| shown.strip_prefix(*prefix).map(|path| (i, path)))?;
        let (index, held) = (roots[i].1, &held[i]);
        let text = index.file_text(path)?;
        // A failed read of the records only means the answer parses the file itself.
        let layer = held
            .layer
            .as_ref()
            .map(|(searcher, hidden)| (searcher, hidden));
        let symbols = symbol_table::of_layered_file(&held.searcher, layer, fields, path);
        Some((text, symbols.map(Arc::new)))
    };
    found
        .into_iter()
        .filter_map(|found| {
            let file = files
                .entry(found.path.clone())
                .or_insert_with(|| read_file(&found.path));
            let (file, file_symbols) = file.as_ref()?;
            let text = analyze::excerpt(file, found.start_line, found.end_line)?;
            Some(RetrievalHit {
                path: found.path,
                start_line: found.start_line,
                end_line: found.end_line,
                score: found.score,
                symbol: found.symbol,
                ranked_down: found.ranked_down,
                text,
                file_symbols: file_symbols.clone(),
            })
        })
        .collect()
}

/// Every root's votes from its own history, as shown, best first.
fn past_changes_of(
    roots: &[(&str, &RetrievalIndex)],
    query: &str,
    ranking: Ranking,
) -> search::PastChanges {
    let mut all = search::PastChanges {
        voted: Vec::new(),
        fusion: past_changes::Fusion::current(),
    };
    for (prefix, index) in roots {
        let past = past_changes::for_question(&index.inner, query, ranking);
        all.fusion = past.fusion;
        all.voted.extend(
            past.voted
                .into_iter()
                .map(|(path, score)| (format!("{prefix}{path}"), score)),
        );
    }
    all.voted.sort_by(|a, b| b.1.total_cmp(&a.1));
    all.voted.truncate(all.fusion.files);
    all
}
