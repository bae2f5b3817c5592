//! The fake provider's script: `{"steps": [STEP, ...]}` parsed into typed steps, rejecting
//! anything misspelt so a test's typo fails loudly instead of scripting something else.

use std::collections::BTreeMap;

use anyhow::{bail, Context};
use serde::Deserialize;
use serde_json::Value;

#[derive(Clone, Debug)]
pub(crate) enum Step {
    Turn(Turn),
    Error {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        delay_ms: u64,
    },
    Hang,
    Raw {
        body: Vec<u8>,
        content_type: String,
        limits: Limits,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Turn {
    pub text: String,
    pub tool_calls: Vec<Call>,
    pub finish: Finish,
    pub usage: Option<ScriptedUsage>,
    pub limits: Limits,
}

/// Token counts a step reports instead of the estimated ones. `input` counts all input,
/// `cached` the part of it served from the (simulated) prompt cache.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScriptedUsage {
    pub input: u64,
    pub output: u64,
    pub cached: Option<u64>,
}

#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    /// The arguments as the model would stream them: an object's JSON text, or a
    /// scripted string verbatim.
    pub arguments: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Finish {
    Stop,
    ToolCalls,
    Length,
}

/// How a reply misbehaves: a wait before the headers, a wait before each streamed event
/// after the first (a slow model), and how much of the body is sent.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Limits {
    pub delay_ms: u64,
    pub chunk_delay_ms: u64,
    pub cut_after_bytes: Option<usize>,
    pub hang_after_bytes: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnSpec {
    #[serde(default)]
    text: String,
    #[serde(default)]
    tool_calls: Vec<CallSpec>,
    #[serde(default)]
    finish: Option<String>,
    #[serde(default)]
    usage: Option<UsageSpec>,
    #[serde(default)]
    delay_ms: u64,
    #[serde(default)]
    chunk_delay_ms: u64,
    #[serde(default)]
    cut_after_bytes: Option<usize>,
    #[serde(default)]
    hang_after_bytes: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallSpec {
    id: String,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsageSpec {
    input_tokens: u64,
    output_tokens: u64,
    #[serde(default)]
    cached_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorSpec {
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: Option<Value>,
    #[serde(default)]
    delay_ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    raw: String,
    #[serde(default)]
    content_type: Option<String>,
    #[serde(default)]
    delay_ms: u64,
    #[serde(default)]
    cut_after_bytes: Option<usize>,
    #[serde(default)]
    hang_after_bytes: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HangSpec {
    #[allow(dead_code)]
    hang: bool,
}

/// Parses a whole script.
pub(crate) fn parse(script: &Value) -> anyhow::Result<Vec<Step>> {
    let Some(steps) = script.get("steps").and_then(Value::as_array) else {
        bail!("a script is {{\"steps\": [...]}}, got {script}");
    };
    steps
        .iter()
        .enumerate()
        .map(|(index, step)| parse_step(step).with_context(|| format!("step {index}: {step}")))
        .collect()
}

fn parse_step(step: &Value) -> anyhow::Result<Step> {
    let Some(object) = step.as_object() else {
        bail!("a step is an object");
    };
    if object.contains_key("status") {
        let spec: ErrorSpec = serde_json::from_value(step.clone())?;
        let body = match spec.body {
            Some(Value::String(text)) => text.into_bytes(),
            Some(other) => other.to_string().into_bytes(),
            None => serde_json::json!({"error": {"message": format!("fake provider: HTTP {}", spec.status)}})
                .to_string()
                .into_bytes(),
        };
        return Ok(Step::Error {
            status: spec.status,
            headers: spec.headers.into_iter().collect(),
            body,
            delay_ms: spec.delay_ms,
        });
    }
    if object.contains_key("hang") {
        let spec: HangSpec = serde_json::from_value(step.clone())?;
        if !spec.hang {
            bail!("`hang` is only ever true");
        }
        return Ok(Step::Hang);
    }
    if object.contains_key("raw") {
        let spec: RawSpec = serde_json::from_value(step.clone())?;
        return Ok(Step::Raw {
            body: spec.raw.into_bytes(),
            content_type: spec
                .content_type
                .unwrap_or_else(|| "text/event-stream".to_string()),
            limits: Limits {
                delay_ms: spec.delay_ms,
                chunk_delay_ms: 0,
                cut_after_bytes: spec.cut_after_bytes,
                hang_after_bytes: spec.hang_after_bytes,
            },
        });
    }
    let spec: TurnSpec = serde_json::from_value(step.clone())?;
    let tool_calls: Vec<Call> = spec
        .tool_calls
        .into_iter()
        .map(|call| Call {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                None => "{}".to_string(),
                Some(Value::String(text)) => text,
                Some(other) => other.to_string(),
            },
        })
        .collect();
    let finish = match spec.finish.as_deref() {
        None if tool_calls.is_empty() => Finish::Stop,
        None => Finish::ToolCalls,
        Some("stop") => Finish::Stop,
        Some("tool_calls") => Finish::ToolCalls,
        Some("length") => Finish::Length,
        Some(other) => bail!("unknown finish {other:?} (stop, tool_calls or length)"),
    };
    Ok(Step::Turn(Turn {
        text: spec.text,
        tool_calls,
        finish,
        usage: spec.usage.map(|u| ScriptedUsage {
            input: u.input_tokens,
            output: u.output_tokens,
            cached: u.cached_input_tokens,
        }),
        limits: Limits {
            delay_ms: spec.delay_ms,
            chunk_delay_ms: spec.chunk_delay_ms,
            cut_after_bytes: spec.cut_after_bytes,
            hang_after_bytes: spec.hang_after_bytes,
        },
    }))
}
