//! Cutting the input's bytes into frames, whatever the read boundaries: header names in
//! any case, only `Content-Length` read, and recovery so that each bad frame costs one
//! [`Frame::BadHeaders`] (or one unusable body) and the frames after it are read
//! normally.

use tokio_util::bytes::{Buf, BytesMut};

/// The largest body accepted (a `didOpen` of a big file is a few MiB).
pub const MAX_BODY: usize = 64 << 20;
/// Headers longer than this without their blank line are garbage.
const MAX_HEADERS: usize = 8 << 10;

const CONTENT_LENGTH: &[u8] = b"content-length";

/// One unit cut from the byte stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// The body of a frame with a usable header.
    Body(BytesMut),
    /// Headers that do not frame a message (the reason, for the reply and the log).
    BadHeaders(String),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Headers,
    Body(usize),
    /// After a header block with no usable length: its body, if it is one JSON value.
    SkipValue,
    /// After a body that was not JSON: the next frame, or garbage left by a wrong length.
    AfterBadBody,
    /// Inside garbage: skip to the next `Content-Length`.
    Resync,
}

/// Cuts a byte stream into frames, whatever the read boundaries. Header names are
/// case-insensitive; only `Content-Length` matters (any `Content-Type` is accepted: a
/// body that is not UTF-8 JSON is refused when it is read).
///
/// Recovery, so that each bad frame costs one [`Frame::BadHeaders`] (or one unusable
/// body) and the frames after it are read normally: a header block without a usable
/// length is skipped with the JSON value that follows it; bytes that are not headers
/// are skipped up to the next `Content-Length` (also one glued to the garbage); after a
/// body that was not JSON, what follows is read as headers only if it looks like them.
#[derive(Debug, Default)]
pub struct Splitter {
    state: State,
}

impl Splitter {
    /// The next frame in `buf` (consuming it), or `None` when more bytes are needed.
    pub fn next(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        loop {
            match self.state {
                State::Body(length) => {
                    if buf.len() < length {
                        buf.reserve(length - buf.len());
                        return None;
                    }
                    self.state = State::Headers;
                    return Some(Frame::Body(buf.split_to(length)));
                }
                State::Resync => match find_content_length(buf) {
                    Some(at) => {
                        buf.advance(at);
                        self.state = State::Headers;
                    }
                    None => {
                        // Keep a tail that may be the start of a split `Content-Length`.
                        let keep = CONTENT_LENGTH.len() - 1;
                        if buf.len() > keep {
                            buf.advance(buf.len() - keep);
                        }
                        return None;
                    }
                },
                State::SkipValue => {
                    skip_blank(buf);
                    if buf.is_empty() {
                        return None;
                    }
                    if !matches!(buf[0], b'{' | b'[' | b'"') {
                        // No body, or not JSON: the next frame is found by its header.
                        self.state = State::Resync;
                        continue;
                    }
                    let mut values = serde_json::Deserializer::from_slice(&buf[..])
                        .into_iter::<serde::de::IgnoredAny>();
                    match values.next() {
                        Some(Ok(_)) => {
                            let end = values.byte_offset();
                            buf.advance(end);
                            self.state = State::Headers;
                        }
                        Some(Err(error)) if error.is_eof() => return None,
                        _ => self.state = State::Resync,
                    }
                }
                State::AfterBadBody => {
                    skip_blank(buf);
                    if buf.is_empty() {
                        return None;
                    }
                    let window = &buf[..buf.len().min(MAX_HEADERS + 4)];
                    match find(window, b"\r\n\r\n") {
                        Some(end) if looks_like_headers(&buf[..end]) => self.state = State::Headers,
                        Some(_) => self.state = State::Resync,
                        None if buf.len() > MAX_HEADERS => self.state = State::Resync,
                        None => return None,
                    }
                }
                State::Headers => {
                    // Blank lines between frames are tolerated.
                    skip_blank(buf);
                    if buf.is_empty() {
                        return None;
                    }
                    let window = &buf[..buf.len().min(MAX_HEADERS + 4)];
                    let Some(end) = find(window, b"\r\n\r\n") else {
                        if buf.len() > MAX_HEADERS {
                            return Some(self.garbage(buf, "no end of headers".to_string()));
                        }
                        return None;
                    };
                    let block = &buf[..end];
                    match content_length(block) {
                        Ok(length) => {
                            buf.advance(end + 4);
                            self.state = State::Body(length);
                        }
                        // Garbage glued to a header (`xyzContent-Length: 2`): find it.
                        Err(reason)
                            if !looks_like_headers(block)
                                || (!has_content_length_header(block)
                                    && find_content_length(block).is_some()) =>
                        {
                            return Some(self.garbage(buf, reason));
                        }
                        Err(reason) => {
                            buf.advance(end + 4);
                            self.state = State::SkipValue;
                            return Some(Frame::BadHeaders(reason));
                        }
                    }
                }
            }
        }
    }

