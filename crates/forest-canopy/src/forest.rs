//! A forest's canopy: the `(id, text)` rows come from the catalog (every
//! node, branches and leaves, as the reference embeds), the model from
//! `FOREST_EMBED_MODEL`. What writers and the CLI call.

use std::path::Path;
use std::sync::Arc;

use forest_catalog::Catalog;

use crate::embed::Embedder;
use crate::encoder::{identity_for, shared_encoder, Encoder};
use crate::error::{CanopyError, Result};
use crate::maintain::{diff, maintain_after, refresh_rows, refresh_rows_from, RefreshReport};
use crate::memo::{collapse, recall, remember, MemoMode};
use crate::search::open_shared;
use crate::store::{canopy_dir, kept_full_dir, stale_reason};
use crate::stream::Rows;
use crate::text::node_text;

/// Rows read from the catalog per query: each page is its own short read,
/// so a build that embeds for hours holds no read transaction open.
const PAGE: usize = 4096;

/// Every catalog node's id and the text the encoder embeds of it
/// ([`node_text`]), in id order, read a page at a time (`WHERE id > last
/// ORDER BY id LIMIT PAGE`).
pub struct CatalogRows<'a>(pub &'a Catalog, pub Encoder);

impl Rows for CatalogRows<'_> {
    fn visit(&self, f: &mut dyn FnMut(String, String) -> Result<()>) -> Result<()> {
        let mut last = String::new();
        loop {
            let page = self.0.scent_page(&last, PAGE).map_err(CanopyError::Catalog)?;
            let n = page.len();
            for r in page {
                last.clone_from(&r.id);
                f(r.id, node_text(self.1, &r.title, &r.summary, &r.aliases, &r.tags, &r.lead))?;
            }
            if n < PAGE {
                return Ok(());
            }
        }
    }
}

/// Nodes in the catalog (what a build will embed).
pub fn catalog_len(catalog: &Catalog) -> Result<usize> {
    let n = catalog.count_nodes().map_err(CanopyError::Catalog)?;
    Ok(n as usize)
}

/// `forest canopy build`: embed every node anew with `embedder`, streamed
/// (see [`refresh_rows`]); `progress` hears the rows written so far.
pub fn build_forest(
    forest: &Path,
    catalog: &Catalog,
    embedder: &dyn Embedder,
    progress: &dyn Fn(usize),
) -> Result<RefreshReport> {
    let kind = Encoder::of_model(embedder.model());
    let dir = canopy_dir(forest);
    if kind == Encoder::Full {
        // (rows a writer set aside for the Ranger's upgrade are of no use now)
        crate::store::drop_kept(&kept_full_dir(&dir));
    }
    refresh_rows(&dir, &CatalogRows(catalog, kind), embedder, true, progress)
}

/// After a writer's commit: nothing when the forest has no canopy or no
/// scent changed; else re-embed the changed scents with the model
/// `FOREST_EMBED_MODEL` names (loaded once per process), or mark the canopy
/// stale when it is unset. A model that fails to load, or a refresh that
/// fails, also marks it stale, and the error is returned.
pub fn maintain_forest(forest: &Path, catalog: &Catalog) -> Result<Option<RefreshReport>> {
    let dir = canopy_dir(forest);
    if !crate::store::Canopy::exists(&dir) {
        return Ok(None);
    }
    let out = refresh_within_budget(&dir, catalog);
    if let Err(e) = &out {
        // (a model that did not load has marked it already)
        crate::store::mark_stale(&dir, &format!("the refresh failed: {}", forest_model::error_chain(e)))?;
    }
    out
}

/// [`maintain_forest`]'s refresh: the canopy keeps the encoder it was
/// built with, the full model within its budget (unless the operator asked
/// for it in every run); one pass over the rows decides.
fn refresh_within_budget(dir: &Path, catalog: &Catalog) -> Result<Option<RefreshReport>> {
    let kind = crate::store::read_meta(dir).map_or(Encoder::Fast, |m| Encoder::of_model(&m.model));
    let rows = CatalogRows(catalog, kind);
    let d = diff(dir, &rows)?;
    if kind == Encoder::Full && !matches!(Encoder::from_env(), Ok(Encoder::Full)) && d.to_embed > full_refresh_max() {
        // (a forest within the in-run limit is the full model's whatever changed)
        let max = if catalog_len(catalog)? <= in_run_full_max() { usize::MAX } else { full_refresh_max() };
        if let Some(r) = refresh_beyond_budget(dir, catalog, d.to_embed, max)? {
            return Ok(Some(r));
        }
    }
    let load = || -> Result<Option<Arc<dyn Embedder>>> { Ok(shared_encoder(kind)?.map(|e| e as Arc<dyn Embedder>)) };
    maintain_after(dir, &rows, d, &load)
}

