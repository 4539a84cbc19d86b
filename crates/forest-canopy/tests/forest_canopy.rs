//! The Canopy with the real embedding model (`FOREST_EMBED_MODEL`, installed
//! by `ops/embed/install.sh`; skipped and listed when unset).

use std::cell::Cell;
use std::sync::Arc;

use forest_canopy::{
    diff, maintain, refresh, stale_reason, Diff, Embedder, LocalEmbedder, MemoMode, Searcher, SortedRows,
};

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

#[test]
fn long_and_short_texts_in_one_call_come_back_in_order() {
    let Some(m) = model() else { return };
    // lengths from 3 to ~250 tokens, shuffled: the embedder sorts them into
    // batches of similar widths and must give each vector back in place
    let long = "The archive utility stores many files together. ".repeat(25);
    let texts: Vec<String> = (0..70)
        .map(|i| match i % 3 {
            0 => format!("zlib {i}"),
            1 => format!("{long} {i}"),
            _ => format!("Pango lays out internationalized text, item {i}."),
        })
        .collect();
    let all = m.embed(&texts).unwrap();
    for i in [0, 1, 2, 34, 68, 69] {
        let one = m.embed(&texts[i..i + 1]).unwrap();
        let d = one[0].iter().zip(&all[i]).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(d < 1e-4, "text {i}: batched vs alone differ by {d}");
    }
}

#[test]
fn the_shared_model_is_loaded_once_per_process() {
    let Some(_) = model() else { return };
    let a = forest_canopy::shared_from_env().unwrap().unwrap();
    let b = forest_canopy::shared_from_env().unwrap().unwrap();
    assert!(Arc::ptr_eq(&a, &b), "the second call reuses the loaded model");
}

#[test]
fn maintain_loads_the_model_only_when_a_scent_changed() {
    let Some(m) = model() else { return };
    let m: Arc<dyn Embedder> = Arc::new(m);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("canopy");
    let loads = Cell::new(0);
    let with = || {
        loads.set(loads.get() + 1);
        Ok(Some(Arc::clone(&m)))
    };
    let without = || {
        loads.set(loads.get() + 1);
        Ok(None)
    };
    // no canopy: nothing
    assert_eq!(maintain(&dir, &SortedRows::new(rows()), &with).unwrap(), None);
    assert_eq!(loads.get(), 0);
    refresh(&dir, rows(), m.as_ref(), true).unwrap();
    // same texts (a commit that touched links or bodies): no load, no write
    let before = std::fs::metadata(dir.join("index.json")).unwrap().modified().unwrap();
    assert_eq!(maintain(&dir, &SortedRows::new(rows()), &with).unwrap(), None);
    assert_eq!(maintain(&dir, &SortedRows::new(rows()), &without).unwrap(), None);
    assert_eq!(loads.get(), 0);
    assert_eq!(std::fs::metadata(dir.join("index.json")).unwrap().modified().unwrap(), before);
    assert_eq!(stale_reason(&dir), None);
    // a changed text without a model: stale; with it: refreshed, not stale
    let mut changed = rows();
    changed[0].1 = "PAM. Pluggable Authentication Modules.".into();
    assert_eq!(maintain(&dir, &SortedRows::new(changed.clone()), &without).unwrap(), None);
    assert!(stale_reason(&dir).is_some());
    let rep = maintain(&dir, &SortedRows::new(changed.clone()), &with).unwrap().unwrap();
    assert_eq!((rep.nodes, rep.embedded), (4, 1));
    assert_eq!(stale_reason(&dir), None);
    assert_eq!(loads.get(), 2);
    // a model that does not load marks the canopy stale and says why
    changed[1].1 = "Pango. Text layout.".into();
    let broken = || LocalEmbedder::load(t.path()).map(|e| Some(Arc::new(e) as Arc<dyn Embedder>));
    let e = maintain(&dir, &SortedRows::new(changed.clone()), &broken).unwrap_err();
    assert_eq!(e.code(), "E_EMBED_MODEL");
    assert!(stale_reason(&dir).unwrap().contains("did not load"));
}

#[test]
fn diff_counts_new_and_changed_texts_without_embedding() {
    let Some(m) = model() else { return };
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("canopy");
    assert_eq!(diff(&dir, &SortedRows::new(rows())).unwrap(), Diff { holds: false, to_embed: 4 }, "no canopy");
    refresh(&dir, rows(), &m, true).unwrap();
    assert_eq!(diff(&dir, &SortedRows::new(rows())).unwrap(), Diff { holds: true, to_embed: 0 });
    let mut next = rows();
    next.remove(1);
    // a removed row costs nothing to embed, but the canopy no longer holds the rows
    assert_eq!(diff(&dir, &SortedRows::new(next.clone())).unwrap(), Diff { holds: false, to_embed: 0 });
    next[0].1 = "PAM. Pluggable Authentication Modules.".into();
    next.push(("doc/tar".into(), "tar. The tape archiver.".into()));
    assert_eq!(diff(&dir, &SortedRows::new(next.clone())).unwrap(), Diff { holds: false, to_embed: 2 });
    let rep = refresh(&dir, next, &m, false).unwrap();
    assert_eq!((rep.embedded, rep.removed), (2, 1), "what the refresh did agrees");
}

