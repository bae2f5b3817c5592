//! A question → the best chunks: tantivy's BM25 with field boosts picks a few hundred
//! candidates, whose per-field term frequencies and file terms are then read back from
//! the postings so `rank.rs` can score them with every signal.

use rustc_hash::FxHashSet;
use tantivy::postings::Postings;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{DocAddress, DocId, DocSet, Searcher, TantivyDocument, Term, TERMINATED};

use super::analyze::decode_definitions;
use super::past_changes;
use super::query::{self, ParsedQuestion};
use super::quoted;
use super::rank::{self, Candidate, Corpus, QuotedKey, Ranking, TermStats};
use super::schema::{Fields, KIND_CHUNK, KIND_FILE};
use super::semantic::{Semantic, Vectors};
use super::tokenize::for_each_term;

/// How many chunks tantivy hands to the re-ranker. Enough that the signals BM25 does not
/// see (coverage, names, kinds) can lift a chunk from far down; few enough that reading
/// them back stays a few milliseconds.
const CANDIDATES: usize = 300;
/// Terms whose frequencies are looked up, the heaviest first: a 20 KB report has
/// thousands, and each costs a dictionary lookup per field and segment.
const MAX_CONSIDERED_TERMS: usize = 256;
/// Terms scored (a file's terms are a 64-bit mask), the most valuable first
/// (weight × rarity), so a long report is searched by its names, not its filler.
const MAX_TERMS: usize = 64;
/// Boost of "this chunk's file is the file the question names" among the candidates.
const PATH_REF_BOOST: f32 = 6.0;

/// Chunks of the lexical ranking the model places again (`semantic.rs`).
const SEMANTIC_POOL: usize = 60;

/// Boost of "this chunk holds a string literal the question quotes" among the candidates.
const QUOTED_BOOST: f32 = 4.0;
/// Quoted keys searched: the strongest, where a pasted log matches many.
const MAX_QUOTED: usize = 32;

/// A chunk found, before its text is read.
pub struct Found {
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    pub score: f32,
    pub symbol: Option<String>,
    /// Its file is of a kind the question is not about (rank.rs ranked it down).
    pub ranked_down: bool,
    /// The cosine of its vector with the question's, by the code model
    /// (`semantic.rs`); `None` without a model or a vector.
    pub similarity: Option<f32>,
    /// What its lexical score is made of (zero for a chunk it did not score).
    pub signals: super::rank::Signals,
}

/// One of the indexes searched together: a root's index, or a reading process's own
/// changes over it (its layer, which replaces the documents of its `hidden` paths in the
/// part before it). Several roots are several parts, ranked as one index.
pub struct Part<'a> {
    pub searcher: &'a Searcher,
    /// Paths whose documents here another part replaces.
    pub hidden: Option<&'a FxHashSet<String>>,
    /// What this part's paths are shown as: `""` with one root, `"<root name>/"` with
    /// several (so the root's name counts in the path's words, as in one index over
    /// the roots' parent).
    pub prefix: &'a str,
}

impl Part<'_> {
    /// `shown` as a path of this part's documents, if it is one this part answers for.
    pub fn path_of<'p>(&self, shown: &'p str) -> Option<&'p str> {
        let path = shown.strip_prefix(self.prefix)?;
        (!self.hidden.is_some_and(|hidden| hidden.contains(path))).then_some(path)
    }
}

/// The part that answers for a shown path, and the path in it: the root's layer when
/// it replaces the path, else the root's index.
pub fn owner<'a, 'p>(parts: &'a [Part<'a>], shown: &'p str) -> Option<(usize, &'p str)> {
    parts
        .iter()
        .enumerate()
        .find_map(|(i, part)| part.path_of(shown).map(|path| (i, path)))
}

/// The files similar past changes changed, best first, and how to fuse them
/// (`past_changes.rs`); empty for no history.
pub struct PastChanges {
    pub voted: Vec<(String, f32)>,
    pub fusion: past_changes::Fusion,
}

/// The evidence beside the words: past changes' votes and the code model's question
/// vector.
pub struct Evidence<'a> {
    pub past: PastChanges,
    pub semantic: Option<Semantic>,
    /// The learned file ranker (`learned.rs`), which orders the files in place of the
    /// history fusion; `None` for the hand-set ranking (and for the features' own search).
    pub learned: Option<&'static super::learned::Model>,
    /// What the index and history know of candidate files themselves, for the learned
    /// ranker's features (`several::file_facts`).
    pub facts: &'a dyn Fn(&[&str]) -> Vec<super::features::FileFacts>,
}

