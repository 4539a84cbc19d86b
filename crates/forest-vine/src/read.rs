//! `locate`, `look`, `move` (vine spec §2.1–§2.3): curated metadata only
//! (the catalog), plus the node file for `look`'s digest.

use std::collections::HashMap;

use forest_canopy::MemoMode;
use forest_catalog::pyjson::round4;
use forest_catalog::sanitize_query;
use rusqlite::{params_from_iter, OptionalExtension};
use serde_json::{json, Map, Value};

use crate::budget::{clip, estimate_map, id_of, shrink_list};
use crate::engine::{coverage_value, norm_id, py_list, wire_kind, Vine, ALPHA};
use crate::error::{VResult, VineError};
use crate::window::{self, Window};

/// Budget of a locate payload.
pub const LOCATE_BUDGET: usize = 800;
/// Budget of one look digest.
pub const LOOK_BUDGET: usize = 500;
/// Budget of a look batch.
pub const LOOK_BATCH_BUDGET: usize = 2000;
/// Budget of a move payload.
pub const MOVE_BUDGET: usize = 600;
/// Edges shown per direction in a digest.
pub const MAX_EDGES_SHOWN: usize = 12;
/// Ids per look batch.
pub const LOOK_BATCH_CAP: usize = 10;

const EMPTY_HINT: &str = "No curated scent matched. locate searches titles, aliases, tags and \
     summaries only — sniff searches the bodies, where an exact term may be waiting.";

/// Arguments of [`Vine::locate`].
#[derive(Debug, Clone, Default)]
pub struct LocateArgs {
    /// The question.
    pub query: String,
    /// Results to keep (≥ 1; default 5).
    pub k: Option<i64>,
    /// all | branches | notes (bananas).
    pub scope: Option<String>,
    /// Keep only this type.
    pub type_filter: Option<String>,
    /// `["outline"]` adds outlines.
    pub include: Option<Vec<String>>,
    /// Window lower bound.
    pub since: Option<String>,
    /// Window upper bound.
    pub until: Option<String>,
    /// `created` | `updated`.
    pub date_field: Option<String>,
    /// BCP-47 tag the node declares (`lang:` frontmatter), exact match.
    pub lang: Option<String>,
}

/// Validate a BCP-47-ish tag (language, optional script, optional region).
pub(crate) fn check_lang(lang: Option<&str>) -> VResult<Option<String>> {
    static RE: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
        regex::Regex::new(r"^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?$").expect("static regex")
    });
    match lang {
        None => Ok(None),
        Some(l) if l.trim().is_empty() => Err(VineError::schema("lang must be a non-empty string")),
        Some(l) if RE.is_match(l) => Ok(Some(l.to_string())),
        Some(l) => {
            Err(VineError::schema(format!("lang is not a language tag I can read: {}", crate::engine::py_repr(l)))
                .hint("One BCP-47 tag: 'pt', 'pt-BR', 'zh-Hans'. A language's NAME is not a tag."))
        }
    }
}

struct Hit {
    row: Map<String, Value>,
    rank: f64,
}

/// Hits with their strengths, and why a hybrid call fell back to BM25.
type Strengths = (Vec<(Hit, f64)>, Option<String>);

impl Vine {
    /// The `lang:` a node declares in its frontmatter (files are read only
    /// when a caller filters by language: the catalog has no such column).
    pub(crate) fn node_lang(&self, id: &str) -> Option<String> {
        self.read_node(id).ok().and_then(|n| n.get_str("lang"))
    }

