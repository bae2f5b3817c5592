//! The protocol checks over one ask's recorded exchanges with a real OpenAI-compatible
//! server: every request succeeded, every reply decodes, and every complete tool call the
//! server made was executed (a `Step` in the `AskResult`) and answered by a matching
//! tool result in the next request. Written against the OpenAI wire format itself, not
//! against copilot-ls's decoder, so a decoder bug cannot hide here.

use std::collections::BTreeMap;

use serde_json::Value;

use super::proxy::Exchange;

/// One tool call as the server sent it.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl Call {
    /// Complete JSON arguments (an empty string counts as `{}`).
    fn is_complete(&self) -> bool {
        self.arguments.trim().is_empty() || serde_json::from_str::<Value>(&self.arguments).is_ok()
    }
}

/// A reply's model turn.
#[derive(Debug, Default)]
pub struct Turn {
    pub finish_reason: Option<String>,
    pub calls: Vec<Call>,
}

/// Decodes a reply: an SSE stream of chunks, or one chat completion object.
pub fn decode(exchange: &Exchange) -> Result<Turn, String> {
    let text = exchange.reply_text();
    if exchange.content_type.starts_with("text/event-stream") {
        decode_stream(&text)
    } else {
        let reply: Value =
            serde_json::from_str(&text).map_err(|e| format!("reply is not JSON ({e}): {text}"))?;
        let choice = &reply["choices"][0];
        let mut turn = Turn {
            finish_reason: choice["finish_reason"].as_str().map(str::to_string),
            calls: Vec::new(),
        };
        for call in choice["message"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            turn.calls.push(Call {
                id: call["id"].as_str().unwrap_or_default().to_string(),
                name: call["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                arguments: call["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            });
        }
        Ok(turn)
    }
}

fn decode_stream(text: &str) -> Result<Turn, String> {
    let mut turn = Turn::default();
    let mut by_index: BTreeMap<u64, Call> = BTreeMap::new();
    let mut events = 0;
    let mut done = false;
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            done = true;
            continue;
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| format!("stream chunk is not JSON ({e}): {data}"))?;
        events += 1;
        let Some(choice) = chunk["choices"].get(0) else {
            continue; // the usage chunk
        };
        if let Some(reason) = choice["finish_reason"].as_str() {
            turn.finish_reason = Some(reason.to_string());
        }
        for delta in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = delta["index"].as_u64().unwrap_or(0);
            let call = by_index.entry(index).or_insert_with(|| Call {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            if let Some(id) = delta["id"].as_str() {
                call.id = id.to_string();
            }
            if let Some(name) = delta["function"]["name"].as_str() {
                call.name.push_str(name);
            }
            if let Some(arguments) = delta["function"]["arguments"].as_str() {
                call.arguments.push_str(arguments);
            }
        }
    }
    if events == 0 || !done {
        return Err(format!(
            "stream is empty or has no [DONE] ({events} events): {text:?}"
        ));
    }
    turn.calls = by_index.into_values().collect();
    Ok(turn)
}