/// The lexical chunks the learned ranker's features are read from, as `dev features`
/// reads them for training.
pub const FEATURE_CHUNKS: usize = 200;

pub fn search(
    parts: &[Part<'_>],
    fields: &Fields,
    query: &str,
    limit: usize,
    ranking: Ranking,
    evidence: &Evidence<'_>,
) -> tantivy::Result<Vec<Found>> {
    let (past, semantic) = (&evidence.past, evidence.semantic.as_ref());
    if limit == 0 {
        return Ok(Vec::new());
    }
    let parsed = match ranking {
        Ranking::Tuned => query::parse(query),
        // The baseline reads the question as plain words, as BM25 always did.
        Ranking::PlainBm25 => ParsedQuestion {
            prose: query.to_string(),
            ..ParsedQuestion::default()
        },
    };
    // The trees learned from commit messages and doc comments; a question asked of the
    // code ("where is the token checked?") is neither, so it keeps the hand-set order,
    // which was tuned on such questions (docs/retrieval.md, "The learned ranker").
    let learned = evidence.learned.filter(|_| !parsed.is_question());
    // The statistics are every part's together: several roots rank as one index (a
    // layer's documents replace a few of its root's, whose counts stay: a small error
    // on a small layer).
    let searchers: Vec<&Searcher> = parts.iter().map(|part| part.searcher).collect();
    let mut corpus = corpus(&searchers, fields, parsed)?;
    // With no word of the question in the index, only the model can find anything.
    if (corpus.terms.is_empty() || corpus.chunks == 0) && semantic.is_none() {
        return Ok(Vec::new());
    }
    if ranking == Ranking::Tuned {
        corpus.quoted = quoted_keys(&searchers, fields, query)?;
    }
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for stats in &corpus.terms {
        let weight = stats.weight;
        let mut add = |field: Field, boost: f32| {
            let term = Term::from_field_text(field, &stats.term.text);
            let query = TermQuery::new(term, IndexRecordOption::WithFreqs);
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(query), boost * weight)),
            ));
        };
        add(fields.body, 1.0);
        if ranking == Ranking::Tuned {
            add(fields.def, 3.0);
            add(fields.doc, 1.0);
            add(fields.path_words, 2.0);
        }
    }
    // A chunk holding a message the question quotes is a candidate whatever its words.
    for quoted in &corpus.quoted {
        let term = Term::from_field_text(fields.quoted, &quoted.key);
        clauses.push((
            Occur::Should,
            Box::new(BoostQuery::new(
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                QUOTED_BOOST * quoted.strength,
            )),
        ));
    }
    // The files the question names (a traceback frame, `src/a.rs:40`) must be among the
    // candidates even when their chunks share few words with it: every word of the
    // file name in the path.
    if ranking == Ranking::Tuned {
        for path in &corpus.parsed.paths {
            let mut words: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for_each_term(path.file_name(), |term| {
                let term = Term::from_field_text(fields.path_words, term);
                words.push((
                    Occur::Must,
                    Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                ));
            });
            if !words.is_empty() {
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(BooleanQuery::new(words)),
                        PATH_REF_BOOST,
                    )),
                ));
            }
        }
    }
    let query = BooleanQuery::new(clauses);
    // The learned ranker reads its features from the pool `dev features` read them from
    // in training (the candidates of `FEATURE_CHUNKS` chunks), not a smaller one.
    let pool = match learned {
        Some(_) => CANDIDATES.max(FEATURE_CHUNKS * 4),
        None => CANDIDATES.max(limit * 4),
    };
    let collector = tantivy::collector::TopDocs::with_limit(pool).order_by_score();
    let vectors: Vec<Option<Vectors>> = parts
        .iter()
        .map(|part| semantic.map(|_| Vectors::open(part.searcher, fields)))
        .collect();
    let similarity = |vectors: &Option<Vectors>, address: DocAddress| {
        let (vectors, semantic) = (vectors.as_ref()?, semantic?);
        vectors.cosine(address, &semantic.query)
    };
    let mut candidates: Vec<(Candidate, Option<f32>)> = Vec::new();
    for (part, vectors) in parts.iter().zip(&vectors) {
        let top = part.searcher.search(&query, &collector)?;
        let addresses: Vec<DocAddress> = top.into_iter().map(|(_, address)| address).collect();
        let read = self::candidates(part.searcher, fields, &corpus, &addresses)?;
        for (mut candidate, address) in read.into_iter().zip(addresses) {
            if part
                .hidden
                .is_some_and(|hidden| hidden.contains(&candidate.path))
            {
                continue;
            }
            if !part.prefix.is_empty() {
                candidate.path.insert_str(0, part.prefix);
            }
            candidates.push((candidate, similarity(vectors, address)));
        }
    }
    let (candidates, similarities): (Vec<Candidate>, Vec<Option<f32>>) =
        candidates.into_iter().unzip();
    let wanted: Vec<String> = corpus
        .all_terms
        .iter()
        .map(|t| t.term.text.clone())
        .collect();
    // The identifiers the question names, for each place's symbol: once, not per chunk.
    let named = super::named::named_keys(&corpus);
    // With the model, more of the lexical ranking is kept for it to place again: a file
    // the lexical ranking put tenth may be the one the model is surest of.
    let ranked = match (semantic, learned) {
        (Some(_), _) => limit.max(SEMANTIC_POOL),
        (None, Some(_)) => limit.max(FEATURE_CHUNKS),
        (None, None) => limit,
    };
    let found: Vec<Found> = rank::rank(&candidates, &corpus, ranked, ranking)
        .into_iter()
        .map(|scored| {
            let candidate = &candidates[scored.candidate];
            Found {
                path: candidate.path.clone(),
                start_line: candidate.start_line as usize + 1,
                end_line: candidate.end_line as usize,
                score: scored.score,
                symbol: super::named::best_symbol(candidate, &wanted, &named),
                ranked_down: scored.ranked_down,
                similarity: similarities[scored.candidate],
                signals: scored.signals,
            }
        })
        .collect();
    let read_chunk = |part: usize, address: DocAddress| -> Option<Found> {
        let part = parts.get(part)?;
        let read = self::candidates(part.searcher, fields, &corpus, &[address]).ok()?;
        let candidate = read.first()?;
        Some(Found {
            path: format!("{}{}", part.prefix, candidate.path),
            start_line: candidate.start_line as usize + 1,
            end_line: candidate.end_line as usize,
            score: 0.0,
            symbol: super::named::best_symbol(candidate, &wanted, &named),
            ranked_down: false,
            similarity: None,
            signals: Default::default(),
        })
    };
    let with_vectors: Option<Vec<(&Part, &Vectors)>> = parts
        .iter()
        .zip(&vectors)
        .map(|(part, vectors)| vectors.as_ref().map(|vectors| (part, vectors)))
        .collect();
    let found = match (semantic, with_vectors) {
        (Some(semantic), Some(with_vectors)) => {
            semantic.place(found, fields, parts, &with_vectors, &read_chunk, limit)
        }
        _ => found,
    };
    if past.voted.is_empty() && learned.is_none() {
        return Ok(found);
    }
    // A voted file the candidates missed enters with its chunk that best matches the
    // question (or its first, when none does).
    let chunk_of = |shown: &str| -> Option<Found> {
        let (part, path) = owner(parts, shown)?;
        let in_file = TermQuery::new(
            Term::from_field_text(fields.path, path),
            IndexRecordOption::Basic,
        );
        let chunks = TermQuery::new(
            Term::from_field_text(fields.kind, KIND_CHUNK),
            IndexRecordOption::Basic,
        );
        let best = BooleanQuery::new(vec![
            (Occur::Must, Box::new(in_file) as Box<dyn Query>),
            (Occur::Must, Box::new(chunks)),
            (Occur::Should, Box::new(query.clone())),
        ]);
        let top = parts[part]
            .searcher
            .search(
                &best,
                &tantivy::collector::TopDocs::with_limit(1).order_by_score(),
            )
            .ok()?;
        let address = top.first()?.1;
        read_chunk(part, address)
    };
    let mut fused = match learned {
        Some(model) => super::learned::order(
            model,
            limit,
            found,
            &past.voted,
            &corpus.parsed,
            past.fusion,
            evidence.facts,
            &chunk_of,
        ),
        None => past_changes::fuse(found, &past.voted, past.fusion, &chunk_of),
    };
    fused.truncate(limit);
    Ok(fused)
}

