//! The workspace an MCP session works in and its index: the one place `mcp/` opens,
//! refreshes and waits for a `WorkspaceIndex` (so moving to a shared index per root is a
//! change here only).
//!
//! The roots are each `--workspace`, else every `file://` root of the client's
//! (`roots/list`, asked after `initialized` and again on
//! `notifications/roots/list_changed`), else the current directory. Each root's index is
//! the persistent one under `COPILOT_LS_CACHE_DIR`, searched as one over every root
//! (`index::WorkspaceIndex`), brought up to date in the background as soon as the roots
//! are known; a root that stays when the roots change keeps its index. The tools that answer from it
//! wait for that first build (reporting progress); a call made a while after the last
//! refresh starts another one in the background, because the client (a coding agent)
//! edits files and no editor tells us which.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::index::{
    cache_dir_from_env, refresh_in_turn, Bounds, Location, Progress, RetrievalIndex, WorkspaceIndex,
};
use crate::workspace::sandbox::Sandbox;
use crate::workspace::{NoDocuments, Workspace};

/// How long a tool that answers from the index waits for a build before it answers from
/// what is indexed so far (and says so).
pub const INDEX_WAIT: Duration = Duration::from_secs(60);
/// A call this long after the last refresh ended starts another one (in the background).
const STALE_AFTER: Duration = Duration::from_secs(2);
/// How long a tool call waits for the client's answer to `roots/list`.
const ROOTS_WAIT: Duration = Duration::from_secs(10);

/// Where a build stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Building {
    pub done: usize,
    pub total: usize,
    pub running: bool,
    /// Builds finished so far.
    pub finished: u64,
}

/// What a wait for the index ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    Complete,
    /// Still building after `INDEX_WAIT`: `done` of `total` files.
    Partial {
        done: usize,
        total: usize,
    },
    Cancelled,
}

/// The workspace (one root or several) and its index.
pub struct Root {
    pub workspace: Workspace,
    pub index: WorkspaceIndex,
    building: watch::Sender<Building>,
    last_refresh: Mutex<Option<Instant>>,
    /// What a build had to say (a truncated workspace, an index kept in memory), for
    /// the client's log.
    notes: Mutex<Vec<String>>,
}

impl Root {
    /// Opens the sandbox over `paths` and each root's index, and starts bringing them
    /// up to date.
    pub fn open(paths: &[PathBuf]) -> std::io::Result<Arc<Root>> {
        let sandbox = Sandbox::with_roots(paths)?;
        let workspace = Workspace::new(sandbox, Arc::new(NoDocuments));
        let cache = cache_dir_from_env();
        let indexes = (0..workspace.sandbox.roots().len())
            .map(|i| {
                let index = RetrievalIndex::shared(workspace.only(i), cache.as_deref());
                (workspace.sandbox.prefix(i), index)
            })
            .collect();
        let index = WorkspaceIndex::of_roots(indexes);
        let root = Arc::new(Root {
            workspace,
            index,
            building: watch::Sender::new(Building::default()),
            last_refresh: Mutex::new(None),
            notes: Mutex::new(Vec::new()),
        });
        for index in root.index.roots() {
            if let Location::Memory(reason) = index.location() {
                root.note(format!("the index is kept in memory: {reason}"));
            }
        }
        root.start_refresh();
        Ok(root)
    }

