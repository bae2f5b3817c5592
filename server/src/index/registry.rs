//! One index per canonical workspace root (and cache dir) in a process: every session on
//! that root (twenty ACP sessions in one agent process, the LSP session, a tool call)
//! shares it, instead of each building an index of its own in memory because the first
//! holds the on-disk one's writer lock. An index lives while a session holds it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use rustc_hash::FxHashMap;

use super::{lock, Inner};
use crate::workspace::sandbox::Sandbox;

type Key = (PathBuf, Option<PathBuf>);

fn open_indexes() -> &'static Mutex<FxHashMap<Key, Weak<Inner>>> {
    static OPEN: OnceLock<Mutex<FxHashMap<Key, Weak<Inner>>>> = OnceLock::new();
    OPEN.get_or_init(Default::default)
}

/// The index of `sandbox`'s root under `cache`, opened with `open` when no session of
/// the process holds one.
pub fn shared(
    sandbox: &Sandbox,
    cache: Option<&Path>,
    open: impl FnOnce(&Sandbox) -> Inner,
) -> Arc<Inner> {
    let key = (sandbox.root().to_path_buf(), cache.map(Path::to_path_buf));
    // Held while opening: two sessions starting at once must not open it twice (the
    // second would find the writer lock taken and fall back to memory).
    let mut indexes = lock(open_indexes());
    if let Some(inner) = indexes.get(&key).and_then(Weak::upgrade) {
        return inner;
    }
    indexes.retain(|_, weak| weak.strong_count() > 0);
    let inner = Arc::new(open(sandbox));
    indexes.insert(key, Arc::downgrade(&inner));
    inner
}
