//! Similar past changes as evidence: the commits whose messages best match a question
//! vote for the files they changed that still exist (under the name they have now). A
//! bug report often says what an earlier fix's message said ("hangs when the pool is
//! empty"), and that fix changed the file the new bug is in.
//!
//! A commit's vote is its message's BM25 score shared among the files it changed, so a
//! mass change (a reformat, a licence header, a rename of a folder) says little about any
//! one file, and the files the best-matching commits changed come first.

use rustc_hash::FxHashMap;

use super::{CommitRecord, History};

/// A commit changing more files than this is a mass change: it does not vote.
const MAX_FILES: usize = 40;

/// The files similar past changes changed, best first, with their votes; `admit` says
/// whether a path (as it is now) exists and may be voted for.
pub fn vote(
    history: &History,
    question: &str,
    voters: usize,
    admit: &dyn Fn(&str) -> bool,
) -> Vec<(String, f32)> {
    let similar = history.similar(question, voters);
    tally(&similar, &|path| {
        let now = history.renamed_to(path).unwrap_or_else(|| path.to_string());
        admit(&now).then_some(now)
    })
}

/// The votes of `similar` commits; `now` maps a changed path to the path it has now, or
/// `None` when it may not be voted for.
pub fn tally(
    similar: &[(f32, CommitRecord)],
    now: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, f32)> {
    let mut votes: FxHashMap<String, f32> = FxHashMap::default();
    for (score, commit) in similar {
        if commit.files.is_empty() || commit.files.len() > MAX_FILES {
            continue;
        }
        let files: Vec<String> = commit.files.iter().filter_map(|f| now(&f.path)).collect();
        if files.is_empty() {
            continue;
        }
        let share = score / (commit.files.len() as f32).sqrt();
        for file in files {
            *votes.entry(file).or_default() += share;
        }
    }
    let mut ranked: Vec<(String, f32)> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
}

/// Commits among the best matches that `related` looks at.
const RELATED_CANDIDATES: usize = 10;

/// A past change that matches a question strongly and changed files an answer cites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub commit: CommitRecord,
    /// The cited files it changed, as they are named now.
    pub files: Vec<String>,
}

/// At most `max` past changes that match `question` strongly (`strongly_matches`) and
/// changed one of the `cited` files, best first.
pub fn related(history: &History, question: &str, cited: &[String], max: usize) -> Vec<Related> {
    let mut question_terms: Vec<String> = Vec::new();
    (history.tokenize)(question, &mut |term| question_terms.push(term.to_string()));
    question_terms.sort_unstable();
    question_terms.dedup();
    history
        .similar(question, RELATED_CANDIDATES)
        .into_iter()
        .filter_map(|(_, commit)| {
            let mut words: Vec<String> = Vec::new();
            (history.tokenize)(&commit.subject, &mut |t| words.push(t.to_string()));
            (history.tokenize)(&commit.body, &mut |t| words.push(t.to_string()));
            if !strongly_matches(&question_terms, &words) {
                return None;
            }
            let mut files: Vec<String> = commit
                .files
                .iter()
                .map(|f| {
                    history
                        .renamed_to(&f.path)
                        .unwrap_or_else(|| f.path.clone())
                })
                .filter(|path| cited.contains(path))
                .collect();
            files.sort_unstable();
            files.dedup();
            (!files.is_empty()).then_some(Related { commit, files })
        })
        .take(max)
        .collect()
}

/// A message matches a question strongly when it holds at least two of the question's
/// distinct terms and most of them: 60% of a short question's, five of a long one's.
/// One shared word ("error", "config") is a weak match and shows nothing.
pub fn strongly_matches(question_terms: &[String], message_terms: &[String]) -> bool {
    let shared = question_terms
        .iter()
        .filter(|term| message_terms.contains(term))
        .count();
    let needed = (question_terms.len() as f32 * 0.6).ceil().clamp(2.0, 5.0) as usize;
    shared >= needed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::ChangedFile;

    fn commit(files: &[&str]) -> CommitRecord {
        CommitRecord {
            id: "0".repeat(40),
            time: 0,
            author: String::new(),
            subject: String::new(),
            body: String::new(),
            files: files
                .iter()
                .map(|path| ChangedFile {
                    path: path.to_string(),
                    old_path: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_focused_change_outvotes_a_mass_change_and_gone_files_get_nothing() {
        let mass: Vec<String> = (0..100).map(|i| format!("m{i}.py")).collect();
        let mass: Vec<&str> = mass.iter().map(String::as_str).collect();
        let similar = vec![
            (3.0, commit(&mass)),
            (2.0, commit(&["pool.py", "gone.py"])),
            (1.0, commit(&["pool.py", "conn.py", "util.py", "x.py"])),
        ];
        let votes = tally(&similar, &|path| {
            (path != "gone.py").then(|| path.to_string())
        });
        let order: Vec<&str> = votes.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(order, ["pool.py", "conn.py", "util.py", "x.py"]);
        assert!(!order.contains(&"m1.py"));
    }

    #[test]
    fn one_shared_word_is_a_weak_match() {
        let terms = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let question = terms(&["token", "refil"]);
        assert!(strongly_matches(
            &question,
            &terms(&["refil", "token", "lazili"])
        ));
        assert!(!strongly_matches(&question, &terms(&["token", "pars"])));
        let long = terms(&[
            "pool", "hang", "empti", "connect", "timeout", "retri", "close",
        ]);
        assert!(!strongly_matches(
            &long,
            &terms(&["pool", "hang", "empti", "fix"])
        ));
        assert!(strongly_matches(
            &long,
            &terms(&["pool", "hang", "empti", "connect", "timeout"])
        ));
    }
}
