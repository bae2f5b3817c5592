//! A code-aware model's vectors: one vector per term of the index's tokenizer, trained
//! on public code (`train/`, and its data card), so a question and the code it is about
//! land near each other even when their words differ ("hangs" and `wait_for`). Pure:
//! terms in, vectors out; it knows no index.
//!
//! A text's vector is the weighted sum of its first `max_terms` known terms' vectors,
//! normalised (`Accumulator`); questions use the text tower, code the code tower (one
//! table serves both when the model has one). Stored vectors are `Packed`: the
//! normalised vector in `i8` steps of 1/127, eight to a `u64`, as the index keeps them.
//!
//! No model ships: the one `train/` makes did not move the localization eval
//! (docs/retrieval.md, "The code model"), so the binary carries none and retrieval is
//! lexical. `COPILOT_LS_CODE_MODEL=PATH` loads an artifact (format in `model.rs`) from a
//! local file, to evaluate a model without rebuilding; nothing is ever downloaded.

mod model;

use std::sync::OnceLock;

pub use self::model::{Model, ModelError};

/// Which side of the model a text is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tower {
    /// Questions, reports, messages, comments.
    Text = 0,
    /// Code chunks and definitions.
    Code = 1,
}

/// The most dimensions a stored vector has: the index keeps `MAX_DIM / 8` `u64`s.
pub const MAX_DIM: usize = 128;
/// `u64` words of a packed vector.
pub const WORDS: usize = MAX_DIM / 8;

/// The model in use: the artifact `COPILOT_LS_CODE_MODEL` names, read once; `None`
/// without one, or when it cannot be read (a warning says why, once, and retrieval is
/// lexical).
pub fn loaded() -> Option<&'static Model> {
    static MODEL: OnceLock<Option<Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = std::env::var_os("COPILOT_LS_CODE_MODEL")?;
            if path.is_empty() || path.eq_ignore_ascii_case("off") {
                return None;
            }
            let read = std::fs::read(&path)
                .map_err(|error| error.to_string())
                .and_then(|bytes| Model::parse(&bytes).map_err(|error| error.to_string()));
            match read {
                Ok(model) => Some(model),
                Err(error) => {
                    tracing::warn!(
                        "COPILOT_LS_CODE_MODEL: {} cannot be used as a code model ({error}); ranking is lexical",
                        std::path::Path::new(&path).display()
                    );
                    None
                }
            }
        })
        .as_ref()
}

/// A vector being summed from a text's terms.
pub struct Accumulator<'m> {
    model: &'m Model,
    tower: usize,
    sum: [f32; MAX_DIM],
    terms: usize,
}

impl<'m> Accumulator<'m> {
    pub fn new(model: &'m Model, tower: Tower) -> Accumulator<'m> {
        Accumulator {
            model,
            tower: (tower as usize).min(model.towers() - 1),
            sum: [0.0; MAX_DIM],
            terms: 0,
        }
    }

    /// Adds one occurrence of `term` (ignored when unknown, or past `max_terms`).
    pub fn add(&mut self, term: &str) {
        if self.terms >= self.model.max_terms() {
            return;
        }
        let Some(row) = self.model.row_of(term) else {
            return;
        };
        self.terms += 1;
        self.model.add_row(self.tower, row, &mut self.sum);
    }

    /// Adds another accumulator's sum (a file's vector from its chunks').
    pub fn add_vector(&mut self, vector: &[f32; MAX_DIM]) {
        for (sum, value) in self.sum.iter_mut().zip(vector) {
            *sum += value;
        }
        self.terms += 1;
    }

    /// The normalised vector, `None` when no known term was added.
    pub fn finish(&self) -> Option<[f32; MAX_DIM]> {
        let norm = self.sum.iter().map(|v| v * v).sum::<f32>().sqrt();
        if self.terms == 0 || norm <= f32::EPSILON {
            return None;
        }
        let mut out = self.sum;
        for value in &mut out {
            *value /= norm;
        }
        Some(out)
    }
}

/// A normalised vector as the index stores it: `i8` steps of 1/127, eight to a word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packed(pub [u64; WORDS]);

impl Packed {
    pub fn pack(vector: &[f32; MAX_DIM]) -> Packed {
        let mut words = [0u64; WORDS];
        for (i, value) in vector.iter().enumerate() {
            let step = (value * 127.0).round().clamp(-127.0, 127.0) as i8;
            words[i / 8] |= u64::from(step as u8) << ((i % 8) * 8);
        }
        Packed(words)
    }

    /// All zero: a chunk with no known term (it matches nothing).
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// The cosine with a normalised `query` (within the rounding of 1/127).
    pub fn cosine(&self, query: &[f32; MAX_DIM]) -> f32 {
        let mut dot = 0.0f32;
        for (w, word) in self.0.iter().enumerate() {
            let bytes = word.to_le_bytes();
            for (b, byte) in bytes.iter().enumerate() {
                dot += f32::from(*byte as i8) * query[w * 8 + b];
            }
        }
        dot / 127.0
    }
}

/// The vector of a whole text given its terms.
pub fn embed<'a>(
    model: &Model,
    tower: Tower,
    terms: impl IntoIterator<Item = &'a str>,
) -> Option<[f32; MAX_DIM]> {
    let mut accumulator = Accumulator::new(model, tower);
    for term in terms {
        accumulator.add(term);
    }
    accumulator.finish()
}

#[cfg(test)]
mod tests;
