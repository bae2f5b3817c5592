//! The no-model answer's `## Related past changes`: the commits whose messages match the
//! question strongly and that changed files the answer cites (PROTOCOL.md section 10),
//! so a reader sees the earlier fix of the same bug beside the places it touched.

use crate::history::{self, vote, History};
use crate::workspace::redact::redact;

/// Commits shown at most.
pub const MAX_SHOWN: usize = 3;

/// The section for an answer citing `cited` files (as shown), or nothing when no past
/// change matches strongly: from each root's history (`histories`: each with the prefix
/// its paths are shown under), the cited files of that root.
pub fn section(histories: &[(&str, &History)], question: &str, cited: &[String]) -> String {
    let mut related = Vec::new();
    for (prefix, history) in histories {
        let inside: Vec<String> = cited
            .iter()
            .filter_map(|path| path.strip_prefix(prefix).map(str::to_string))
            .collect();
        if inside.is_empty() {
            continue;
        }
        for found in vote::related(history, question, &inside, MAX_SHOWN) {
            related.push((*prefix, found));
        }
    }
    related.truncate(MAX_SHOWN);
    if related.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Related past changes\n\n");
    for (prefix, vote::Related { commit, files }) in related {
        let files: Vec<String> = files.iter().map(|f| format!("`{prefix}{f}`")).collect();
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
