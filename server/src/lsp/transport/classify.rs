//! Judging one frame's body by the JSON-RPC types tower-lsp decodes: a message to pass
//! on, `shutdown`, `exit`, a `$/` request tower-lsp would leave unanswered, or a body it
//! cannot use, with the error code and the id its one reply goes to.

use serde::Deserialize;
use tower_lsp_server::jsonrpc::{ErrorCode, Id, Request, Response};

/// tower-lsp's own message type (private there): what its decoder accepts is exactly
/// what deserializes into this.
#[derive(Deserialize)]
#[serde(untagged)]
enum Message {
    #[allow(dead_code)] // deserialized to check it, forwarded as bytes
    Response(Response),
    Request(Request),
}

/// What to do with one frame's body.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A message for tower-lsp.
    Forward,
    /// The `shutdown` request (forwarded, and remembered for the exit code).
    Shutdown,
    /// The `exit` notification: stop serving.
    Exit,
    /// A request for a `$/` method: tower-lsp drops these without a reply.
    DollarRequest(Id),
    /// Not usable: one error reply, on `id` (`Id::Null` unless the request's id is
    /// readable).
    Unusable {
        id: Id,
        code: ErrorCode,
        reason: String,
        /// The frame's length may be wrong too (not JSON at all).
        resync: bool,
    },
}

/// Decides what a body is, by the JSON-RPC types tower-lsp decodes.
pub fn classify(body: &[u8]) -> Incoming {
    let not_json = |reason: String| Incoming::Unusable {
        id: Id::Null,
        code: ErrorCode::ParseError,
        reason,
        resync: true,
    };
    if body.is_empty() {
        return Incoming::Unusable {
            id: Id::Null,
            code: ErrorCode::ParseError,
            reason: "empty body".to_string(),
            resync: false,
        };
    }
    if let Err(error) = std::str::from_utf8(body) {
        return not_json(format!("the body is not UTF-8: {error}"));
    }
    match serde_json::from_slice::<Message>(body) {
        // tower-lsp reads a missing `method` as "" and would answer -32601.
        Ok(Message::Request(request)) if request.method().is_empty() => Incoming::Unusable {
            id: request_id(body),
            code: ErrorCode::InvalidRequest,
            reason: "not a JSON-RPC message (no `method`, and not a response)".to_string(),
            resync: false,
        },
        Ok(Message::Request(request)) => {
            let method = request.method();
            match request.id() {
                Some(id) if method.starts_with("$/") => Incoming::DollarRequest(id.clone()),
                Some(_) if method == "shutdown" => Incoming::Shutdown,
                None if method == "exit" => Incoming::Exit,
                _ => Incoming::Forward,
            }
        }
        Ok(Message::Response(_)) => Incoming::Forward,
        Err(_) => match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Err(error) => not_json(format!("invalid JSON: {error}")),
            Ok(_) => Incoming::Unusable {
                id: request_id(body),
                code: ErrorCode::InvalidRequest,
                reason: not_a_message(body),
                resync: false,
            },
        },
    }
}

/// The id an error reply to a JSON body that is not a usable message goes to: the
/// request's own when it can be read (JSON-RPC 2.0 leaves `null` for an id that cannot
/// be detected), else `Id::Null`. Readable means an object with a `method` member (so
/// it is meant as a request, not a broken response whose id would be the client's own)
/// and exactly one `id` that is a string or an integer tower-lsp can hold.
fn request_id(body: &[u8]) -> Id {
    /// A derived struct refuses a duplicate field, so `"id":1,"id":2` reads as no id.
    #[derive(Deserialize)]
    struct Head {
        #[serde(default)]
        id: Option<serde_json::Value>,
        #[serde(default)]
        method: Option<serde::de::IgnoredAny>,
    }
    let Ok(Head {
        id: Some(id),
        method: Some(_),
    }) = serde_json::from_slice::<Head>(body)
    else {
        return Id::Null;
    };
    match id {
        serde_json::Value::String(text) => Id::String(text),
        serde_json::Value::Number(number) => number.as_i64().map_or(Id::Null, Id::Number),
        _ => Id::Null,
    }
}

