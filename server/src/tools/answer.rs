//! `answer`: the model's final, structured answer. The agent ends the loop on it.

use serde::Deserialize;

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub answer: String,
    #[serde(default)]
    pub citations: Vec<CitationArg>,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct CitationArg {
    pub path: String,
    pub line: u64,
    pub end_line: Option<u64>,
    pub note: Option<String>,
}
