//! Property tests (proptest): the transport's input side as a unit (frames well-formed
//! and malformed, split across reads at random points) and the document store under
//! random incremental edits in both position encodings, against a `String` oracle.

use copilot_ls::lsp::transport::{Event, Incoming, Reader, Splitter};
use copilot_ls::session::{DocumentStore, TextChange};
use copilot_ls::text::{Pos, PositionEncoding, Span};
use proptest::prelude::*;
use serde_json::json;
use tokio_util::bytes::BytesMut;

// ---------------------------------------------------------------- framing

/// One item of an input stream.
#[derive(Clone, Debug)]
enum Item {
    /// A valid request, with the header spelling and order used.
    Valid {
        id: i64,
        text: String,
        header: u8,
    },
    Malformed(Malformed),
    /// Bytes that are not a frame at all.
    Junk(String),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Malformed {
    Batch,
    IdTrue,
    IdFloat,
    IdObject,
    NotJson,
    NotUtf8,
    Empty,
    BadLength,
    MissingLength,
    ShortLength,
}

fn request(id: i64, text: &str) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": id, "method": "x/ping", "params": {"t": text}}),
    )
    .unwrap()
}

fn framed(body: &[u8], header: u8) -> Vec<u8> {
    let n = body.len();
    let head = match header % 6 {
        0 => format!("Content-Length: {n}\r\n\r\n"),
        1 => format!("content-length: {n}\r\n\r\n"),
        2 => format!("CONTENT-LENGTH:{n}\r\n\r\n"),
        3 => format!("Content-Type: application/vscode-jsonrpc\r\nContent-Length: {n}\r\n\r\n"),
        4 => format!(
            "Content-Length: {n}\r\nContent-Type: application/vscode-jsonrpc; charset=UTF-8\r\n\r\n"
        ),
        _ => format!("Content-Length:   {n}  \r\nX-Extra: 1\r\n\r\n"),
    };
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

fn bytes_of(item: &Item) -> Vec<u8> {
    let plain = |body: &[u8]| framed(body, 0);
    match item {
        Item::Valid { id, text, header } => framed(&request(*id, text), *header),
        Item::Junk(text) => text.clone().into_bytes(),
        Item::Malformed(kind) => match kind {
            Malformed::Batch => plain(br#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#),
            Malformed::IdTrue => plain(br#"{"jsonrpc":"2.0","id":true,"method":"x"}"#),
            Malformed::IdFloat => plain(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#),
            Malformed::IdObject => plain(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            Malformed::NotJson => plain(br#"{"jsonrpc":"2.0","method":"#),
            Malformed::NotUtf8 => plain(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}"),
            Malformed::Empty => b"Content-Length: 0\r\n\r\n".to_vec(),
            Malformed::BadLength => b"Content-Length: 12a\r\n\r\n{\"a\":[1,{}]}".to_vec(),
            Malformed::MissingLength => {
                b"Content-Type: application/vscode-jsonrpc\r\n\r\n{\"jsonrpc\":\"2.0\"}".to_vec()
            }
            Malformed::ShortLength => {
                let body = request(5, "short");
                let mut out = b"Content-Length: 9\r\n\r\n".to_vec();
                out.extend_from_slice(&body);
                out
            }
        },
    }
}

fn malformed() -> impl Strategy<Value = Malformed> {
    prop_oneof![
        Just(Malformed::Batch),
        Just(Malformed::IdTrue),
        Just(Malformed::IdFloat),
        Just(Malformed::IdObject),
        Just(Malformed::NotJson),
        Just(Malformed::NotUtf8),
        Just(Malformed::Empty),
        Just(Malformed::BadLength),
        Just(Malformed::MissingLength),
        Just(Malformed::ShortLength),
    ]
}

fn valid() -> impl Strategy<Value = Item> {
    (any::<i64>(), "\\PC{0,40}", any::<u8>()).prop_map(|(id, text, header)| Item::Valid {
        id,
        text,
        header,
    })
}

/// Feeds `stream` to a reader in chunks cut at `cuts` (positions, any order) and
/// collects the events.
fn read_in_chunks(stream: &[u8], cuts: &[usize]) -> Vec<Event> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    points.push(stream.len());
    points.sort_unstable();
    let mut reader = Reader::default();
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    let mut from = 0;
    for to in points {
        buf.extend_from_slice(&stream[from..to]);
        from = to;
        while let Some(event) = reader.next(&mut buf) {
            events.push(event);
        }
    }
    events
}

fn valid_ids(events: &[Event]) -> Vec<i64> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Message(body, Incoming::Forward) => {
                let value: serde_json::Value = serde_json::from_slice(body).unwrap();
                value["id"].as_i64()
            }
            _ => None,
        })
        .collect()
}

fn unusable(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Unusable { .. }))
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn well_formed_frames_come_out_whole_and_in_order_however_the_reads_split(
        items in prop::collection::vec(valid(), 1..12),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        let stream: Vec<u8> = items.iter().flat_map(bytes_of).collect();
        let events = read_in_chunks(&stream, &cuts);
        let expected: Vec<Event> = items
            .iter()
            .map(|item| match item {
                Item::Valid { id, text, .. } => {
                    Event::Message(BytesMut::from(&request(*id, text)[..]), Incoming::Forward)
                }
                _ => unreachable!(),
            })
            .collect();
        prop_assert_eq!(events, expected);
    }

    #[test]
    fn each_malformed_frame_is_one_unusable_event_and_valid_frames_survive(
        items in prop::collection::vec(
            prop_oneof![valid(), malformed().prop_map(Item::Malformed)], 1..24),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        // A frame with no Content-Length right after one whose length was short is
        // inside the garbage the short one left: the two are one stretch of garbage.
        let mut items = items;
        for i in 1..items.len() {
            if matches!(items[i - 1], Item::Malformed(Malformed::ShortLength))
                && matches!(items[i], Item::Malformed(Malformed::MissingLength))
            {
                items[i] = Item::Malformed(Malformed::Empty);
            }
        }
        let stream: Vec<u8> = items.iter().flat_map(bytes_of).collect();
        let events = read_in_chunks(&stream, &cuts);
        let ids: Vec<i64> = items
            .iter()
            .filter_map(|item| match item {
                Item::Valid { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        let bad = items.iter().filter(|i| matches!(i, Item::Malformed(_))).count();
        prop_assert_eq!(valid_ids(&events), ids);
        prop_assert_eq!(unusable(&events), bad, "{:?}", events);
    }

    #[test]
    fn junk_between_frames_never_costs_a_valid_frame(
        items in prop::collection::vec(prop_oneof![
            valid(),
            malformed().prop_map(Item::Malformed),
            "[a-z0-9 :;{}\\[\\]\"\r\n]{1,30}".prop_map(Item::Junk),
        ], 1..24),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let mut items = items;
        // Junk must end before the next frame can be mistaken for its continuation: a
        // blank line closes it (as any line-based garbage is closed by the next header).
        for item in &mut items {
            if let Item::Junk(text) = item {
                text.push_str("\r\n\r\n");
            }
        }
        let stream: Vec<u8> = items.iter().flat_map(bytes_of).collect();
        let events = read_in_chunks(&stream, &cuts);
        let ids: Vec<i64> = items
            .iter()
            .filter_map(|item| match item {
                Item::Valid { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        let bad = items.iter().filter(|i| !matches!(i, Item::Valid { .. })).count();
        prop_assert_eq!(valid_ids(&events), ids);
        prop_assert!(unusable(&events) <= bad, "{:?}", events);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_every_body_fits(
        stream in prop::collection::vec(any::<u8>(), 0..600),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
    ) {
        for event in read_in_chunks(&stream, &cuts) {
            if let Event::Message(body, _) = event {
                prop_assert!(body.len() <= stream.len());
            }
        }
        // The splitter alone as well (the output side uses it without classification).
        let mut splitter = Splitter::default();
        let mut buf = BytesMut::from(&stream[..]);
        let mut steps = 0;
        while splitter.next(&mut buf).is_some() {
            steps += 1;
            prop_assert!(steps <= stream.len() + 1, "the splitter makes progress");
        }
    }
}

// ---------------------------------------------------------------- document store

/// The oracle: LSP positions over a `String`, computed from first principles.
struct Oracle {
    text: String,
}

impl Oracle {
    /// Byte ranges of each line's content (without its terminator): `\n`, `\r\n`, `\r`.
    fn lines(&self) -> Vec<(usize, usize)> {
        let bytes = self.text.as_bytes();
        let mut lines = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => {
                    lines.push((start, i));
                    start = i + 1;
                }
                b'\r' => {
                    lines.push((start, i));
                    if bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        lines.push((start, bytes.len()));
        lines
    }

    /// Units of a char in the encoding.
    fn units(c: char, encoding: PositionEncoding) -> usize {
        match encoding {
            PositionEncoding::Utf8 => c.len_utf8(),
            PositionEncoding::Utf16 => c.len_utf16(),
        }
    }

    fn line_units(&self, line: (usize, usize), encoding: PositionEncoding) -> usize {
        self.text[line.0..line.1]
            .chars()
            .map(|c| Self::units(c, encoding))
            .sum()
    }

    /// The byte offset of a position: a column past the line's end clamps to it, one
    /// inside a char rounds down to its start; a line past the end is `None`.
    fn offset(&self, pos: Pos, encoding: PositionEncoding) -> Option<usize> {
        let (start, end) = *self.lines().get(pos.line as usize)?;
        let mut units = 0;
        for (at, c) in self.text[start..end].char_indices() {
            let next = units + Self::units(c, encoding);
            if next > pos.character as usize {
                return Some(start + at);
            }
            units = next;
        }
        Some(end)
    }
}

/// One change, as choices resolved against the text it applies to.
#[derive(Clone, Debug)]
struct Edit {
    start: (usize, usize),
    end: (usize, usize),
    text: String,
    whole: bool,
}

fn pieces() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("a"),
            Just("é"),
            Just("中"),
            Just("😀"),
            Just("\n"),
            Just("\r\n"),
            Just("\r"),
            Just(" "),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        (any::<usize>(), any::<usize>()),
        (any::<usize>(), any::<usize>()),
        pieces(),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(start, end, text, whole)| Edit {
            start,
            end,
            text,
            whole,
        })
}

/// A position chosen by `(line, column)` seeds: sometimes one line past the end,
/// sometimes a column past the line's end or inside a char.
fn position(oracle: &Oracle, (line, column): (usize, usize), encoding: PositionEncoding) -> Pos {
    let lines = oracle.lines();
    let line = line % (lines.len() + 1);
    let units = lines
        .get(line)
        .map_or(0, |&l| oracle.line_units(l, encoding));
    Pos::new(line as u32, (column % (units + 3)) as u32)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn incremental_edits_match_a_string_oracle_in_both_encodings(
        initial in pieces(),
        notifications in prop::collection::vec(prop::collection::vec(edit(), 1..4), 1..12),
        utf8 in any::<bool>(),
    ) {
        let encoding = if utf8 { PositionEncoding::Utf8 } else { PositionEncoding::Utf16 };
        let store = DocumentStore::default();
        let uri = "untitled:property";
        store.open(uri, "plaintext", 1, &initial);
        let mut oracle = Oracle { text: initial };
        for (version, edits) in notifications.iter().enumerate() {
            // Resolve every change against the text it applies to (the oracle's copy);
            // a change the oracle cannot apply makes the whole notification ignored.
            let mut scratch = Oracle { text: oracle.text.clone() };
            let mut changes = Vec::new();
            let mut valid = true;
            for edit in edits {
                if edit.whole {
                    changes.push(TextChange { range: None, text: edit.text.clone() });
                    scratch.text = edit.text.clone();
                    continue;
                }
                let mut start = position(&scratch, edit.start, encoding);
                let mut end = position(&scratch, edit.end, encoding);
                if (start.line, start.character) > (end.line, end.character) {
                    std::mem::swap(&mut start, &mut end);
                }
                changes.push(TextChange {
                    range: Some(Span { start, end }),
                    text: edit.text.clone(),
                });
                match (scratch.offset(start, encoding), scratch.offset(end, encoding)) {
                    (Some(from), Some(to)) if from <= to => {
                        scratch.text.replace_range(from..to, &edit.text);
                    }
                    _ => {
                        valid = false;
                        break;
                    }
                }
            }
            let applied = store.change(uri, version as i32 + 2, &changes, encoding);
            prop_assert_eq!(applied.is_ok(), valid, "{:?} on {:?}", changes, oracle.text);
            if valid {
                oracle = scratch;
            }
            let document = store.get(uri).unwrap();
            prop_assert_eq!(document.rope.to_string(), oracle.text.clone());
        }
    }
}
