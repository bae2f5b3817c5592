//! The build's progress on disk, beside the index it describes (`progress.json` in the
//! index's own directory under the cache dir): the process that writes the index says
//! how far its build is, so another process reading the same index (a second editor
//! window, the command line beside a server) knows what the index covers and when the
//! build is done, without building its own.

use std::path::{Path, PathBuf};

use super::coverage::Coverage;

const FILE: &str = "progress.json";

fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// Records `coverage` (written whole: to a temporary file, then renamed over). A write
/// that fails is only logged: the progress is advice for other processes.
pub fn write(dir: &Path, coverage: &Coverage) {
    let value = serde_json::json!({
        "pid": std::process::id(),
        "complete": coverage.complete,
        "filesIndexed": coverage.files_indexed,
        "filesTotal": coverage.files_total,
    });
    let temporary = dir.join(format!("{FILE}.{}", std::process::id()));
    let written = std::fs::write(&temporary, value.to_string())
        .and_then(|()| std::fs::rename(&temporary, path(dir)));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        tracing::debug!("cannot record the index's progress: {error}");
    }
}

/// What the index's writer last recorded, if anything readable.
pub fn read(dir: &Path) -> Option<Coverage> {
    let text = std::fs::read_to_string(path(dir)).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let number = |key: &str| value[key].as_u64().map(|n| n as usize);
    Some(Coverage {
        complete: value["complete"].as_bool()?,
        files_indexed: number("filesIndexed")?,
        files_total: number("filesTotal")?,
        definitions: None,
        history: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_is_read_back_and_garbage_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), None);
        let coverage = Coverage {
            complete: false,
            files_indexed: 10,
            files_total: 40,
            definitions: None,
            history: None,
        };
        write(dir.path(), &coverage);
        assert_eq!(read(dir.path()), Some(coverage));
        std::fs::write(dir.path().join(FILE), "{not json").unwrap();
        assert_eq!(read(dir.path()), None);
    }
}
