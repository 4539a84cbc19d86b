//! `locate`, `look`, `move` (vine spec §2.1–§2.3): curated metadata only
//! (the catalog), plus the node file for `look`'s digest.

use forest_model::ErrorCode;
use std::collections::HashMap;

use forest_canopy::{DenseQuery, MemoMode};
use forest_catalog::{Admit, Fusion, LocateHooks, LocateQuery, Scope};

use crate::answers::{
    Child, Digest, Digests, EdgeIn, EdgeOut, Located, LookAnswer, Moved, Neighbor, Stats, WindowTail,
};
use crate::args::{IdArg, LocateArgs};
use crate::batch::{batch_ids, batch_shrink};
use crate::budget::{clip, estimate_of, shrink_items, Dropped};
use crate::engine::{coverage_of, py_list, py_repr, Vine, ALPHA};
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
    pub fn locate(&mut self, a: &LocateArgs) -> VResult<Located> {
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
        let mut out = Located {
            results: res.results,
            truncated: res.truncated,
            dropped: Dropped::default(),
            note: None,
            tail: WindowTail::default(),
        };
        shrink_items(&mut out, LOCATE_BUDGET, |o| (&mut o.results, &mut o.truncated, &mut o.dropped), |i| i.id.clone());
        out.note = res.note;
        let empty = out.results.is_empty();
        out.tail = self.window_tail(q.window, empty, "No curated scent matched")?;
        if empty && out.tail.window.is_none() {
            out.tail.searched = Some(res.searched.unwrap_or(0));
            out.tail.hint = Some(res.hint.unwrap_or_else(|| EMPTY_HINT.to_string()));
        }
        Ok(out)
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

    /// `window`, `undated_excluded` and, for an `empty` answer, the
    /// empty-window fields.
    pub(crate) fn window_tail(&self, win: Option<Window>, empty: bool, prefix: &str) -> VResult<WindowTail> {
        let Some(w) = win else { return Ok(WindowTail::default()) };
        let undated = self.catalog.undated(&w)?;
        let mut out = WindowTail { undated_excluded: (undated > 0).then_some(undated), ..WindowTail::default() };
        if empty {
            let c = self.catalog.window_counts(&w)?;
            out.searched = Some(self.catalog.count_nodes()?);
            out.matched_window = Some(c.matched);
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
            out.hint = Some(hint);
        }
        out.window = Some(w);
        Ok(out)
    }

    /// `look(id | [ids], fields)`: the ≤500-token digest, or a batch.
    pub fn look(&mut self, ids: &IdArg, fields: Option<&[String]>) -> VResult<LookAnswer> {
        match ids {
            IdArg::One(id) => Ok(LookAnswer::One(Box::new(self.digest(id, fields)?))),
            IdArg::Many(list) => {
                let list = batch_ids("look", list, LOOK_BATCH_CAP)?;
                let mut nodes = vec![];
                let mut missing = vec![];
                for id in &list {
                    match self.digest(id, fields) {
                        Ok(d) => nodes.push(d),
                        Err(e) if e.code == ErrorCode::NotFound && !self.node_path(id).is_ok_and(|p| p.is_file()) => {
                            missing.push(id.clone())
                        }
                        Err(e) => return Err(e),
                    }
                }
                let mut out = Digests { nodes, missing, dropped: vec![], truncated: false };
                batch_shrink(
                    &mut out,
                    LOOK_BATCH_BUDGET,
                    |o| (&mut o.nodes, &mut o.dropped, &mut o.truncated),
                    |d| d.id.to_string(),
                );
                Ok(LookAnswer::Many(out))
            }
        }
    }

    fn digest(&mut self, id: &str, fields: Option<&[String]>) -> VResult<Digest> {
        let row = self.row(id)?;
        let id = row.id.clone();
        let node = self.read_node(&id).map_err(|_| crate::engine::not_found(&id))?;
        let want = |k: &str| fields.is_none_or(|f| f.iter().any(|x| x == k));
        let fm = |k: &str| Some(node.front.get(k).map(crate::yamljson::to_json).unwrap_or_default());
        let mut d = Digest {
            id: id.clone(),
            node_type: Some(row.node_type.clone()),
            title: Some(row.title.clone()),
            summary: Some(row.summary.clone()),
            tags: Some(row.tags.clone()),
            confidence: Some(row.confidence),
            created: fm("created"),
            updated: fm("updated"),
            source: fm("source"),
            aliases: Some(row.aliases.clone()).filter(|a| !a.is_empty()),
            origin: row.origin.clone().filter(|o| !o.is_empty()),
            lang: node.get_str("lang"),
            ..Digest::default()
        };
        let out_edges = self.catalog.edges_out(&id)?;
        let in_edges = self.catalog.edges_in(&id)?;
        let mut neighbour_ids: Vec<String> = out_edges.iter().map(|e| e.dst.clone()).collect();
        neighbour_ids.extend(in_edges.iter().map(|e| e.src.clone()));
        let heat = self.heat_of(&neighbour_ids)?;
        let h = |i: &str| heat.get(i).copied().unwrap_or(0.0);
        if want("edges_out") {
            let mut eo: Vec<(f64, EdgeOut)> = vec![];
            for e in &out_edges {
                let ts = self.catalog.get(&e.dst)?.map(|r| clip(&r.summary, 25)).unwrap_or_default();
                eo.push((h(&e.dst), EdgeOut { rel: e.rel.clone(), target: e.dst.clone(), target_summary: ts }));
            }
            eo.sort_by(|a, b| b.0.total_cmp(&a.0));
            d.edges_out = Some(eo.into_iter().take(MAX_EDGES_SHOWN).map(|x| x.1).collect());
        }
        if want("edges_in") {
            let mut ei: Vec<(f64, EdgeIn)> = in_edges
                .iter()
                .map(|e| (h(&e.src), EdgeIn { rel: self.inverse(&e.rel), source: e.src.clone() }))
                .collect();
            ei.sort_by(|a, b| b.0.total_cmp(&a.0));
            d.edges_in = Some(ei.into_iter().take(MAX_EDGES_SHOWN).map(|x| x.1).collect());
        }
        if row.kind.is_branch() {
            if want("children") {
                d.children = Some(self.children(&id)?);
            }
            d.cross_trails = cross_trails(&node.body);
            d.coverage = coverage_of(row.coverage.as_deref());
        } else {
            d.outline = Some(row.outline.clone());
        }
        let mut notes_clipped = false;
        if row.node_type == "dataset" && row.payload_type.as_deref() == Some("sqlite") {
            let need = ["query_manual", "sample_rows", "notes"].iter().any(|k| want(k));
            if need {
                let ds = crate::sql::dataset_digest(self, &row, &node.body)?;
                d.query_manual = Some(ds.query_manual).filter(|_| want("query_manual"));
                d.sample_rows = Some(ds.sample_rows).filter(|_| want("sample_rows"));
                if let Some(n) = ds.notes.filter(|_| want("notes")) {
                    notes_clipped = n.1;
                    d.notes = Some(n.0);
                }
            }
        }
        let own_heat = self.heat_of(&[id.to_string()])?.get(id.as_str()).copied().unwrap_or(0.0);
        d.stats =
            Some(Stats { body_tokens: row.body_tokens, degree: out_edges.len() + in_edges.len(), heat: own_heat });
        if let Some(f) = fields {
            d.retain(|k| f.iter().any(|x| x == k));
        }
        clip_digest(&mut d, notes_clipped);
        Ok(d)
    }

    /// A branch's children, sub-branches first, each group by id. The
    /// dialect leaves the order open (vine §2.2); the budget clip drops
    /// from the tail, and by id alone the `~` buckets sorted last, so a cut
    /// digest showed leaves and hid the way down.
    fn children(&self, id: &str) -> VResult<Vec<Child>> {
        let kids = self.catalog.children(id)?;
        Ok(kids.into_iter().map(|(id, summary)| Child { id, summary: clip(&summary, 25) }).collect())
    }

    pub(crate) fn inverse(&self, rel: &str) -> String {
        self.dialect.rels.get(rel).cloned().flatten().unwrap_or_else(|| rel.to_string())
    }

    /// `move(id, rel, direction)`: typed neighbours, hottest first (≤600).
    pub fn move_(&mut self, id: &str, rel: Option<&str>, direction: Option<&str>) -> VResult<Moved> {
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
        let mut items: Vec<Neighbor> = vec![];
        for (nid, rel, direction) in raw {
            let (node_type, summary) = match self.catalog.get(&nid)? {
                Some(row) => (row.node_type, row.summary),
                None => ("?".to_string(), String::new()),
            };
            let heat = heat.get(&nid).copied().unwrap_or(0.0);
            items.push(Neighbor { id: nid, rel, direction, node_type, summary, heat });
        }
        items.sort_by(|a, b| b.heat.total_cmp(&a.heat));
        let mut out = Moved { neighbors: items, truncated: false, dropped: Dropped::default() };
        shrink_items(&mut out, MOVE_BUDGET, |m| (&mut m.neighbors, &mut m.truncated, &mut m.dropped), |n| n.id.clone());
        Ok(out)
    }
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
fn clip_digest(d: &mut Digest, notes_clipped: bool) {
    const ORDER: [&str; 5] = ["outline", "children", "edges_in", "edges_out", "sample_rows"];
    if estimate_of(d) <= LOOK_BUDGET {
        if notes_clipped {
            d.truncated = Some(true);
        }
        return;
    }
    d.truncated = Some(true);
    d.truncated_fields = Some(ORDER.to_vec());
    let mut recorded: Vec<&'static str> = vec![];
    for key in &ORDER[..4] {
        let mut lost = false;
        while estimate_of(d) > LOOK_BUDGET {
            let popped = match *key {
                "outline" => d.outline.as_mut().and_then(Vec::pop).is_some(),
                "children" => d.children.as_mut().and_then(Vec::pop).is_some(),
                "edges_in" => d.edges_in.as_mut().and_then(Vec::pop).is_some(),
                _ => d.edges_out.as_mut().and_then(Vec::pop).is_some(),
            };
            if !popped {
                break;
            }
            lost = true;
        }
        if lost {
            recorded.push(key);
        }
    }
    if estimate_of(d) > LOOK_BUDGET && d.sample_rows.take().is_some() {
        recorded.push("sample_rows");
        // the wire names the lists where sample_rows stood
        d.truncated_fields_in_place = d.truncated_fields.take();
    }
    let slot =
        if d.truncated_fields_in_place.is_some() { &mut d.truncated_fields_in_place } else { &mut d.truncated_fields };
    if recorded.is_empty() {
        *slot = None;
        if !notes_clipped && estimate_of(d) <= LOOK_BUDGET {
            d.truncated = None;
        }
    } else {
        *slot = Some(recorded);
    }
}

/// Heat map helper shared by the list primitives.
pub(crate) fn heat_or_zero(m: &HashMap<String, f64>, id: &str) -> f64 {
    m.get(id).copied().unwrap_or(0.0)
}
