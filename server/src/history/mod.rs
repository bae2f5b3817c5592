//! The repository's history: the commits reachable from HEAD, read with a git library
//! into a store of their own beside the workspace index, brought up to date
//! incrementally, and searched by message and by path (for the ranking's vote and the
//! `git_log` tool); blame and the uncommitted changes (`blame.rs`, `diff.rs`).
//!
//! - `repository`: finding the repository a root lies in and opening it isolated.
//! - `read`: walking from HEAD (never another ref: a clone's branches ahead of HEAD are
//!   the future, and must not vote) and reading each commit's changed paths.
//! - `store`: the commits in tantivy, and the meta file with the HEAD they were read at.
//! - `vote`: a question's words → the files similar past changes changed.
//!
//! Invariants: never starts `git` or anything a repository's configuration names; never
//! writes to the repository; only paths inside the root are kept or shown; bounded
//! (`COPILOT_LS_HISTORY_MAX_COMMITS`, default 50,000); a repository it cannot read fully
//! gives what it could read and says why.

pub mod blame;
pub mod diff;
mod messages;
mod read;
mod reads;
mod repository;
mod store;
pub mod vote;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

pub use self::messages::MESSAGE_CANDIDATES;
use self::reads::Reads;
pub use self::repository::Repository;
pub use self::store::MessageStats;
use self::store::{MessageWords, Meta, Store};

/// The most commits read by default.
pub const DEFAULT_MAX_COMMITS: usize = 50_000;
/// Commits read and written at a time (`History::read_new`): what bounds the memory a
/// cold read of a long history takes.
const READ_BATCH: usize = 2_000;

/// Why the history is not complete (`copilot-ls index --json`, PROTOCOL.md section 10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Off,
    NoRepository,
    UnbornHead,
    Shallow,
    UnreadableObjects,
    Bound,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Off => "off",
            Reason::NoRepository => "no_repository",
            Reason::UnbornHead => "unborn_head",
            Reason::Shallow => "shallow",
            Reason::UnreadableObjects => "unreadable_objects",
            Reason::Bound => "bound",
        }
    }
}

/// One commit as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitRecord {
    /// Full hex id.
    pub id: String,
    /// Author time, seconds since the epoch.
    pub time: i64,
    /// Author name (never the e-mail address).
    pub author: String,
    pub subject: String,
    pub body: String,
    /// Root-relative paths it changed against its first parent.
    pub files: Vec<ChangedFile>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    /// The path it had before, when the commit renamed it.
    pub old_path: Option<String>,
}

/// What the store holds and how complete it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryState {
    pub commits: usize,
    pub complete: bool,
    pub reason: Option<Reason>,
}

/// How the history is read: on or off, and its bound.
#[derive(Clone, Copy, Debug)]
pub struct HistoryOptions {
    pub enabled: bool,
    pub max_commits: usize,
    /// Commits read and written at a time (`READ_BATCH`; `COPILOT_LS_HISTORY_READ_BATCH`
    /// for a test that crosses batches with a few commits).
    pub read_batch: usize,
}

impl HistoryOptions {
    /// `COPILOT_LS_HISTORY=off` (or `false`, `0`) turns it off;
    /// `COPILOT_LS_HISTORY_MAX_COMMITS` bounds it.
    pub fn from_env() -> HistoryOptions {
        let enabled = !matches!(
            std::env::var("COPILOT_LS_HISTORY")
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
                .as_str(),
            "off" | "false" | "0" | "no"
        );
        let max_commits = std::env::var("COPILOT_LS_HISTORY_MAX_COMMITS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_MAX_COMMITS);
        let read_batch = std::env::var("COPILOT_LS_HISTORY_READ_BATCH")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(READ_BATCH);
        HistoryOptions {
            enabled,
            max_commits,
            read_batch,
        }
    }
}

/// Turns a text into search terms (the index's tokenizer, handed down).
pub type Tokenize = fn(&str, &mut dyn FnMut(&str));

/// One root's history.
pub struct History {
    root: PathBuf,
    store: RwLock<Store>,
    options: HistoryOptions,
    /// The editor's `history` setting (the environment's `COPILOT_LS_HISTORY=off` wins).
    wanted: AtomicBool,
    tokenize: Tokenize,
    /// One refresh at a time.
    refreshing: Mutex<()>,
    /// old path → the path it has now, following every rename the store knows;
    /// rebuilt after a refresh that changed the store.
    renamed: RwLock<Option<FxHashMap<String, String>>>,
    /// Why the history could not be read at all, when it could not (no repository, off).
    unavailable: RwLock<Option<Reason>>,
    /// Set by `stop`: a read under way ends without saving what it read.
    stopped: AtomicBool,
    /// This process's reads and the pace of the one under way, for `wait_first_read`.
    reads: Mutex<Reads>,
    read_ended: Condvar,
    /// Set by `expect_read` until the read that follows it ends: a read is coming,
    /// though its thread may not have begun it yet (`finish_first_read`).
    coming: AtomicBool,
}

impl History {
    /// The history of `root` (canonical), kept in `dir` (or in memory). Cheap: nothing is
    /// read from the repository until `refresh`.
    pub fn open(
        root: &Path,
        dir: Option<&Path>,
        options: HistoryOptions,
        tokenize: Tokenize,
    ) -> History {
        let store = Store::open(dir.filter(|_| options.enabled));
        History {
            root: root.to_path_buf(),
            store: RwLock::new(store),
            options,
            wanted: AtomicBool::new(true),
            tokenize,
            refreshing: Mutex::new(()),
            renamed: RwLock::new(None),
            unavailable: RwLock::new((!options.enabled).then_some(Reason::Off)),
            stopped: AtomicBool::new(false),
            reads: Mutex::new(Reads::default()),
            read_ended: Condvar::new(),
            coming: AtomicBool::new(false),
        }
    }

