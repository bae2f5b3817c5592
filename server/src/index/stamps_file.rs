//! Every file's stamp, kept beside the index in a file of its own (`stamps.tsv`) so that
//! opening the index does not decompress its whole doc store to read them: on 50,000
//! files that read was 30% of a `copilot-ls tool` call's CPU (docs/benchmarks.md,
//! "find_references against ripgrep").
//!
//! The writing process writes it at each commit of a refresh from disk (and when it
//! opens an index whose file is missing or stale), from the stamps it holds while no
//! document can be added (`writer.rs`), with the commit's opstamp on its first line. An
//! ask's commit of the editor's changes does not (on 50,000 files the file takes tens of
//! milliseconds to write): the next refresh or the next process's open writes it again. A
//! reader uses it only when that opstamp is the one the index's meta says it holds;
//! otherwise (another version wrote the index, a commit since, a torn or missing file)
//! the stamps are read from the doc store as before. Written to a temporary file and
//! renamed, so a reader sees a whole file or the previous one.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::analyze::FileStamp;

const FILE: &str = "stamps.tsv";
const HEADER: &str = "copilot-ls stamps 1";

/// Writes `stamps` as the stamps of commit `opstamp` in `dir`. A path holding a tab or
/// a line break cannot be written as a line: then the file is removed, and readers read
/// the doc store.
pub fn write(dir: &Path, opstamp: u64, stamps: &FxHashMap<String, FileStamp>) {
    let path = dir.join(FILE);
    if stamps.keys().any(|p| p.contains(['\t', '\n', '\r'])) {
        let _ = std::fs::remove_file(&path);
        return;
    }
    use std::fmt::Write;
    let mut text = String::with_capacity(64 + stamps.len() * 128);
    let _ = writeln!(text, "{HEADER} {opstamp} {}", stamps.len());
    for (file, s) in stamps {
        let _ = writeln!(
            text,
            "{file}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            s.size,
            s.mtime,
            s.seen,
            s.hash,
            s.chunks,
            s.symbols,
            s.text as u8,
            s.lexical_only as u8
        );
    }
    let partial = dir.join(format!("{FILE}.{}.partial", std::process::id()));
    let written = std::fs::write(&partial, text).and_then(|()| std::fs::rename(&partial, &path));
    if let Err(error) = written {
        tracing::warn!("cannot write {}: {error}", path.display());
        let _ = std::fs::remove_file(&partial);
        let _ = std::fs::remove_file(&path);
    }
}

/// Removes the stamps file of `dir`, for an index made anew there.
pub fn forget(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(FILE));
}

/// The stamps written for commit `opstamp` in `dir`, if that is what the file holds,
/// whole.
pub fn read(dir: &Path, opstamp: u64) -> Option<FxHashMap<String, FileStamp>> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    let mut lines = text.lines();
    let header = lines.next()?.strip_prefix(HEADER)?;
    let mut header = header.split_whitespace();
    if header.next()?.parse::<u64>().ok()? != opstamp {
        return None;
    }
    let count: usize = header.next()?.parse().ok()?;
    let mut stamps = FxHashMap::with_capacity_and_hasher(count, Default::default());
    for line in lines {
        let mut fields = line.split('\t');
        let path = fields.next()?;
        let mut number = || fields.next()?.parse::<u64>().ok();
        let stamp = FileStamp {
            size: number()?,
            mtime: number()?,
            seen: number()?,
            hash: number()?,
            chunks: number()?,
            symbols: number()?,
            text: number()? == 1,
            lexical_only: number()? == 1,
        };
        stamps.insert(path.to_string(), stamp);
    }
    // A file cut short (a disk that filled up) holds fewer lines than it says.
    (stamps.len() == count).then_some(stamps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(size: u64) -> FileStamp {
        FileStamp {
            size,
            mtime: 7,
            seen: 8,
            hash: u64::MAX,
            chunks: 3,
            symbols: 2,
            text: true,
            lexical_only: false,
        }
    }

    #[test]
    fn the_stamps_of_a_commit_are_read_back_for_that_commit_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut stamps = FxHashMap::default();
        stamps.insert("src/a b.rs".to_string(), stamp(10));
        stamps.insert("ü/c.py".to_string(), stamp(0));
        write(dir.path(), 42, &stamps);
        assert_eq!(read(dir.path(), 42), Some(stamps.clone()));
        assert_eq!(read(dir.path(), 43), None);
        // Cut short: not used.
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        let cut = &text[..text.rfind('\n').unwrap()];
        let cut = &cut[..cut.rfind('\n').unwrap() + 1];
        std::fs::write(dir.path().join(FILE), cut).unwrap();
        assert_eq!(read(dir.path(), 42), None);
        // A path that cannot be a line: no file, the doc store is read.
        stamps.insert("odd\tname".to_string(), stamp(1));
        write(dir.path(), 44, &stamps);
        assert!(!dir.path().join(FILE).exists());
        assert_eq!(read(dir.path(), 44), None);
    }
}
