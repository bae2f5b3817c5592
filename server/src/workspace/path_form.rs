//! The shown form of a path: how a file name that is not valid UTF-8, or that holds a
//! control character, is written in every listing, so that it prints on one line and
//! the tools accept it back.
//!
//! Each byte that is not part of a printable UTF-8 character becomes `\xNN` (two lower
//! case hex digits): an invalid byte (`caf\xe9.txt`, Latin-1), a control character
//! (`a\x0ab.txt` for a newline, `\x1b` for an escape that would drive a terminal), and
//! the bytes of the characters that reorder or break lines when shown (U+2028, U+2029,
//! the bidirectional overrides). A backslash that would read as the start of such an
//! escape is itself written `\x5c`, so the form is unambiguous: [`decode`] turns every
//! `\xNN` back into its byte. Every other character is shown as it is.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Characters shown escaped although valid: they break or reorder a line.
fn is_disruptive(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

fn push_escaped(out: &mut String, bytes: &[u8]) {
    for byte in bytes {
        out.push_str(&format!("\\x{byte:02x}"));
    }
}

/// The shown form of one name (or of any path text).
pub fn shown(name: &OsStr) -> String {
    let bytes = name.as_encoded_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        for (i, c) in valid.char_indices() {
            if is_disruptive(c) {
                push_escaped(&mut out, &valid.as_bytes()[i..i + c.len_utf8()]);
            } else if c == '\\' && starts_escape(&valid[i + 1..]) {
                out.push_str("\\x5c");
            } else {
                out.push(c);
            }
        }
        push_escaped(&mut out, chunk.invalid());
    }
    out
}

/// Whether `rest` (what follows a backslash) reads as `xNN`.
fn starts_escape(rest: &str) -> bool {
    let bytes = rest.as_bytes();
    bytes.len() >= 3
        && bytes[0] == b'x'
        && bytes[1].is_ascii_hexdigit()
        && bytes[2].is_ascii_hexdigit()
}

/// Whether a shown form holds an escape at all (most paths do not).
pub fn has_escape(shown: &str) -> bool {
    shown
        .match_indices('\\')
        .any(|(i, _)| starts_escape(&shown[i + 1..]))
}

/// The path a shown form stands for: every `\xNN` becomes its byte.
pub fn decode(shown: &str) -> PathBuf {
    if !has_escape(shown) {
        return PathBuf::from(shown);
    }
    let bytes = shown.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && starts_escape(&shown[i + 1..]) {
            let hex = &shown[i + 2..i + 4];
            out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    path_from_bytes(out)
}

#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(OsString::from_vec(bytes))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    // Elsewhere names are Unicode already; an escape that makes no valid name is kept
    // lossy (and then not found).
    PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}

/// The shown form of a whole relative path, `/`-separated.
pub fn shown_path(path: &Path) -> String {
    // Most paths are plain ASCII names joined by single slashes: shown as they are. A
    // search that matched in 50,000 files shows each of their paths.
    let bytes = path.as_os_str().as_encoded_bytes();
    let plain = |part: &[u8]| {
        !part.is_empty()
            && part != b"."
            && part != b".."
            && part.iter().all(|b| (0x20..0x7f).contains(b) && *b != b'\\')
    };
    if bytes.split(|b| *b == b'/').all(plain) {
        // Printable ASCII only: the lossy form is the path itself.
        return path.to_string_lossy().into_owned();
    }
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(name) => Some(shown(name)),
            _ => None,
        })
        .collect();
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn os(bytes: &[u8]) -> OsString {
        use std::os::unix::ffi::OsStringExt;
        OsString::from_vec(bytes.to_vec())
    }

    #[test]
    fn a_plain_path_is_shown_as_the_parts_joined() {
        for path in [
            "src/main.rs",
            "a b/c.d",
            "./src/x.rs",
            "src//x.rs",
            "src/./x.rs",
            "../up/x.rs",
            "/abs/x.rs",
            "dir/",
            "back\\x41slash",
            "naïve/é.rs",
            "",
        ] {
            let slow: Vec<String> = Path::new(path)
                .components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(name) => Some(shown(name)),
                    _ => None,
                })
                .collect();
            assert_eq!(shown_path(Path::new(path)), slow.join("/"), "{path:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn every_name_round_trips_through_its_shown_form() {
        let names: &[&[u8]] = &[
            b"plain.rs",
            "naïve €.md".as_bytes(),
            b"caf\xe9.txt",
            b"\xff\xfe",
            b"\xc3",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"line\nbreak.txt",
            b"tab\there",
            b"esc\x1b[31mred",
            b"del\x7f",
            "sep\u{2028}x".as_bytes(),
            "rtl\u{202e}txt.exe".as_bytes(),
            b"back\\slash",
            b"looks\\x41escaped",
            b"\\x5c",
        ];
        for name in names {
            let name = os(name);
            let form = shown(&name);
            assert!(!form.chars().any(is_disruptive), "{form:?}");
            assert_eq!(decode(&form).as_os_str(), name.as_os_str(), "{form}");
        }
        assert_eq!(shown(&os(b"caf\xe9.txt")), "caf\\xe9.txt");
        assert_eq!(shown(&os(b"a\nb")), "a\\x0ab");
        assert_eq!(shown(&os(b"back\\slash")), "back\\slash");
        assert_eq!(shown(&os(b"a\\x41")), "a\\x5cx41");
        assert_eq!(shown(OsStr::new("naïve")), "naïve");
    }
}
