//! `locate` (dialect §7.2–§7.3): scent-weighted BM25 × heat over the catalog.

use coverage_re::coverage_parts;
use forest_model::Kind;
use rusqlite::{params, OptionalExtension};
use schemars::JsonSchema;
use serde::Serialize;

use crate::fusion::{blend_fuse, rrf_fuse, Dense, Fusion};
use crate::pyjson::{dumps, round4};
use crate::query::sanitize_query;
use crate::window::Window;
use crate::{Catalog, CatalogError, Result, Trails};

/// Token budget of a `locate` payload.
pub const LOCATE_BUDGET: usize = 800;

/// Hint of an empty result: names `sniff`, never echoes the query.
const EMPTY_HINT: &str = "No curated scent matched. locate searches titles, aliases, tags and \
     summaries only — sniff searches the bodies, where an exact term may be waiting.";

/// Which kinds of node `locate` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Branches and notes.
    All,
    /// Branches (`_index` nodes) only.
    Branches,
    /// Leaves only (`bananas` is the deprecated spelling).
    Notes,
}

impl Scope {
    /// Parse a wire scope; anything outside {all, branches, notes} (and the
    /// `bananas` alias) is an `E_SCHEMA` error naming the accepted set.
    pub fn parse(s: &str) -> Result<Scope> {
        match s {
            "all" => Ok(Scope::All),
            "branches" => Ok(Scope::Branches),
            "notes" | "bananas" => Ok(Scope::Notes),
            other => {
                Err(CatalogError::Schema(format!("scope expects one of ['all', 'branches', 'notes'], got '{other}'")))
            }
        }
    }

    fn admits(self, kind: Kind) -> bool {
        match self {
            Scope::All => true,
            Scope::Branches => kind == Kind::Branch,
            Scope::Notes => kind == Kind::Banana,
        }
    }
}

/// Branch coverage: counts when the string parses, else the raw string.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Coverage {
    /// `"N bananas, M sub-branches"` as numbers.
    Counts {
        /// Leaves under the branch.
        notes: i64,
        /// Sub-branches.
        branches: i64,
    },
    /// Anything else, verbatim.
    Raw(String),
}

/// One `locate` hit.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LocateItem {
    /// Node id.
    pub id: String,
    /// `note` or `branch` (wire spelling).
    pub kind: String,
    /// Node type.
    #[serde(rename = "type")]
    pub node_type: String,
    /// Title.
    pub title: String,
    /// Summary (the scent).
    pub summary: String,
    /// Index ids from the root down to the node.
    pub trail: Vec<String>,
    /// strength × (1 + α·heat), rounded to 4 decimals.
    pub score: f64,
    /// Ranking heat (persistent + 0.5·session).
    pub heat: f64,
    /// Body size estimate.
    pub body_tokens: i64,
    /// Branch coverage (branches with a coverage string only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// H2/H3 outline, when requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline: Option<Vec<String>>,
}

/// The `locate` payload.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LocateResult {
    /// Hits, best first.
    pub results: Vec<LocateItem>,
    /// More candidates survived filtering than `k`, or the budget cut.
    pub truncated: bool,
    /// Why a hybrid ranking fell back to BM25 ("BM25 only: ...").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Empty results only: catalog nodes searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched: Option<i64>,
    /// Empty results only: where else to look.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Parse `"N bananas, M sub-branches"` (singular forms and a trailing `.`
/// accepted, surrounding whitespace ignored).
pub fn parse_coverage(text: &str) -> Option<(i64, i64)> {
    coverage_parts(text.trim())
}

mod coverage_re {
    /// Hand-rolled matcher of `^(\d+) bananas?, (\d+) sub-branch(?:es)?\.?$`.
    pub(super) fn coverage_parts(s: &str) -> Option<(i64, i64)> {
        let (n, rest) = digits(s)?;
        let rest = rest.strip_prefix(" bananas, ").or_else(|| rest.strip_prefix(" banana, "))?;
        let (m, rest) = digits(rest)?;
        let rest = rest.strip_prefix(" sub-branches").or_else(|| rest.strip_prefix(" sub-branch"))?;
        match rest {
            "" | "." => Some((n, m)),
            _ => None,
        }
    }

    fn digits(s: &str) -> Option<(i64, &str)> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        if end == 0 {
            return None;
        }
        Some((s[..end].parse().ok()?, &s[end..]))
    }
}

