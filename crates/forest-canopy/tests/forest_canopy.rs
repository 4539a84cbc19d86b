//! The Canopy with the real embedding model (`FOREST_EMBED_MODEL`, installed
//! by `ops/embed/install.sh`; skipped and listed when unset).

use forest_canopy::{refresh, Embedder, LocalEmbedder, Searcher};

fn model() -> Option<LocalEmbedder> {
    match std::env::var("FOREST_EMBED_MODEL") {
        Ok(d) if !d.is_empty() => Some(LocalEmbedder::load(std::path::Path::new(&d)).expect("model loads")),
        _ => {
            forest_testkit::skip("FOREST_EMBED_MODEL unset (bash ops/embed/install.sh)");
            None
        }
    }
}

fn rows() -> Vec<(String, String)> {
    [
        ("doc/libpam", "PAM. Configuration of the login modules of the system."),
        ("doc/pango", "Pango. Layout and rendering of internationalized text."),
        ("doc/zlib", "zlib. Lossless data compression library."),
        ("doc/openssh", "OpenSSH. Secure shell client and server for remote login."),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

#[test]
fn real_model_embeds_unit_vectors_that_rank_by_meaning() {
    let Some(m) = model() else { return };
    assert!(m.model().contains('@'), "identity names the digest: {}", m.model());
    let texts: Vec<String> = rows().into_iter().map(|(_, t)| t).collect();
    let v = m.embed(&texts).unwrap();
    assert_eq!(v.len(), 4);
    for x in &v {
        assert_eq!(x.len(), 384);
        let n: f32 = x.iter().map(|a| a * a).sum();
        assert!((n - 1.0).abs() < 1e-4);
    }
    // batching does not change a vector
    let one = m.embed(&texts[1..2]).unwrap();
    let d: f32 = one[0].iter().zip(&v[1]).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(d < 1e-4, "batch vs single differ by {d}");

    let t = tempfile::tempdir().unwrap();
    let rep = refresh(t.path(), rows(), &m, true).unwrap();
    assert_eq!((rep.nodes, rep.embedded, rep.dim), (4, 4, 384));
    let s = Searcher::open(t.path()).unwrap().unwrap();
    let q = m.embed(&["how is internationalized text laid out and rendered".to_string()]).unwrap();
    assert_eq!(s.search(&q[0], 1)[0].0, "doc/pango");
    let q = m.embed(&["file compression".to_string()]).unwrap();
    assert_eq!(s.search(&q[0], 1)[0].0, "doc/zlib");

    // only the changed text is embedded again; the result equals a rebuild
    let mut changed = rows();
    changed[2].1 = "zlib. The deflate compression library.".into();
    changed.remove(3);
    let rep = refresh(t.path(), changed.clone(), &m, false).unwrap();
    assert_eq!((rep.nodes, rep.embedded, rep.removed), (3, 1, 1));
    let maintained = forest_canopy::Canopy::load(t.path()).unwrap().unwrap();
    let t2 = tempfile::tempdir().unwrap();
    refresh(t2.path(), changed, &m, true).unwrap();
    let rebuilt = forest_canopy::Canopy::load(t2.path()).unwrap().unwrap();
    assert_eq!(maintained.ids, rebuilt.ids);
    assert_eq!(maintained.hashes, rebuilt.hashes);
    let diff = maintained.vectors.iter().zip(&rebuilt.vectors).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(diff < 1e-4, "maintained vs rebuilt differ by {diff}");
}

#[test]
fn a_missing_model_directory_is_one_clear_error() {
    let t = tempfile::tempdir().unwrap();
    let e = LocalEmbedder::load(t.path()).err().unwrap();
    assert_eq!(e.code(), "E_EMBED_MODEL");
    assert!(e.to_string().contains("config.json"), "{e}");
}