    /// Ends a read under way (and any later one) without saving it, for a process about
    /// to exit: the command line once it has answered, so the merge it finishes with
    /// has the cores (the read would end with the process anyway; the next one reads
    /// those commits again).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// The editor's `history` setting: off, nothing is read, searched or shown.
    pub fn set_wanted(&self, wanted: bool) {
        self.wanted.store(wanted, Ordering::Relaxed);
    }

    fn enabled(&self) -> bool {
        self.options.enabled && self.wanted.load(Ordering::Relaxed)
    }

    pub fn state(&self) -> HistoryState {
        if !self.enabled() {
            return HistoryState {
                commits: 0,
                complete: false,
                reason: Some(Reason::Off),
            };
        }
        if let Some(reason) = *read(&self.unavailable) {
            return HistoryState {
                commits: 0,
                complete: false,
                reason: Some(reason),
            };
        }
        let store = read(&self.store);
        HistoryState {
            commits: store.count(),
            complete: store.meta.head.is_some() && store.meta.reason.is_none(),
            reason: store.meta.reason,
        }
    }

    /// Whether the first read of HEAD's history is still to come or under way: nothing
    /// has been read, and nothing says it cannot be (off, no repository). An answer given
    /// now draws on no past change, and says so.
    pub fn pending(&self) -> bool {
        self.enabled() && read(&self.unavailable).is_none() && read(&self.store).meta.head.is_none()
    }

    /// Whether there is anything to search.
    pub fn is_empty(&self) -> bool {
        !self.enabled() || read(&self.unavailable).is_some() || read(&self.store).count() == 0
    }