struct Hit {
    id: String,
    kind: Kind,
    node_type: String,
    title: String,
    summary: String,
    trail: String,
    body_tokens: i64,
    coverage: Option<String>,
    outline: String,
    rank: f64,
}

/// A `locate` question, typed: the one query the CLI, the Vine (MCP), the
/// navigator and `forest bench` all hand to [`locate`].
#[derive(Debug, Clone, PartialEq)]
pub struct LocateQuery {
    /// The question, as the caller wrote it.
    pub text: String,
    /// Results to keep (default 5).
    pub k: usize,
    /// Which kinds of node.
    pub scope: Scope,
    /// Keep only this node type.
    pub type_filter: Option<String>,
    /// Keep only nodes dated inside this window.
    pub window: Option<Window>,
    /// Add each result's outline (`include=["outline"]`).
    pub include_outline: bool,
    /// Pheromone weight α (default 0.3; 0 disables heat).
    pub alpha: f64,
    /// Rank every BM25 candidate instead of the top `max(5k, 25)`: for a
    /// caller whose [`LocateHooks::admit`] hides nodes (a scoped token, a
    /// language filter), so `k` visible hits survive.
    pub deep: bool,
    /// How BM25 and the canopy combine (the caller reads the canopy).
    pub fusion: Fusion,
}

impl Default for LocateQuery {
    fn default() -> Self {
        LocateQuery {
            text: String::new(),
            k: 5,
            scope: Scope::All,
            type_filter: None,
            window: None,
            include_outline: false,
            alpha: 0.3,
            deep: false,
            fusion: Fusion::default(),
        }
    }
}

impl LocateQuery {
    /// How deep each ranking goes: `max(5k, 25)` (navigator §4) for the
    /// reference's arithmetic and BM25, `max(5k, 50)` for the blend, whose
    /// [`folders_first`] order needs candidates from other folders to bring
    /// up (on the tuning halves of the real sets: `usd` R@5 0.711 at 25,
    /// 0.735 at 50; docs/decisions/locate-one-engine.md).
    pub fn depth(&self) -> usize {
        let floor = if self.fusion == Fusion::Blend { 50 } else { 25 };
        (self.k * 5).max(floor)
    }
}

/// What a candidate filter says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Keep the node.
    Yes,
    /// Leave it out.
    No,
    /// Stop ranking (the caller's deadline passed): [`locate`] returns
    /// [`CatalogError::Stopped`].
    Stop,
}

/// Ranking heat by id.
pub type HeatMap = std::collections::HashMap<String, f64>;

/// What [`locate`] asks its caller for while it ranks.
pub struct LocateHooks<'a> {
    /// Ranking heat of ids (persistent + the caller's session).
    pub heat: &'a dyn Fn(&[String]) -> Result<HeatMap>,
    /// Whether a candidate may be shown (language, visibility, deadline).
    pub admit: &'a mut dyn FnMut(&str) -> Admit,
}

/// The vector half of a hybrid `locate`, as the canopy answers it: ids best
/// first with their cosine similarity, or why there is none (the answer
/// then says "BM25 only: why").
pub type DenseAnswer = std::result::Result<Dense, Box<dyn std::error::Error + Send + Sync>>;