    /// The body just returned was not JSON: its length may have been wrong too, so what
    /// follows is not read as headers unless it looks like them (which would answer one
    /// bad frame twice).
    pub fn after_bad_body(&mut self) {
        self.state = State::AfterBadBody;
    }

    /// Bytes that do not start a frame: skip into them, so a `Content-Length` header
    /// after garbage (or glued to it) still starts the next frame.
    fn garbage(&mut self, buf: &mut BytesMut, reason: String) -> Frame {
        // Past the first byte, so the same bad header is not found again.
        buf.advance(1);
        self.state = State::Resync;
        Frame::BadHeaders(reason)
    }
}

fn skip_blank(buf: &mut BytesMut) {
    let blank = buf
        .iter()
        .take_while(|b| matches!(b, b'\r' | b'\n' | b' ' | b'\t'))
        .count();
    buf.advance(blank);
}

/// Every line is `Name: value` with a header-name token.
fn looks_like_headers(block: &[u8]) -> bool {
    block.split(|&b| b == b'\n').all(|line| {
        let name_end = line.iter().position(|&b| b == b':');
        name_end.is_some_and(|end| {
            end > 0
                && line[..end]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        })
    })
}

fn has_content_length_header(block: &[u8]) -> bool {
    block.split(|&b| b == b'\n').any(|line| {
        line.split(|&b| b == b':')
            .next()
            .is_some_and(|name| name.trim_ascii().eq_ignore_ascii_case(CONTENT_LENGTH))
    })
}

/// The `Content-Length` of a header block (without its blank line), or why not.
fn content_length(block: &[u8]) -> Result<usize, String> {
    let mut length = None;
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            return Err("a header is not UTF-8".to_string());
        };
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {:?}", clip(line)));
        };
        if !name.trim().eq_ignore_ascii_case("content-length") {
            // Content-Type (any value) and unknown headers are ignored.
            continue;
        }
        let value = value.trim();
        let parsed = value
            .parse::<usize>()
            .ok()
            .filter(|&n| n <= MAX_BODY)
            .ok_or_else(|| format!("bad Content-Length {:?}", clip(value)))?;
        if length.is_some_and(|earlier| earlier != parsed) {
            return Err("conflicting Content-Length headers".to_string());
        }
        length = Some(parsed);
    }
    length.ok_or_else(|| "missing Content-Length".to_string())
}

fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn find_content_length(haystack: &[u8]) -> Option<usize> {
    haystack
        .windows(CONTENT_LENGTH.len())
        .position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(input: &[u8]) -> Vec<Frame> {
        let mut splitter = Splitter::default();
        let mut buf = BytesMut::from(input);
        std::iter::from_fn(|| splitter.next(&mut buf)).collect()
    }

    fn body(text: &str) -> Frame {
        Frame::Body(BytesMut::from(text.as_bytes()))
    }

    #[test]
    fn header_names_are_case_insensitive_and_content_type_is_any() {
        let frames = split_all(
            b"content-length: 2\r\n\r\n{}CONTENT-LENGTH:2\r\ncontent-type: application/vscode-jsonrpc\r\n\r\n[]\
              Content-Type: application/vscode-jsonrpc; charset=UTF-8\r\nContent-Length: 1\r\n\r\n1",
        );
        assert_eq!(frames, vec![body("{}"), body("[]"), body("1")]);
    }

    #[test]
    fn a_frame_of_length_zero_does_not_hold_up_the_next() {
        let frames = split_all(b"Content-Length: 0\r\n\r\nContent-Length: 2\r\n\r\n{}");
        assert_eq!(frames, vec![body(""), body("{}")]);
    }

    #[test]
    fn a_bad_header_is_one_frame_and_the_next_frame_is_read() {
        for bad in [
            "Content-Length: abc\r\n\r\n{\"x\":1}",
            "Content-Length: -4\r\n\r\n{}",
            "Content-Type: application/vscode-jsonrpc\r\n\r\n{}",
            "garbage without a colon\r\n\r\n",
            "Content-Length: 99999999999999999999\r\n\r\n",
            "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        ] {
            let input = format!("{bad}Content-Length: 2\r\n\r\n{{}}");
            let frames = split_all(input.as_bytes());
            assert_eq!(frames.len(), 2, "{bad:?}: {frames:?}");
            assert!(matches!(frames[0], Frame::BadHeaders(_)), "{bad:?}");
            assert_eq!(frames[1], body("{}"), "{bad:?}");
        }
    }

    #[test]
    fn a_header_block_without_a_length_is_skipped_with_its_body() {
        let frames = split_all(
            b"Content-Length: 2x\r\n\r\n{\"a\":[1,\"}\"]}X-Other: 1\r\n\r\n{}Content-Length: 2\r\n\r\n{}",
        );
        assert!(matches!(frames[0], Frame::BadHeaders(_)), "{frames:?}");
        assert!(matches!(frames[1], Frame::BadHeaders(_)), "{frames:?}");
        assert_eq!(&frames[2..], &[body("{}")]);
    }

    #[test]
    fn after_a_body_that_is_not_json_garbage_is_skipped_and_a_frame_is_read() {
        let mut splitter = Splitter::default();
        let mut buf = BytesMut::from(
            &b"Content-Length: 3\r\n\r\n{\"jsonrpc\":1}\r\n\r\nContent-Length: 2\r\n\r\n{}"[..],
        );
        assert_eq!(splitter.next(&mut buf), Some(body("{\"j")));
        splitter.after_bad_body();
        assert_eq!(splitter.next(&mut buf), Some(body("{}")));
        assert_eq!(splitter.next(&mut buf), None);
        let mut buf = BytesMut::from(&b"Content-Length: 1\r\n\r\n{Content-Length: 2\r\n\r\n{}"[..]);
        assert_eq!(splitter.next(&mut buf), Some(body("{")));
        splitter.after_bad_body();
        assert_eq!(splitter.next(&mut buf), Some(body("{}")));
    }

    #[test]
    fn garbage_glued_to_a_header_costs_one_bad_frame() {
        let frames = split_all(b"xyzContent-Length: 2\r\n\r\n{}");
        assert!(matches!(frames[0], Frame::BadHeaders(_)));
        assert_eq!(&frames[1..], &[body("{}")]);
    }

    #[test]
    fn garbage_before_a_header_costs_one_bad_frame() {
        let frames = split_all(b"junk\r\nContent-Length: 2\r\n\r\n{}");
        assert!(matches!(frames[0], Frame::BadHeaders(_)));
        assert_eq!(&frames[1..], &[body("{}")]);
    }

    #[test]
    fn headers_without_an_end_are_refused_past_the_limit() {
        let mut input = vec![b'x'; MAX_HEADERS + 1];
        input.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
        let frames = split_all(&input);
        assert!(matches!(frames[0], Frame::BadHeaders(_)));
        assert_eq!(&frames[1..], &[body("{}")]);
    }
}
