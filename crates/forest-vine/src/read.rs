//! `locate`, `look`, `move` (vine spec §2.1–§2.3): curated metadata only
//! (the catalog), plus the node file for `look`'s digest.

use forest_model::ErrorCode;
use std::collections::HashMap;

use forest_canopy::{DenseQuery, MemoMode};
use forest_catalog::{Admit, Fusion, LocateHooks, LocateQuery, Scope};
use serde_json::{json, Map, Value};

use crate::args::{IdArg, LocateArgs};
use crate::batch::{batch_ids, batch_shrink};
use crate::budget::{clip, estimate_map, id_of, shrink_list};
use crate::engine::{coverage_value, py_list, py_repr, Vine, ALPHA};
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

impl Vine {
    /// The `lang:` a node declares in its frontmatter (files are read only
    /// when a caller filters by language: the catalog has no such column).
    pub(crate) fn node_lang(&self, id: &str) -> Option<String> {
        self.read_node(id).ok().and_then(|n| n.get_str("lang"))
    }

    /// `locate`: the catalog's one ranking ([`forest_catalog::locate`]):
    /// scent BM25, fused with the canopy when the forest has a current one
    /// (the `fusion` argument, else the server's default), × (1 + α·heat);
    /// never bodies. This edge parses the arguments, hides what the caller
    /// may not see, and applies the payload budget.
    pub fn locate(&mut self, a: &LocateArgs) -> VResult<Value> {
        let q = self.locate_query(a)?;
        let lang = check_lang(a.lang.as_deref())?;
        // Hybrid: the query is embedded on this thread's long-lived
        // one-thread pool while BM25 runs here.
        let dense = q.fusion.wants_vectors().then(|| {
            // a --readonly server keeps the query memo in process (K.6)
            let memo = if self.shared_writes { MemoMode::Persist } else { MemoMode::ProcessOnly };
            forest_canopy::begin_dense(&self.root, &a.query, q.depth(), memo)
        });
        let res = {
            let this = &*self;
            let heat = |ids: &[String]| this.ranking_heat(ids);
            let mut admit = |id: &str| {
                if this.deadline_passed() {
                    Admit::Stop
                } else if lang.as_ref().is_some_and(|l| this.node_lang(id).as_deref() != Some(l.as_str())) {
                    Admit::No
                } else {
                    Admit::Yes
                }
            };
            let hooks = LocateHooks { heat: &heat, admit: &mut admit };
            let explicit = a.fusion.is_some();
            forest_catalog::locate(&this.catalog, &q, hooks, || dense.and_then(|d| DenseQuery::answer(d, explicit)))
        };
        let res = match res {
            Err(forest_catalog::CatalogError::Stopped) => return Err(self.deadline_error("locate")),
            other => other?,
        };
        let Value::Object(mut out) = serde_json::to_value(&res)? else {
            return Err(VineError::internal("locate: the result is not an object"));
        };
        let note = out.remove("note");
        let (searched, hint) = (out.remove("searched"), out.remove("hint"));
        shrink_list(&mut out, "results", LOCATE_BUDGET, id_of);
        if let Some(note) = note {
            out.insert("note".into(), note);
        }
        self.window_tail(&mut out, q.window.as_ref(), "results", "No curated scent matched")?;
        if out["results"].as_array().is_some_and(|r| r.is_empty()) && q.window.is_none() {
            out.insert("searched".into(), searched.unwrap_or_else(|| json!(0)));
            out.insert("hint".into(), hint.unwrap_or_else(|| json!(EMPTY_HINT)));
        }
        Ok(Value::Object(out))
    }

    /// The typed query of a `locate` call (E_SCHEMA for bad arguments).
    fn locate_query(&self, a: &LocateArgs) -> VResult<LocateQuery> {
        if let Some(inc) = &a.include {
            let bad: Vec<String> = inc.iter().filter(|i| i.as_str() != "outline").cloned().collect();
            if !bad.is_empty() {
                return Err(VineError::schema(format!("include accepts ['outline']; got {}", py_list(&bad))));
            }
        }
        let scope = Scope::parse(a.scope.as_deref().unwrap_or("all"))?;
        let window = window::parse(a.since.as_deref(), a.until.as_deref(), a.date_field.as_deref())?;
        let fusion = match a.fusion.as_deref() {
            None => self.fusion,
            Some(f) => Fusion::parse(f).ok_or_else(|| {
                VineError::schema(format!(
                    "fusion expects one of {}, got {}",
                    py_list(&Fusion::NAMES.map(String::from)),
                    py_repr(f)
                ))
            })?,
        };
        let k = a.k.unwrap_or(5);
        if k < 1 {
            return Err(VineError::schema(format!("k must be an integer >= 1, got {k}")));
        }
        Ok(LocateQuery {
            text: a.query.clone(),
            k: k as usize,
            scope,
            type_filter: a.type_filter.clone(),
            window,
            include_outline: a.include.as_ref().is_some_and(|i| !i.is_empty()),
            alpha: ALPHA,
            // A scoped caller's hits are the visible ones among the ranked
            // candidates, so it ranks them all (as a language filter does).
            deep: a.lang.is_some() || self.access.scoped(),
            fusion,
        })
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
        out.insert("window".into(), json!(w));
        let undated = self.catalog.undated(w)?;
        if undated > 0 {
            out.insert("undated_excluded".into(), json!(undated));
        }
        if out[list].as_array().is_some_and(|r| r.is_empty()) {
            let c = self.catalog.window_counts(w)?;
            out.insert("searched".into(), json!(self.catalog.count_nodes()?));
            out.insert("matched_window".into(), json!(c.matched));
            let hint = if c.matched == 0 {
                format!(
                    "{prefix}: the window holds nothing. The forest has {} dated node(s) from {} to {}; calendar() shows which periods hold any.",
                    c.dated,
                    c.first.unwrap_or_default(),
                    c.last.unwrap_or_default()
                )
            } else {
                format!("{prefix}, but the window is not the reason: {} node(s) lie inside it. Try sniff(terms) or a wider question.", c.matched)
            };
            out.insert("hint".into(), json!(hint));
        }
        Ok(())
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
                        Err(e) if e.code == ErrorCode::NotFound && !self.node_path(id).is_ok_and(|p| p.is_file()) => {
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
        let kids = self.catalog.children(id)?;
        Ok(kids.into_iter().map(|(id, summary)| json!({"id": id, "summary": clip(&summary, 25)})).collect())
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
            let kids = self.catalog.child_ids(&id)?;
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

/// Heat map helper shared by the list primitives.
pub(crate) fn heat_or_zero(m: &HashMap<String, f64>, id: &str) -> f64 {
    m.get(id).copied().unwrap_or(0.0)
}