/// Rank catalog nodes for `q` (dialect §7.3, with our defaults): expand
/// the query (plurals, inflections, identifiers), take the BM25 top
/// `max(5k, 25)` (every candidate when `q.deep`) inside the window, fuse
/// with the vector ranking `dense` returns (called once BM25 is in, so a
/// caller embeds the query meanwhile; `None`: BM25 alone, silently), apply
/// scope, type and `admit`, score = strength × (1 + α·heat), keep `k`.
/// No token budget is applied: see [`fit_budget`].
pub fn locate(
    catalog: &Catalog,
    q: &LocateQuery,
    hooks: LocateHooks<'_>,
    dense: impl FnOnce() -> Option<DenseAnswer>,
) -> Result<LocateResult> {
    let limit = if q.deep { DEEP_LIMIT } else { q.depth() };
    let expanded = crate::expand::expand_query(&q.text, &|w: &str| is_rare(catalog, w));
    let hits = match (sanitize_query(&expanded), &q.window) {
        (None, _) => vec![],
        (Some(expr), Some(w)) => windowed_hits(catalog, &expr, limit, w)?,
        (Some(expr), None) => match crate::topk::search(catalog.connection(), &expanded, limit)? {
            Some(ranked) => hits_by_rowid(catalog, &ranked)?,
            None => fetch_hits(catalog, &expr, limit)?,
        },
    };
    let (strengths, note, blended) = match dense() {
        None => (bm25_strengths(hits), None, false),
        Some(Err(why)) => (bm25_strengths(hits), Some(format!("BM25 only: {why}")), false),
        Some(Ok(vectors)) => {
            (fused_strengths(catalog, hits, &vectors, q.fusion, q.window.as_ref())?, None, q.fusion == Fusion::Blend)
        }
    };
    let mut kept: Vec<(Hit, f64)> = Vec::new();
    for (h, strength) in strengths {
        if !q.scope.admits(h.kind) || q.type_filter.as_ref().is_some_and(|t| &h.node_type != t) {
            continue;
        }
        match (hooks.admit)(&h.id) {
            Admit::Yes => kept.push((h, strength)),
            Admit::No => {}
            Admit::Stop => return Err(CatalogError::Stopped),
        }
    }
    let ids: Vec<String> = kept.iter().map(|(h, _)| h.id.clone()).collect();
    let heat = (hooks.heat)(&ids)?;
    let mut results = Vec::with_capacity(kept.len());
    for (h, strength) in kept {
        let node_heat = heat.get(&h.id).copied().unwrap_or(0.0);
        results.push(item(h, round4(strength * (1.0 + q.alpha * node_heat)), node_heat, q.include_outline)?);
    }
    // Stable: equal scores keep BM25 order, as the reference's sort does.
    results.sort_by(|a, b| b.score.total_cmp(&a.score));
    if blended {
        results = folders_first(results);
    }
    let truncated = results.len() > q.k;
    results.truncate(q.k);
    let mut out = LocateResult { results, truncated, note, searched: None, hint: None };
    if out.results.is_empty() && q.window.is_none() {
        out.searched = Some(catalog.count_nodes()?);
        out.hint = Some(EMPTY_HINT.to_string());
    }
    Ok(out)
}

/// [`locate`] for a caller with no hooks of its own (the CLI, benches):
/// heat from `trails` (persistent, plus `session`'s at half weight), every
/// candidate admitted, the 800-token budget applied.
pub fn locate_simple(
    catalog: &Catalog,
    trails: &Trails,
    session: Option<&str>,
    q: &LocateQuery,
    dense: impl FnOnce() -> Option<DenseAnswer>,
) -> Result<LocateResult> {
    let heat = |ids: &[String]| trails.heat_map(ids, session);
    let mut admit = |_: &str| Admit::Yes;
    let mut out = locate(catalog, q, LocateHooks { heat: &heat, admit: &mut admit }, dense)?;
    fit_budget(&mut out, LOCATE_BUDGET)?;
    Ok(out)
}

/// The blended ranking's order: each folder's first leaf and every branch
/// whose folder has no leaf above it come first, in score order, then the
/// rest in score order (a branch is the folder its `_index` is in). The
/// first result never moves. One folder's files (a package's changelog,
/// copyright, readme, its branch) filled the top five for questions whose
/// answer was the next folder down the list, while a branch above its own
/// leaves keeps them (the leaf is often what was asked for). Chosen on half
/// of the real question sets, reported on the other half and a held-out
/// set (docs/decisions/locate-one-engine.md).
fn folders_first(results: Vec<LocateItem>) -> Vec<LocateItem> {
    let mut with_leaf: std::collections::HashSet<String> = std::collections::HashSet::new();
    let (mut first, mut rest) = (Vec::with_capacity(results.len()), Vec::new());
    for r in results {
        let folder = r.id.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let keep = if r.kind == "branch" { !with_leaf.contains(&folder) } else { with_leaf.insert(folder) };
        if keep {
            first.push(r);
        } else {
            rest.push(r);
        }
    }
    first.extend(rest);
    first
}

/// Candidates ranked by a deep `locate` (a scoped or language-filtered one).
const DEEP_LIMIT: usize = 100_000;

