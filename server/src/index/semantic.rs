//! A code model (`embed/`, when `COPILOT_LS_CODE_MODEL` names one) as one signal of the file ranking: the question's
//! vector against the vectors the index keeps for every chunk and file (`analyze.rs`).
//!
//! It works at two points. The files the lexical ranking found are placed again by how
//! close their best chunk is to the question; and the files closest to the question
//! among all the index holds (a scan of the file vectors: one per file, so 50,000 files
//! cost a few milliseconds) enter when the lexical ranking missed them, with their
//! closest chunk. That second part is where a model earns its place: a report that says
//! "hangs" about code that says `wait_for` shares no word with it.
//!
//! The two rankings are fused per file by reciprocal rank, the model's weighted
//! (docs/retrieval.md, "The code model", has the numbers on both splits that chose it).

use rustc_hash::{FxHashMap, FxHashSet};
use tantivy::columnar::Column;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, DocSet, Searcher, SegmentReader, Term, TERMINATED};

use super::file_kind::FileKind;
use super::schema::{Fields, KIND_FILE};
use super::search::{owner, Found, Part};
use super::tokenize::for_each_term;
use crate::embed::{self, Packed, Tower, MAX_DIM, WORDS};

/// A file the model finds less than this share as close as its closest is not one of
/// its candidates: the scan always has a closest file, however far every file is.
const MIN_SHARE: f32 = 0.5;

/// Fusion parameters: the reciprocal-rank constant, the model's weight against the
/// lexical ranking, and how many of the model's closest files may enter.
#[derive(Clone, Copy, Debug)]
pub struct Fusion {
    pub k: f32,
    pub weight: f32,
    pub files: usize,
}

pub const FUSION: Fusion = Fusion {
    k: 10.0,
    weight: 0.5,
    files: 10,
};

impl Fusion {
    /// `FUSION`, or the evaluation's override (`COPILOT_LS_CODE_MODEL_FUSION=k,weight,files`;
    /// a weight of 0 is the lexical ranking alone, a negative one the model alone),
    /// read once.
    pub fn current() -> Fusion {
        static FROM_ENV: std::sync::OnceLock<Fusion> = std::sync::OnceLock::new();
        *FROM_ENV.get_or_init(
            || match super::numbers_from_env("COPILOT_LS_CODE_MODEL_FUSION")[..] {
                [k, weight, files] => Fusion {
                    k,
                    weight,
                    files: files as usize,
                },
                _ => FUSION,
            },
        )
    }
}

/// Whether a code model is in use (named and readable): what
/// `find_related` and the model's signal need.
pub fn model_available() -> bool {
    embed::loaded().is_some()
}

/// A question's vector and the fusion in force; `None` without a model, with the
/// fusion's weight at 0, or for a question with no word the model knows.
pub struct Semantic {
    pub query: [f32; MAX_DIM],
    pub fusion: Fusion,
}

impl Semantic {
    pub fn for_question(question: &str) -> Option<Semantic> {
        let model = embed::loaded()?;
        let fusion = Fusion::current();
        if fusion.weight == 0.0 {
            return None;
        }
        let mut accumulator = embed::Accumulator::new(model, Tower::Text);
        for_each_term(question, |term| accumulator.add(term));
        Some(Semantic {
            query: accumulator.finish()?,
            fusion,
        })
    }
}

