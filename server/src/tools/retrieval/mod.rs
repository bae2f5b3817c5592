//! Lexical retrieval (BM25) over chunks of workspace files. (Placeholder until the
//! ranked index lands: finds nothing.)

use crate::tools::sandbox::Sandbox;

pub struct RetrievalIndex {
    files: usize,
}

#[derive(Clone, Debug)]
pub struct RetrievalHit {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub score: f32,
    pub symbol: Option<String>,
    pub text: String,
}

impl RetrievalIndex {
    pub fn build(_sandbox: &Sandbox) -> RetrievalIndex {
        RetrievalIndex { files: 0 }
    }
    pub fn update_file(&mut self, _relative_path: &str, _text: &str) {}
    pub fn remove_file(&mut self, _relative_path: &str) {}
    pub fn search(&self, _query: &str, _limit: usize) -> Vec<RetrievalHit> {
        Vec::new()
    }
    pub fn file_count(&self) -> usize {
        self.files
    }
}
