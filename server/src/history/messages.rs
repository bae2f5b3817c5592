//! `git_log`'s word ranking: a question's terms, the store's statistics for them (summed
//! over several roots by the caller), the candidates the store gathers, and BM25F over
//! each candidate's subject and body. The ranking's vote keeps `History::search`.

use rustc_hash::FxHashMap;

use super::store::{MessageStats, SUBJECT_WEIGHT};
use super::{read, CommitRecord, History};

/// Commits gathered for `rank_messages` to score exactly, at the least.
pub const MESSAGE_CANDIDATES: usize = 400;

/// A text's counts of a query's terms, and its length in terms.
struct TermCounts {
    counts: Vec<f32>,
    length: usize,
}

impl History {
    /// A text's terms and how often each occurs, in a fixed order: a query for
    /// `message_stats`, `message_candidates` and `rank_messages`.
    pub fn message_terms(&self, text: &str) -> Vec<(String, f32)> {
        let mut counts: FxHashMap<String, f32> = FxHashMap::default();
        (self.tokenize)(text, &mut |term| {
            *counts.entry(term.to_string()).or_default() += 1.0;
        });
        let mut terms: Vec<(String, f32)> = counts.into_iter().collect();
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        terms
    }

    /// This root's statistics for `terms` (summed with other roots' to rank as one).
    pub fn message_stats(&self, terms: &[(String, f32)]) -> MessageStats {
        if self.is_empty() {
            return MessageStats {
                holding: vec![0; terms.len()],
                ..MessageStats::default()
            };
        }
        read(&self.store).message_stats(terms)
    }

    /// The commits `rank_messages` scores for `terms`: at most `limit`, gathered by a
    /// cheaper score.
    pub fn message_candidates(
        &self,
        terms: &[(String, f32)],
        paths: Option<&[String]>,
        limit: usize,
    ) -> Vec<CommitRecord> {
        if self.is_empty() {
            return Vec::new();
        }
        read(&self.store).message_candidates(terms, paths, limit)
    }

    /// `commits` ranked by their messages' match with `terms`, best first: BM25F, the
    /// subject's and the body's term counts weighted (the subject's `SUBJECT_WEIGHT`
    /// times) and each normalised by its own field's length before one saturation, so
    /// a long, descriptive message is not outranked by a short one for being long, and
    /// a word in the subject counts more than one in the body. `stats` are the whole
    /// collection's (several roots' summed). Commits matching no term are left out.
    pub fn rank_messages(
        &self,
        terms: &[(String, f32)],
        stats: &MessageStats,
        commits: Vec<CommitRecord>,
    ) -> Vec<(f32, CommitRecord)> {
        /// Saturation, and how much each field's length counts (a subject's length
        /// varies little and says little).
        const K1: f32 = 1.2;
        const B_SUBJECT: f32 = 0.5;
        const B_BODY: f32 = 0.75;
        let n = stats.commits.max(1) as f32;
        let average = |total: u64| (total as f32 / n).max(1.0);
        let (subject_average, body_average) =
            (average(stats.subject_terms), average(stats.body_terms));
        let idf: Vec<f32> = terms
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let df = stats.holding.get(i).copied().unwrap_or(0) as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let mut ranked: Vec<(f32, CommitRecord)> = commits
            .into_iter()
            .filter_map(|commit| {
                let subject = self.counts(&commit.subject, terms);
                let body = self.counts(&commit.body, terms);
                let subject_norm =
                    1.0 - B_SUBJECT + B_SUBJECT * subject.length as f32 / subject_average;
                let body_norm = 1.0 - B_BODY + B_BODY * body.length as f32 / body_average;
                let mut score = 0.0;
                for (i, (_, weight)) in terms.iter().enumerate() {
                    let tf = SUBJECT_WEIGHT * subject.counts[i] / subject_norm
                        + body.counts[i] / body_norm;
                    if tf > 0.0 {
                        score += weight * idf[i] * tf / (K1 + tf);
                    }
                }
                (score > 0.0).then_some((score, commit))
            })
            .collect();
        // Best first; a tie goes to the newer commit.
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.time.cmp(&a.1.time)));
        ranked
    }

    /// How often each of `terms` occurs in `text`, and its length in terms, as the
    /// store's own fields count them (the same tokenizer).
    fn counts(&self, text: &str, terms: &[(String, f32)]) -> TermCounts {
        let mut counts = vec![0.0; terms.len()];
        let mut length = 0;
        (self.tokenize)(text, &mut |term| {
            length += 1;
            if let Ok(i) = terms.binary_search_by(|(t, _)| t.as_str().cmp(term)) {
                counts[i] += 1.0;
            }
        });
        TermCounts { counts, length }
    }

    /// The commits whose messages best match `text` by `rank_messages`, in this root
    /// alone (`git_log`'s `query`), with their scores.
    pub fn search_messages(
        &self,
        text: &str,
        paths: Option<&[String]>,
        limit: usize,
    ) -> Vec<(f32, CommitRecord)> {
        let terms = self.message_terms(text);
        let stats = self.message_stats(&terms);
        let candidates = self.message_candidates(&terms, paths, limit.max(MESSAGE_CANDIDATES));
        let mut ranked = self.rank_messages(&terms, &stats, candidates);
        ranked.truncate(limit);
        ranked
    }
}