/// Why JSON is not a JSON-RPC message, in words for the reply.
fn not_a_message(body: &[u8]) -> String {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return "not a JSON-RPC message (duplicate fields?)".to_string();
    };
    let Some(object) = value.as_object() else {
        return if value.is_array() {
            "batches are not supported".to_string()
        } else {
            "not a JSON-RPC message (not an object)".to_string()
        };
    };
    if object.get("jsonrpc").and_then(|v| v.as_str()) != Some("2.0") {
        return "not a JSON-RPC message (`jsonrpc` must be \"2.0\")".to_string();
    }
    if let Some(id) = object.get("id") {
        let usable = id.is_null() || id.is_string() || id.as_i64().is_some();
        if !usable {
            return format!("not a JSON-RPC message (bad id {id})");
        }
    }
    match object.get("method") {
        Some(method) if !method.is_string() => {
            "not a JSON-RPC message (`method` must be a string)".to_string()
        }
        Some(_) => "not a JSON-RPC message".to_string(),
        None => "not a JSON-RPC message (no `method`, and not a response)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_classified_by_what_tower_lsp_decodes() {
        let unusable = |body: &str| match classify(body.as_bytes()) {
            Incoming::Unusable { code, .. } => code.code(),
            other => panic!("{body}: {other:?}"),
        };
        assert_eq!(unusable(""), -32700);
        assert_eq!(unusable("{\"jsonrpc\":"), -32700);
        assert_eq!(unusable("not json"), -32700);
        assert!(matches!(
            classify(b"{\"a\":\"\xff\"}"),
            Incoming::Unusable {
                code: ErrorCode::ParseError,
                ..
            }
        ));
        for invalid in [
            r#"[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"42"#,
            r#"null"#,
        ] {
            assert_eq!(unusable(invalid), -32600, "{invalid}");
        }
        let ok = |body: &str| classify(body.as_bytes());
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#),
            Incoming::Forward
        );
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#),
            Incoming::Forward
        );
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","method":"$/setTrace","params":{}}"#),
            Incoming::Forward
        );
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            Incoming::Forward
        );
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#),
            Incoming::Shutdown
        );
        assert_eq!(ok(r#"{"jsonrpc":"2.0","method":"exit"}"#), Incoming::Exit);
        assert_eq!(
            ok(r#"{"jsonrpc":"2.0","id":7,"method":"$/unknown"}"#),
            Incoming::DollarRequest(Id::Number(7))
        );
    }

    #[test]
    fn an_unusable_request_is_answered_on_its_id_when_it_is_readable() {
        let id_of = |body: &str| match classify(body.as_bytes()) {
            Incoming::Unusable { id, .. } => id,
            other => panic!("{body}: {other:?}"),
        };
        let readable = [
            (r#"{"id":2,"method":""}"#, Id::Number(2)),
            (r#"{"jsonrpc":"2.0","id":3,"method":""}"#, Id::Number(3)),
            (
                r#"{"jsonrpc":"1.0","id":"s","method":"x"}"#,
                Id::String("s".into()),
            ),
            (r#"{"id":-4,"method":"x","params":1}"#, Id::Number(-4)),
            (r#"{"jsonrpc":"2.0","id":5,"method":7}"#, Id::Number(5)),
        ];
        for (body, id) in readable {
            assert_eq!(id_of(body), id, "{body}");
        }
        for unreadable in [
            // No `method`: maybe a broken response, whose id is the client's own.
            r#"{"jsonrpc":"2.0","id":6}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":""}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"#,
            "",
        ] {
            assert_eq!(id_of(unreadable), Id::Null, "{unreadable}");
        }
    }
}