fn corpus(
    searchers: &[&Searcher],
    fields: &Fields,
    parsed: ParsedQuestion,
) -> tantivy::Result<Corpus> {
    let df = |field: Field, text: &str| -> tantivy::Result<u64> {
        let term = Term::from_field_text(field, text);
        let mut sum = 0;
        for searcher in searchers {
            sum += searcher.doc_freq(&term)?;
        }
        Ok(sum)
    };
    let mut corpus = Corpus {
        chunks: df(fields.kind, KIND_CHUNK)?,
        files: df(fields.kind, KIND_FILE)?,
        ..Corpus::default()
    };
    for searcher in searchers {
        for segment in searcher.segment_readers() {
            corpus.total_len += segment.inverted_index(fields.body)?.total_num_tokens();
        }
    }
    let mut weighted = query::weighted_terms(&parsed);
    // Stable: equal weights keep the question's order.
    weighted.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    weighted.truncate(MAX_CONSIDERED_TERMS);
    for weighted in weighted {
        let text = &weighted.term.text;
        let chunk_df = df(fields.body, text)?.max(df(fields.def, text)?);
        let file_df = df(fields.file_path_words, text)?;
        corpus.all_terms.push(TermStats {
            term: weighted.term,
            weight: weighted.weight,
            chunk_df,
            file_df,
        });
    }
    let n = corpus.chunks as f32;
    let value = |t: &TermStats| t.weight * rank::idf(n, t.chunk_df as f32);
    let mut found: Vec<&TermStats> = corpus.all_terms.iter().filter(|t| t.chunk_df > 0).collect();
    found.sort_by(|a, b| value(b).total_cmp(&value(a)));
    corpus.terms = found.into_iter().take(MAX_TERMS).cloned().collect();
    corpus.parsed = parsed;
    Ok(corpus)
}

