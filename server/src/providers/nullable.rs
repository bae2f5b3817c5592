//! `null` read as "absent": OpenAI-compatible servers (llama-cpp-python, llama-server,
//! vLLM…) put `null` where the spec leaves a field out (`"tool_calls": null`,
//! `"usage": null`, `"delta": null`), and serde's `#[serde(default)]` alone only covers a
//! missing field, not a null one.

use serde::{Deserialize, Deserializer};

/// Deserializes a field whose `null` means the same as its absence: its default.
/// Use with `#[serde(default, deserialize_with = "nullable::or_default")]`.
pub(crate) fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Sample {
        #[serde(default, deserialize_with = "super::or_default")]
        items: Vec<u32>,
        #[serde(default, deserialize_with = "super::or_default")]
        count: u64,
    }

    #[test]
    fn null_and_absent_are_the_default() {
        for text in [r#"{}"#, r#"{"items": null, "count": null}"#] {
            let sample: Sample = serde_json::from_str(text).unwrap();
            assert_eq!(
                sample,
                Sample {
                    items: vec![],
                    count: 0
                },
                "{text}"
            );
        }
        let sample: Sample = serde_json::from_str(r#"{"items": [1], "count": 2}"#).unwrap();
        assert_eq!(
            sample,
            Sample {
                items: vec![1],
                count: 2
            }
        );
        assert!(serde_json::from_str::<Sample>(r#"{"items": "x"}"#).is_err());
    }
}