    /// `locate`: BM25 over curated metadata × (1 + α·heat); never bodies.
    pub fn locate(&mut self, a: &LocateArgs) -> VResult<Value> {
        if let Some(inc) = &a.include {
            let bad: Vec<String> = inc.iter().filter(|i| i.as_str() != "outline").cloned().collect();
            if !bad.is_empty() {
                return Err(VineError::schema(format!("include accepts ['outline']; got {}", py_list(&bad))));
            }
        }
        let include_outline = a.include.as_ref().is_some_and(|i| !i.is_empty());
        let scope = a.scope.as_deref().unwrap_or("all");
        let scope = if scope == "bananas" { "notes" } else { scope };
        if !["all", "branches", "notes"].contains(&scope) {
            return Err(VineError::schema(format!("scope expects one of ['all', 'branches', 'notes'], got '{scope}'")));
        }
        let win = window::parse(a.since.as_deref(), a.until.as_deref(), a.date_field.as_deref())?;
        let lang = check_lang(a.lang.as_deref())?;
        let k = a.k.unwrap_or(5);
        if k < 1 {
            return Err(VineError::schema(format!("k must be an integer >= 1, got {k}")));
        }
        let k = k as usize;
        // A scoped caller's hits are the visible ones among the ranked
        // candidates, so it ranks them all (as a language filter does).
        let limit = if lang.is_some() || self.access.scoped() { 100_000 } else { (5 * k).max(25) };
        // Hybrid: the query is embedded on this thread's long-lived
        // one-thread pool while BM25 runs here (issue 31).
        let dense = self.hybrid.then(|| {
            // a --readonly server keeps the query memo in process (K.6)
            let memo = if self.shared_writes { MemoMode::Persist } else { MemoMode::ProcessOnly };
            forest_canopy::begin_dense(&self.root, &a.query, (5 * k).max(25), memo)
        });
        let hits = match sanitize_query(&a.query) {
            Some(expr) => self.fts_hits(&a.query, &expr, limit, win.as_ref())?,
            None => vec![],
        };
        let (hits, bm25_only) = self.locate_strengths(hits, dense, win.as_ref())?;
        let mut kept: Vec<(Map<String, Value>, f64)> = vec![];
        for (h, strength) in hits {
            self.check_deadline("locate")?;
            let kind = h.row["kind"].as_str().unwrap_or_default().to_string();
            let ok_scope = match scope {
                "branches" => kind == "branch",
                "notes" => kind == "note",
                _ => true,
            };
            let ok_type = a.type_filter.as_ref().is_none_or(|t| h.row["type"].as_str() == Some(t.as_str()));
            if !(ok_scope && ok_type) {
                continue;
            }
            if let Some(l) = &lang {
                let id = h.row["id"].as_str().unwrap_or_default();
                if self.node_lang(id).as_deref() != Some(l.as_str()) {
                    continue;
                }
            }
            kept.push((h.row, strength));
        }
        let ids: Vec<String> = kept.iter().map(|(r, _)| r["id"].as_str().unwrap_or_default().to_string()).collect();
        let heat = self.heat_of(&ids)?;
        let mut results: Vec<(f64, Value)> = vec![];
        for (mut row, strength) in kept {
            let id = row["id"].as_str().unwrap_or_default().to_string();
            let h = heat.get(&id).copied().unwrap_or(0.0);
            let score = round4(strength * (1.0 + ALPHA * h));
            let mut item = Map::new();
            for key in ["id", "kind", "type", "title", "summary", "trail"] {
                item.insert(key.into(), row.remove(key).unwrap_or(Value::Null));
            }
            item.insert("score".into(), json!(score));
            item.insert("heat".into(), json!(h));
            item.insert("body_tokens".into(), row.remove("body_tokens").unwrap_or(json!(0)));
            if let Some(c) = row.remove("coverage").filter(|c| !c.is_null()) {
                item.insert("coverage".into(), c);
            }
            if include_outline {
                item.insert("outline".into(), row.remove("outline").unwrap_or(json!([])));
            }
            results.push((score, Value::Object(item)));
        }
        results.sort_by(|x, y| y.0.total_cmp(&x.0));
        let truncated = results.len() > k;
        let results: Vec<Value> = results.into_iter().take(k).map(|(_, v)| v).collect();
        let mut out = Map::new();
        out.insert("results".into(), Value::Array(results));
        out.insert("truncated".into(), json!(truncated));
        shrink_list(&mut out, "results", LOCATE_BUDGET, id_of);
        if let Some(why) = bm25_only {
            out.insert("note".into(), json!(format!("BM25 only: {why}")));
        }
        self.window_tail(&mut out, win.as_ref(), "results", "No curated scent matched")?;
        if out["results"].as_array().is_some_and(|r| r.is_empty()) && win.is_none() {
            out.insert("searched".into(), json!(self.catalog.count_nodes()?));
            out.insert("hint".into(), json!(EMPTY_HINT));
        }
        Ok(Value::Object(out))
    }

