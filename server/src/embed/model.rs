//! Reading the model's artifact, as `train/export.py` writes it (little-endian):
//!
//! ```text
//! b"CLSEMB01"             magic
//! u32 n, n bytes          a JSON header: {dim, vocab, towers, max_terms, ...}
//! vocab × (u8 len, utf-8) the term of each row
//! towers × (f32[vocab] pooling weights, f32[vocab] row scales, i8[vocab × dim] rows)
//! ```
//!
//! A term's vector in a tower is `weight × scale × row`. Everything is checked before
//! use (lengths, sizes, finite numbers), so a bad artifact is an error, never a panic.

use rustc_hash::FxHashMap;

use super::MAX_DIM;

const MAGIC: &[u8; 8] = b"CLSEMB01";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    #[error("it does not start with the model's magic bytes")]
    Magic,
    #[error("it ends early, in {0}")]
    Truncated(&'static str),
    #[error("its header is not valid: {0}")]
    Header(String),
    #[error("{0} bytes follow its last table")]
    Trailing(usize),
}

struct TowerTable {
    /// `weight × scale` per row: one multiply per term when summing.
    factor: Vec<f32>,
    rows: Vec<i8>,
}

pub struct Model {
    dim: usize,
    max_terms: usize,
    vocab: FxHashMap<Box<str>, u32>,
    towers: Vec<TowerTable>,
    /// The header's JSON, for `copilot-ls doctor` and the data card's numbers.
    header: serde_json::Value,
    /// xxh3 of the whole artifact: an index built with another model is rebuilt.
    digest: u64,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ModelError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(ModelError::Truncated(what))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, ModelError> {
        let bytes = self.take(4, what)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn f32s(&mut self, n: usize, what: &'static str) -> Result<Vec<f32>, ModelError> {
        let bytes = self.take(n.checked_mul(4).ok_or(ModelError::Truncated(what))?, what)?;
        let values: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if values.iter().any(|v| !v.is_finite()) {
            return Err(ModelError::Header(format!(
                "{what} holds a non-finite number"
            )));
        }
        Ok(values)
    }
}

impl Model {
    pub fn parse(bytes: &[u8]) -> Result<Model, ModelError> {
        let mut reader = Reader { bytes, at: 0 };
        if reader.take(8, "the magic bytes")? != MAGIC {
            return Err(ModelError::Magic);
        }
        let header_len = reader.u32("the header's length")? as usize;
        let header: serde_json::Value =
            serde_json::from_slice(reader.take(header_len, "the header")?)
                .map_err(|e| ModelError::Header(e.to_string()))?;
        let number = |key: &str| -> Result<usize, ModelError> {
            header[key]
                .as_u64()
                .map(|v| v as usize)
                .ok_or_else(|| ModelError::Header(format!("no number `{key}`")))
        };
        let (dim, size, towers, max_terms) = (
            number("dim")?,
            number("vocab")?,
            number("towers")?,
            number("max_terms")?,
        );
        if dim == 0 {
            return Err(ModelError::Header("dim is 0".into()));
        }
        // Trained with nested (Matryoshka) losses, a vector's first dimensions are a
        // vector of their own: a wider model is cut to the dimensions the index keeps.
        let kept = dim.min(MAX_DIM);
        if !(1..=2).contains(&towers) {
            return Err(ModelError::Header(format!("towers {towers} is not 1 or 2")));
        }
        let mut vocab = FxHashMap::default();
        vocab.reserve(size);
        for row in 0..size {
            let len = reader.take(1, "the vocabulary")?[0] as usize;
            let term = std::str::from_utf8(reader.take(len, "the vocabulary")?)
                .map_err(|_| ModelError::Header(format!("term {row} is not UTF-8")))?;
            vocab.insert(term.into(), row as u32);
        }
        let mut tables = Vec::with_capacity(towers);
        for _ in 0..towers {
            let weights = reader.f32s(size, "the pooling weights")?;
            let scales = reader.f32s(size, "the row scales")?;
            let rows = reader.take(
                size.checked_mul(dim)
                    .ok_or(ModelError::Truncated("the rows"))?,
                "the rows",
            )?;
            tables.push(TowerTable {
                factor: weights.iter().zip(&scales).map(|(w, s)| w * s).collect(),
                rows: rows
                    .chunks_exact(dim)
                    .flat_map(|row| row[..kept].iter().map(|b| *b as i8))
                    .collect(),
            });
        }
        if reader.at != bytes.len() {
            return Err(ModelError::Trailing(bytes.len() - reader.at));
        }
        Ok(Model {
            dim: kept,
            max_terms,
            vocab,
            towers: tables,
            header,
            digest: xxhash_rust::xxh3::xxh3_64(bytes),
        })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn towers(&self) -> usize {
        self.towers.len()
    }

    pub fn max_terms(&self) -> usize {
        self.max_terms
    }

    pub fn vocabulary(&self) -> usize {
        self.vocab.len()
    }

    pub fn header(&self) -> &serde_json::Value {
        &self.header
    }

    /// Names this model for the index's meta file: vectors made by another are stale.
    pub fn id(&self) -> String {
        format!("{:016x}", self.digest)
    }

    pub(super) fn row_of(&self, term: &str) -> Option<usize> {
        self.vocab.get(term).map(|row| *row as usize)
    }

    /// `sum += weight × scale × row` of `row` in `tower`.
    pub(super) fn add_row(&self, tower: usize, row: usize, sum: &mut [f32; MAX_DIM]) {
        let table = &self.towers[tower];
        let factor = table.factor[row];
        let values = &table.rows[row * self.dim..(row + 1) * self.dim];
        for (sum, value) in sum.iter_mut().zip(values) {
            *sum += factor * f32::from(*value);
        }
    }
}
