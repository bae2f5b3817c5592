//! The no-model answer's `## Related past changes`: the commits whose messages match the
//! question strongly and that changed files the answer cites (PROTOCOL.md section 10),
//! so a reader sees the earlier fix of the same bug beside the places it touched.

use crate::history::{self, vote, History};
use crate::workspace::redact::redact;

/// Commits shown at most.
pub const MAX_SHOWN: usize = 3;

/// The section for an answer citing `cited` files, or nothing when no past change
/// matches strongly.
pub fn section(history: &History, question: &str, cited: &[String]) -> String {
    let related = vote::related(history, question, cited, MAX_SHOWN);
    if related.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Related past changes\n\n");
    for vote::Related { commit, files } in related {
        let files: Vec<String> = files.iter().map(|f| format!("`{f}`")).collect();
        // A message is repository text like any file's: secrets redacted.
        out.push_str(&format!(
            "- `{}` {} {} (changed {})\n",
            history::short_id(&commit.id),
            history::date(commit.time),
            redact(&commit.subject).replace('\n', " "),
            files.join(", ")
        ));
    }
    out
}
