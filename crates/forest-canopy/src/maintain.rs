//! Building and maintaining a canopy: only rows whose embedded text changed
//! (or that are new) are embedded again, ids no longer in the forest are
//! dropped, rows stay sorted by id, so a maintained canopy equals a rebuild.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::embed::Embedder;
use crate::error::{CanopyError, Result};
use crate::store::{mark_stale, stale_reason, Canopy};
use crate::stream::{OldRows, Rows, SortedRows, Writer};

/// What a build or refresh did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefreshReport {
    /// Vectors in the canopy now.
    pub nodes: usize,
    /// Texts embedded by this run.
    pub embedded: usize,
    /// Rows dropped (nodes gone).
    pub removed: usize,
    /// The model's identity.
    pub model: String,
    /// Vector width.
    pub dim: usize,
}

/// The text's hash as stored in `hashes.bin` (blake3, first 16 bytes).
pub fn text_hash(text: &str) -> [u8; 16] {
    let h = blake3::hash(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.as_bytes()[..16]);
    out
}

/// What the refresh plan reads of the old canopy.
pub trait OldIndex {
    /// Rows.
    fn rows(&self) -> usize;
    /// The bytes of row `r`'s id.
    fn id_at(&self, r: usize) -> &[u8];
    /// Row `r`'s text hash (all zero: unknown).
    fn hash_at(&self, r: usize) -> [u8; 16];
}

impl OldIndex for OldRows {
    fn rows(&self) -> usize {
        self.len()
    }
    fn id_at(&self, r: usize) -> &[u8] {
        self.id(r)
    }
    fn hash_at(&self, r: usize) -> [u8; 16] {
        self.hash(r)
    }
}

/// The pure plan of a refresh: walks the old canopy's ids beside the
/// wanted rows, both ascending, and says which old row each wanted row
/// reuses (same id, same known text hash) and how many old rows are gone.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Merge {
    cursor: usize,
    matched: usize,
}

impl Merge {
    /// The old row whose vector the wanted row `id` (text hash `h`)
    /// reuses, if any; `id`s must come in ascending order.
    pub fn step(&mut self, old: &dyn OldIndex, id: &[u8], h: &[u8; 16]) -> Option<usize> {
        while self.cursor < old.rows() && old.id_at(self.cursor) < id {
            self.cursor += 1;
        }
        if self.cursor >= old.rows() || old.id_at(self.cursor) != id {
            return None;
        }
        let r = self.cursor;
        self.cursor += 1;
        self.matched += 1;
        (old.hash_at(r) == *h && *h != [0; 16]).then_some(r)
    }

    /// Old rows no wanted row named, once every wanted row was stepped.
    pub fn removed(&self, old: &dyn OldIndex) -> usize {
        old.rows() - self.matched
    }
}

/// Bring the canopy in `dir` to `rows` (`(id, text)`, any order): a full
/// build when `full`, when there is none or when it was made by another
/// model; else only changed and new texts are embedded.
pub fn refresh(dir: &Path, rows: Vec<(String, String)>, embedder: &dyn Embedder, full: bool) -> Result<RefreshReport> {
    refresh_rows(dir, &SortedRows::new(rows), embedder, full, &|_| {})
}

/// Texts embedded per call at most; their rows wait to be written in order.
const EMBED_WINDOW: usize = 1024;
/// Rows held back at most (reused ones too) before they are written.
const HOLD: usize = 8192;

/// Where a row's vector comes from.
enum Src {
    /// The old canopy's row.
    Old(usize),
    /// This window's text.
    Fresh(usize),
}

/// One refresh under way: the only mutable state of the run.
struct Run<'a> {
    w: Writer,
    old: Option<OldRows>,
    embedder: &'a dyn Embedder,
    merge: Merge,
    embedded: usize,
    last: Option<String>,
    pending: Vec<(String, [u8; 16], Src)>,
    texts: Vec<String>,
    v: Vec<f32>,
}

