//! The learned file ranker's trees (issue #52): gradient-boosted regression trees in
//! LightGBM's text model format, read once and walked for each candidate file's features
//! (`features.rs`). A model is a sum of trees; a tree's internal node sends a value left
//! when it is at most the node's threshold. Only what LightGBM writes for numerical
//! features is read: a categorical split, or a feature index past the features given, is
//! refused when the model is read, not guessed at when it is walked.
//!
//! Missing values follow LightGBM's rules (`decision_type`: bit 1 the default direction,
//! bits 2–3 the missing type): with missing type `NaN` a NaN goes the default way; with
//! `Zero`, zero (and NaN) does; with `None`, a NaN is read as 0. The features never hold a
//! NaN today; the rules are kept so the trees mean here what they meant in training.

/// The learned ranker in force: a model file named by `COPILOT_LS_LEARNED_RANKER` (an
/// evaluation's switch; `off` or nothing is the hand-set order), read once. None is on by
/// default: the model `train/rank/train.py` makes passed issue #52's ship criterion, but
/// orders tests, docs, pasted messages and a file's places in ways the end-to-end tests
/// refuse (docs/retrieval.md, "The learned ranker", eighth round). A file that cannot be
/// used is said in the log, and the hand-set order stands.
pub fn current() -> Option<&'static Model> {
    static MODEL: std::sync::OnceLock<Option<Model>> = std::sync::OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = std::env::var("COPILOT_LS_LEARNED_RANKER").ok()?;
            if path.trim().is_empty() || path == "off" {
                return None;
            }
            let read = std::fs::read_to_string(&path).map_err(|e| e.to_string());
            match read.and_then(|text| Model::parse(&text)) {
                Ok(model) if model.feature_names == super::features::NAMES => Some(model),
                Ok(_) => {
                    tracing::warn!("{path}: the learned ranker reads other features than this binary computes; not used");
                    None
                }
                Err(why) => {
                    tracing::warn!("{path}: not a learned ranker ({why}); not used");
                    None
                }
            }
        })
        .as_ref()
}

/// How many of today's first places the model reorders; the files after them keep
/// today's order. The trees were trained on exactly these places (train/rank/pack.py
/// `KEEP`): a file further down is one they never saw, and neither is ever lifted past
/// the places they were shown.
pub const REORDERED: usize = 20;

/// How far today's order holds against the trees: a file's score is the model's less
/// `TODAY_WEIGHT` times the log of its place today, so a close call keeps today's order.
/// Of 0.5, 1, 1.5, 2 and 4, 1.5 is the smallest that lost no question kind of the frozen
/// tuning split (docs/retrieval.md, "The learned ranker", fifth round); the eighth round's
/// trees were judged at it and not tuned again. `train/rank/train.py
/// --today-weight` judges the same blend.
pub const TODAY_WEIGHT: f64 = 1.5;

/// `found` (the lexical ranking's chunks, best first) ordered by file: today's first
/// `REORDERED` files (the fused order, `past_changes.rs`) by the model's score of their
/// features less `TODAY_WEIGHT` × ln(today's place), ties in today's order, then the rest
/// in today's order; a file past changes voted for that has no chunk gets one from
/// `chunk_of`. Within a file, chunks keep their order.
///
/// The features are read from many more chunks than an ask shows (`FEATURE_CHUNKS`), but
/// a file brings along only its chunks among the lexical first `shown`, as in today's
/// fusion of the first `shown` (or its best one when it has none there): moved as a
/// whole, the first file's thirty chunks would fill every place an answer lists.
#[allow(clippy::too_many_arguments)]
pub fn order(
    model: &Model,
    shown: usize,
    found: Vec<super::search::Found>,
    voted: &[(String, f32)],
    question: &super::query::ParsedQuestion,
    fusion: super::past_changes::Fusion,
    facts: &dyn Fn(&[&str]) -> Vec<super::features::FileFacts>,
    chunk_of: &dyn Fn(&str) -> Option<super::search::Found>,
) -> Vec<super::search::Found> {
    let fused_rank = super::features::NAMES
        .iter()
        .position(|name| *name == "fused_rank")
        .unwrap_or(0);
    let mut files: Vec<(f32, f64, String)> =
        super::features::of_files(&found, voted, question, fusion, facts)
            .into_iter()
            .map(|file| {
                let today = file.values[fused_rank];
                let score = if today <= REORDERED as f32 {
                    model.score(&file.values) - TODAY_WEIGHT * f64::from(today).ln()
                } else {
                    f64::NEG_INFINITY
                };
                (today, score, file.path)
            })
            .collect();
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.total_cmp(&b.0)));
    let place: std::collections::HashMap<String, usize> = files
        .into_iter()
        .enumerate()
        .map(|(place, (_, _, path))| (path, place))
        .collect();
    let mut found_files = std::collections::HashSet::new();
    let mut kept: Vec<super::search::Found> = found
        .into_iter()
        .enumerate()
        .filter(|(i, hit)| found_files.insert(hit.path.clone()) || *i < shown)
        .map(|(_, hit)| hit)
        .collect();
    for (path, _) in voted {
        if !found_files.contains(path) {
            kept.extend(chunk_of(path));
        }
    }
    super::search::by_file_score(kept, |path| {
        -(place.get(path).copied().unwrap_or(usize::MAX) as f32)
    })
}

