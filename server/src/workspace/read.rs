//! Reading files from disk: regular files only, never blocking.
//!
//! A FIFO opened for reading blocks until a writer appears, a device may never end and
//! `/proc/kmsg` is a "regular" file that blocks on read. So every read in the server
//! goes through [`open_regular_file`]: it checks the path's metadata without opening
//! it, refuses what is not a regular file or lies in a kernel pseudo filesystem, then
//! opens with `O_NONBLOCK` and checks the opened descriptor again (the path may have
//! been swapped in between).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use super::error::WorkspaceError;
use super::sandbox::is_system_path;

/// Files larger than this are not read whole; the model is told to search instead.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;
/// A NUL byte in this prefix marks a file as binary (ripgrep's heuristic).
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Opens a regular file for reading without ever blocking; anything else (a FIFO, a
/// socket, a device, a directory, a file under `/proc`, `/sys` or `/dev`) is an error
/// of kind `InvalidInput` (`IsADirectory` for a directory).
pub fn open_regular_file(path: &Path) -> io::Result<File> {
    Ok(open_regular_with_len(path)?.0)
}

/// `open_regular_file`, and the opened file's length.
fn open_regular_with_len(path: &Path) -> io::Result<(File, u64)> {
    if is_system_path(path) {
        return Err(not_regular("a kernel pseudo file"));
    }
    check_regular(&std::fs::metadata(path)?)?;
    open_checked(path)
}

/// `open_regular_file` for a path whose directory entry, just read by a walk, says it
/// is a regular file: no stat by path first (a search of 50,000 files made 50,000 of
/// them). The open is non-blocking and the opened file is checked, so an entry swapped
/// since for a FIFO or a device is still never read.
pub fn open_known_regular(path: &Path) -> io::Result<File> {
    Ok(open_known_with_len(path)?.0)
}

/// `open_known_regular`, and the opened file's length.
fn open_known_with_len(path: &Path) -> io::Result<(File, u64)> {
    if is_system_path(path) {
        return Err(not_regular("a kernel pseudo file"));
    }
    open_checked(path)
}

/// Opens without blocking and refuses what the opened descriptor shows is not a
/// regular file (the path may have been swapped since it was looked at); its length
/// from the same stat.
fn open_checked(path: &Path) -> io::Result<(File, u64)> {
    let file = open_nonblocking(path)?;
    let metadata = file.metadata()?;
    check_regular(&metadata)?;
    Ok((file, metadata.len()))
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

fn check_regular(metadata: &std::fs::Metadata) -> io::Result<()> {
    if metadata.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    if !metadata.is_file() {
        return Err(not_regular(file_type_name(metadata)));
    }
    Ok(())
}

fn not_regular(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({what}); only regular files can be read"),
    )
}

#[cfg(unix)]
fn file_type_name(metadata: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn file_type_name(_: &std::fs::Metadata) -> &'static str {
    "not a file"
}

/// Reads at most `max` bytes of a regular file; `Ok(None)` when it is longer.
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Option<Vec<u8>>> {
    read_opened(open_regular_with_len(path)?, max)
}

/// `read_bounded` for a path the workspace index holds as a regular file: opened as
/// a walked entry is (`open_known_regular`), without a stat by path first.
/// `find_references` reads tens of thousands of the index's files for a common name.
pub fn read_known_bounded(path: &Path, max: u64) -> io::Result<Option<Vec<u8>>> {
    read_opened(open_known_with_len(path)?, max)
}

fn read_opened((file, len): (File, u64), max: u64) -> io::Result<Option<Vec<u8>>> {
    if len > max {
        return Ok(None);
    }
    // Sized by the stat: one read fills it and one more sees the end, where growing
    // from empty takes a small probe read and a read per doubling.
    let mut bytes = Vec::with_capacity(len as usize + 1);
    file.take(max + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

/// Whether the first bytes of a file hold a NUL.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// Whether an editor's text differs from the file on disk (a file not on disk, or one
/// that cannot be read, differs).
pub fn differs_from_disk(path: &Path, text: &str) -> bool {
    match read_bounded(path, text.len() as u64) {
        Ok(Some(disk)) => disk != text.as_bytes(),
        _ => true,
    }
}

/// Reads a text file from disk, refusing directories, what is not a regular file, huge
/// files and binary content. `shown` is the path the error names.
pub fn read_disk_text(path: &Path, shown: &str) -> Result<String, WorkspaceError> {
    let metadata = std::fs::metadata(path).map_err(|e| WorkspaceError::io(shown, &e))?;
    if metadata.is_dir() {
        return Err(WorkspaceError::IsDirectory(shown.to_string()));
    }
    if metadata.is_file() && metadata.len() > MAX_READ_BYTES {
        return Err(WorkspaceError::TooLarge {
            path: shown.to_string(),
            bytes: metadata.len(),
        });
    }
    let bytes =
        match read_bounded(path, MAX_READ_BYTES).map_err(|e| WorkspaceError::io(shown, &e))? {
            Some(bytes) => bytes,
            None => {
                return Err(WorkspaceError::TooLarge {
                    path: shown.to_string(),
                    bytes: MAX_READ_BYTES + 1,
                })
            }
        };
    if looks_binary(&bytes) {
        return Err(WorkspaceError::Binary(shown.to_string()));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A file's text for indexing, or `None` when it is unreadable, not a regular file,
/// larger than `max` or binary. Invalid UTF-8 is replaced rather than refused: Latin-1
/// comments should not hide a file.
pub fn read_index_text(path: &Path, max: u64) -> Option<String> {
    index_text(read_bounded(path, max).ok()??)
}

/// `read_index_text` through `read_known_bounded`.
pub fn read_known_index_text(path: &Path, max: u64) -> Option<String> {
    index_text(read_known_bounded(path, max).ok()??)
}

fn index_text(bytes: Vec<u8>) -> Option<String> {
    if looks_binary(&bytes) {
        return None;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(e) => Some(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let error = open_regular_file(&fifo).unwrap_err();
        assert!(error.to_string().contains("a FIFO"), "{error}");
        assert!(read_disk_text(&fifo, "pipe")
            .unwrap_err()
            .to_string()
            .contains("FIFO"));
        assert!(read_index_text(&fifo, 1024).is_none());
        assert!(differs_from_disk(&fifo, "text"));
    }

    #[test]
    fn kernel_pseudo_files_are_refused() {
        for path in [
            "/proc/kmsg",
            "/proc/self/status",
            "/sys/kernel",
            "/dev/zero",
        ] {
            assert!(open_regular_file(Path::new(path)).is_err(), "{path}");
        }
    }

    #[test]
    fn bounded_reads_stop_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "0123456789").unwrap();
        assert_eq!(read_bounded(&file, 10).unwrap().unwrap(), b"0123456789");
        assert!(read_bounded(&file, 9).unwrap().is_none());
        assert!(!differs_from_disk(&file, "0123456789"));
        assert!(differs_from_disk(&file, "012345678"));
        assert!(differs_from_disk(&file, "01234567890"));
    }
}