/// Rows a writer embeds with the full model after its commit at most
/// (`FOREST_CANOPY_FULL_REFRESH_MAX`, default [`FULL_REFRESH_MAX`]), unless
/// `FOREST_EMBED_ENCODER=full` asks for the full model in every run.
pub const FULL_REFRESH_VAR: &str = "FOREST_CANOPY_FULL_REFRESH_MAX";
/// About half a minute of the full model on 2 cores (~75 scents/s).
pub const FULL_REFRESH_MAX: usize = 2000;

/// Nodes a forest may have for an ingest run (adopt, sync) to bring its
/// canopy to the full model itself ([`upgrade_in_run`]) instead of leaving
/// that to the Ranger's night (`FOREST_CANOPY_FULL_IN_RUN_MAX`, default
/// [`IN_RUN_FULL_MAX`]; 0: never). `FOREST_EMBED_ENCODER=fast` also says
/// never.
pub const IN_RUN_FULL_VAR: &str = "FOREST_CANOPY_FULL_IN_RUN_MAX";
/// About two minutes of the full model on 2 cores. Its vectors find more
/// on every real question set (`usd` R@5 0.801 against 0.753 after the
/// adopt), which is worth a longer first adopt of a small drive (`usd`'s
/// 5,561 nodes: 78.2 s against 9.2 s); a forest run without the Ranger (a
/// one-shot adopt in CI) has them too (docs/decisions/locate-one-engine.md).
pub const IN_RUN_FULL_MAX: usize = 10_000;

/// The refresh budget; a value that is not a number is one warning per
/// process (a server refreshes after every write) and the default.
fn full_refresh_max() -> usize {
    static WARNED: std::sync::Once = std::sync::Once::new();
    env_limit(FULL_REFRESH_VAR, FULL_REFRESH_MAX, &WARNED)
}

/// The in-run limit (0 when the operator asked for the fast encoder).
fn in_run_full_max() -> usize {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if std::env::var(crate::encoder::ENCODER_VAR).is_ok_and(|v| v.trim() == "fast") {
        return 0;
    }
    env_limit(IN_RUN_FULL_VAR, IN_RUN_FULL_MAX, &WARNED)
}

/// A count from `var`, else `default` (one warning per process when the
/// value is not a number).
fn env_limit(var: &str, default: usize, warned: &'static std::sync::Once) -> usize {
    match std::env::var(var) {
        Err(_) => default,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            warned.call_once(|| {
                let got: String = v.chars().take(40).collect();
                tracing::warn!(event = "canopy.bad_budget", var, got = %got, default,
                    "expects a number of rows; the default is used");
            });
            default
        }),
    }
}

/// A full-model canopy whose refresh would embed `n` rows, more than `max`
/// (a large sync), is built again by the fast encoder, at drive speed, so
/// a writer's run never waits on the transformer for a whole drive; the
/// Ranger's night tier brings the full model back. `None`: within the
/// budget (or no fast encoder to fall back to), refresh as usual.
fn refresh_beyond_budget(dir: &Path, catalog: &Catalog, n: usize, max: usize) -> Result<Option<RefreshReport>> {
    if n <= max {
        return Ok(None);
    }
    let Some(e) = shared_encoder(Encoder::Fast)? else { return Ok(None) };
    // the full rows stay beside it for the Ranger's upgrade to reuse
    let kept = crate::store::keep_canopy(dir, &kept_full_dir(dir));
    tracing::info!(target: "forest_canopy", event = "canopy.fast_tier", to_embed = n, max, kept,
        "over the full model's budget");
    rebuild(dir, catalog, e.as_ref(), "canopy.built").map(Some)
}

/// After an ingest run's commits: a forest with a canopy keeps it current
/// ([`maintain_forest`]); one without gets one, streamed, when
/// `FOREST_EMBED_MODEL` names a model, embedded by the encoder
/// `FOREST_EMBED_ENCODER` chooses (the fast one unless told otherwise), so
/// an adopt leaves a canopy with no extra command (`progress` hears the
/// rows of a new one written so far out of the total). Without the model
/// nothing happens.
pub fn ensure_forest(
    forest: &Path,
    catalog: &Catalog,
    progress: &dyn Fn(usize, usize),
) -> Result<Option<RefreshReport>> {
    let dir = canopy_dir(forest);
    if crate::store::Canopy::exists(&dir) {
        return maintain_forest(forest, catalog);
    }
    let Some(e) = shared_encoder(Encoder::from_env()?)? else { return Ok(None) };
    // a new canopy (a first adopt) is every row: its progress is worth drawing
    let n = catalog_len(catalog)?;
    progress(0, n);
    rebuild_reusing(None, &dir, catalog, e.as_ref(), "canopy.built", &|done| progress(done, n)).map(Some)
}

