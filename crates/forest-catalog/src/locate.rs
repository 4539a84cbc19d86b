//! `locate` (dialect §7.2–§7.3): scent-weighted BM25 × heat over the catalog.

use coverage_re::coverage_parts;
use rusqlite::{params, OptionalExtension};
use schemars::JsonSchema;
use serde::Serialize;

use crate::pyjson::{dumps, round4};
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

    fn admits(self, kind: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Branches => kind == "branch",
            Scope::Notes => kind == "banana",
        }
    }
}

/// Options of [`locate`].
#[derive(Debug, Clone, PartialEq)]
pub struct LocateOptions {
    /// Results to keep (default 5).
    pub k: usize,
    /// `all` | `branches` | `notes` (`bananas` accepted).
    pub scope: String,
    /// Keep only this node type.
    pub type_filter: Option<String>,
    /// Pheromone weight α (default 0.3; 0 disables heat).
    pub alpha: f64,
    /// Troop session whose heat counts at half weight.
    pub session: Option<String>,
    /// Add each result's outline (`include=["outline"]`).
    pub include_outline: bool,
    /// Hybrid: the vector ranking (ids best first, `max(5k, 25)` deep) to
    /// fuse with BM25 by RRF (k = 60); `None` is BM25 alone.
    pub dense: Option<Vec<String>>,
}

