//! The workspace an MCP session works in and its index: the one place `mcp/` opens,
//! refreshes and waits for a `RetrievalIndex` (so moving to a shared index per root is a
//! change here only).
//!
//! The root is `--workspace`, else the client's first root (`roots/list`, asked after
//! `initialized` and again on `notifications/roots/list_changed`), else the current
//! directory. Its index is the persistent one under `COPILOT_LS_CACHE_DIR`, brought up to
//! date in the background as soon as the root is known. The tools that answer from it
//! wait for that first build (reporting progress); a call made a while after the last
//! refresh starts another one in the background, because the client (a coding agent)
//! edits files and no editor tells us which.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::index::{cache_dir_from_env, Bounds, Location, Progress, RetrievalIndex};
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

/// One workspace root and its index.
pub struct Root {
    pub workspace: Workspace,
    pub index: RetrievalIndex,
    building: watch::Sender<Building>,
    last_refresh: Mutex<Option<Instant>>,
    /// What a build had to say (a truncated workspace, an index kept in memory), for
    /// the client's log.
    notes: Mutex<Vec<String>>,
}

impl Root {
    /// Opens `path`'s sandbox and index and starts bringing the index up to date.
    pub fn open(path: &Path) -> std::io::Result<Arc<Root>> {
        let sandbox = Sandbox::new(path)?;
        let workspace = Workspace::new(sandbox, Arc::new(NoDocuments));
        let index = RetrievalIndex::shared(workspace.clone(), cache_dir_from_env().as_deref());
        let root = Arc::new(Root {
            workspace,
            index,
            building: watch::Sender::new(Building::default()),
            last_refresh: Mutex::new(None),
            notes: Mutex::new(Vec::new()),
        });
        if let Location::Memory(reason) = root.index.location() {
            root.note(format!("the index is kept in memory: {reason}"));
        }
        root.start_refresh();
        Ok(root)
    }

    pub fn path(&self) -> &Path {
        self.workspace.root()
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
            // Progress only grows: the definitions of a cold build's second phase
            // count on after its files.
            let files = std::sync::atomic::AtomicUsize::new(0);
            let report = root
                .index
                .refresh_or_fall_back(Bounds::from_env(), &|progress| match progress {
                    Progress::Files { done, total } => {
                        files.store(total, std::sync::atomic::Ordering::Relaxed);
                        root.building.send_modify(|b| {
                            b.done = done;
                            b.total = total;
                        });
                    }
                    Progress::Definitions { done, total } => {
                        let files = files.load(std::sync::atomic::Ordering::Relaxed);
                        root.building.send_modify(|b| {
                            b.done = files + done;
                            b.total = files + total;
                        });
                    }
                    Progress::Truncated(why) => root.note(why),
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
            // After the files: a tool waiting for the index never waits for the history
            // (`git_log` reads it itself when it is not there yet).
            root.index.history().refresh();
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

/// Which root the session works in, as far as it is known.
pub struct Engine {
    /// `--workspace`: fixed, roots are not asked for.
    fixed: Option<PathBuf>,
    root: watch::Sender<Option<Arc<Root>>>,
    /// Set while a `roots/list` is on its way.
    asking_roots: Mutex<bool>,
    /// Cancelled when the client's input closes: rmcp then waits up to 5 s for calls in
    /// flight, and a call waiting for the index must not hold the exit that long.
    input_closed: CancellationToken,
}

impl Engine {
    pub fn new(fixed: Option<PathBuf>) -> Engine {
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
        self.fixed.is_some()
    }

    /// Opens the `--workspace` root at once, so its index builds while the client starts.
    pub async fn open_fixed(&self) -> std::io::Result<()> {
        if let Some(path) = self.fixed.clone() {
            let root = open_blocking(path).await?;
            self.root.send_replace(Some(root));
        }
        Ok(())
    }

    /// A `roots/list` is about to be sent: tool calls wait for its answer.
    pub fn asking_roots(&self) {
        *lock(&self.asking_roots) = true;
    }

    /// The client's roots arrived (or the request failed: `None`): the first `file://`
    /// root becomes the workspace, unless it is the current one already.
    pub async fn roots_answered(&self, first: Option<PathBuf>) {
        let current = self.root.borrow().as_ref().map(|r| r.path().to_path_buf());
        let wanted = match first {
            Some(path) => std::fs::canonicalize(&path).unwrap_or(path),
            None if current.is_some() => {
                *lock(&self.asking_roots) = false;
                return;
            }
            None => current_dir(),
        };
        if current.as_deref() != Some(wanted.as_path()) {
            match open_blocking(wanted.clone()).await {
                Ok(root) => {
                    tracing::info!("workspace: {}", root.path().display());
                    self.root.send_replace(Some(root));
                }
                Err(error) => {
                    tracing::warn!("cannot use {} as the workspace: {error}", wanted.display())
                }
            }
        }
        *lock(&self.asking_roots) = false;
        // Wake tool calls waiting for an answer even when the root did not change.
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
        let path = self.fixed.clone().unwrap_or_else(current_dir);
        let root = open_blocking(path.clone())
            .await
            .map_err(|error| format!("cannot use {} as the workspace: {error}", path.display()))?;
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

async fn open_blocking(path: PathBuf) -> std::io::Result<Arc<Root>> {
    tokio::task::spawn_blocking(move || Root::open(&path))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
}

fn current_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