/// Embed every catalog row anew into `dir` with `e` (streamed), and log it
/// under `event`.
fn rebuild(dir: &Path, catalog: &Catalog, e: &dyn Embedder, event: &str) -> Result<RefreshReport> {
    rebuild_reusing(None, dir, catalog, e, event, &|_| {})
}

/// [`rebuild`], reusing the rows of the canopy in `old` (same model) whose
/// text has not changed.
fn rebuild_reusing(
    old: Option<&Path>,
    dir: &Path,
    catalog: &Catalog,
    e: &dyn Embedder,
    event: &str,
    progress: &dyn Fn(usize),
) -> Result<RefreshReport> {
    let t0 = std::time::Instant::now();
    let rows = CatalogRows(catalog, Encoder::of_model(e.model()));
    let r = match old {
        None => refresh_rows(dir, &rows, e, true, progress)?,
        Some(old) => refresh_rows_from(old, dir, &rows, e, progress)?,
    };
    let ms = t0.elapsed().as_millis() as u64;
    tracing::info!(target: "forest_canopy", event, nodes = r.nodes, embedded = r.embedded, model = %r.model, ms);
    Ok(r)
}

/// The canopy's second tier (a Ranger run): a current canopy the fast
/// encoder built is rebuilt, streamed, with the full model when the forest
/// has at most `max_nodes` nodes and `FOREST_EMBED_MODEL` names the model;
/// the full model's rows a writer set aside ([`kept_full_dir`]) are reused
/// where their text has not changed. `None` when there is nothing to do. A
/// build that fails leaves the fast canopy as it was.
pub fn upgrade_forest(forest: &Path, catalog: &Catalog, max_nodes: usize) -> Result<Option<RefreshReport>> {
    upgrade_with(forest, catalog, max_nodes, &|_| {})
}

/// The second tier's long part, for a caller that does not hold the writer
/// lock (a Ranger run before it takes the lock): when [`upgrade_forest`]
/// would rebuild the forest's canopy, embed every row with the full model
/// into a staging directory beside it (reusing rows a writer set aside)
/// and put the result where [`upgrade_forest`] reuses rows from
/// ([`kept_full_dir`]). The upgrade under the lock then embeds only what
/// writers changed meanwhile. `catalog` may be read-only; rows read while a
/// writer commits may be of either side of its change (the upgrade's text
/// hashes sort them out). `None` when there is nothing to stage.
pub fn stage_upgrade(forest: &Path, catalog: &Catalog, max_nodes: usize) -> Result<Option<RefreshReport>> {
    let dir = canopy_dir(forest);
    if !upgrade_due(&dir, catalog, max_nodes)? || stale_reason(&dir).is_some() {
        return Ok(None);
    }
    let Some(e) = shared_encoder(Encoder::Full)? else { return Ok(None) };
    let kept = kept_full_dir(&dir);
    // a staging tree of a Ranger killed mid-way goes now (a live one's stays)
    if let Some(derived) = dir.parent() {
        forest_fs::sweep_orphan_temps(derived);
    }
    let stage = forest_fs::temp_path_for(&kept);
    let r = rebuild_reusing(Some(&kept), &stage, catalog, e.as_ref(), "canopy.staged", &|_| {});
    let placed = r.is_ok() && {
        crate::store::drop_kept(&kept);
        std::fs::rename(&stage, &kept).is_ok()
    };
    if !placed {
        crate::store::drop_kept(&stage);
    }
    r.map(Some)
}

/// The rows of the canopy in `dir` when the fast encoder built it.
fn fast_rows(dir: &Path) -> Option<usize> {
    crate::store::read_meta(dir).filter(|m| Encoder::of_model(&m.model) == Encoder::Fast).map(|m| m.rows)
}

/// Whether the second tier rebuilds the canopy in `dir`: a fast one, of a
/// forest of at most `max_nodes` nodes (0: never).
fn upgrade_due(dir: &Path, catalog: &Catalog, max_nodes: usize) -> Result<bool> {
    Ok(max_nodes > 0 && fast_rows(dir).is_some() && catalog_len(catalog)? <= max_nodes)
}

