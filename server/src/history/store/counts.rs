//! How often and how lately each file changed: the learned ranker's history features
//! (Ye et al.'s fix frequency and recency), read from the store's path terms.

use tantivy::collector::TopDocs;
use tantivy::query::TermQuery;
use tantivy::schema::IndexRecordOption;
use tantivy::{Order, Term};

use super::Store;

impl Store {
    /// For each path, how many commits changed it and how many commits ago the newest
    /// of them was (`None`: never; HEAD's own commit is 0 ago). A term lookup and a walk
    /// of the path's own postings each, so two hundred files cost little next to the
    /// search they follow.
    pub fn change_counts(&self, paths: &[&str]) -> Vec<(u64, Option<u64>)> {
        let searcher = self.reader.searcher();
        paths
            .iter()
            .map(|path| {
                let term = Term::from_field_text(self.fields.paths, path);
                let commits = searcher.doc_freq(&term).unwrap_or(0);
                if commits == 0 {
                    return (0, None);
                }
                let query = TermQuery::new(term, IndexRecordOption::Basic);
                let newest = TopDocs::with_limit(1).order_by_fast_field::<u64>("seq", Order::Desc);
                let seq = searcher
                    .search(&query, &newest)
                    .ok()
                    .and_then(|top| top.first().and_then(|(seq, _)| *seq));
                (commits, seq.map(|seq| self.meta.seq.saturating_sub(seq)))
            })
            .collect()
    }
}