fn item(h: Hit, score: f64, heat: f64, include_outline: bool) -> Result<LocateItem> {
    let coverage = match (&h.coverage, h.kind) {
        (Some(c), Kind::Branch) if !c.is_empty() => Some(match parse_coverage(c) {
            Some((notes, branches)) => Coverage::Counts { notes, branches },
            None => Coverage::Raw(c.clone()),
        }),
        _ => None,
    };
    let outline = if include_outline { Some(json_list(&h.outline)?) } else { None };
    Ok(LocateItem {
        kind: if h.kind == Kind::Banana { "note".into() } else { h.kind.as_str().into() },
        trail: json_list(&h.trail)?,
        score,
        heat,
        id: h.id,
        node_type: h.node_type,
        title: h.title,
        summary: h.summary,
        body_tokens: h.body_tokens,
        coverage,
        outline,
    })
}

/// BM25 alone: bm25 is negative (lower = better); the best hit gets 1.0.
fn bm25_strengths(hits: Vec<Hit>) -> Vec<(Hit, f64)> {
    let strength = strength_of(&hits);
    hits.into_iter().map(|h| (strength(h.rank), h)).map(|(s, h)| (h, s)).collect()
}

/// Each hit's BM25 strength from its rank: rank / best rank (bm25 is
/// negative, lower is better), 1.0 when no rank is below zero.
fn strength_of(hits: &[Hit]) -> impl Fn(f64) -> f64 {
    let best = hits.iter().map(|h| h.rank).fold(0.0f64, f64::min);
    move |rank| if best < 0.0 { rank / best } else { 1.0 }
}

/// Hybrid: BM25 fused with the vector ranking by `fusion`; vector-only ids
/// join when the catalog has them (inside the window), after the BM25 hits
/// (the reference's stable order).
fn fused_strengths(
    catalog: &Catalog,
    hits: Vec<Hit>,
    vectors: &Dense,
    fusion: Fusion,
    window: Option<&Window>,
) -> Result<Vec<(Hit, f64)>> {
    let dense = vectors.ranked.as_slice();
    let fused = match fusion {
        Fusion::Bm25 => return Ok(bm25_strengths(hits)),
        Fusion::Rrf => {
            let bm25: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
            let ids: Vec<String> = dense.iter().map(|d| d.0.clone()).collect();
            rrf_fuse(&[&bm25, &ids])
        }
        Fusion::Blend => {
            let bm25: Vec<(String, f64)> = bm25_strengths_of(&hits);
            blend_fuse(&bm25, dense, vectors.bm25_weight)
        }
    };
    let seen: std::collections::HashSet<String> = hits.iter().map(|h| h.id.clone()).collect();
    let (pred, wargs) = window.map(|w| w.sql("")).map(|(p, a)| (format!(" AND {p}"), a)).unwrap_or_default();
    let mut st = catalog.connection().prepare_cached(&format!("{HIT_SQL} WHERE id = ?{pred}"))?;
    let mut out: Vec<(Hit, f64)> = Vec::with_capacity(hits.len() + dense.len());
    for h in hits {
        let s = fused.get(&h.id).copied().unwrap_or(0.0);
        out.push((h, s));
    }
    for (id, _) in dense.iter().filter(|(id, _)| !seen.contains(id)) {
        let args = std::iter::once(id.clone()).chain(wargs.iter().cloned());
        if let Some(h) = st.query_row(rusqlite::params_from_iter(args), |r| hit_row(r, 0.0)).optional()? {
            let s = fused.get(&h.id).copied().unwrap_or(0.0);
            out.push((h, s));
        }
    }
    Ok(out)
}

fn bm25_strengths_of(hits: &[Hit]) -> Vec<(String, f64)> {
    let strength = strength_of(hits);
    hits.iter().map(|h| (h.id.clone(), strength(h.rank))).collect()
}

/// The node columns a hit reads, in [`hit_row`]'s order.
const HIT_SQL: &str = "SELECT id, kind, type, title, summary, trail, body_tokens, coverage, outline FROM nodes";