/// The runs of the question's words that are keys of string literals in the index
/// (`quoted.rs`), each with its strength divided among the chunks holding it; the
/// strongest [`MAX_QUOTED`].
fn quoted_keys(
    searchers: &[&Searcher],
    fields: &Fields,
    question: &str,
) -> tantivy::Result<Vec<QuotedKey>> {
    let mut found = Vec::new();
    for (key, content_words) in quoted::question_keys(question) {
        let term = Term::from_field_text(fields.quoted, &key);
        let mut df = 0;
        for searcher in searchers {
            df += searcher.doc_freq(&term)?;
        }
        if df > 0 {
            found.push(QuotedKey {
                key,
                strength: quoted::key_strength(content_words) / df as f32,
            });
        }
    }
    found.sort_by(|a, b| b.strength.total_cmp(&a.strength));
    found.truncate(MAX_QUOTED);
    Ok(found)
}

/// Reads back what scoring needs about each candidate: stored fields, term frequencies
/// per field, and which of the question's words its file holds.
fn candidates(
    searcher: &Searcher,
    fields: &Fields,
    corpus: &Corpus,
    addresses: &[DocAddress],
) -> tantivy::Result<Vec<Candidate>> {
    let mut candidates = Vec::with_capacity(addresses.len());
    for address in addresses {
        let stored: TantivyDocument = searcher.doc(*address)?;
        let number = |field| {
            stored
                .get_first(field)
                .and_then(|v| v.as_u64())
                .unwrap_or(0)
        };
        let text = |field| {
            stored
                .get_first(field)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        candidates.push(Candidate {
            path: text(fields.path).unwrap_or_default(),
            start_line: number(fields.start_line) as u32,
            end_line: number(fields.end_line) as u32,
            len: number(fields.len) as u32,
            symbol: text(fields.symbol),
            definitions: decode_definitions(&text(fields.definitions).unwrap_or_default()),
            in_test_module: number(fields.in_test) == 1,
            generated: number(fields.generated) == 1,
            head: number(fields.head) == 1,
            tf: vec![[0; 3]; corpus.terms.len()],
            file_mask: 0,
            quoted: 0.0,
        });
    }

    // Term frequencies: one postings list per (segment, field, term), sought in doc order.
    let mut targets: Vec<(DocAddress, usize)> = addresses.iter().copied().zip(0..).collect();
    targets.sort_unstable_by_key(|(address, _)| (address.segment_ord, address.doc_id));
    for (slot, field) in [fields.body, fields.doc, fields.def]
        .into_iter()
        .enumerate()
    {
        for (t, stats) in corpus.terms.iter().enumerate() {
            let term = Term::from_field_text(field, &stats.term.text);
            for_each_match(searcher, field, &term, &targets, |candidate, tf| {
                candidates[candidate].tf[t][slot] = tf;
            })?;
        }
    }

    for quoted in &corpus.quoted {
        let term = Term::from_field_text(fields.quoted, &quoted.key);
        for_each_match(searcher, fields.quoted, &term, &targets, |candidate, _| {
            candidates[candidate].quoted += quoted.strength;
        })?;
    }

    // File terms: the candidates' file documents, then each word's postings in them.
    let mut paths: Vec<String> = candidates.iter().map(|c| c.path.clone()).collect();
    paths.sort_unstable();
    paths.dedup();
    let mut file_targets: Vec<(DocAddress, usize)> = Vec::new();
    for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        let inverted = segment.inverted_index(fields.file_path)?;
        for (p, path) in paths.iter().enumerate() {
            let term = Term::from_field_text(fields.file_path, path);
            if let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)? {
                while postings.doc() != TERMINATED {
                    if !segment.is_deleted(postings.doc()) {
                        file_targets.push((DocAddress::new(ord as u32, postings.doc()), p));
                    }
                    postings.advance();
                }
            }
        }
    }
    file_targets.sort_unstable_by_key(|(address, _)| (address.segment_ord, address.doc_id));
    let mut masks = vec![0u64; paths.len()];
    for (t, stats) in corpus.terms.iter().enumerate() {
        if stats.term.compound {
            continue;
        }
        let term = Term::from_field_text(fields.file_words, &stats.term.text);
        for_each_match(searcher, fields.file_words, &term, &file_targets, |p, _| {
            masks[p] |= 1 << t;
        })?;
    }
    for candidate in &mut candidates {
        if let Ok(p) = paths.binary_search(&candidate.path) {
            candidate.file_mask = masks[p];
        }
    }
    Ok(candidates)
}