/// [`upgrade_forest`] with progress (rows written so far).
fn upgrade_with(
    forest: &Path,
    catalog: &Catalog,
    max_nodes: usize,
    progress: &dyn Fn(usize),
) -> Result<Option<RefreshReport>> {
    let dir = canopy_dir(forest);
    let kept = kept_full_dir(&dir);
    if !upgrade_due(&dir, catalog, max_nodes)? {
        crate::store::drop_kept(&kept);
        return Ok(None);
    }
    if stale_reason(&dir).is_some() {
        return Ok(None);
    }
    let Some(e) = shared_encoder(Encoder::Full)? else { return Ok(None) };
    progress(0);
    let r = rebuild_reusing(Some(&kept), &dir, catalog, e.as_ref(), "canopy.upgraded", progress);
    // used or not (a damaged set fails once, then the next run embeds all)
    crate::store::drop_kept(&kept);
    r.map(Some)
}

/// The full tier inside an ingest run: after the run's canopy step, a fast
/// canopy of a forest of at most `FOREST_CANOPY_FULL_IN_RUN_MAX` nodes is
/// rebuilt with the full model now ([`upgrade_forest`], reusing rows a
/// writer set aside), so a small drive searches with the better vectors
/// from its first adopt; a larger one waits for the Ranger, and its
/// set-aside rows stay for it. `progress` hears the rows written so far
/// out of the total. `None` when there is nothing to do.
pub fn upgrade_in_run(
    forest: &Path,
    catalog: &Catalog,
    progress: &dyn Fn(usize, usize),
) -> Result<Option<RefreshReport>> {
    // the canopy's own row count (it is current after the run's canopy
    // step): no COUNT over the catalog after every sync of a large forest
    let max = in_run_full_max();
    let Some(n) = fast_rows(&canopy_dir(forest)).filter(|&n| max > 0 && n <= max) else { return Ok(None) };
    upgrade_with(forest, catalog, max, &|done| progress(done, n))
}

/// The vector ranking for `query` (`depth` deep), or why there is none: a
/// forest without a canopy, a stale one, an unset or other model all fall
/// back to BM25 with a note. The query's vector comes from the memo when
/// it is there (`memo` says whether the forest's memo file may be used),
/// else from the model, loaded only then.
pub fn dense_ranking(
    root: &Path,
    query: &str,
    depth: usize,
    memo: MemoMode,
) -> std::result::Result<Vec<String>, Fallback> {
    Ok(dense_scored(root, query, depth, memo)?.into_iter().map(|(id, _)| id).collect())
}

/// [`dense_ranking`] with each id's cosine similarity to the query.
pub fn dense_scored(
    root: &Path,
    query: &str,
    depth: usize,
    memo: MemoMode,
) -> std::result::Result<Vec<(String, f64)>, Fallback> {
    let (searcher, model) = usable(root)?;
    let q = query_vector(root, query, &model, memo).map_err(|e| Fallback::Unusable(forest_model::error_chain(&e)))?;
    Ok(searcher.search(&q, depth))
}

/// A vector ranking under way: the query's embedding runs on the calling
/// thread's long-lived one-thread pool ([`crate::embed::embed_spawned`])
/// while the caller ranks by BM25; [`DenseQuery::finish`] joins it and
/// searches; the worker remembers the vector after answering. A served
/// forest overlaps the two without a thread per query.
pub struct DenseQuery {
    searcher: Arc<crate::search::Searcher>,
    vector: Pending,
    depth: usize,
}

enum Pending {
    Ready(Vec<f32>),
    Embedding(crate::embed::PendingVector),
}

/// Why a forest's canopy cannot answer a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// The forest has no canopy (never built, or empty).
    Absent,
    /// It has one, but it cannot answer now (stale, other model, the model
    /// unset or unloadable): the reason, for a "BM25 only" note.
    Unusable(String),
}

impl std::error::Error for Fallback {}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fallback::Absent => f.write_str("no canopy (forest canopy build)"),
            Fallback::Unusable(why) => f.write_str(why),
        }
    }
}