    /// Brings the store up to date with HEAD: only the commits it has not seen are read;
    /// those no longer reachable (a rebase, a checkout of an older commit) are dropped.
    pub fn refresh(&self) {
        let _one = lock(&self.refreshing);
        if let Some(gate) = test_hold() {
            while !gate.exists() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.read_new();
        self.read_ended();
    }

    /// `refresh`, unless one is running (the first, cold read) or a test holds it: an
    /// ask never waits for it.
    pub fn refresh_if_idle(&self) {
        if test_hold().is_some_and(|gate| !gate.exists()) {
            return;
        }
        if let Ok(_one) = self.refreshing.try_lock() {
            self.read_new();
            self.read_ended();
        }
    }

    fn read_ended(&self) {
        lock(&self.reads).ended += 1;
        self.coming.store(false, Ordering::Relaxed);
        self.read_ended.notify_all();
    }

    /// `refresh`'s work, with the refresh lock held.
    fn read_new(&self) {
        if !self.enabled() || self.stopped.load(Ordering::Relaxed) {
            return;
        }
        let repo = match Repository::open(&self.root) {
            Ok(repo) => repo,
            Err(reason) => {
                *write(&self.unavailable) = Some(reason);
                return;
            }
        };
        let head = match repo.head() {
            Ok(Some(head)) => head,
            Ok(None) => {
                *write(&self.unavailable) = Some(Reason::UnbornHead);
                return;
            }
            Err(reason) => {
                *write(&self.unavailable) = Some(reason);
                return;
            }
        };
        *write(&self.unavailable) = None;
        let hex = head.to_hex().to_string();
        let meta = read(&self.store).meta.clone();
        // A shallow clone since deepened (`git fetch --unshallow`) has history the store
        // never saw, behind commits it already holds: read it all again.
        let deepened = meta.reason == Some(Reason::Shallow) && !repo.is_shallow();
        if meta.head.as_deref() == Some(hex.as_str()) && !deepened {
            return;
        }
        let started = std::time::Instant::now();
        let Some(mut writer) = read(&self.store).writer() else {
            tracing::debug!("history: another process writes this store");
            return;
        };
        let old = meta
            .head
            .as_deref()
            .and_then(|old| gix::ObjectId::from_hex(old.as_bytes()).ok());
        let mut next = Meta {
            head: Some(hex),
            ..meta.clone()
        };
        let mut incremental = old.is_some() && !deepened;
        let mut gone = Vec::new();
        if let Some(old) = old {
            // What the old HEAD reached that the new one does not: a sideways move.
            let walked = read::walk(&repo, old, Some(head), usize::MAX);
            if walked.stopped.is_some() {
                incremental = false;
            } else {
                gone = walked.ids;
            }
        }
        let store = read(&self.store);
        if !incremental {
            store.delete_all(&writer);
            next.seq = 0;
            next.reason = None;
        }
        for id in &gone {
            store.delete(&writer, &id.to_hex().to_string());
        }
        let hidden = if incremental { old } else { None };
        let walked = read::walk(&repo, head, hidden, self.options.max_commits);
        // An ask waiting for this read learns its pace batch by batch (`wait_first_read`).
        let paced = |written: usize| {
            let mut reads = lock(&self.reads);
            if written == 0 {
                reads.since = Some(Instant::now());
                reads.total = walked.ids.len();
            }
            reads.written = written;
            self.read_ended.notify_all();
        };
        paced(0);
        let shallow = repo.is_shallow();
        // The walk's handle goes before the commits are read: each batch opens its own.
        drop(repo);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let position: FxHashMap<&gix::oid, usize> = walked
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_ref(), i))
            .collect();
        let total = walked.ids.len() as u64;
        let (mut records_read, mut unreadable) = (0, 0);
        let mut words = MessageWords::default();
        let root = &self.root;
        let (ids, read_batch, stop) = (&walked.ids, self.options.read_batch, &self.stopped);
        std::thread::scope(|scope| {
            // The next batch is read while this thread writes the one before: reading
            // takes the cores in bursts and writing takes one, and one after the other
            // they left a core idle for a third of a cold read (rails, 50,000 commits).
            // At most three batches are held at once: one read, one waiting, one written.
            let (sender, batches) = std::sync::mpsc::sync_channel(1);
            scope.spawn(move || {
                // The first batch is a quarter of the others, so an ask waiting for
                // this read learns its pace sooner (`wait_first_read`).
                let (first, rest) = ids.split_at(ids.len().min(read_batch.div_ceil(4)));
                for batch in std::iter::once(first).chain(rest.chunks(read_batch)) {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // A repository opened for each batch: the pack files' pages and the
                    // object caches held are one batch's, not the whole history's.
                    let read = match Repository::open(root) {
                        Ok(repo) => read::read_commits(&repo, batch, threads, stop),
                        Err(_) => (Vec::new(), batch.len()),
                    };
                    if sender.send(read).is_err() {
                        break;
                    }
                }
            });
            for (records, missed) in batches {
                if stop.load(Ordering::Relaxed) {
                    continue;
                }
                unreadable += missed;
                records_read += records.len();
                for record in &records {
                    words.subject.clear();
                    words.body.clear();
                    for (text, into) in [
                        (&record.subject, &mut words.subject),
                        (&record.body, &mut words.body),
                    ] {
                        (self.tokenize)(text, &mut |term: &str| {
                            into.push_str(term);
                            into.push(' ');
                        });
                    }
                    let at = gix::ObjectId::from_hex(record.id.as_bytes())
                        .ok()
                        .and_then(|id| position.get(id.as_ref()).copied())
                        .unwrap_or(0);
                    store.add(&writer, record, next.seq + total - at as u64, &words);
                }
                paced(records_read + unreadable);
            }
        });
        if self.stopped.load(Ordering::Relaxed) {
            // Part of the commits, or a batch cut short: nothing is saved.
            tracing::debug!("history: the read was stopped; nothing saved");
            drop(store);
            let _ = writer.rollback();
            return;
        }
        next.seq += total;
        let reason = walked
            .stopped
            .or_else(|| shallow.then_some(Reason::Shallow))
            .or_else(|| (unreadable > 0).then_some(Reason::UnreadableObjects));
        if reason.is_some() || !incremental {
            next.reason = reason;
        }
        drop(store);
        let mut store = write(&self.store);
        if let Err(error) = store.commit(&mut writer, next.clone()) {
            tracing::warn!("history: cannot save: {error}");
        }
        // The bound holds after an incremental read too: the oldest go.
        let surplus = store.count().saturating_sub(self.options.max_commits);
        if surplus > 0 {
            store.drop_oldest(&writer, surplus);
            next.reason = Some(Reason::Bound);
            if let Err(error) = store.commit(&mut writer, next.clone()) {
                tracing::warn!("history: cannot save: {error}");
            }
        }
        let held = store.count();
        drop(store);
        *write(&self.renamed) = None;
        tracing::info!(
            "history: {} commits read ({} gone) in {:.2} s, {} held",
            records_read,
            gone.len(),
            started.elapsed().as_secs_f64(),
            held
        );
    }

