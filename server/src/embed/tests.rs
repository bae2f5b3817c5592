use super::*;

/// An artifact in `train/`'s format: `rows[t]` is term `t`'s row, scale 1/127, weight 1.
fn artifact(terms: &[&str], dim: usize, towers: &[Vec<Vec<i8>>], max_terms: usize) -> Vec<u8> {
    let header = serde_json::json!({
        "dim": dim, "vocab": terms.len(), "towers": towers.len(), "max_terms": max_terms
    })
    .to_string();
    let mut out = b"CLSEMB01".to_vec();
    out.extend((header.len() as u32).to_le_bytes());
    out.extend(header.as_bytes());
    for term in terms {
        out.push(term.len() as u8);
        out.extend(term.as_bytes());
    }
    for rows in towers {
        for _ in terms {
            out.extend(1.0f32.to_le_bytes());
        }
        for _ in terms {
            out.extend((1.0f32 / 127.0).to_le_bytes());
        }
        for row in rows {
            out.extend(row.iter().map(|v| *v as u8));
        }
    }
    out
}

fn model(max_terms: usize) -> Model {
    let rows = vec![vec![127, 0, 0, 0], vec![0, 127, 0, 0], vec![100, 100, 0, 0]];
    Model::parse(&artifact(
        &["hang", "deadlock", "wait"],
        4,
        &[rows],
        max_terms,
    ))
    .unwrap()
}

#[test]
fn a_text_is_the_normalised_sum_of_its_known_terms() {
    let model = model(100);
    let vector = embed(&model, Tower::Text, ["hang", "unknown", "deadlock"]).unwrap();
    let half = 1.0 / 2f32.sqrt();
    assert!((vector[0] - half).abs() < 1e-5 && (vector[1] - half).abs() < 1e-5);
    assert!(vector[2..].iter().all(|v| *v == 0.0));
    assert_eq!(embed(&model, Tower::Text, ["unknown"]), None);
}

#[test]
fn only_the_first_max_terms_known_terms_count() {
    let model = model(1);
    let vector = embed(&model, Tower::Code, ["unknown", "hang", "deadlock"]).unwrap();
    assert!((vector[0] - 1.0).abs() < 1e-5 && vector[1] == 0.0);
}

#[test]
fn two_towers_embed_each_side_with_its_own_table() {
    let text = vec![vec![127, 0], vec![0, 127]];
    let code = vec![vec![0, 127], vec![127, 0]];
    let model = Model::parse(&artifact(&["a1", "b2"], 2, &[text, code], 10)).unwrap();
    let question = embed(&model, Tower::Text, ["a1"]).unwrap();
    let chunk = embed(&model, Tower::Code, ["b2"]).unwrap();
    assert!((Packed::pack(&chunk).cosine(&question) - 1.0).abs() < 0.01);
}

#[test]
fn packed_vectors_keep_the_cosine_within_rounding() {
    let model = model(100);
    let a = embed(&model, Tower::Text, ["hang", "wait"]).unwrap();
    let b = embed(&model, Tower::Code, ["deadlock", "wait"]).unwrap();
    let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let packed = Packed::pack(&b);
    assert!((packed.cosine(&a) - exact).abs() < 0.02, "{exact}");
    assert!(!packed.is_empty());
    assert!(Packed::default().is_empty());
    // Negative components survive the packing.
    let mut negative = [0.0f32; MAX_DIM];
    negative[5] = -1.0;
    assert!((Packed::pack(&negative).cosine(&negative) - 1.0).abs() < 0.01);
}

#[test]
fn a_bad_artifact_is_an_error_never_a_panic() {
    let good = artifact(&["hang"], 4, &[vec![vec![1, 2, 3, 4]]], 10);
    assert!(Model::parse(&good).is_ok());
    assert_eq!(
        Model::parse(b"nope").err(),
        Some(ModelError::Truncated("the magic bytes"))
    );
    assert_eq!(Model::parse(b"CLSEMB02xxxx").err(), Some(ModelError::Magic));
    for cut in 0..good.len() {
        assert!(Model::parse(&good[..cut]).is_err(), "cut at {cut}");
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(Model::parse(&trailing).err(), Some(ModelError::Trailing(1)));
    let empty = artifact(&["hang"], 0, &[vec![vec![]]], 10);
    assert!(matches!(Model::parse(&empty), Err(ModelError::Header(_))));
}

#[test]
fn a_wider_model_is_cut_to_its_first_dimensions() {
    let mut row = vec![0i8; MAX_DIM + 8];
    row[0] = 127;
    row[MAX_DIM + 1] = 127;
    let wide = Model::parse(&artifact(&["hang"], MAX_DIM + 8, &[vec![row]], 10)).unwrap();
    assert_eq!(wide.dim(), MAX_DIM);
    let vector = embed(&wide, Tower::Text, ["hang"]).unwrap();
    assert!((vector[0] - 1.0).abs() < 1e-5);
}