impl Default for LocateOptions {
    fn default() -> Self {
        LocateOptions {
            k: 5,
            scope: "all".into(),
            type_filter: None,
            alpha: 0.3,
            session: None,
            include_outline: false,
            dense: None,
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
    /// Empty results only: catalog nodes searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched: Option<i64>,
    /// Empty results only: where else to look.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// FTS5 MATCH expression: whitespace tokens, each double-quoted (inner `"`
/// doubled), joined with ` OR `. `None` for a blank query.
pub fn sanitize_query(query: &str) -> Option<String> {
    let terms: Vec<String> = query.split_whitespace().map(|t| format!("\"{}\"", t.replace('"', "\"\""))).collect();
    if terms.is_empty() {
        None
    } else {
        Some(terms.join(" OR "))
    }
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
    kind: String,
    node_type: String,
    title: String,
    summary: String,
    trail: String,
    body_tokens: i64,
    coverage: Option<String>,
    outline: String,
    rank: f64,
}

/// Rank catalog nodes for `query` (dialect §7.3): FTS top `max(5k, 25)`,
/// strength = rank / best rank, scope and type filters after retrieval,
/// score = strength × (1 + α·heat), keep `k`, then the 800-token budget.
pub fn locate(catalog: &Catalog, trails: &Trails, query: &str, opts: &LocateOptions) -> Result<LocateResult> {
    locate_fused(catalog, trails, query, opts, || opts.dense.clone())
}

/// [`locate`] whose vector ranking comes from `dense`, called once the
/// BM25 hits are in (`None`: BM25 alone; `opts.dense` is not read): a
/// caller embeds the query on another thread meanwhile and joins it there.
pub fn locate_fused(
    catalog: &Catalog,
    trails: &Trails,
    query: &str,
    opts: &LocateOptions,
    dense: impl FnOnce() -> Option<Vec<String>>,
) -> Result<LocateResult> {
    let scope = Scope::parse(&opts.scope)?;
    let limit = (opts.k * 5).max(25);
    let query = &crate::expand::expand_query(query, &|w: &str| is_rare(catalog, w));
    let hits = match sanitize_query(query) {
        Some(expr) => match crate::topk::search(catalog.connection(), query, limit)? {
            Some(ranked) => hits_by_rowid(catalog, &ranked)?,
            None => fetch_hits(catalog, &expr, limit)?,
        },
        None => vec![],
    };
    let kept: Vec<(Hit, f64)> = match dense() {
        None => bm25_strengths(hits),
        Some(dense) => fused_strengths(catalog, hits, &dense)?,
    }
    .into_iter()
    .filter(|(h, _)| scope.admits(&h.kind))
    .filter(|(h, _)| opts.type_filter.as_ref().is_none_or(|t| &h.node_type == t))
    .collect();
    let ids: Vec<String> = kept.iter().map(|(h, _)| h.id.clone()).collect();
    let heat = trails.heat_map(&ids, opts.session.as_deref())?;
    let mut results = Vec::with_capacity(kept.len());
    for (h, strength) in kept {
        let node_heat = heat.get(&h.id).copied().unwrap_or(0.0);
        let coverage = match (&h.coverage, h.kind.as_str()) {
            (Some(c), "branch") if !c.is_empty() => Some(match parse_coverage(c) {
                Some((notes, branches)) => Coverage::Counts { notes, branches },
                None => Coverage::Raw(c.clone()),
            }),
            _ => None,
        };
        let outline = if opts.include_outline { Some(json_list(&h.outline)?) } else { None };
        results.push(LocateItem {
            kind: if h.kind == "banana" { "note".into() } else { h.kind },
            trail: json_list(&h.trail)?,
            score: round4(strength * (1.0 + opts.alpha * node_heat)),
            heat: node_heat,
            id: h.id,
            node_type: h.node_type,
            title: h.title,
            summary: h.summary,
            body_tokens: h.body_tokens,
            coverage,
            outline,
        });
    }
    // Stable: equal scores keep BM25 order, as the reference's sort does.
    results.sort_by(|a, b| b.score.total_cmp(&a.score));
    let truncated = results.len() > opts.k;
    results.truncate(opts.k);
    let mut out = LocateResult { results, truncated, searched: None, hint: None };
    fit_budget(&mut out, LOCATE_BUDGET)?;
    if out.results.is_empty() {
        out.searched = Some(catalog.count_nodes()?);
        out.hint = Some(EMPTY_HINT.to_string());
    }
    Ok(out)
}

/// BM25 alone: bm25 is negative (lower = better); the best hit gets 1.0.
fn bm25_strengths(hits: Vec<Hit>) -> Vec<(Hit, f64)> {
    let best = hits.iter().map(|h| h.rank).fold(0.0f64, f64::min);
    hits.into_iter()
        .map(|h| {
            let strength = if best < 0.0 { h.rank / best } else { 1.0 };
            (h, strength)
        })
        .collect()
}

/// RRF constant (navigator §4: `1 / (60 + rank + 1)`, rank 0-based).
pub const RRF_K: f64 = 60.0;

/// Reciprocal rank fusion of rankings (ids best first): `Σ 1/(k + rank + 1)`,
/// divided by the best fused score (strength in (0, 1]).
pub fn rrf_fuse(rankings: &[&[String]]) -> std::collections::HashMap<String, f64> {
    let mut fused: std::collections::HashMap<String, f64> = std::collections::HashMap::new();
    for ranked in rankings {
        for (rank, id) in ranked.iter().enumerate() {
            *fused.entry(id.clone()).or_insert(0.0) += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let top = fused.values().copied().fold(0.0f64, f64::max);
    if top > 0.0 {
        fused.values_mut().for_each(|s| *s /= top);
    }
    fused
}

/// Hybrid (navigator §4): [`rrf_fuse`] of the BM25 and vector rankings;
/// vector-only ids join when the catalog
/// has them, after the BM25 hits (the reference's stable order).
fn fused_strengths(catalog: &Catalog, hits: Vec<Hit>, dense: &[String]) -> Result<Vec<(Hit, f64)>> {
    let bm25: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
    let fused = rrf_fuse(&[&bm25, dense]);
    let strength = |id: &str| fused.get(id).copied().unwrap_or(0.0);
    let seen: std::collections::HashSet<&str> = bm25.iter().map(String::as_str).collect();
    let mut st = catalog.connection().prepare_cached(
        "SELECT id, kind, type, title, summary, trail, body_tokens, coverage, outline FROM nodes WHERE id = ?1",
    )?;
    let mut extra = vec![];
    for id in dense.iter().filter(|id| !seen.contains(id.as_str())) {
        if let Some(h) = st.query_row([id], |r| hit_row(r, 0.0)).optional()? {
            extra.push(h);
        }
    }
    let mut out: Vec<(Hit, f64)> = hits
        .into_iter()
        .map(|h| {
            let s = strength(&h.id);
            (h, s)
        })
        .collect();
    out.extend(extra.into_iter().map(|h| {
        let s = strength(&h.id);
        (h, s)
    }));
    Ok(out)
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
    let mut st = catalog.connection().prepare_cached(
        "SELECT id, kind, type, title, summary, trail, body_tokens, coverage, outline FROM nodes WHERE rowid = ?1",
    )?;
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
                builder.add(&tx, rowid, &node)?;
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
fn fit_budget(out: &mut LocateResult, budget: usize) -> Result<()> {
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
    fn rrf_k60_max_normalised() {
        let a: Vec<String> = vec!["x".into(), "y".into()];
        let b: Vec<String> = vec!["y".into(), "z".into()];
        let f = rrf_fuse(&[&a, &b]);
        // y: 1/62 + 1/61 is the best; x: 1/61; z: 1/62
        assert_eq!(f["y"], 1.0);
        let y = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((f["x"] - (1.0 / 61.0) / y).abs() < 1e-12);
        assert!((f["z"] - (1.0 / 62.0) / y).abs() < 1e-12);
        assert!(rrf_fuse(&[]).is_empty());
    }

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
            let res = LocateResult { results: vec![item.clone(); n], truncated, searched: None, hint: None };
            let whole = dumps(&serde_json::to_value(&res).unwrap()).chars().count();
            let one = dumps(&serde_json::to_value(&item).unwrap()).chars().count();
            assert_eq!(payload_chars(&vec![one; n], truncated), whole);
        }
    }
}
