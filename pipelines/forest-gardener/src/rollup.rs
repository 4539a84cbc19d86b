//! Branch rollups (dialect §3.16, §4.6): deepest first, each parent sees
//! its children's fresh summaries; the Curator writes them when available,
//! else the deterministic summary each batch writes too (themes and names
//! of the children: `stages::plan::themes`). One commit. After a curated
//! adopt/sync only the branches the run changed are rolled up
//! ([`changed_branches`]): the ancestors of what it planted, updated,
//! moved or marked stale.

use crate::error::GardenError;
use crate::stages::plan::branch_scent::{derived_summary, Row};
use forest_curator::Curator;
use forest_derived::catalog::catalog_row;
use forest_git::{Change, GitForest};
use forest_model::ids;
use forest_model::index::{self, entry_line, DIRECT_BANANAS, SUB_BRANCHES};
use forest_model::node::{today, Node};
use forest_model::scent::{derive_branch_summary, summary_fingerprint};
use forest_model::walk::node_paths;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

pub use crate::report::RollupReport;

fn load(forest: &Path, id: &str, cache: &mut HashMap<String, Node>) -> Option<Node> {
    if let Some(n) = cache.get(id) {
        return Some(n.clone());
    }
    let n = Node::parse(&std::fs::read_to_string(forest.join(ids::id_to_path(id))).ok()?).ok()?;
    cache.insert(id.to_string(), n.clone());
    Some(n)
}

/// The branches a Gardener run changed: every ancestor of a node it
/// planted, updated, moved (both ends) or marked stale, and the branches
/// it created.
pub fn changed_branches(report: &crate::GardenReport) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    let add_ancestors = |id: &str, out: &mut BTreeSet<String>| {
        let mut cur = ids::parent_index(id);
        while let Some(p) = cur {
            if !out.insert(p.clone()) {
                break;
            }
            cur = ids::parent_index(&p);
        }
    };
    for s in &report.sources {
        for id in s.planted.iter().chain(s.updated.iter()).chain(s.stale.iter().cloned()) {
            add_ancestors(&id, &mut out);
        }
        for id in s.branches.iter() {
            add_ancestors(&id, &mut out);
            out.insert(id);
        }
        for m in &s.moved {
            add_ancestors(&m.from, &mut out);
            add_ancestors(&m.to, &mut out);
        }
    }
    out
}

/// Roll up branch summaries. `all` widens the scope from `source: ingest`
/// branches to every non-`_meta` branch; `only` narrows it to a set (a
/// run's [`changed_branches`]). `dry_run` writes nothing.
pub fn rollup(
    forest: &Path,
    git: &GitForest,
    curator: Option<&Curator>,
    all: bool,
    only: Option<&BTreeSet<String>>,
    dry_run: bool,
) -> Result<RollupReport, GardenError> {
    let mut report = RollupReport { version: 1, ..Default::default() };
    let mut branches: Vec<String> = node_paths(forest)
        .into_iter()
        .filter_map(|p| p.strip_suffix(".md").map(String::from))
        .filter(|id| ids::is_branch_id(id) && !ids::is_meta(id))
        .filter(|id| only.is_none_or(|set| set.contains(id)))
        .collect();
    // Deepest first, then id.
    branches.sort_by(|a, b| b.matches('/').count().cmp(&a.matches('/').count()).then(a.cmp(b)));
    let mut cache: HashMap<String, Node> = HashMap::new();
    let mut dirty: BTreeMap<String, ()> = BTreeMap::new();
    let day = today();
    for bid in &branches {
        let Some(mut node) = load(forest, bid, &mut cache) else {
            report.skipped += 1;
            continue;
        };
        if !all && node.get_str("source").as_deref() != Some("ingest") {
            report.skipped += 1;
            continue;
        }
        let mut entries = index::section_entries(&node.body, SUB_BRANCHES);
        entries.extend(index::section_entries(&node.body, DIRECT_BANANAS));
        if entries.is_empty() {
            report.skipped += 1;
            continue;
        }
        let title = node.title().unwrap_or_else(|| bid.clone());
        let llm = curator.and_then(|c| c.branch_summary(&title, &entries));
        let (summary, scent) = match llm {
            Some(s) => (s, "llm"),
            None => {
                let (titles, rows) = child_rows(forest, &entries, &mut cache);
                report.fallbacks.push(bid.clone());
                // The summary each batch derives; the older listing when
                // that derivation has nothing to say.
                let derived = derived_summary(bid, &rows).unwrap_or_else(|| derive_branch_summary(&title, &titles));
                (derived, "derived")
            }
        };
        if node.get_str("summary").as_deref() == Some(summary.as_str()) {
            continue;
        }
        node.set_str("summary", &summary);
        node.set_str("scent", scent);
        node.set_str("scent_hash", &summary_fingerprint(&summary));
        node.set_str("updated", &day);
        // Keep the body's blockquote in step with the scent.
        node.body = replace_blockquote(&node.body, &summary);
        cache.insert(bid.clone(), node);
        dirty.insert(bid.clone(), ());
        report.rolled.push(bid.clone());
        propagate_to_parent(forest, bid, &summary, &day, &mut cache, &mut dirty);
    }
    if dry_run || dirty.is_empty() {
        return Ok(report);
    }
    let mut changes = vec![];
    let mut rows = vec![];
    for id in dirty.keys() {
        if let Some(n) = cache.get(id) {
            rows.push(catalog_row(id, n));
            changes.push(Change::Write { path: ids::id_to_path(id), bytes: n.to_text().into_bytes() });
        }
    }
    let msg = format!("gardener(rollup): {} branch summaries\n\n{}\n", report.rolled.len(), report.rolled.join("\n"));
    report.commit = git.commit_batch(&changes, &msg)?.map(|o| o.to_string());
    if let Ok(mut cat) = forest_derived::catalog::open_catalog(forest) {
        let _ = cat.upsert(&rows);
    }
    Ok(report)
}