    /// Each hit's strength: BM25 / best BM25, or, when hybrid locate is on
    /// and the canopy usable, the RRF (k = 60) of the BM25 and vector
    /// rankings over the best (navigator §4); vector-only nodes join when
    /// they lie in the window (the language filter follows in the caller).
    /// The second value says why a hybrid call fell back to BM25.
    fn locate_strengths(
        &self,
        hits: Vec<Hit>,
        dense: Option<Result<forest_canopy::DenseQuery, String>>,
        win: Option<&Window>,
    ) -> VResult<Strengths> {
        let Some(dense) = dense else {
            return Ok((bm25_strengths(hits), None));
        };
        let dense = match dense.and_then(forest_canopy::DenseQuery::finish) {
            Ok(ids) => ids,
            Err(why) => return Ok((bm25_strengths(hits), Some(why))),
        };
        let bm25: Vec<String> = hits.iter().map(|h| h.row["id"].as_str().unwrap_or_default().to_string()).collect();
        let fused = forest_catalog::rrf_fuse(&[&bm25, &dense]);
        let seen: std::collections::HashSet<&str> = bm25.iter().map(String::as_str).collect();
        let (pred, wargs) = match win {
            Some(w) => {
                let (p, a) = window_sql(w, "");
                (format!(" AND {p}"), a)
            }
            None => (String::new(), vec![]),
        };
        let sql = format!(
            "SELECT id, kind, type, title, summary, trail, body_tokens, coverage, outline FROM nodes WHERE id = ?{pred}"
        );
        let mut st = self.catalog.connection().prepare_cached(&sql)?;
        let mut extra = vec![];
        for id in dense.iter().filter(|id| !seen.contains(id.as_str())) {
            let mut args: Vec<rusqlite::types::Value> = vec![id.clone().into()];
            args.extend(wargs.iter().cloned().map(Into::into));
            if let Some(row) = st.query_row(params_from_iter(args.iter()), hit_row).optional()? {
                extra.push(Hit { row, rank: 0.0 });
            }
        }
        let strength = |h: &Hit| fused.get(h.row["id"].as_str().unwrap_or_default()).copied().unwrap_or(0.0);
        let out = hits.into_iter().chain(extra).map(|h| {
            let s = strength(&h);
            (h, s)
        });
        Ok((out.collect(), None))
    }

    /// Adds `window`, `undated_excluded` and the empty-window fields.
    pub(crate) fn window_tail(
        &self,
        out: &mut Map<String, Value>,
        win: Option<&Window>,
        list: &str,
        prefix: &str,
    ) -> VResult<()> {
        let Some(w) = win else { return Ok(()) };
        out.insert("window".into(), w.echo());
        let col = &w.date_field;
        let conn = self.catalog.connection();
        let undated: i64 =
            conn.query_row(&format!("SELECT COUNT(*) FROM nodes WHERE {col} IS NULL OR {col} = ''"), [], |r| r.get(0))?;
        if undated > 0 {
            out.insert("undated_excluded".into(), json!(undated));
        }
        if out[list].as_array().is_some_and(|r| r.is_empty()) {
            let (pred, args) = window_sql(w, "");
            let matched: i64 = conn.query_row(
                &format!("SELECT COUNT(*) FROM nodes WHERE {pred}"),
                params_from_iter(args.iter()),
                |r| r.get(0),
            )?;
            out.insert("searched".into(), json!(self.catalog.count_nodes()?));
            out.insert("matched_window".into(), json!(matched));
            let hint = if matched == 0 {
                let (n, first, last): (i64, Option<String>, Option<String>) = conn.query_row(
                    &format!("SELECT COUNT(*), MIN(substr({col},1,10)), MAX(substr({col},1,10)) FROM nodes WHERE {col} != ''"),
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )?;
                format!(
                    "{prefix}: the window holds nothing. The forest has {n} dated node(s) from {} to {}; calendar() shows which periods hold any.",
                    first.unwrap_or_default(),
                    last.unwrap_or_default()
                )
            } else {
                format!("{prefix}, but the window is not the reason: {matched} node(s) lie inside it. Try sniff(terms) or a wider question.")
            };
            out.insert("hint".into(), json!(hint));
        }
        Ok(())
    }

