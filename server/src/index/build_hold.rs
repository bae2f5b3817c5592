//! A hold on a build, for end-to-end tests of asks during a build, which must not
//! depend on timing: `COPILOT_LS_TEST_INDEX_HOLD=N:PATH` makes a build commit after its
//! first `N` files, then wait until `PATH` exists before it reads the rest; asks
//! waiting for the index go on at the hold. `COPILOT_LS_TEST_MERGE_HOLD=PATH` holds a
//! bulk build's final merge until `PATH` exists, so a test shows what answers before
//! it. Off (the variables unset), they cost nothing.

use std::path::PathBuf;
use std::time::Duration;

pub struct Hold {
    at: Option<(usize, PathBuf)>,
}

impl Hold {
    pub fn from_env() -> Hold {
        let at = std::env::var("COPILOT_LS_TEST_INDEX_HOLD")
            .ok()
            .and_then(|v| {
                let (n, path) = v.split_once(':')?;
                Some((n.parse().ok()?, PathBuf::from(path)))
            });
        Hold { at }
    }

    /// Whether the build commits now, having read `read` files.
    pub fn commit_at(&self, read: usize) -> bool {
        self.at.as_ref().is_some_and(|(n, _)| *n == read)
    }

    /// Before reading file `i`: past the hold, wait for the gate.
    pub fn wait_at(&self, i: usize) {
        if let Some((n, gate)) = &self.at {
            while i >= *n && !gate.exists() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// Before a bulk build's final merge: wait for `COPILOT_LS_TEST_MERGE_HOLD`'s gate.
pub fn wait_to_merge() {
    if let Some(gate) = std::env::var_os("COPILOT_LS_TEST_MERGE_HOLD").map(PathBuf::from) {
        while !gate.exists() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