/// Calls `found(tag, term frequency)` for every target (sorted by segment and doc) whose
/// document holds `term` in `field`.
fn for_each_match(
    searcher: &Searcher,
    field: Field,
    term: &Term,
    targets: &[(DocAddress, usize)],
    mut found: impl FnMut(usize, u32),
) -> tantivy::Result<()> {
    let mut start = 0;
    while start < targets.len() {
        let ord = targets[start].0.segment_ord;
        let end = start
            + targets[start..]
                .iter()
                .take_while(|(address, _)| address.segment_ord == ord)
                .count();
        let segment = searcher.segment_reader(ord);
        let inverted = segment.inverted_index(field)?;
        if let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::WithFreqs)? {
            for &(address, tag) in &targets[start..end] {
                let doc: DocId = if postings.doc() >= address.doc_id {
                    postings.doc()
                } else {
                    postings.seek(address.doc_id)
                };
                if doc == TERMINATED {
                    break;
                }
                if doc == address.doc_id {
                    found(tag, postings.term_freq());
                }
            }
        }
        start = end;
    }
    Ok(())
}

/// Each file's place in `found` (1-based), in the order its files first appear.
pub fn file_ranks(found: &[Found]) -> rustc_hash::FxHashMap<String, usize> {
    let mut ranks = rustc_hash::FxHashMap::default();
    for hit in found {
        let next = ranks.len() + 1;
        ranks.entry(hit.path.clone()).or_insert(next);
    }
    ranks
}

/// `found` ordered by its files' fused scores, best first: a file's chunks move
/// together, ties keep the lexical order.
pub fn by_file_score(found: Vec<Found>, score: impl Fn(&str) -> f32) -> Vec<Found> {
    let mut scored: Vec<(f32, usize, Found)> = found
        .into_iter()
        .enumerate()
        .map(|(i, hit)| (score(&hit.path), i, hit))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, hit)| hit).collect()
}

/// What the fusions' tests build and read.
#[cfg(test)]
pub mod test_hits {
    use super::Found;

    /// A chunk at `line` of `path`.
    pub fn hit(path: &str, line: usize, similarity: Option<f32>) -> Found {
        Found {
            path: path.into(),
            start_line: line,
            end_line: line + 1,
            score: 1.0,
            symbol: None,
            ranked_down: false,
            similarity,
            signals: Default::default(),
        }
    }

    /// `path:line` of each chunk, in order.
    pub fn order(found: &[Found]) -> Vec<String> {
        found
            .iter()
            .map(|f| format!("{}:{}", f.path, f.start_line))
            .collect()
    }
}