/// An empty forest directory with its `_derived/` (where the memo lives).
fn forest_root() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("_derived")).unwrap();
    t
}

/// A memo row's vector: little-endian float32s.
fn floats(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

#[test]
fn a_query_alone_equals_the_same_query_padded_in_a_batch() {
    let Some(m) = model() else { return };
    // in one call with a long text, the short query is padded to the long
    // text's width under the attention mask; alone it is not padded at all
    let long = "The archive utility stores many files together. ".repeat(20);
    for q in ["where are the tape archives kept", "zlib", "how is internationalized text laid out"] {
        let batch = m.embed(&[q.to_string(), long.clone()]).unwrap();
        let alone = m.embed(&[q.to_string()]).unwrap();
        let c = cosine(&batch[0], &alone[0]);
        assert!(c > 1.0 - 1e-5, "{q}: padded vs alone cosine {c}");
    }
}

#[test]
fn the_memo_gives_back_the_encoders_vector_and_skips_it_next_time() {
    let Some(m) = model() else { return };
    let t = forest_root();
    let root = t.path();
    let model_id = forest_canopy::identity_from_env().unwrap().unwrap();
    assert_eq!(model_id, m.model(), "identity without loading equals the loaded model's");
    let q = "  where are   the tape\tarchives kept ";
    let first = forest_canopy::query_vector(root, q, &model_id, MemoMode::Persist).unwrap();
    let direct = m.embed(&[q.to_string()]).unwrap();
    assert!(cosine(&first, &direct[0]) > 1.0 - 1e-6, "collapsing whitespace keeps the vector");
    assert!(forest_canopy::memo_path(root).is_file(), "persisted under _derived/");
    // the file answers bit for bit (a fresh process has only the file)
    let conn = rusqlite::Connection::open(forest_canopy::memo_path(root)).unwrap();
    let (text, blob): (String, Vec<u8>) = conn
        .query_row("SELECT text, vector FROM embed_memo WHERE model = ?1", [&model_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(text, "where are the tape archives kept");
    assert_eq!(floats(&blob), first);
    let again =
        forest_canopy::query_vector(root, "where are the tape archives kept", &model_id, MemoMode::Persist).unwrap();
    assert_eq!(again, first);
}

#[test]
fn a_query_embedded_in_the_background_ranks_and_memoises_as_in_the_foreground() {
    let Some(m) = model() else { return };
    let t = forest_root();
    let root = t.path();
    let err = forest_canopy::begin_dense(root, "zlib", 4, MemoMode::Persist).err().unwrap();
    assert_eq!(err, forest_canopy::Fallback::Absent);
    assert!(err.to_string().contains("no canopy"), "{err}");
    refresh(&forest_canopy::canopy_dir(root), rows(), &m, true).unwrap();
    let q = "layout and rendering of international text";
    // started, then joined (the Vine's locate runs its BM25 in between)
    let pending = forest_canopy::begin_dense(root, q, 4, MemoMode::Persist).unwrap();
    let ids = pending.finish().unwrap();
    assert_eq!(ids.first().map(String::as_str), Some("doc/pango"), "{ids:?}");
    assert_eq!(ids.len(), 4);
    // the worker writes the memo after answering: wait for it (5 s at most)
    let mut blob: Vec<u8> = vec![];
    for _ in 0..500 {
        let read = rusqlite::Connection::open(forest_canopy::memo_path(root)).and_then(|c| {
            c.query_row("SELECT vector FROM embed_memo WHERE text = ?1", [q], |r| r.get::<_, Vec<u8>>(0))
        });
        if let Ok(b) = read {
            blob = b;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!blob.is_empty(), "the background embedding was memoised");
    let stored = floats(&blob);
    let direct = m.embed(&[q.to_string()]).unwrap();
    assert!(cosine(&stored, &direct[0]) > 1.0 - 1e-6, "the background vector is the encoder's");
    // the memoised query now comes back without the model, same ranking
    let again = forest_canopy::begin_dense(root, q, 4, MemoMode::Persist).unwrap().finish().unwrap();
    assert_eq!(again, ids);
}
