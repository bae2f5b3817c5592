//! The line an answer starts with when its search could not see the whole workspace: the
//! index was still being built, the repository's history was not read yet, or the folder
//! is one copilot-ls does not index (`/`, a home directory). An answer from a half-built
//! index must never pass for a complete one.

use crate::index::Coverage;
use crate::text::thousands;

/// What the ask's search could see, as the session found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexState {
    /// The index's coverage when the search ran.
    Indexed(Coverage),
    /// The folder is not indexed, and why (said to the user).
    NotIndexed(String),
}

impl IndexState {
    /// The answer's first line, when the search could not see everything.
    pub fn notice(&self) -> Option<String> {
        match self {
            IndexState::Indexed(coverage) if !coverage.complete => Some(building(coverage)),
            IndexState::Indexed(Coverage {
                history: Some(history),
                ..
            }) if history.pending => Some(
                "The repository's history is still being read; this answer does not draw on past changes yet."
                    .to_string(),
            ),
            IndexState::Indexed(_) => None,
            IndexState::NotIndexed(why) => Some(format!(
                "{why}; this answer comes from reading and searching files on demand, without the index."
            )),
        }
    }

    /// Whether an empty search means the index may not hold the answer yet.
    pub fn still_building(&self) -> bool {
        matches!(self, IndexState::Indexed(coverage) if !coverage.complete)
    }
}

fn building(coverage: &Coverage) -> String {
    let (done, total) = (coverage.files_indexed, coverage.files_total);
    match coverage.definitions {
        // Every file is searchable by its words; its definitions are still being parsed.
        Some((parsed, to_parse)) if done >= total => format!(
            "Indexing is {}% done ({} of {} files; definitions read in {} of {}); this answer may miss places.",
            coverage.percent(),
            thousands(done),
            thousands(total),
            thousands(parsed),
            thousands(to_parse),
        ),
        _ => format!(
            "Indexing is {}% done ({} of {} files); this answer may miss places.",
            coverage.percent(),
            thousands(done),
            thousands(total),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_gives_the_share_while_building() {
        let building = IndexState::Indexed(Coverage {
            complete: false,
            files_indexed: 2_310,
            files_total: 6_712,
            definitions: None,
            history: None,
        });
        assert_eq!(
            building.notice().as_deref(),
            Some("Indexing is 34% done (2,310 of 6,712 files); this answer may miss places.")
        );
        assert!(building.still_building());
        let parsing = IndexState::Indexed(Coverage {
            complete: false,
            files_indexed: 6_712,
            files_total: 6_712,
            definitions: Some((100, 4_000)),
            history: None,
        });
        assert_eq!(
            parsing.notice().as_deref(),
            Some("Indexing is 99% done (6,712 of 6,712 files; definitions read in 100 of 4,000); this answer may miss places.")
        );
        let done = IndexState::Indexed(Coverage {
            complete: true,
            files_indexed: 3,
            files_total: 3,
            definitions: None,
            history: None,
        });
        assert_eq!(done.notice(), None);
        assert!(!done.still_building());
        // The files are all indexed, the history's first read is still under way.
        let reading = IndexState::Indexed(Coverage {
            complete: true,
            files_indexed: 3,
            files_total: 3,
            definitions: None,
            history: Some(crate::index::HistoryCoverage {
                commits: 0,
                complete: false,
                pending: true,
            }),
        });
        assert_eq!(
            reading.notice().as_deref(),
            Some("The repository's history is still being read; this answer does not draw on past changes yet.")
        );
        assert!(!reading.still_building());
    }
}