    /// The roots' directories, in order.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.workspace
            .sandbox
            .root_paths()
            .into_iter()
            .map(Path::to_path_buf)
            .collect()
    }

    /// Starts a refresh on a thread of its own unless one is running.
    fn start_refresh(self: &Arc<Root>) {
        let mut started = false;
        self.building.send_if_modified(|b| {
            started = !b.running;
            b.running = true;
            started
        });
        if !started {
            return;
        }
        let root = self.clone();
        std::thread::spawn(move || {
            let began = Instant::now();
            // One count that only grows: each root's files and definitions after those
            // of the roots before it (`refresh_in_turn`), the definitions of a cold
            // build's second phase after the files.
            let (files, definitions) = (Cell::new((0, 0)), Cell::new((0, 0)));
            // A first build's merge comes after the call waiting for it (below).
            for index in root.index.roots() {
                index.defer_bulk_merge();
            }
            let report = refresh_in_turn(root.index.roots(), Bounds::from_env(), &|progress| {
                match progress {
                    Progress::Files { done, total } => files.set((done, total)),
                    Progress::Definitions { done, total } => definitions.set((done, total)),
                    Progress::Truncated(why) => return root.note(why),
                }
                let ((files_done, files_total), (done, total)) = (files.get(), definitions.get());
                root.building.send_modify(|b| {
                    b.done = files_done + done;
                    b.total = files_total + total;
                });
            });
            if let Some(fault) = root.index.fault() {
                root.note(format!("the index is kept in memory only: {fault}"));
            }
            *lock(&root.last_refresh) = Some(Instant::now());
            tracing::info!(
                files = root.index.file_count(),
                read = report.files_read,
                seconds = began.elapsed().as_secs_f64(),
                "index up to date"
            );
            root.building.send_modify(|b| {
                b.running = false;
                b.finished += 1;
            });
            // After the files: a tool waiting for the index never waits for the merge of a
            // first build's segments, nor for the history (`git_log` reads it itself when
            // it is not there yet).
            for index in root.index.roots() {
                index.finish_deferred_merge();
            }
            for index in root.index.roots() {
                index.history().refresh();
            }
        });
    }

    fn note(&self, note: String) {
        tracing::warn!("{note}");
        lock(&self.notes).push(note);
    }

    /// Notes not yet taken.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.notes))
    }

    /// Waits for the first build of the index, calling `progress` as it goes, at most
    /// `INDEX_WAIT`. Once the index has been built, a stale one (the last refresh ended
    /// `STALE_AFTER` ago) is refreshed in the background and the call answers at once
    /// from what the index holds: an incremental refresh still walks the whole tree
    /// (about a second at 50,000 files), which no call should wait for. The tools read
    /// the files they cite from the disk, so a file edited since is shown as it is now.
    pub async fn wait_for_index(
        self: &Arc<Root>,
        cancel: &CancellationToken,
        mut progress: impl FnMut(Building),
    ) -> Coverage {
        let stale = lock(&self.last_refresh).is_some_and(|at| at.elapsed() > STALE_AFTER);
        if stale {
            self.start_refresh();
        }
        let mut building = self.building.subscribe();
        let deadline = tokio::time::Instant::now() + INDEX_WAIT;
        loop {
            let now = *building.borrow_and_update();
            if !now.running || now.finished > 0 {
                return Coverage::Complete;
            }
            progress(now);
            tokio::select! {
                changed = building.changed() => {
                    if changed.is_err() {
                        return Coverage::Complete;
                    }
                }
                _ = cancel.cancelled() => return Coverage::Cancelled,
                _ = tokio::time::sleep_until(deadline) => {
                    return Coverage::Partial { done: now.done, total: now.total };
                }
            }
        }
    }
}

/// Which roots the session works in, as far as they are known.
pub struct Engine {
    /// Each `--workspace`: fixed, roots are not asked for (empty: ask the client).
    fixed: Vec<PathBuf>,
    root: watch::Sender<Option<Arc<Root>>>,
    /// Set while a `roots/list` is on its way.
    asking_roots: Mutex<bool>,
    /// Cancelled when the client's input closes: rmcp then waits up to 5 s for calls in
    /// flight, and a call waiting for the index must not hold the exit that long.
    input_closed: CancellationToken,
}

impl Engine {
    pub fn new(fixed: Vec<PathBuf>) -> Engine {
        Engine {
            fixed,
            root: watch::Sender::new(None),
            asking_roots: Mutex::new(false),
            input_closed: CancellationToken::new(),
        }
    }

    /// The token the transport cancels when the input closes.
    pub fn input_closed(&self) -> CancellationToken {
        self.input_closed.clone()
    }