/// One tree: internal nodes in LightGBM's order; a child below zero is leaf `!child`.
#[derive(Debug, Clone, PartialEq)]
struct Tree {
    split_feature: Vec<usize>,
    threshold: Vec<f64>,
    decision_type: Vec<u8>,
    left: Vec<i32>,
    right: Vec<i32>,
    leaf_value: Vec<f64>,
}

/// A model: its trees and the features it reads, by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub feature_names: Vec<String>,
    trees: Vec<Tree>,
}

const DEFAULT_LEFT: u8 = 2;
const MISSING_ZERO: u8 = 1;
const MISSING_NAN: u8 = 2;
/// LightGBM's `kZeroThreshold`: a value this close to zero counts as zero.
const ZERO: f64 = 1e-35;

impl Model {
    /// Reads LightGBM's text format (`Booster.save_model`).
    pub fn parse(text: &str) -> Result<Model, String> {
        let mut feature_names = Vec::new();
        let mut trees = Vec::new();
        let mut fields: Vec<(&str, &str)> = Vec::new();
        let mut in_tree = false;
        let finish = |fields: &[(&str, &str)], trees: &mut Vec<Tree>| -> Result<(), String> {
            trees.push(tree(fields)?);
            Ok(())
        };
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with("Tree=") {
                if in_tree {
                    finish(&fields, &mut trees)?;
                }
                fields.clear();
                in_tree = true;
            } else if line == "end of trees" {
                if in_tree {
                    finish(&fields, &mut trees)?;
                }
                in_tree = false;
                break;
            } else if let Some((key, value)) = line.split_once('=') {
                if in_tree {
                    fields.push((key, value));
                } else if key == "feature_names" {
                    feature_names = value.split(' ').map(str::to_string).collect();
                }
            }
        }
        if in_tree {
            finish(&fields, &mut trees)?;
        }
        if trees.is_empty() {
            return Err("the model has no trees".to_string());
        }
        for tree in &trees {
            if let Some(feature) = tree
                .split_feature
                .iter()
                .find(|f| **f >= feature_names.len())
            {
                return Err(format!(
                    "a tree splits on feature {feature}, past the {} the model names",
                    feature_names.len()
                ));
            }
        }
        Ok(Model {
            feature_names,
            trees,
        })
    }

    /// The model's score of one candidate's features (higher ranks first).
    pub fn score(&self, features: &[f32]) -> f64 {
        self.trees.iter().map(|tree| tree.value(features)).sum()
    }
}

impl Tree {
    fn value(&self, features: &[f32]) -> f64 {
        // A tree of one leaf has no internal node.
        if self.split_feature.is_empty() {
            return self.leaf_value.first().copied().unwrap_or(0.0);
        }
        let mut node = 0usize;
        loop {
            let value = features
                .get(self.split_feature[node])
                .map_or(f64::NAN, |v| f64::from(*v));
            let child = if self.goes_left(node, value) {
                self.left[node]
            } else {
                self.right[node]
            };
            if child < 0 {
                return self.leaf_value[!child as usize];
            }
            node = child as usize;
        }
    }