impl Run<'_> {
    fn row(&mut self, id: String, text: String) -> Result<bool> {
        if self.last.as_ref().is_some_and(|l| *l >= id) {
            return Err(CanopyError::RowOrder(id));
        }
        let h = text_hash(&text);
        let reuse = self.old.as_ref().and_then(|o| self.merge.step(o, id.as_bytes(), &h));
        let src = match reuse {
            Some(r) => Src::Old(r),
            None => {
                self.texts.push(text);
                Src::Fresh(self.texts.len() - 1)
            }
        };
        self.last = Some(id.clone());
        self.pending.push((id, h, src));
        Ok(self.texts.len() >= EMBED_WINDOW || self.pending.len() >= HOLD)
    }

    /// Embed the window's texts and write its rows, in order.
    fn flush(&mut self) -> Result<()> {
        let fresh = if self.texts.is_empty() { vec![] } else { self.embedder.embed(&self.texts)? };
        if fresh.len() != self.texts.len() {
            return Err(CanopyError::Lost);
        }
        self.embedded += fresh.len();
        for (id, h, src) in self.pending.drain(..) {
            match (src, self.old.as_mut()) {
                (Src::Fresh(k), _) => self.w.push(id, h, &fresh[k])?,
                (Src::Old(r), Some(o)) => {
                    o.vector(r, &mut self.v)?;
                    self.w.push(id, h, &self.v)?;
                }
                (Src::Old(_), None) => return Err(CanopyError::Lost),
            }
        }
        self.texts.clear();
        Ok(())
    }
}

/// [`refresh`] streamed: rows come from `rows` in id order, are embedded
/// [`EMBED_WINDOW`] texts at a time (the rows whose id and text hash match
/// the old canopy's reuse its vector) and are written as they are done, so
/// memory holds a window, the ids and the hashes, never the layer.
/// `progress` hears the rows written so far after each window.
pub fn refresh_rows(
    dir: &Path,
    rows: &dyn Rows,
    embedder: &dyn Embedder,
    full: bool,
    progress: &dyn Fn(usize),
) -> Result<RefreshReport> {
    let old = if full { None } else { OldRows::open(dir, Some(embedder.model())) };
    refresh_with(dir, old, rows, embedder, progress)
}

/// [`refresh_rows`] into `dir`, reusing the rows of the canopy in
/// `old_dir` (of the same model) instead of `dir`'s own.
pub fn refresh_rows_from(
    old_dir: &Path,
    dir: &Path,
    rows: &dyn Rows,
    embedder: &dyn Embedder,
    progress: &dyn Fn(usize),
) -> Result<RefreshReport> {
    refresh_with(dir, OldRows::open(old_dir, Some(embedder.model())), rows, embedder, progress)
}

fn refresh_with(
    dir: &Path,
    old: Option<OldRows>,
    rows: &dyn Rows,
    embedder: &dyn Embedder,
    progress: &dyn Fn(usize),
) -> Result<RefreshReport> {
    let dim = old.as_ref().map_or(0, OldRows::dim);
    let mut run = Run {
        w: Writer::create(dir, embedder.model(), dim)?,
        old,
        embedder,
        merge: Merge::default(),
        embedded: 0,
        last: None,
        pending: vec![],
        texts: vec![],
        v: vec![],
    };
    rows.visit(&mut |id, text| {
        if run.row(id, text)? {
            run.flush()?;
            progress(run.w.len());
        }
        Ok(())
    })?;
    run.flush()?;
    let removed = run.old.as_ref().map_or(0, |o| run.merge.removed(o));
    let (nodes, embedded) = (run.w.len(), run.embedded);
    let model = embedder.model().to_string();
    tracing::info!(event = "canopy.refresh", nodes, embedded, removed, model = model.as_str());
    let dim = run.w.finish()?.dim;
    progress(nodes);
    Ok(RefreshReport { nodes, embedded, removed, model, dim })
}

/// How `rows` stand against the canopy in `dir`, from one pass over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Diff {
    /// The canopy holds exactly `rows` (same ids in order, same known text
    /// hashes); `false` when anything differs or cannot be told.
    pub holds: bool,
    /// Rows a refresh would embed (new ids and changed or unknown text
    /// hashes); every row when there is no canopy or no sidecars.
    pub to_embed: usize,
}

/// [`Diff`] of `rows` against the canopy in `dir`, embedding nothing.
pub fn diff(dir: &Path, rows: &dyn Rows) -> Result<Diff> {
    let old = OldRows::open(dir, None);
    let (mut merge, mut r, mut to_embed, mut same) = (Merge::default(), 0, 0, old.is_some());
    rows.visit(&mut |id, text| {
        let h = text_hash(&text);
        match &old {
            Some(o) => {
                same = same && r < o.len() && o.id(r) == id.as_bytes() && h != [0; 16] && o.hash(r) == h;
                to_embed += usize::from(merge.step(o, id.as_bytes(), &h).is_none());
            }
            None => to_embed += 1,
        }
        r += 1;
        Ok(())
    })?;
    Ok(Diff { holds: same && old.as_ref().is_some_and(|o| r == o.len()), to_embed })
}

