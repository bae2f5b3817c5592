use super::*;
use crate::index::search::test_hits::{hit, order};

#[test]
fn the_model_and_the_lexical_ranking_are_fused_per_file() {
    let lexical = || {
        vec![
            hit("a.py", 1, Some(0.1)),
            hit("b.py", 1, Some(0.6)),
            hit("a.py", 9, Some(0.2)),
        ]
    };
    let closest = vec![("c.py".to_string(), 0.7), ("b.py".to_string(), 0.6)];
    let chunk_of = |path: &str| {
        let closeness = closest.iter().find(|(p, _)| p == path).map(|(_, c)| *c);
        Some(hit(path, 5, closeness))
    };
    // Weight 0: the lexical order.
    let off = Fusion {
        k: 10.0,
        weight: 0.0,
        files: 10,
    };
    assert_eq!(
        order(&fuse(lexical(), &closest, off, &chunk_of)),
        ["a.py:1", "a.py:9", "b.py:1", "c.py:5"]
    );
    // The model's weight lifts the file it finds closer (b.py over a.py); a strong one
    // puts its closest file, which the lexical ranking missed, first. A file's chunks
    // stay together, in their lexical order.
    let some = Fusion {
        k: 10.0,
        weight: 2.0,
        files: 10,
    };
    let fused = order(&fuse(lexical(), &closest, some, &chunk_of));
    assert_eq!(fused, ["b.py:1", "a.py:1", "a.py:9", "c.py:5"]);
    let strong = Fusion {
        k: 10.0,
        weight: 50.0,
        files: 10,
    };
    let fused = order(&fuse(lexical(), &closest, strong, &chunk_of));
    assert_eq!(fused, ["c.py:5", "b.py:1", "a.py:1", "a.py:9"]);
    // The model alone: only its closest files.
    let alone = Fusion {
        k: 10.0,
        weight: -1.0,
        files: 10,
    };
    assert_eq!(
        order(&fuse(lexical(), &closest, alone, &chunk_of)),
        ["c.py:5", "b.py:5"]
    );
}
