//! `file://` URIs for workspace paths, percent-encoded the way editors write them.

use std::path::{Path, PathBuf};

/// Bytes left as they are in a URI path; everything else is percent-encoded.
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/')
}

/// `file:///abs/path` for an absolute path.
pub fn file_uri(path: &Path) -> String {
    // The path's own bytes: a name that is not valid UTF-8 is percent-encoded as it is,
    // so the editor opens that file (a lossy form would name another).
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut out = String::with_capacity(bytes.len() + 8);
    out.push_str("file://");
    if !bytes.starts_with(b"/") {
        out.push('/');
    }
    for &byte in bytes {
        if is_unreserved(byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The path of a `file://` URI, percent-decoded; `None` for other schemes.
pub fn path_from_file_uri(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // Skip an authority such as `localhost`.
    let path = &rest[rest.find('/')?..];
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    path_from_bytes(decoded)
}

#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> Option<PathBuf> {
    String::from_utf8(bytes).ok().map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_spaces_and_unicode() {
        let path = Path::new("/tmp/my dir/naïve#1.rs");
        let uri = file_uri(path);
        assert_eq!(uri, "file:///tmp/my%20dir/na%C3%AFve%231.rs");
        assert_eq!(path_from_file_uri(&uri).unwrap(), path);
        assert_eq!(
            path_from_file_uri("file://localhost/a/b").unwrap(),
            Path::new("/a/b")
        );
        assert!(path_from_file_uri("untitled:Untitled-1").is_none());
    }
}