    /// The commits whose messages best match `text`, best first, with their scores.
    pub fn similar(&self, text: &str, limit: usize) -> Vec<(f32, CommitRecord)> {
        self.search(text, None, limit)
    }

    /// `similar`, only among the commits that changed one of `paths`.
    pub fn search(
        &self,
        text: &str,
        paths: Option<&[String]>,
        limit: usize,
    ) -> Vec<(f32, CommitRecord)> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut counts: FxHashMap<String, f32> = FxHashMap::default();
        (self.tokenize)(text, &mut |term| {
            *counts.entry(term.to_string()).or_default() += 1.0;
        });
        let mut terms: Vec<(String, f32)> = counts.into_iter().collect();
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        read(&self.store).search(&terms, paths, limit)
    }

    /// The newest commits, all or those that changed one of `paths`.
    pub fn newest(&self, paths: Option<&[String]>, limit: usize) -> Vec<CommitRecord> {
        if self.is_empty() {
            return Vec::new();
        }
        read(&self.store).newest(paths, limit)
    }

    /// For each path (as the root shows it), how many commits changed it and how many
    /// commits ago the newest did; `(0, None)` each without history.
    pub fn change_counts(&self, paths: &[&str]) -> Vec<(u64, Option<u64>)> {
        if self.is_empty() {
            return vec![(0, None); paths.len()];
        }
        read(&self.store).change_counts(paths)
    }

    /// One commit by its full hex id.
    pub fn commit(&self, id: &str) -> Option<CommitRecord> {
        read(&self.store).get(id)
    }

    /// `path` and every name it had before, following the renames the store knows
    /// (newest first), for "the commits that changed this file".
    pub fn names_of(&self, path: &str) -> Vec<String> {
        let renames = read(&self.store).renames();
        let mut names = vec![path.to_string()];
        let mut current = path.to_string();
        for (old, new, _) in renames.iter().rev() {
            if *new == current && !names.contains(old) {
                names.push(old.clone());
                current = old.clone();
            }
        }
        names
    }

    /// The path `path` has now, following renames made after it was changed; `None`
    /// when none renamed it.
    pub fn renamed_to(&self, path: &str) -> Option<String> {
        if read(&self.renamed).is_none() {
            let mut map: FxHashMap<String, String> = FxHashMap::default();
            // Newest first: where a renamed file went later is known by then.
            for (old, new, _) in read(&self.store).renames().into_iter().rev() {
                let now = map.get(&new).cloned().unwrap_or(new);
                map.entry(old).or_insert(now);
            }
            *write(&self.renamed) = Some(map);
        }
        read(&self.renamed).as_ref()?.get(path).cloned()
    }
}

/// A test's hold on reading the history, for end-to-end tests of answers given before
/// it is read, which must not depend on timing: `COPILOT_LS_TEST_HISTORY_HOLD=PATH`
/// makes `refresh` wait until `PATH` exists before it reads. Unset, it costs a lookup.
fn test_hold() -> Option<PathBuf> {
    std::env::var_os("COPILOT_LS_TEST_HISTORY_HOLD")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// A commit time as people read it: `YYYY-MM-DD`, in UTC.
pub fn date(seconds: i64) -> String {
    gix::date::Time::new(seconds, 0).format_or_unix(gix::date::time::format::SHORT)
}

/// A commit id as shown: its first 10 hex digits.
pub fn short_id(id: &str) -> &str {
    id.get(..10).unwrap_or(id)
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests;