/// BM25 candidates inside a date window, straight from FTS5.
fn windowed_hits(catalog: &Catalog, expr: &str, limit: usize, w: &Window) -> Result<Vec<Hit>> {
    let (pred, wargs) = w.sql("n2.");
    let sql = format!(
        "SELECT n.id, n.kind, n.type, n.title, n.summary, n.trail, n.body_tokens, n.coverage, n.outline, h.rank \
         FROM (SELECT f.id AS id, bm25(nodes_fts, 0.0, 4.0, 3.0, 2.0, 1.0) AS rank FROM nodes_fts f \
               JOIN nodes n2 ON n2.id = f.id WHERE nodes_fts MATCH ? AND {pred} ORDER BY rank LIMIT ?) h \
         JOIN nodes n ON n.id = h.id ORDER BY h.rank"
    );
    let mut args: Vec<rusqlite::types::Value> = vec![expr.to_string().into()];
    args.extend(wargs.into_iter().map(Into::into));
    args.push((limit as i64).into());
    let mut st = catalog.connection().prepare_cached(&sql)?;
    let rows = st.query_map(rusqlite::params_from_iter(args.iter()), |r| hit_row(r, r.get(9)?))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

fn json_list(s: &str) -> Result<Vec<String>> {
    if s.is_empty() {
        return Ok(vec![]);
    }
    Ok(serde_json::from_str(s)?)
}

fn hit_row(r: &rusqlite::Row<'_>, rank: f64) -> rusqlite::Result<Hit> {
    Ok(Hit {
        id: r.get(0)?,
        kind: r.get(1)?,
        node_type: r.get(2)?,
        title: r.get(3)?,
        summary: r.get(4)?,
        trail: r.get::<_, Option<String>>(5)?.unwrap_or_default(),
        body_tokens: r.get::<_, Option<i64>>(6)?.unwrap_or(0),
        coverage: r.get(7)?,
        outline: r.get::<_, Option<String>>(8)?.unwrap_or_default(),
        rank,
    })
}

/// Node rows of the top-k index's ranked rowids, in its order.
fn hits_by_rowid(catalog: &Catalog, ranked: &[(i64, f64)]) -> Result<Vec<Hit>> {
    let mut st = catalog.connection().prepare_cached(&format!("{HIT_SQL} WHERE rowid = ?1"))?;
    let mut out = Vec::with_capacity(ranked.len());
    for &(doc, rank) in ranked {
        if let Some(h) = st.query_row([doc], |r| hit_row(r, rank)).optional()? {
            out.push(h);
        }
    }
    Ok(out)
}

/// [`Catalog::topk_dump`]: term -> `(node id, weighted frequency, doc length)`.
pub type TopkDump = std::collections::BTreeMap<String, Vec<(String, u32, u32)>>;

/// Top `limit` `(id, bm25 rank)` for `query` as the FTS5 query ranks them.
fn fts_ranked(catalog: &Catalog, query: &str, limit: usize) -> Result<Vec<(String, f64)>> {
    let Some(expr) = sanitize_query(query) else {
        return Ok(vec![]);
    };
    Ok(fetch_hits(catalog, &expr, limit)?.into_iter().map(|h| (h.id, h.rank)).collect())
}

impl Catalog {
    /// The candidate list `locate` ranks: the top `limit` `(id, bm25 rank)`
    /// for `query`, from the derived top-k index when it can answer
    /// exactly, else from FTS5 (see [`Catalog::ranked_fts`]).
    pub fn ranked(&self, query: &str, limit: usize) -> Result<Vec<(String, f64)>> {
        match crate::topk::search(self.connection(), query, limit)? {
            Some(r) => Ok(hits_by_rowid(self, &r)?.into_iter().map(|h| (h.id, h.rank)).collect()),
            None => fts_ranked(self, query, limit),
        }
    }

    /// The dialect's reference ranking: `ORDER BY bm25(nodes_fts, 0.0,
    /// 4.0, 3.0, 2.0, 1.0) LIMIT limit` over the FTS5 table.
    pub fn ranked_fts(&self, query: &str, limit: usize) -> Result<Vec<(String, f64)>> {
        fts_ranked(self, query, limit)
    }

    /// Whether the derived top-k index is fresh and in step with FTS5.
    pub fn topk_usable(&self) -> Result<bool> {
        crate::topk::usable(self.connection())
    }

    /// Logical content of the top-k index, by term: `(node id, weighted
    /// frequency, doc length)` sorted by id. Equal for an incrementally
    /// maintained catalog and a fresh rebuild of the same nodes.
    pub fn topk_dump(&self) -> Result<TopkDump> {
        let mut ids = std::collections::HashMap::new();
        {
            let mut st = self.connection().prepare("SELECT rowid, id FROM nodes")?;
            let rows = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            for row in rows {
                let (rowid, id) = row?;
                ids.insert(rowid, id);
            }
        }
        let mut out = std::collections::BTreeMap::new();
        for (term, postings) in crate::topk::logical(self.connection())? {
            let mut v: Vec<(String, u32, u32)> = postings
                .into_iter()
                .map(|(doc, wf, dl)| (ids.get(&doc).cloned().unwrap_or_else(|| format!("#{doc}")), wf, dl))
                .collect();
            v.sort();
            out.insert(term, v);
        }
        Ok(out)
    }

    /// Stop maintaining the top-k index for a bulk run: writes until
    /// [`Catalog::rebuild_topk`] skip it (`locate` answers through FTS5
    /// meanwhile). An adopt of 10^6 files otherwise writes ~30 delta rows
    /// per node and compacts every blob ~50 times as the forest grows
    /// (1/16 growth each), ~16x the final index size rewritten.
    pub fn suspend_topk(&mut self) -> Result<()> {
        self.connection().execute("UPDATE topk_meta SET value = 0 WHERE key = 'fresh'", [])?;
        Ok(())
    }

    /// Rebuild the top-k index from the FTS rows when it is not usable
    /// (suspended, or left behind by another writer), in one transaction.
    /// Returns the docs indexed, or `None` when it was usable already or
    /// node and FTS rowids are not aligned (a catalog another engine wrote:
    /// only a full rebuild, `forest reindex`, can index that one).
    pub fn rebuild_topk(&mut self) -> Result<Option<i64>> {
        if self.topk_usable()? {
            return Ok(None);
        }
        let tx = self.connection_mut().transaction()?;
        let (nodes, aligned): (i64, i64) = tx.query_row(
            "SELECT (SELECT COUNT(*) FROM nodes), \
             (SELECT COUNT(*) FROM nodes n JOIN nodes_fts f ON f.rowid = n.rowid AND f.id = n.id)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let fts: i64 = tx.query_row("SELECT COUNT(*) FROM nodes_fts", [], |r| r.get(0))?;
        if nodes != aligned || nodes != fts {
            return Ok(None);
        }
        let mut builder = crate::topk::Builder::new();
        {
            let mut st = tx.prepare(crate::topk::FTS_ROWS_SQL)?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let (rowid, node) = crate::topk::fts_row_node(r)?;
                builder.add(&tx, rowid, &node, None)?;
            }
        }
        let docs = builder.docs();
        builder.finish(&tx)?;
        tx.commit()?;
        Ok(Some(docs))
    }

    /// Fold the top-k index's side tables into its blobs now (writers do
    /// this themselves when the side tables grow).
    pub fn compact_topk(&mut self) -> Result<()> {
        let tx = self.connection_mut().transaction()?;
        if crate::topk::usable(&tx)? {
            crate::topk::compact(&tx)?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// True when fewer than [`crate::expand::RARE_BELOW`] nodes carry `word`
/// in their scent (an error counts as rare: the variants only add candidates).
fn is_rare(catalog: &Catalog, word: &str) -> bool {
    let phrase = format!("\"{}\"", word.replace('"', ""));
    let counted = catalog
        .connection()
        .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM nodes_fts WHERE nodes_fts MATCH ?1 LIMIT ?2)")
        .and_then(|mut st| st.query_row(params![phrase, crate::expand::RARE_BELOW as i64], |r| r.get::<_, i64>(0)));
    counted.map_or(true, |n| (n as usize) < crate::expand::RARE_BELOW)
}

fn fetch_hits(catalog: &Catalog, expr: &str, limit: usize) -> Result<Vec<Hit>> {
    // Rank inside the FTS first, join only the survivors of the cut.
    let mut st = catalog.connection().prepare_cached(
        "SELECT n.id, n.kind, n.type, n.title, n.summary, n.trail, n.body_tokens, n.coverage, \
                n.outline, h.rank FROM (\
           SELECT f.id AS id, bm25(nodes_fts, 0.0, 4.0, 3.0, 2.0, 1.0) AS rank \
           FROM nodes_fts f WHERE nodes_fts MATCH ?1 ORDER BY rank LIMIT ?2) h \
         JOIN nodes n ON n.id = h.id ORDER BY h.rank",
    )?;
    let rows = st.query_map(params![expr, limit as i64], |r| hit_row(r, r.get(9)?))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Characters of `json.dumps({"results": [...], "truncated": t})` given
/// each serialized item's length in characters.
fn payload_chars(item_chars: &[usize], truncated: bool) -> usize {
    let items: usize = item_chars.iter().sum::<usize>() + 2 * item_chars.len().saturating_sub(1);
    r#"{"results": ["#.len() + items + r#"], "truncated": "#.len() + if truncated { 4 } else { 5 } + 1
}

/// Drop results from the tail until the payload fits `budget` tokens,
/// setting `truncated` when anything is dropped.
pub fn fit_budget(out: &mut LocateResult, budget: usize) -> Result<()> {
    let mut lens = Vec::with_capacity(out.results.len());
    for item in &out.results {
        lens.push(dumps(&serde_json::to_value(item)?).chars().count());
    }
    while !lens.is_empty() && payload_chars(&lens, out.truncated).div_ceil(4) > budget {
        lens.pop();
        out.results.pop();
        out.truncated = true;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_tokens() {
        assert_eq!(sanitize_query("  "), None);
        assert_eq!(sanitize_query("BE-291 a\"b"), Some("\"BE-291\" OR \"a\"\"b\"".to_string()));
    }

    #[test]
    fn coverage_forms() {
        assert_eq!(parse_coverage("3 bananas, 2 sub-branches"), Some((3, 2)));
        assert_eq!(parse_coverage("1 banana, 1 sub-branch."), Some((1, 1)));
        assert_eq!(parse_coverage(" 0 bananas, 0 sub-branches \n"), Some((0, 0)));
        assert_eq!(parse_coverage("3 notes, 2 sub-branches"), None);
        assert_eq!(parse_coverage("bananas, 2 sub-branches"), None);
        assert_eq!(parse_coverage("3 bananas, 2 sub-branches!"), None);
    }

    #[test]
    fn scopes() {
        assert_eq!(Scope::parse("bananas").unwrap(), Scope::Notes);
        let err = Scope::parse("leaves").unwrap_err();
        assert_eq!(err.code(), "E_SCHEMA");
        assert!(err.to_string().contains("'all', 'branches', 'notes'"));
    }

    #[test]
    fn folders_first_brings_other_folders_up_and_keeps_a_branch_s_leaves() {
        let item = |id: &str, kind: &str| LocateItem {
            id: id.into(),
            kind: kind.into(),
            node_type: kind.into(),
            title: String::new(),
            summary: String::new(),
            trail: vec![],
            score: 0.0,
            heat: 0.0,
            body_tokens: 0,
            coverage: None,
            outline: None,
        };
        let order =
            |items: Vec<LocateItem>| -> Vec<String> { folders_first(items).into_iter().map(|i| i.id).collect() };
        // One package's files fill the list: the other folder comes up,
        // the package's branch (its folder has a leaf above it) goes down.
        let got = order(vec![
            item("doc/libffi8/html/a", "note"),
            item("doc/libffi8/html/b", "note"),
            item("doc/libffi8/html/_index", "branch"),
            item("doc/libffi8/html/c", "note"),
            item("doc/libclang/readme", "note"),
            item("top", "note"),
        ]);
        assert_eq!(
            got,
            [
                "doc/libffi8/html/a",
                "doc/libclang/readme",
                "top",
                "doc/libffi8/html/b",
                "doc/libffi8/html/_index",
                "doc/libffi8/html/c"
            ]
        );
        // A branch above its own leaves keeps its first leaf next to it.
        let got = order(vec![
            item("projects/drum/_index", "branch"),
            item("projects/drum/vision", "note"),
            item("projects/drum/architecture", "note"),
            item("people/wendy", "note"),
        ]);
        assert_eq!(got, ["projects/drum/_index", "projects/drum/vision", "people/wendy", "projects/drum/architecture"]);
        assert!(order(vec![]).is_empty());
    }

    #[test]
    fn payload_length_formula_matches_serializer() {
        let item = LocateItem {
            id: "a/b".into(),
            kind: "note".into(),
            node_type: "note".into(),
            title: "Título".into(),
            summary: "s \"q\"".into(),
            trail: vec!["_index".into(), "a/_index".into()],
            score: 0.8123,
            heat: 0.0,
            body_tokens: 12,
            coverage: Some(Coverage::Counts { notes: 1, branches: 0 }),
            outline: None,
        };
        for (n, truncated) in [(0usize, false), (1, true), (3, false)] {
            let res =
                LocateResult { results: vec![item.clone(); n], truncated, note: None, searched: None, hint: None };
            let whole = dumps(&serde_json::to_value(&res).unwrap()).chars().count();
            let one = dumps(&serde_json::to_value(&item).unwrap()).chars().count();
            assert_eq!(payload_chars(&vec![one; n], truncated), whole);
        }
    }
}
