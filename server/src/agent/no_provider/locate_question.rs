//! `locate`'s one argument, read as MCP and `copilot-ls tool locate` take it: the
//! question, by its name or the `query` alias, and an error that names both and the schema.

/// The question of a `locate` call (`{"question": …}`, or `{"query": …}`), or why the
/// arguments are not one: MCP's tool and `copilot-ls tool locate` read them alike.
pub fn locate_question(arguments: &serde_json::Value) -> Result<&str, String> {
    // `git_log` and `search_code` take words as `query` or `pattern`; an agent that
    // calls `locate` the same way means the question, so `query` is taken for it when it
    // is the only one given.
    const SCHEMA: &str = "{\"type\": \"object\", \"properties\": {\"question\": {\"type\": \"string\"}}, \"required\": [\"question\"]}";
    let object = arguments.as_object();
    let unknown: Vec<&str> = object
        .into_iter()
        .flat_map(|object| object.keys())
        .map(String::as_str)
        .filter(|k| *k != "question" && *k != "query")
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "locate takes one argument, `question` (the question in plain words; `query` is accepted for it), not {}; its schema: {SCHEMA}",
            unknown
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let given = |key: &str| arguments.get(key);
    let value = match (given("question"), given("query")) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "locate takes `question` or its alias `query`, not both; its schema: {SCHEMA}"
            ))
        }
        (Some(value), None) | (None, Some(value)) => Some(value),
        (None, None) => None,
    };
    value
        .and_then(serde_json::Value::as_str)
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .ok_or_else(|| {
            "question must be a non-empty string, e.g. {\"question\": \"where are retries decided?\"}"
                .to_string()
        })
}
