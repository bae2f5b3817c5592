//! Server-sent events: splitting a streamed HTTP body into events, and the interface every
//! vendor's stream decoder implements.

use super::{Decoded, ProviderError, StreamSink};

/// One dispatched event: its `event:` name (empty when the server sent none) and its
/// `data:` lines joined with `\n`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Incremental SSE parser following the WHATWG rules that matter for model APIs: lines end
/// in `\n`, `\r\n` or `\r`; a blank line dispatches; `:` starts a comment; one space after
/// the field's colon is dropped; several `data:` lines join with `\n`.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// Bytes not yet split into lines. Kept as bytes so a UTF-8 character split across two
    /// network chunks is only decoded once its line is complete.
    pending: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    seen_first_line: bool,
}

impl SseParser {
    /// Feeds the next bytes of the body and returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.pending[start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let end_of_line = start + offset;
            let mut next = end_of_line + 1;
            if self.pending[end_of_line] == b'\r' {
                match self.pending.get(next) {
                    // A trailing `\r` may be the first half of `\r\n`: wait for the next chunk.
                    None => break,
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                }
            }
            let line = String::from_utf8_lossy(&self.pending[start..end_of_line]).into_owned();
            start = next;
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
        }
        self.pending.drain(..start);
        events
    }

    /// Ends the body. Servers (Anthropic's recordings among them) may omit the blank line
    /// after the last event, so a complete last event is still dispatched; whether the
    /// stream really ended is for the decoder's end marker to say.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let rest = std::mem::take(&mut self.pending);
        let rest = rest.strip_suffix(b"\r").unwrap_or(&rest);
        let mut last = None;
        if !rest.is_empty() {
            let line = String::from_utf8_lossy(rest).into_owned();
            last = self.line(&line);
        }
        last.or_else(|| self.line(""))
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        let line = if self.seen_first_line {
            line
        } else {
            self.seen_first_line = true;
            line.strip_prefix('\u{feff}').unwrap_or(line)
        };
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` only matter to browsers reconnecting on their own.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

/// Why a stream decoder rejected an event.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StreamError {
    /// The event is not what the wire format promises (bad JSON, wrong shape).
    Malformed(String),
    /// The provider itself reported an error inside the stream (e.g. `overloaded_error`).
    Provider(String),
}

/// A vendor's streaming decoder: fed events in order, it accumulates one assistant turn
/// and reports each piece of it to the sink as it is decoded.
pub(crate) trait StreamDecoder: Send {
    fn feed(&mut self, event: &SseEvent, sink: StreamSink<'_>) -> Result<(), StreamError>;
    /// Whether any text, reasoning or tool-call delta has been decoded; a stream that
    /// breaks after that point cannot be retried without the caller seeing a half answer
    /// twice.
    fn has_output(&self) -> bool;
    /// Whether the format's end marker (`[DONE]`, `message_stop`) has arrived.
    fn is_complete(&self) -> bool;
    fn finish(self: Box<Self>) -> Result<Decoded, ProviderError>;
}

/// Runs a whole recorded body through a decoder, as the transport does chunk by chunk.
#[cfg(test)]
pub(crate) fn decode_all(
    body: &[u8],
    decoder: Box<dyn StreamDecoder>,
) -> Result<Decoded, ProviderError> {
    decode_all_into(body, decoder, &super::ignore_stream)
}

/// [`decode_all`], reporting the stream events to `sink`.
#[cfg(test)]
pub(crate) fn decode_all_into(
    body: &[u8],
    mut decoder: Box<dyn StreamDecoder>,
    sink: StreamSink<'_>,
) -> Result<Decoded, ProviderError> {
    let mut parser = SseParser::default();
    let mut events = parser.push(body);
    events.extend(parser.finish());
    for event in &events {
        decoder
            .feed(event, sink)
            .map_err(|e| ProviderError::Decode(format!("{e:?}")))?;
    }
    if !decoder.is_complete() {
        return Err(ProviderError::StreamCut("no end marker".into()));
    }
    decoder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    fn parse_in_pieces(body: &str, piece: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        for chunk in body.as_bytes().chunks(piece) {
            events.extend(parser.push(chunk));
        }
        events.extend(parser.finish());
        events
    }

    #[test]
    fn splits_events_on_every_line_ending_and_any_chunking() {
        let cases: &[(&str, Vec<SseEvent>)] = &[
            ("data: a\n\ndata: b\n\n", vec![ev("", "a"), ev("", "b")]),
            (
                "data: a\r\n\r\ndata: b\r\n\r\n",
                vec![ev("", "a"), ev("", "b")],
            ),
            ("data: a\r\rdata: b\r\r", vec![ev("", "a"), ev("", "b")]),
            ("event: ping\ndata: {}\n\n", vec![ev("ping", "{}")]),
            ("data: one\ndata: two\n\n", vec![ev("", "one\ntwo")]),
            (": keep-alive\n\ndata: x\n\n", vec![ev("", "x")]),
            ("data:nospace\n\n", vec![ev("", "nospace")]),
            ("data:  two spaces\n\n", vec![ev("", " two spaces")]),
            ("event: lonely\n\n", vec![]),
            ("id: 3\nretry: 10\ndata: x\n\n", vec![ev("", "x")]),
            ("\u{feff}data: bom\n\n", vec![ev("", "bom")]),
            ("data: é✓\n\n", vec![ev("", "é✓")]),
            // The recordings end without the final blank line.
            (
                "event: message_stop\ndata: {}",
                vec![ev("message_stop", "{}")],
            ),
            ("data: last\n", vec![ev("", "last")]),
        ];
        for (body, expected) in cases {
            for piece in [1, 2, 3, 7, 1000] {
                assert_eq!(
                    &parse_in_pieces(body, piece),
                    expected,
                    "{body:?} in pieces of {piece}"
                );
            }
        }
    }

    #[test]
    fn event_name_does_not_leak_into_the_next_event() {
        let events = parse_in_pieces("event: a\ndata: 1\n\ndata: 2\n\n", 1000);
        assert_eq!(events, vec![ev("a", "1"), ev("", "2")]);
    }
}