    fn fts_hits(&self, query: &str, expr: &str, limit: usize, win: Option<&Window>) -> VResult<Vec<Hit>> {
        if win.is_none() {
            // Without a date window the candidates are the catalog's ranked
            // list: the derived top-k index answers it exactly (same ids,
            // ranks and order as the FTS5 query below) at a fraction of the
            // cost on large forests, falling back to FTS5 itself.
            let ranked = self.catalog.ranked(query, limit)?;
            let mut st = self.catalog.connection().prepare_cached(
                "SELECT id, kind, type, title, summary, trail, body_tokens, coverage, outline FROM nodes WHERE id = ?1",
            )?;
            let mut out = Vec::with_capacity(ranked.len());
            for (id, rank) in ranked {
                if let Some(row) = st.query_row([&id], hit_row).optional()? {
                    out.push(Hit { row, rank });
                }
            }
            return Ok(out);
        }
        let (pred, wargs) = match win {
            Some(w) => {
                let (p, a) = window_sql(w, "n2.");
                (format!(" AND {p}"), a)
            }
            None => (String::new(), vec![]),
        };
        let sql = format!(
            "SELECT n.id, n.kind, n.type, n.title, n.summary, n.trail, n.body_tokens, n.coverage, n.outline, h.rank \
             FROM (SELECT f.id AS id, bm25(nodes_fts, 0.0, 4.0, 3.0, 2.0, 1.0) AS rank FROM nodes_fts f \
                   JOIN nodes n2 ON n2.id = f.id WHERE nodes_fts MATCH ?{pred} ORDER BY rank LIMIT ?) h \
             JOIN nodes n ON n.id = h.id ORDER BY h.rank"
        );
        let mut args: Vec<rusqlite::types::Value> = vec![expr.to_string().into()];
        args.extend(wargs.into_iter().map(Into::into));
        args.push((limit as i64).into());
        let mut st = self.catalog.connection().prepare_cached(&sql)?;
        let rows = st.query_map(params_from_iter(args.iter()), |r| Ok(Hit { row: hit_row(r)?, rank: r.get(9)? }))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// `look(id | [ids], fields)`: the ≤500-token digest, or a batch.
    pub fn look(&mut self, ids: &IdArg, fields: Option<&[String]>) -> VResult<Value> {
        match ids {
            IdArg::One(id) => self.digest(id, fields),
            IdArg::Many(list) => {
                let list = batch_ids("look", list, LOOK_BATCH_CAP)?;
                let mut nodes = vec![];
                let mut missing = vec![];
                for id in &list {
                    match self.digest(id, fields) {
                        Ok(d) => nodes.push(d),
                        Err(e) if e.code == "E_NOT_FOUND" && !self.node_path(id).is_ok_and(|p| p.is_file()) => {
                            missing.push(json!(id))
                        }
                        Err(e) => return Err(e),
                    }
                }
                let mut out = Map::new();
                out.insert("nodes".into(), Value::Array(nodes));
                out.insert("missing".into(), Value::Array(missing));
                out.insert("dropped".into(), json!([]));
                out.insert("truncated".into(), json!(false));
                batch_shrink(&mut out, LOOK_BATCH_BUDGET);
                Ok(Value::Object(out))
            }
        }
    }

    fn digest(&mut self, id: &str, fields: Option<&[String]>) -> VResult<Value> {
        let row = self.row(id)?;
        let id = row.id.clone();
        let node = self.read_node(&id).map_err(|_| crate::engine::not_found(&id))?;
        let want = |k: &str| fields.is_none_or(|f| f.iter().any(|x| x == k));
        let mut d = Map::new();
        d.insert("id".into(), json!(id));
        let fm = |k: &str| node.front.get(k).map(crate::yamljson::to_json).unwrap_or(Value::Null);
        d.insert("type".into(), json!(row.node_type));
        d.insert("title".into(), json!(row.title));
        d.insert("summary".into(), json!(row.summary));
        d.insert("tags".into(), json!(row.tags));
        d.insert("confidence".into(), json!(row.confidence));
        d.insert("created".into(), fm("created"));
        d.insert("updated".into(), fm("updated"));
        d.insert("source".into(), fm("source"));
        if !row.aliases.is_empty() {
            d.insert("aliases".into(), json!(row.aliases));
        }
        if let Some(o) = row.origin.as_ref().filter(|o| !o.is_empty()) {
            d.insert("origin".into(), json!(o));
        }
        if let Some(l) = node.get_str("lang") {
            d.insert("lang".into(), json!(l));
        }
        let out_edges = self.catalog.edges_out(&id)?;
        let in_edges = self.catalog.edges_in(&id)?;
        let mut neighbour_ids: Vec<String> = out_edges.iter().map(|e| e.dst.clone()).collect();
        neighbour_ids.extend(in_edges.iter().map(|e| e.src.clone()));
        let heat = self.heat_of(&neighbour_ids)?;
        let h = |i: &str| heat.get(i).copied().unwrap_or(0.0);
        if want("edges_out") {
            let mut eo: Vec<(f64, Value)> = vec![];
            for e in &out_edges {
                let ts = self.catalog.get(&e.dst)?.map(|r| clip(&r.summary, 25)).unwrap_or_default();
                eo.push((h(&e.dst), json!({"rel": e.rel, "target": e.dst, "target_summary": ts})));
            }
            eo.sort_by(|a, b| b.0.total_cmp(&a.0));
            d.insert("edges_out".into(), Value::Array(eo.into_iter().take(MAX_EDGES_SHOWN).map(|x| x.1).collect()));
        }
        if want("edges_in") {
            let mut ei: Vec<(f64, Value)> =
                in_edges.iter().map(|e| (h(&e.src), json!({"rel": self.inverse(&e.rel), "source": e.src}))).collect();
            ei.sort_by(|a, b| b.0.total_cmp(&a.0));
            d.insert("edges_in".into(), Value::Array(ei.into_iter().take(MAX_EDGES_SHOWN).map(|x| x.1).collect()));
        }
        if row.kind == "branch" {
            if want("children") {
                d.insert("children".into(), Value::Array(self.children(&id)?));
            }
            if let Some(ct) = cross_trails(&node.body) {
                d.insert("cross_trails".into(), json!(ct));
            }
            if let Some(c) = coverage_value(row.coverage.as_deref()) {
                d.insert("coverage".into(), c);
            }
        } else {
            d.insert("outline".into(), json!(row.outline));
        }
        let mut notes_clipped = false;
        if row.node_type == "dataset" && row.payload_type.as_deref() == Some("sqlite") {
            let need = ["query_manual", "sample_rows", "notes"].iter().any(|k| want(k));
            if need {
                let ds = crate::sql::dataset_digest(self, &row, &node.body)?;
                if want("query_manual") {
                    d.insert("query_manual".into(), ds.query_manual);
                }
                if want("sample_rows") {
                    d.insert("sample_rows".into(), ds.sample_rows);
                }
                if want("notes") {
                    if let Some(n) = ds.notes {
                        notes_clipped = n.1;
                        d.insert("notes".into(), json!(n.0));
                    }
                }
            }
        }
        d.insert(
            "stats".into(),
            json!({"body_tokens": row.body_tokens, "degree": out_edges.len() + in_edges.len(), "heat": self.heat_of(std::slice::from_ref(&id))?.get(&id).copied().unwrap_or(0.0)}),
        );
        if let Some(f) = fields {
            d.retain(|k, _| k == "id" || f.iter().any(|x| x == k));
        }
        clip_digest(&mut d, notes_clipped);
        Ok(Value::Object(d))
    }

    /// A branch's children, sub-branches first, each group by id. The
    /// dialect leaves the order open (vine §2.2); the budget clip drops
    /// from the tail, and by id alone the `~` buckets sorted last, so a cut
    /// digest showed leaves and hid the way down.
    fn children(&self, id: &str) -> VResult<Vec<Value>> {
        let mut st = self
            .catalog
            .connection()
            .prepare_cached("SELECT id, summary FROM nodes WHERE parent = ?1 ORDER BY kind = 'branch' DESC, id")?;
        let rows = st.query_map([id], |r| {
            Ok(json!({"id": r.get::<_, String>(0)?, "summary": clip(&r.get::<_, String>(1)?, 25)}))
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    pub(crate) fn inverse(&self, rel: &str) -> String {
        self.dialect.rels.get(rel).cloned().flatten().unwrap_or_else(|| rel.to_string())
    }

    /// `move(id, rel, direction)`: typed neighbours, hottest first (≤600).
    pub fn move_(&mut self, id: &str, rel: Option<&str>, direction: Option<&str>) -> VResult<Value> {
        let direction = direction.unwrap_or("out");
        if !["out", "in", "both"].contains(&direction) {
            return Err(VineError::schema(format!(
                "direction expects one of ['both', 'in', 'out'], got '{direction}'"
            ))
            .hint("Use 'both' for both directions ('all' is locate's scope word)."));
        }
        let row = self.row(id)?;
        let id = row.id;
        let mut raw: Vec<(String, String, &str)> = vec![];
        if rel == Some("children") {
            let mut st =
                self.catalog.connection().prepare_cached("SELECT id FROM nodes WHERE parent = ?1 ORDER BY id")?;
            let kids = st.query_map([&id], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
            raw.extend(kids.into_iter().map(|k| (k, "children".to_string(), "out")));
        } else {
            if direction != "in" {
                for e in self.catalog.edges_out(&id)? {
                    if rel.is_none_or(|r| r == e.rel) {
                        raw.push((e.dst, e.rel, "out"));
                    }
                }
            }
            if direction != "out" {
                for e in self.catalog.edges_in(&id)? {
                    let inv = self.inverse(&e.rel);
                    if rel.is_none_or(|r| r == e.rel || r == inv) {
                        raw.push((e.src, inv, "in"));
                    }
                }
            }
        }
        let ids: Vec<String> = raw.iter().map(|x| x.0.clone()).collect();
        let heat = self.heat_of(&ids)?;
        let mut items: Vec<(f64, Value)> = vec![];
        for (nid, r, dir) in raw {
            let (t, s) = match self.catalog.get(&nid)? {
                Some(row) => (row.node_type, row.summary),
                None => ("?".to_string(), String::new()),
            };
            let h = heat.get(&nid).copied().unwrap_or(0.0);
            items.push((h, json!({"id": nid, "rel": r, "direction": dir, "type": t, "summary": s, "heat": h})));
        }
        items.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut out = Map::new();
        out.insert("neighbors".into(), Value::Array(items.into_iter().map(|x| x.1).collect()));
        out.insert("truncated".into(), json!(false));
        shrink_list(&mut out, "neighbors", MOVE_BUDGET, id_of);
        Ok(Value::Object(out))
    }
}

/// `id: str | [str]`.
#[derive(Debug, Clone, PartialEq)]
pub enum IdArg {
    /// One id: the single shape.
    One(String),
    /// A list: the batch shape.
    Many(Vec<String>),
}

/// C.11 batch id rules: non-empty, capped, duplicates collapsed (first kept).
pub(crate) fn batch_ids(prim: &str, list: &[String], cap: usize) -> VResult<Vec<String>> {
    if list.is_empty() {
        return Err(VineError::schema(format!("{prim} received an empty id list")));
    }
    if list.len() > cap {
        return Err(VineError::schema(format!("{prim} accepts at most {cap} ids in one call; got {}", list.len())));
    }
    let mut seen = std::collections::HashSet::new();
    Ok(list.iter().map(|s| norm_id(s)).filter(|s| seen.insert(s.clone())).collect())
}

/// Drop whole items from the tail of `nodes` into `dropped` (request
/// order kept) while the batch payload is over `budget`.
pub(crate) fn batch_shrink(out: &mut Map<String, Value>, budget: usize) {
    while estimate_map(out) > budget {
        let Some(item) = out.get_mut("nodes").and_then(Value::as_array_mut).and_then(|a| a.pop()) else { break };
        if let Some(arr) = out.get_mut("dropped").and_then(Value::as_array_mut) {
            arr.insert(0, id_of(&item));
        }
        out.insert("truncated".into(), json!(true));
    }
}

/// Catalog JSON-list column -> JSON array.
pub(crate) fn json_list(s: Option<&str>) -> Value {
    s.and_then(|t| serde_json::from_str(t).ok()).unwrap_or_else(|| json!([]))
}

/// Lines of a `## Cross trails` section, `- ` stripped.
fn cross_trails(body: &str) -> Option<Vec<String>> {
    let mut inside = false;
    let mut found = false;
    let mut out = vec![];
    for line in body.lines() {
        if line.starts_with('#') {
            inside = line.trim_end() == "## Cross trails";
            found |= inside;
            continue;
        }
        if inside && line.trim_start().starts_with("- ") {
            out.push(line.trim_start_matches([' ', '-']).to_string());
        }
    }
    found.then_some(out)
}

/// The look clip (C.2 v0.57): shrink outline, children, edges_in,
/// edges_out in that order, then drop sample_rows; name what lost items.
fn clip_digest(d: &mut Map<String, Value>, notes_clipped: bool) {
    const ORDER: [&str; 5] = ["outline", "children", "edges_in", "edges_out", "sample_rows"];
    if estimate_map(d) <= LOOK_BUDGET {
        if notes_clipped {
            d.insert("truncated".into(), json!(true));
        }
        return;
    }
    d.insert("truncated".into(), json!(true));
    d.insert("truncated_fields".into(), json!(ORDER));
    let mut recorded: Vec<&str> = vec![];
    for key in &ORDER[..4] {
        let mut lost = false;
        while estimate_map(d) > LOOK_BUDGET {
            match d.get_mut(*key).and_then(Value::as_array_mut) {
                Some(a) if !a.is_empty() => {
                    a.pop();
                    lost = true;
                }
                _ => break,
            }
        }
        if lost {
            recorded.push(*key);
        }
    }
    if estimate_map(d) > LOOK_BUDGET && d.remove("sample_rows").is_some() {
        recorded.push("sample_rows");
    }
    if recorded.is_empty() {
        d.remove("truncated_fields");
        if !notes_clipped && estimate_map(d) <= LOOK_BUDGET {
            d.remove("truncated");
        }
    } else {
        d.insert("truncated_fields".into(), json!(recorded));
    }
}

/// SQL predicate of a window on column prefix `p` (`""` or `n2.`).
pub(crate) fn window_sql(w: &Window, p: &str) -> (String, Vec<String>) {
    let col = format!("{p}{}", w.date_field);
    let mut pred = format!("{col} != '' AND {col} IS NOT NULL");
    let mut args = vec![];
    if let Some(s) = &w.since {
        pred.push_str(&format!(" AND {col} >= ?"));
        args.push(s.clone());
    }
    if let Some(u) = &w.until {
        // `< until + 1 day` so timestamps on the last day are inside.
        let next = chrono::NaiveDate::parse_from_str(u, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.succ_opt())
            .map(|d| d.format("%Y-%m-%d").to_string())
            .unwrap_or_else(|| u.clone());
        pred.push_str(&format!(" AND {col} < ?"));
        args.push(next);
    }
    (pred, args)
}

/// BM25 alone: rank / best rank (bm25 is negative, lower is better).
fn bm25_strengths(hits: Vec<Hit>) -> Vec<(Hit, f64)> {
    let best = hits.iter().map(|h| h.rank).fold(0.0f64, f64::min);
    hits.into_iter()
        .map(|h| {
            let s = if best < 0.0 { h.rank / best } else { 1.0 };
            (h, s)
        })
        .collect()
}

/// Heat map helper shared by the list primitives.
pub(crate) fn heat_or_zero(m: &HashMap<String, f64>, id: &str) -> f64 {
    m.get(id).copied().unwrap_or(0.0)
}

/// A locate hit's row fields from columns `id, kind, type, title, summary,
/// trail, body_tokens, coverage, outline` (in that order).
fn hit_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Map<String, Value>> {
    let kind: String = r.get(1)?;
    let trail: Option<String> = r.get(5)?;
    let outline: Option<String> = r.get(8)?;
    let coverage: Option<String> = r.get(7)?;
    let mut m = Map::new();
    m.insert("id".into(), json!(r.get::<_, String>(0)?));
    m.insert("kind".into(), json!(wire_kind(&kind)));
    m.insert("type".into(), json!(r.get::<_, String>(2)?));
    m.insert("title".into(), json!(r.get::<_, String>(3)?));
    m.insert("summary".into(), json!(r.get::<_, String>(4)?));
    m.insert("trail".into(), json_list(trail.as_deref()));
    m.insert("body_tokens".into(), json!(r.get::<_, Option<i64>>(6)?.unwrap_or(0)));
    let cov = if kind == "branch" { coverage_value(coverage.as_deref()) } else { None };
    m.insert("coverage".into(), cov.unwrap_or(Value::Null));
    m.insert("outline".into(), json_list(outline.as_deref()));
    Ok(m)
}