/// Start [`dense_ranking`] for `query`: the checks (canopy, staleness,
/// model identity) and the memo are read now, so the same fallbacks come
/// back at once; the embedding, when needed, starts in the background.
pub fn begin_dense(
    root: &Path,
    query: &str,
    depth: usize,
    memo: MemoMode,
) -> std::result::Result<DenseQuery, Fallback> {
    let (searcher, model) = usable(root)?;
    let text = collapse(query);
    let vector = match recall(root, memo, &model, &text) {
        Some(v) => Pending::Ready(v),
        None => {
            let e = shared_encoder(Encoder::of_model(&model))
                .map_err(|e| Fallback::Unusable(forest_model::error_chain(&e)))?
                .ok_or_else(|| Fallback::Unusable(format!("{} is unset", crate::embed::MODEL_VAR)))?;
            // remembered by the worker after it answers (off the query's path)
            let keep = (e.model() == model).then(|| (root.to_path_buf(), model, text.clone()));
            let then = move |v: &[f32]| {
                if let Some((root, model, text)) = keep {
                    remember(&root, memo, &model, &text, v);
                }
            };
            Pending::Embedding(crate::embed::embed_spawned(e, text, then))
        }
    };
    Ok(DenseQuery { searcher, vector, depth })
}

impl DenseQuery {
    /// The ranked ids, best first (as [`dense_ranking`]).
    pub fn finish(self) -> std::result::Result<Vec<String>, Fallback> {
        Ok(self.finish_scored()?.into_iter().map(|(id, _)| id).collect())
    }

    /// The ranked ids with their cosine similarity to the query.
    pub fn finish_scored(self) -> std::result::Result<Vec<(String, f64)>, Fallback> {
        let q = match self.vector {
            Pending::Ready(v) => v,
            Pending::Embedding(job) => job.wait().map_err(|e| Fallback::Unusable(forest_model::error_chain(&e)))?,
        };
        Ok(self.searcher.search(&q, self.depth))
    }

    /// What `locate`'s vector hook answers for a query begun with
    /// [`begin_dense`]: the scored ranking; `None` (BM25 alone, no note)
    /// when the forest has no canopy and the caller did not ask for one by
    /// name (`explicit`); else the reason, which `locate` turns into its
    /// "BM25 only" note.
    pub fn answer(
        begun: std::result::Result<DenseQuery, Fallback>,
        explicit: bool,
    ) -> Option<forest_catalog::DenseAnswer> {
        match begun {
            Ok(q) => {
                let bm25_weight = Encoder::of_model(q.searcher.model()).blend_bm25_weight();
                Some(q.finish_scored().map(|ranked| forest_catalog::Dense { ranked, bm25_weight }).map_err(Into::into))
            }
            Err(Fallback::Absent) if !explicit => None,
            Err(why) => Some(Err(why.into())),
        }
    }
}

/// The forest's canopy searcher and the model identity, when the canopy
/// can answer (else why not).
fn usable(root: &Path) -> std::result::Result<(Arc<crate::search::Searcher>, String), Fallback> {
    let dir = canopy_dir(root);
    let searcher = match open_shared(&dir) {
        Ok(Some(s)) if !s.is_empty() => s,
        Ok(_) => return Err(Fallback::Absent),
        Err(e) => return Err(Fallback::Unusable(forest_model::error_chain(&e))),
    };
    if let Some(r) = stale_reason(&dir) {
        return Err(Fallback::Unusable(format!("the canopy is stale ({r}); forest canopy build")));
    }
    let model = match identity_for(Encoder::of_model(searcher.model())) {
        Ok(Some(m)) => m,
        Ok(None) => return Err(Fallback::Unusable(format!("{} is unset", crate::embed::MODEL_VAR))),
        Err(e) => return Err(Fallback::Unusable(forest_model::error_chain(&e))),
    };
    if crate::encoder::outdated_encoder(searcher.model()) {
        return Err(Fallback::Unusable(format!(
            "the canopy was built by an older fast encoder ({}); the next adopt or sync builds it again, or forest canopy build",
            searcher.model()
        )));
    }
    if model != searcher.model() {
        return Err(Fallback::Unusable(format!(
            "the canopy was built with {}, the model is {model}",
            searcher.model()
        )));
    }
    Ok((searcher, model))
}

/// The unit vector of `query` under `model` (the identity of the model
/// `FOREST_EMBED_MODEL` names): memoised, or embedded (the whitespace-
/// collapsed text, which tokenises as the raw one) and remembered.
pub fn query_vector(root: &Path, query: &str, model: &str, memo: MemoMode) -> Result<Vec<f32>> {
    let text = collapse(query);
    if let Some(v) = recall(root, memo, model, &text) {
        return Ok(v);
    }
    let e = shared_encoder(Encoder::of_model(model))?.ok_or_else(|| CanopyError::Model {
        dir: Default::default(),
        what: format!("{} is unset", crate::embed::MODEL_VAR),
    })?;
    let v = e.embed(std::slice::from_ref(&text))?.pop().unwrap_or_default();
    if e.model() == model {
        remember(root, memo, model, &text, &v);
    }
    Ok(v)
}
