//! The findings of the last large texts scanned, kept by their exact text. One ask
//! redacts the same files more than once (the input shown, then the places cut from
//! them), and scanning a whole file was about a third of what was left of a no-model
//! answer's time. A text is only ever matched to itself: its hash picks the entry,
//! and the whole text is compared before its findings are reused.

use std::hash::{Hash, Hasher};
use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHasher;

use super::Found;

/// Smaller texts (a chunk, a line) are scanned again: cheaper than keeping them.
const MIN_BYTES: usize = 2048;
/// Texts kept, the most recently used last: two asks' candidate files.
const MAX_ENTRIES: usize = 24;
/// Bytes of text kept, at most (an idle server stays small); a text over a quarter of
/// it is not kept at all. The text itself is kept, in memory only, because only the
/// same text may reuse findings: a hash alone could hand one file's findings to another
/// and leave a secret unredacted.
const MAX_BYTES: usize = 4 << 20;

struct Entry {
    hash: u64,
    text: Box<str>,
    findings: Vec<Found>,
}

/// The process's texts: every redaction goes through it.
pub static RECENT: Recent = Recent(Mutex::new(Vec::new()));

pub struct Recent(Mutex<Vec<Entry>>);

impl Recent {
    /// `scan(text)`, or the findings it gave for this same text lately.
    pub fn findings(&self, text: &str, scan: impl FnOnce(&str) -> Vec<Found>) -> Vec<Found> {
        if text.len() < MIN_BYTES || text.len() > MAX_BYTES / 4 {
            return scan(text);
        }
        let mut hasher = FxHasher::default();
        text.hash(&mut hasher);
        let hash = hasher.finish();
        {
            let mut recent = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(at) = recent
                .iter()
                .position(|e| e.hash == hash && *e.text == *text)
            {
                let entry = recent.remove(at);
                let findings = entry.findings.clone();
                recent.push(entry);
                return findings;
            }
        }
        // Scanned outside the lock: two asks at once scan in parallel.
        let findings = scan(text);
        let mut recent = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !recent.iter().any(|e| e.hash == hash && *e.text == *text) {
            recent.push(Entry {
                hash,
                text: text.into(),
                findings: findings.clone(),
            });
        }
        let mut kept: usize = recent.iter().map(|e| e.text.len()).sum();
        while recent.len() > MAX_ENTRIES || kept > MAX_BYTES {
            kept -= recent.remove(0).text.len();
        }
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn found(at: usize) -> Vec<Found> {
        vec![Found {
            range: at..at + 1,
            marker: "x".into(),
        }]
    }

    #[test]
    fn a_large_text_is_scanned_once_and_a_changed_one_again() {
        let scans = Cell::new(0);
        let scan = |_: &str| {
            scans.set(scans.get() + 1);
            found(scans.get())
        };
        let recent = Recent(Mutex::new(Vec::new()));
        let findings = |text: &str, scan| recent.findings(text, scan);
        let text = format!("memo test {}\n", "a".repeat(4096));
        assert_eq!(findings(&text, scan)[0].range, 1..2);
        assert_eq!(findings(&text, scan)[0].range, 1..2);
        assert_eq!(scans.get(), 1);
        // One byte different: scanned, never matched to the other.
        let changed = text.replacen('a', "b", 1);
        assert_eq!(findings(&changed, scan)[0].range, 2..3);
        assert_eq!(scans.get(), 2);
        // A small text is scanned every time.
        findings("short", scan);
        findings("short", scan);
        assert_eq!(scans.get(), 4);
    }
}