/// A model to embed with, loaded only when needed (`None`: unset).
pub type Loader<'a> = &'a dyn Fn() -> Result<Option<Arc<dyn Embedder>>>;

/// What a writer calls after its commit: nothing without a canopy, nor when
/// no embedded text changed (links, bodies and landmarks are not scent) and
/// the canopy is neither stale nor built by an older fast-encoder recipe;
/// else the model is loaded and the changed texts
/// embedded, or, without a model, the canopy is marked stale. A model that
/// fails to load marks it stale too, and the error is returned.
pub fn maintain(dir: &Path, rows: &dyn Rows, load: Loader<'_>) -> Result<Option<RefreshReport>> {
    if !Canopy::exists(dir) {
        return Ok(None);
    }
    maintain_after(dir, rows, diff(dir, rows)?, load)
}

/// [`maintain`] of a canopy that exists, with the [`diff`] of `rows`
/// already taken (one pass over the rows, not two).
pub fn maintain_after(dir: &Path, rows: &dyn Rows, d: Diff, load: Loader<'_>) -> Result<Option<RefreshReport>> {
    let outdated = crate::store::read_meta(dir).is_some_and(|m| crate::encoder::outdated_encoder(&m.model));
    let stale = outdated || stale_reason(dir).is_some();
    let unchanged = d.holds;
    if unchanged && !stale {
        return Ok(None);
    }
    match load() {
        Ok(Some(e)) => Ok(Some(refresh_rows(dir, rows, e.as_ref(), false, &|_| {})?)),
        Ok(None) if unchanged => Ok(None),
        Ok(None) => {
            mark_stale(dir, &format!("scents changed while {} was unset", crate::embed::MODEL_VAR))?;
            Ok(None)
        }
        Err(e) => {
            mark_stale(dir, &format!("the embedding model did not load: {}", forest_model::error_chain(&e)))?;
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Old(Vec<(&'static str, [u8; 16])>);

    impl OldIndex for Old {
        fn rows(&self) -> usize {
            self.0.len()
        }
        fn id_at(&self, r: usize) -> &[u8] {
            self.0[r].0.as_bytes()
        }
        fn hash_at(&self, r: usize) -> [u8; 16] {
            self.0[r].1
        }
    }

    #[test]
    fn merge_reuses_same_text_embeds_changed_and_new_drops_gone() {
        let old = Old(vec![("a", text_hash("A")), ("b", text_hash("B")), ("c", text_hash("C"))]);
        let mut m = Merge::default();
        assert_eq!(m.step(&old, b"a", &text_hash("A")), Some(0));
        assert_eq!(m.step(&old, b"b", &text_hash("B2")), None);
        assert_eq!(m.step(&old, b"d", &text_hash("D")), None);
        assert_eq!(m.removed(&old), 1, "c is gone");
        // a row before every old id, and old ids skipped on the way
        let mut m = Merge::default();
        assert_eq!(m.step(&old, b"0", &text_hash("A")), None);
        assert_eq!(m.step(&old, b"c", &text_hash("C")), Some(2));
        assert_eq!(m.removed(&old), 2);
    }

    #[test]
    fn unknown_hashes_are_embedded_again() {
        let old = Old(vec![("a", [0; 16])]);
        let mut m = Merge::default();
        assert_eq!(m.step(&old, b"a", &[0; 16]), None);
        assert_eq!(m.removed(&old), 0);
    }

    /// A deterministic stand-in for the model (the real one is tested in
    /// tests/forest_canopy.rs): a unit vector from the text's hash; it
    /// counts its calls and fails from call `fail_at` on.
    struct HashEmbedder {
        calls: std::cell::Cell<usize>,
        fail_at: usize,
    }

    impl Embedder for HashEmbedder {
        fn model(&self) -> &str {
            "hash@1"
        }
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
            self.calls.set(self.calls.get() + 1);
            if self.calls.get() >= self.fail_at {
                return Err(CanopyError::Tokenizer("injected".into()));
            }
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v: Vec<f32> = text_hash(t).iter().map(|&b| f32::from(b) - 127.5).collect();
                    crate::embed::normalize(&mut v);
                    v
                })
                .collect())
        }
    }

    fn hasher(fail_at: usize) -> HashEmbedder {
        HashEmbedder { calls: std::cell::Cell::new(0), fail_at }
    }

    fn rows(n: usize, version: &str) -> Vec<(String, String)> {
        (0..n).map(|i| (format!("n/{i:05}"), format!("node {i} {version}"))).collect()
    }

    /// Every file of a canopy but the two that carry the build time.
    fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !["index.json", "forest.json"].contains(&p.file_name().unwrap().to_str().unwrap()))
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_streamed_refresh_over_many_windows_equals_a_rebuild() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        let e = hasher(usize::MAX);
        // 3 embedding windows and more rows than are held back at once
        let first = refresh(&a, rows(HOLD + 1500, "v1"), &e, true).unwrap();
        assert_eq!((first.nodes, first.embedded, first.removed), (HOLD + 1500, HOLD + 1500, 0));
        // change every 7th text, drop every 11th row, add rows past the end
        let mut next: Vec<_> = rows(HOLD + 1500, "v1")
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % 11 != 5)
            .map(|(i, (id, t))| (id, if i % 7 == 0 { format!("{t} changed") } else { t }))
            .collect();
        next.extend((0..40).map(|i| (format!("z/{i}"), format!("new {i}"))));
        let changed = next.iter().filter(|(_, t)| t.ends_with("changed")).count();
        let gone = (0..HOLD + 1500).filter(|i| i % 11 == 5).count();
        let calls = e.calls.get();
        let rep = refresh(&a, next.clone(), &e, false).unwrap();
        assert_eq!((rep.nodes, rep.embedded, rep.removed), (next.len(), changed + 40, gone));
        assert_eq!(e.calls.get() - calls, (changed + 40).div_ceil(EMBED_WINDOW), "only changed and new texts");
        refresh(&b, next, &e, true).unwrap();
        assert_eq!(files(&a), files(&b), "the maintained canopy is the rebuild, byte for byte");
        let c = Canopy::load(&a).unwrap().unwrap();
        assert!(c.ids.windows(2).all(|w| w[0] < w[1]), "rows sorted by id");
    }

    #[test]
    fn a_refresh_that_fails_midway_leaves_the_canopy_and_no_temporary_file() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("canopy");
        refresh(&d, rows(3000, "v1"), &hasher(usize::MAX), true).unwrap();
        let before = files(&d);
        let index = std::fs::read(d.join("index.json")).unwrap();
        // the second window's embedding fails
        let e = refresh(&d, rows(3000, "v2"), &hasher(2), false).unwrap_err();
        assert_eq!(e.code(), "E_EMBED");
        assert_eq!(files(&d), before);
        assert_eq!(std::fs::read(d.join("index.json")).unwrap(), index);
        // what a build killed by a signal leaves (its process is gone) goes
        // with the next write
        let orphan = d.join(".vectors.f32.99999999.0.tmp");
        std::fs::write(&orphan, b"half a build").unwrap();
        refresh(&d, rows(3000, "v2"), &hasher(usize::MAX), false).unwrap();
        assert!(!orphan.exists());
    }

    /// The stand-in under another identity.
    struct Named(String);

    impl Embedder for Named {
        fn model(&self) -> &str {
            &self.0
        }
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
            hasher(usize::MAX).embed(texts)
        }
    }

    #[test]
    fn a_canopy_of_an_older_fast_recipe_is_built_again_though_no_scent_changed() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("canopy");
        let r = SortedRows::new(rows(50, "v1"));
        refresh_rows(&d, &r, &Named("m@1+static1".into()), true, &|_| {}).unwrap();
        let current = format!("m@1{}", crate::fast::STATIC_SUFFIX);
        let load = || -> Result<Option<Arc<dyn Embedder>>> { Ok(Some(Arc::new(Named(current.clone())))) };
        let rep = maintain(&d, &r, &load).unwrap().expect("the old recipe's canopy is rebuilt");
        assert_eq!((rep.nodes, rep.embedded, rep.model.as_str()), (50, 50, current.as_str()));
        assert!(maintain(&d, &r, &load).unwrap().is_none(), "a current canopy with no change is left alone");
    }

    #[test]
    fn rows_out_of_id_order_are_one_error() {
        struct Unsorted;
        impl Rows for Unsorted {
            fn visit(&self, f: &mut dyn FnMut(String, String) -> Result<()>) -> Result<()> {
                f("b".into(), "B".into())?;
                f("a".into(), "A".into())
            }
        }
        let t = tempfile::tempdir().unwrap();
        let e = refresh_rows(t.path(), &Unsorted, &hasher(usize::MAX), true, &|_| {}).unwrap_err();
        assert!(e.to_string().contains("out of id order at 'a'"), "{e}");
        assert!(!Canopy::exists(t.path()));
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "no temporary file left");
    }
}