impl Semantic {
    /// `found` (the lexical ranking, best first) placed again with the model: fused with
    /// the files closest to the question in every part searched (each root's index and
    /// the layer over it, which replaces its root's `hidden` paths), the closest chunk of
    /// each file the lexical ranking missed read by `read_chunk` (a part's number and an
    /// address); at most `limit`.
    pub fn place(
        &self,
        found: Vec<Found>,
        fields: &Fields,
        parts: &[Part<'_>],
        with_vectors: &[(&Part<'_>, &Vectors<'_>)],
        read_chunk: &dyn Fn(usize, DocAddress) -> Option<Found>,
        limit: usize,
    ) -> Vec<Found> {
        let empty = FxHashSet::default();
        let mut closest: Vec<(String, f32)> = Vec::new();
        for (part, vectors) in with_vectors {
            let hidden = part.hidden.unwrap_or(&empty);
            let files = vectors.closest_files(fields, &self.query, self.fusion.files, hidden);
            closest.extend(
                files
                    .into_iter()
                    .map(|(path, score)| (format!("{}{path}", part.prefix), score)),
            );
        }
        closest.sort_by(|a, b| b.1.total_cmp(&a.1));
        closest.truncate(self.fusion.files);
        let chunk_of = |shown: &str| -> Option<Found> {
            let (part, path) = owner(parts, shown)?;
            let (_, vectors) = with_vectors.get(part)?;
            let (address, cosine) = vectors.closest_chunk(fields, path, &self.query)?;
            let mut found = read_chunk(part, address)?;
            found.similarity = Some(cosine);
            Some(found)
        };
        let mut fused = fuse(found, &closest, self.fusion, &chunk_of);
        fused.truncate(limit);
        fused
    }
}

/// One segment's vector columns.
struct SegmentVectors {
    columns: Vec<Column<u64>>,
}

impl SegmentVectors {
    fn open(segment: &SegmentReader, fields: &Fields) -> Option<SegmentVectors> {
        let schema = segment.schema();
        let columns = fields
            .emb
            .iter()
            .map(|field| {
                segment
                    .fast_fields()
                    .u64(schema.get_field_name(*field))
                    .ok()
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SegmentVectors { columns })
    }

    fn get(&self, doc: u32) -> Option<Packed> {
        let mut words = [0u64; WORDS];
        for (word, column) in words.iter_mut().zip(&self.columns) {
            *word = column.first(doc)?;
        }
        Some(Packed(words))
    }
}

/// The vectors of one searcher's segments, opened once per search.
pub struct Vectors<'a> {
    searcher: &'a Searcher,
    segments: Vec<Option<SegmentVectors>>,
}

impl<'a> Vectors<'a> {
    pub fn open(searcher: &'a Searcher, fields: &Fields) -> Vectors<'a> {
        let segments = searcher
            .segment_readers()
            .iter()
            .map(|segment| SegmentVectors::open(segment, fields))
            .collect();
        Vectors { searcher, segments }
    }

    /// The cosine of a document's vector with the question's, `None` for a document
    /// without one.
    pub fn cosine(&self, address: DocAddress, query: &[f32; MAX_DIM]) -> Option<f32> {
        let packed = self
            .segments
            .get(address.segment_ord as usize)?
            .as_ref()?
            .get(address.doc_id)?;
        Some(packed.cosine(query))
    }

    /// The `n` source files whose vectors are closest to the question, closest first,
    /// leaving out `hidden` paths (replaced by another layer).
    pub fn closest_files(
        &self,
        fields: &Fields,
        query: &[f32; MAX_DIM],
        n: usize,
        hidden: &FxHashSet<String>,
    ) -> Vec<(String, f32)> {
        // Four times as many as wanted, so the files that are not source can be dropped.
        let wanted = n * 4;
        let mut best: Vec<(f32, DocAddress)> = Vec::new();
        let term = Term::from_field_text(fields.kind, KIND_FILE);
        self.for_each_vector(fields.kind, &term, |address, packed| {
            let score = packed.cosine(query);
            if best.len() < wanted || score > best[best.len() - 1].0 {
                let at = best.partition_point(|(s, _)| *s >= score);
                best.insert(at, (score, address));
                best.truncate(wanted);
            }
        });
        let mut files = Vec::new();
        let floor = best.first().map_or(0.0, |(s, _)| s * MIN_SHARE);
        for (score, address) in best {
            if score < floor {
                break;
            }
            let Ok(stored) = self.searcher.doc::<tantivy::TantivyDocument>(address) else {
                continue;
            };
            use tantivy::schema::Value;
            let Some(path) = stored.get_first(fields.file_path).and_then(|v| v.as_str()) else {
                continue;
            };
            if hidden.contains(path) || FileKind::of_path(path) != FileKind::Source {
                continue;
            }
            files.push((path.to_string(), score));
            if files.len() == n {
                break;
            }
        }
        files
    }

    /// The chunk of `path` closest to the question.
    pub fn closest_chunk(
        &self,
        fields: &Fields,
        path: &str,
        query: &[f32; MAX_DIM],
    ) -> Option<(DocAddress, f32)> {
        self.chunks_of(fields, path, query)
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Every chunk of `path` with a vector, and its cosine with `query`.
    pub fn chunks_of(
        &self,
        fields: &Fields,
        path: &str,
        query: &[f32; MAX_DIM],
    ) -> Vec<(DocAddress, f32)> {
        let term = Term::from_field_text(fields.path, path);
        let mut out = Vec::new();
        self.for_each_vector(fields.path, &term, |address, packed| {
            out.push((address, packed.cosine(query)));
        });
        out
    }

    /// Calls `found` with every live document holding `term` in `field` that has a
    /// vector.
    fn for_each_vector(
        &self,
        field: Field,
        term: &Term,
        mut found: impl FnMut(DocAddress, Packed),
    ) {
        for (ord, segment) in self.searcher.segment_readers().iter().enumerate() {
            let Some(Some(vectors)) = self.segments.get(ord) else {
                continue;
            };
            let Ok(inverted) = segment.inverted_index(field) else {
                continue;
            };
            let Ok(Some(mut postings)) = inverted.read_postings(term, IndexRecordOption::Basic)
            else {
                continue;
            };
            while postings.doc() != TERMINATED {
                let doc = postings.doc();
                postings.advance();
                if segment.is_deleted(doc) {
                    continue;
                }
                if let Some(packed) = vectors.get(doc) {
                    found(DocAddress::new(ord as u32, doc), packed);
                }
            }
        }
    }
}

/// `found` (chunks, best first, each with its cosine when known) reordered by file: each
/// file's lexical place fused with its place among the files by their closest chunk; the
/// model's `closest` files the lexical ranking missed enter with the chunk `chunk_of`
/// gives. Within a file, chunks keep their order.
pub fn fuse(
    found: Vec<Found>,
    closest: &[(String, f32)],
    fusion: Fusion,
    chunk_of: &dyn Fn(&str) -> Option<Found>,
) -> Vec<Found> {
    let lexical = super::search::file_ranks(&found);
    let only_model = fusion.weight < 0.0;
    // The model alone (an evaluation's baseline): its closest files, nothing else.
    let mut found = if only_model { Vec::new() } else { found };
    for (path, _) in closest {
        if only_model || !lexical.contains_key(path) {
            found.extend(chunk_of(path));
        }
    }
    // Each file's closeness: its closest chunk among those listed.
    let mut closeness: FxHashMap<&str, f32> = FxHashMap::default();
    for hit in &found {
        if let Some(similarity) = hit.similarity {
            let entry = closeness.entry(hit.path.as_str()).or_insert(f32::MIN);
            *entry = entry.max(similarity);
        }
    }
    let mut by_model: Vec<(&str, f32)> = closeness.into_iter().collect();
    by_model.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let model_rank: FxHashMap<String, usize> = by_model
        .iter()
        .enumerate()
        .map(|(i, (path, _))| (path.to_string(), i + 1))
        .collect();
    let fused = |path: &str| -> f32 {
        let lexical = match only_model {
            true => 0.0,
            false => lexical
                .get(path)
                .map_or(0.0, |rank| 1.0 / (fusion.k + *rank as f32)),
        };
        let model = model_rank
            .get(path)
            .map_or(0.0, |rank| fusion.weight.abs() / (fusion.k + *rank as f32));
        lexical + model
    };
    super::search::by_file_score(found, fused)
}

#[cfg(test)]
mod tests;