    fn goes_left(&self, node: usize, mut value: f64) -> bool {
        let decision = self.decision_type[node];
        let missing = (decision >> 2) & 3;
        let default_left = decision & DEFAULT_LEFT != 0;
        if value.is_nan() && missing != MISSING_NAN {
            value = 0.0;
        }
        if (missing == MISSING_ZERO && value.abs() <= ZERO)
            || (missing == MISSING_NAN && value.is_nan())
        {
            return default_left;
        }
        value <= self.threshold[node]
    }
}

fn tree(fields: &[(&str, &str)]) -> Result<Tree, String> {
    let get = |name: &str| -> Result<&str, String> {
        fields
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| *value)
            .ok_or_else(|| format!("a tree has no {name}"))
    };
    fn numbers<T: std::str::FromStr>(text: &str, name: &str) -> Result<Vec<T>, String> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        text.split(' ')
            .map(|n| {
                n.parse()
                    .map_err(|_| format!("{name}: {n:?} is not a number"))
            })
            .collect()
    }
    let leaves: usize = get("num_leaves")?
        .parse()
        .map_err(|_| "num_leaves is not a number")?;
    if fields
        .iter()
        .find(|(key, _)| *key == "num_cat")
        .is_some_and(|(_, n)| *n != "0")
    {
        return Err("a tree has categorical splits, which this reader does not take".into());
    }
    let leaf_value: Vec<f64> = numbers(get("leaf_value")?, "leaf_value")?;
    if leaves <= 1 {
        return Ok(Tree {
            split_feature: Vec::new(),
            threshold: Vec::new(),
            decision_type: Vec::new(),
            left: Vec::new(),
            right: Vec::new(),
            leaf_value,
        });
    }
    let tree = Tree {
        split_feature: numbers(get("split_feature")?, "split_feature")?,
        threshold: numbers(get("threshold")?, "threshold")?,
        decision_type: numbers(get("decision_type")?, "decision_type")?,
        left: numbers(get("left_child")?, "left_child")?,
        right: numbers(get("right_child")?, "right_child")?,
        leaf_value,
    };
    let internal = leaves - 1;
    let whole = [
        tree.split_feature.len(),
        tree.threshold.len(),
        tree.decision_type.len(),
        tree.left.len(),
        tree.right.len(),
    ]
    .iter()
    .all(|n| *n == internal)
        && tree.leaf_value.len() == leaves;
    let in_range = |child: &i32| {
        if *child < 0 {
            (!*child as usize) < leaves
        } else {
            (*child as usize) < internal
        }
    };
    if !whole || !tree.left.iter().chain(&tree.right).all(in_range) {
        return Err("a tree's arrays do not agree with its num_leaves".into());
    }
    if tree.decision_type.iter().any(|d| d & 1 != 0) {
        return Err("a tree has categorical splits, which this reader does not take".into());
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two trees by hand: the first splits on `a` then `b`, the second is a stump on `b`
    /// whose missing values (NaN) go left.
    const MODEL: &str = "tree
version=v4
num_class=1
max_feature_idx=1
objective=lambdarank
feature_names=a b

Tree=0
num_leaves=3
num_cat=0
split_feature=0 1
threshold=1.5 0.25
decision_type=2 2
left_child=1 -1
right_child=-3 -2
leaf_value=0.1 0.2 0.30000000000000004
shrinkage=1

Tree=1
num_leaves=2
num_cat=0
split_feature=1
threshold=3
decision_type=10
left_child=-1
right_child=-2
leaf_value=-1 1
shrinkage=0.05

end of trees

feature_importances:
a=1
";

    #[test]
    fn trees_are_walked_as_lightgbm_walks_them() {
        let model = Model::parse(MODEL).unwrap();
        assert_eq!(model.feature_names, ["a", "b"]);
        // a <= 1.5 and b <= 0.25: leaf 0; then b <= 3: -1.
        assert!((model.score(&[1.0, 0.0]) - (0.1 - 1.0)).abs() < 1e-12);
        // a <= 1.5, b > 0.25: leaf 1; b > 3: +1.
        assert!((model.score(&[1.5, 4.0]) - (0.2 + 1.0)).abs() < 1e-12);
        // a > 1.5: leaf 2; a NaN b goes left in tree 1 (missing type NaN, default left)
        // and, read as 0 where the missing type is none, left in tree 0's b split.
        assert!((model.score(&[2.0, f32::NAN]) - (0.30000000000000004 - 1.0)).abs() < 1e-12);
        assert!((model.score(&[0.0, f32::NAN]) - (0.1 - 1.0)).abs() < 1e-12);
    }

    /// The trained model in the repository (`train/rank/out/`, made by `train.py`, not on
    /// by default) scores the trainer's own held-out rows as LightGBM did, and reads the
    /// features this binary computes, in their order.
    #[test]
    fn the_trained_model_scores_as_lightgbm_did() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../train/rank/out");
        let model =
            Model::parse(&std::fs::read_to_string(format!("{dir}/ranker.txt")).unwrap()).unwrap();
        assert_eq!(model.feature_names, crate::index::features::NAMES);
        let parity: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{dir}/parity.json")).unwrap())
                .unwrap();
        let rows = parity["rows"].as_array().unwrap();
        let scores = parity["scores"].as_array().unwrap();
        assert_eq!(rows.len(), scores.len());
        assert!(rows.len() >= 100);
        for (row, expected) in rows.iter().zip(scores) {
            let values: Vec<f32> = row
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect();
            let expected = expected.as_f64().unwrap();
            let got = model.score(&values);
            assert!(
                (got - expected).abs() <= 1e-9 * expected.abs().max(1.0),
                "{got} against LightGBM's {expected} for {values:?}"
            );
        }
    }

    #[test]
    fn what_this_reader_cannot_walk_is_refused_when_read() {
        assert!(Model::parse("tree\nfeature_names=a\nend of trees\n").is_err());
        let categorical = MODEL.replace("decision_type=2 2", "decision_type=3 2");
        assert!(Model::parse(&categorical).is_err());
        let past = MODEL.replace("split_feature=0 1", "split_feature=0 7");
        assert!(Model::parse(&past).unwrap_err().contains("feature 7"));
        let short = MODEL.replace("leaf_value=0.1 0.2 0.30000000000000004", "leaf_value=0.1");
        assert!(Model::parse(&short).is_err());
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;
    use crate::index::features::{FileFacts, NAMES};
    use crate::index::search::test_hits::{hit, order as places};

    /// One stump on `fused_rank`: today's first file scores 0, every other `rest`.
    fn stump(rest: f64) -> Model {
        Model::parse(&format!(
            "tree\nfeature_names={}\n\nTree=0\nnum_leaves=2\nsplit_feature=0\nthreshold=1.5\n\
             decision_type=2\nleft_child=-1\nright_child=-2\nleaf_value=0 {rest}\n\nend of trees\n",
            NAMES.join(" ")
        ))
        .unwrap()
    }

    /// `found` ordered by `model` for a plain question, `shown` places shown, with no
    /// vote and no file facts; the places as `path:line`.
    fn ordered(
        model: &Model,
        shown: usize,
        found: Vec<crate::index::search::Found>,
    ) -> Vec<String> {
        places(&order(
            model,
            shown,
            found,
            &[],
            &crate::index::query::parse("where is it?"),
            crate::index::past_changes::FUSION,
            &|paths: &[&str]| vec![FileFacts::default(); paths.len()],
            &|_| None,
        ))
    }

    /// The trees prefer every other file by less than today's order weighs
    /// (`TODAY_WEIGHT` × ln 2 for the second place): today's order stands.
    #[test]
    fn a_close_call_keeps_todays_order() {
        let found = vec![
            hit("a.py", 1, None),
            hit("b.py", 1, None),
            hit("c.py", 1, None),
        ];
        assert_eq!(
            ordered(&stump(0.3), 3, found),
            ["a.py:1", "b.py:1", "c.py:1"]
        );
    }

    #[test]
    fn the_model_orders_todays_first_places_and_a_file_brings_only_its_shown_chunks() {
        let found = vec![
            hit("a.py", 1, None),
            hit("a.py", 9, None),
            hit("b.py", 1, None),
            hit("a.py", 20, None),
            hit("c.py", 1, None),
        ];
        // a.py, today's first, scores lowest and goes last, with its chunks among the
        // first two shown (a.py:20 is not); b.py and c.py, alike to the trees, keep
        // today's order.
        assert_eq!(
            ordered(&stump(2.0), 2, found),
            ["b.py:1", "c.py:1", "a.py:1", "a.py:9"]
        );
    }
}