/// Every protocol check over one ask. `Err` lists what failed, with the exchanges.
pub fn check_ask(exchanges: &[Exchange], result: &Value) -> Result<(), String> {
    let mut problems = Vec::new();
    if exchanges.is_empty() {
        problems.push("copilot-ls sent no request to the server".to_string());
    }
    // `usage` (PROTOCOL v2) counts every request sent, retries included.
    if let Some(usage) = result.get("usage") {
        let model_calls = usage["modelCalls"].as_u64();
        if model_calls != Some(exchanges.len() as u64) {
            problems.push(format!(
                "usage.modelCalls is {model_calls:?} but the server saw {} requests",
                exchanges.len()
            ));
        }
    }
    let stop = result["stopReason"].as_str().unwrap_or_default();
    if !["answered", "max_steps"].contains(&stop) {
        problems.push(format!("stopReason {stop:?}"));
    }

    let mut turns = Vec::new();
    for (n, exchange) in exchanges.iter().enumerate() {
        if exchange.method != "POST" || !exchange.path.ends_with("/chat/completions") {
            problems.push(format!(
                "request {n}: {} {}",
                exchange.method, exchange.path
            ));
        }
        if !(200..300).contains(&exchange.status) {
            problems.push(format!(
                "request {n}: status {}: {}",
                exchange.status,
                exchange.reply_text()
            ));
        }
        // The output limit is what keeps a model that never stops from running until
        // the request timeout.
        let limit = exchange.request["max_tokens"]
            .as_u64()
            .or_else(|| exchange.request["max_completion_tokens"].as_u64());
        if limit.is_none() {
            problems.push(format!("request {n}: no output limit sent"));
        }
        match decode(exchange) {
            Ok(turn) => turns.push(turn),
            Err(error) => {
                problems.push(format!("request {n}: {error}"));
                turns.push(Turn::default());
            }
        }
    }

    // Executed: every complete call but a successful `answer` is a step, by tool name.
    let mut called: BTreeMap<String, usize> = BTreeMap::new();
    for (n, turn) in turns.iter().enumerate() {
        for call in &turn.calls {
            if !call.is_complete() {
                if turn.finish_reason.as_deref() != Some("length") {
                    problems.push(format!(
                        "reply {n}: call {} ({}) has incomplete arguments {:?} without a length cut",
                        call.id, call.name, call.arguments
                    ));
                }
                continue;
            }
            if call.name != "answer" {
                *called.entry(call.name.clone()).or_default() += 1;
            }
        }
    }
    let mut stepped: BTreeMap<String, usize> = BTreeMap::new();
    for step in result["steps"].as_array().into_iter().flatten() {
        let tool = step["tool"].as_str().unwrap_or_default();
        if tool != "answer" {
            *stepped.entry(tool.to_string()).or_default() += 1;
        }
    }
    if called != stepped {
        problems.push(format!(
            "the server called {called:?} (complete calls, by tool) but the AskResult's steps are {stepped:?}"
        ));
    }

    // Answered: the next request carries the assistant turn with every complete call and
    // a tool result with each call's id after it.
    for (n, turn) in turns.iter().enumerate() {
        let Some(next) = exchanges.get(n + 1) else {
            continue;
        };
        let messages = next.request["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for call in turn.calls.iter().filter(|c| c.is_complete()) {
            let asked = messages.iter().position(|m| {
                m["role"] == "assistant"
                    && m["tool_calls"]
                        .as_array()
                        .is_some_and(|calls| calls.iter().any(|c| c["id"] == call.id.as_str()))
            });
            let answered = messages
                .iter()
                .position(|m| m["role"] == "tool" && m["tool_call_id"] == call.id.as_str());
            match (asked, answered) {
                (Some(asked), Some(answered)) if asked < answered => {}
                _ => problems.push(format!(
                    "reply {n}: call {} ({}) is not sent back with its result in request {} (assistant turn at {asked:?}, tool result at {answered:?})",
                    call.id,
                    call.name,
                    n + 1
                )),
            }
        }
    }

    // The last reply ended the ask: with no tool call, or with `answer`, unless the step
    // limit did.
    if stop == "answered" {
        if let Some(last) = turns.last() {
            let ended = last.calls.is_empty() || last.calls.iter().any(|c| c.name == "answer");
            if !ended {
                problems.push(format!(
                    "stopReason answered, but the last reply asked for {:?}",
                    last.calls
                ));
            }
        }
    }

    if problems.is_empty() {
        return Ok(());
    }
    let mut report = problems.join("\n");
    for (n, exchange) in exchanges.iter().enumerate() {
        report.push_str(&format!(
            "\n--- request {n}: {} {} -> {}\n{}\n--- reply {n} ({}):\n{}",
            exchange.method,
            exchange.path,
            exchange.status,
            summary(&exchange.request),
            exchange.content_type,
            clip(&exchange.reply_text(), 6000)
        ));
    }
    Err(report)
}

/// A request without what every request repeats (the system prompt, the tool schemas):
/// the other fields, then one line per message.
fn summary(request: &Value) -> String {
    let mut fields = request.clone();
    if let Some(object) = fields.as_object_mut() {
        object.remove("messages");
        if let Some(tools) = object.get_mut("tools") {
            *tools = Value::from(format!(
                "({} tools)",
                tools.as_array().map_or(0, |t| t.len())
            ));
        }
    }
    let mut text = fields.to_string();
    for message in request["messages"].as_array().into_iter().flatten() {
        let mut message = message.clone();
        if message["role"] == "system" {
            message["content"] = Value::from("(system prompt)");
        }
        text.push_str("\n  ");
        text.push_str(&clip(&message.to_string(), 1500));
    }
    text
}

fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

/// The checks themselves, on hand-made exchanges: each must catch what it is for.
#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn exchange(request: Value, status: u16, content_type: &str, reply: &str) -> Exchange {
        Exchange {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            request,
            status,
            content_type: content_type.into(),
            reply: reply.as_bytes().to_vec(),
        }
    }

    /// A streamed turn calling `search_code` as `call-1`, then a plain answer.
    fn good_ask() -> (Vec<Exchange>, Value) {
        let first = exchange(
            json!({"max_tokens": 256, "messages": [{"role": "user", "content": "q"}]}),
            200,
            "text/event-stream",
            concat!(
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call-1\",\"type\":\"function\",\"function\":{\"name\":\"search_code\",\"arguments\":\"{\\\"pat\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"tern\\\":\\\"refill\\\"}\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
                "data: [DONE]\n\n",
            ),
        );
        let second = exchange(
            json!({"max_tokens": 256, "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "call-1", "type": "function", "function": {"name": "search_code", "arguments": "{\"pattern\":\"refill\"}"}}]},
                {"role": "tool", "tool_call_id": "call-1", "content": "src/rate_limit.rs:20: fn refill"}
            ]}),
            200,
            "application/json",
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"In refill.","tool_calls":null},"finish_reason":"stop"}]}"#,
        );
        let result = json!({
            "stopReason": "answered",
            "usage": {"modelCalls": 2},
            "steps": [{"tool": "search_code", "arguments": {"pattern": "refill"}, "ok": true, "summary": "1 match"}]
        });
        (vec![first, second], result)
    }

    fn problems(exchanges: &[Exchange], result: &Value) -> String {
        check_ask(exchanges, result).expect_err("the check must fail")
    }

    #[test]
    fn a_well_formed_ask_passes() {
        let (exchanges, result) = good_ask();
        check_ask(&exchanges, &result).unwrap();
    }

    #[test]
    fn a_call_whose_result_is_not_sent_back_fails() {
        let (mut exchanges, result) = good_ask();
        exchanges[1].request["messages"]
            .as_array_mut()
            .unwrap()
            .pop();
        assert!(problems(&exchanges, &result).contains("is not sent back"));
    }

    #[test]
    fn a_call_that_did_not_run_fails() {
        let (exchanges, mut result) = good_ask();
        result["steps"] = json!([]);
        assert!(problems(&exchanges, &result).contains("the server called"));
    }

    #[test]
    fn an_error_status_an_empty_stream_and_a_missing_limit_fail() {
        let (mut exchanges, result) = good_ask();
        exchanges[1].status = 500;
        assert!(problems(&exchanges, &result).contains("status 500"));
        let (mut exchanges, result) = good_ask();
        exchanges[0].reply.clear();
        assert!(problems(&exchanges, &result).contains("stream is empty"));
        let (mut exchanges, result) = good_ask();
        exchanges[0].request = json!({"messages": []});
        assert!(problems(&exchanges, &result).contains("no output limit"));
    }

    #[test]
    fn incomplete_arguments_are_allowed_only_in_a_length_cut_turn() {
        let (mut exchanges, mut result) = good_ask();
        let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call-1\",\"function\":{\"name\":\"search_code\",\"arguments\":\"{\\\"pat\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"FINISH\"}]}\n\ndata: [DONE]\n\n";
        result["steps"] = json!([]);
        exchanges[1].request["messages"] = json!([{"role": "user", "content": "q"}]);
        exchanges[0].reply = cut.replace("FINISH", "length").into_bytes();
        check_ask(&exchanges, &result).unwrap();
        exchanges[0].reply = cut.replace("FINISH", "tool_calls").into_bytes();
        assert!(problems(&exchanges, &result).contains("incomplete arguments"));
    }

    #[test]
    fn model_calls_must_match_the_requests_seen() {
        let (exchanges, mut result) = good_ask();
        result["usage"]["modelCalls"] = json!(3);
        assert!(problems(&exchanges, &result).contains("modelCalls"));
    }
}