/// The children an entry list names, as the derived branch summary reads
/// them: each one's display title, and its row (name, branch or not,
/// title, summary, tags).
fn child_rows(forest: &Path, entries: &[String], cache: &mut HashMap<String, Node>) -> (Vec<String>, Vec<Row>) {
    let mut titles: Vec<String> = vec![];
    let mut rows: Vec<Row> = vec![];
    for cid in entries.iter().filter_map(|l| index::entry_id(l)) {
        let child = load(forest, cid, cache);
        let branch = ids::is_branch_id(cid);
        let path = if branch { ids::folder_of(cid) } else { cid };
        let name = path.rsplit('/').next().unwrap_or(path).to_string();
        let t = child.as_ref().and_then(Node::title);
        titles.push(t.clone().unwrap_or_else(|| name.clone()));
        let summary = child.as_ref().and_then(|n| n.get_str("summary")).unwrap_or_default();
        let tags = child.as_ref().map(|n| n.get_list("tags")).unwrap_or_default();
        rows.push((name, branch, t, summary, tags));
    }
    (titles, rows)
}

/// Verbatim propagation of a branch's new summary into its parent's
/// Sub-branches line, keeping a coverage suffix.
fn propagate_to_parent(
    forest: &Path,
    bid: &str,
    summary: &str,
    day: &str,
    cache: &mut HashMap<String, Node>,
    dirty: &mut BTreeMap<String, ()>,
) {
    let Some(parent) = ids::parent_index(bid) else { return };
    let Some(mut p) = load(forest, &parent, cache) else { return };
    let old = index::section_entries(&p.body, SUB_BRANCHES).into_iter().find(|l| index::entry_id(l) == Some(bid));
    let suffix = old.as_deref().and_then(crate::stages::text::coverage_suffix);
    let line = entry_line(bid, summary, suffix.as_deref());
    let body = index::upsert_entry(&p.body, SUB_BRANCHES, bid, &line);
    if body != p.body {
        p.body = body;
        p.set_str("updated", day);
        cache.insert(parent.clone(), p);
        dirty.insert(parent, ());
    }
}

fn replace_blockquote(body: &str, summary: &str) -> String {
    if forest_model::node::body_blockquote(body).is_none() {
        return body.to_string();
    }
    let mut out: Vec<String> = vec![];
    let mut done = false;
    for line in body.lines() {
        if !done && line.trim_start().starts_with('>') {
            out.push(format!("> {summary}"));
            done = true;
        } else {
            out.push(line.to_string());
        }
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}