    /// A token cancelled when `request` is cancelled or the input closes, whichever
    /// comes first; dropping the guard ends the watch.
    pub fn call_cancel(
        &self,
        request: &CancellationToken,
    ) -> (CancellationToken, tokio_util::sync::DropGuard) {
        let either = CancellationToken::new();
        let done = CancellationToken::new();
        let (request, closed, fire) = (request.clone(), self.input_closed.clone(), either.clone());
        let finished = done.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = request.cancelled() => fire.cancel(),
                _ = closed.cancelled() => fire.cancel(),
                _ = finished.cancelled() => {}
            }
        });
        (either, done.drop_guard())
    }

    pub fn is_fixed(&self) -> bool {
        !self.fixed.is_empty()
    }

    /// Opens the `--workspace` roots at once, so their indexes build while the client
    /// starts.
    pub async fn open_fixed(&self) -> std::io::Result<()> {
        if self.is_fixed() {
            let root = open_blocking(self.fixed.clone()).await?;
            self.root.send_replace(Some(root));
        }
        Ok(())
    }

    /// A `roots/list` is about to be sent: tool calls wait for its answer.
    pub fn asking_roots(&self) {
        *lock(&self.asking_roots) = true;
    }

    /// The client's roots arrived (or the request failed: `None`): its `file://` roots
    /// become the workspace (those that are not directories are left out, said in the
    /// log), unless they are the current ones already.
    pub async fn roots_answered(&self, listed: Option<Vec<PathBuf>>) {
        let current = self.root.borrow().as_ref().map(|r| r.paths());
        let wanted: Vec<PathBuf> = match listed {
            Some(paths) if !paths.is_empty() => paths
                .into_iter()
                .filter_map(|path| match Sandbox::new(&path) {
                    Ok(sandbox) => Some(sandbox.root().to_path_buf()),
                    Err(error) => {
                        tracing::warn!("cannot use {} as a root: {error}", path.display());
                        None
                    }
                })
                .collect(),
            _ if current.is_some() => {
                *lock(&self.asking_roots) = false;
                return;
            }
            _ => vec![current_dir()],
        };
        let unchanged = wanted.is_empty()
            || current.as_ref().is_some_and(|current| {
                crate::workspace::roots::named(&wanted)
                    .into_iter()
                    .map(|root| root.path)
                    .eq(current.iter().cloned())
            });
        if !unchanged {
            match open_blocking(wanted.clone()).await {
                Ok(root) => {
                    let shown: Vec<String> = root
                        .paths()
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect();
                    tracing::info!("workspace: {}", shown.join(", "));
                    self.root.send_replace(Some(root));
                }
                Err(error) => tracing::warn!("cannot use these roots as the workspace: {error}"),
            }
        }
        *lock(&self.asking_roots) = false;
        // Wake tool calls waiting for an answer even when the roots did not change.
        self.root.send_modify(|_| {});
    }

    /// The root a tool call works in: the known one; else, while the client's roots are
    /// on their way, the one they name (waited for up to `ROOTS_WAIT`); else the current
    /// directory.
    pub async fn root(&self) -> Result<Arc<Root>, String> {
        if let Some(root) = self.root.borrow().clone() {
            return Ok(root);
        }
        if *lock(&self.asking_roots) {
            let mut changes = self.root.subscribe();
            let waited = tokio::time::timeout(ROOTS_WAIT, async {
                loop {
                    if changes.borrow_and_update().is_some() || !*lock(&self.asking_roots) {
                        return;
                    }
                    if changes.changed().await.is_err() {
                        return;
                    }
                }
            })
            .await;
            if waited.is_err() {
                tracing::warn!("the client did not answer roots/list; using the current directory");
            }
            if let Some(root) = self.root.borrow().clone() {
                return Ok(root);
            }
        }
        let paths = match self.is_fixed() {
            true => self.fixed.clone(),
            false => vec![current_dir()],
        };
        let root = open_blocking(paths.clone()).await.map_err(|error| {
            let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            format!("cannot use {} as the workspace: {error}", shown.join(", "))
        })?;
        // Another call may have opened it meanwhile: keep the first.
        let mut kept = root.clone();
        self.root.send_if_modified(|current| match current {
            Some(existing) => {
                kept = existing.clone();
                false
            }
            None => {
                *current = Some(root);
                true
            }
        });
        Ok(kept)
    }
}

async fn open_blocking(paths: Vec<PathBuf>) -> std::io::Result<Arc<Root>> {
    tokio::task::spawn_blocking(move || Root::open(&paths))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
}

fn current_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
