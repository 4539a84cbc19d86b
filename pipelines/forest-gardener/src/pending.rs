//! `forest curate --pending`: re-curate ingested nodes that still carry a
//! machine-derived summary (the Curator fell back or was not used).

use crate::derived::catalog_row;
use crate::error::GardenError;
use crate::options::{Curate, Draft, DraftLink};
use forest_git::{Change, GitForest};
use forest_model::ids;
use forest_model::index::{self, entry_line, DIRECT_BANANAS};
use forest_model::node::{today, Node};
use forest_model::scent::{summary_fingerprint, validate_summary};
use forest_model::walk::node_paths;
use forest_model::yaml::{Mapping, Value};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// `forest curate --pending --json`.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct PendingReport {
    /// Report shape version.
    pub version: u32,
    /// Nodes that were pending.
    pub pending: usize,
    /// Nodes now carrying an LLM summary.
    pub curated: Vec<String>,
    /// Nodes still pending (the model failed again).
    pub still_pending: Vec<String>,
    /// The commit, when anything changed.
    pub commit: Option<String>,
}

/// Re-curate every pending node (`source: ingest`, `scent: derived`, summary
/// untouched by a person); one commit for all of them.
pub fn curate_pending(forest: &Path, git: &GitForest, hook: &dyn Curate) -> Result<PendingReport, GardenError> {
    let candidates: Vec<(String, Node)> = node_paths(forest)
        .par_iter()
        .filter_map(|rel| {
            let id = rel.strip_suffix(".md")?.to_string();
            if ids::is_branch_id(&id) || ids::is_meta(&id) {
                return None;
            }
            let n = Node::parse(&std::fs::read_to_string(forest.join(rel)).ok()?).ok()?;
            let summary = n.get_str("summary")?;
            let pending = n.get_str("source").as_deref() == Some("ingest")
                && n.get_str("scent").as_deref() == Some("derived")
                && n.get_str("scent_hash").as_deref() == Some(summary_fingerprint(&summary).as_str());
            pending.then_some((id, n))
        })
        .collect();
    let mut report = PendingReport { version: 1, pending: candidates.len(), ..Default::default() };
    let results: Vec<(String, Node, Draft)> = candidates
        .into_par_iter()
        .map(|(id, n)| {
            let mut d = Draft {
                id: id.clone(),
                parent: ids::parent_index(&id).unwrap_or_else(|| ids::MASTER.into()),
                title: n.title().unwrap_or_else(|| id.clone()),
                body: n.body.clone(),
                summary: n.get_str("summary").unwrap_or_default(),
                tags: n.get_list("tags"),
                links: DraftLink::existing(&n),
                scent: "derived".into(),
            };
            let before = d.links.len();
            let _ = hook.curate(&mut d);
            // Only the links the hook added are new; existing ones stay as written.
            d.links.drain(..before);
            (id, n, d)
        })
        .collect();
    let day = today();
    let mut dirty: BTreeMap<String, Node> = BTreeMap::new();
    for (id, mut n, d) in results {
        if d.scent != "llm" || validate_summary(&d.summary).is_err() {
            report.still_pending.push(id);
            continue;
        }
        n.set_str("summary", &d.summary);
        n.set_str("scent", "llm");
        n.set_str("scent_hash", &summary_fingerprint(&d.summary));
        if !d.tags.is_empty() {
            n.set_list("tags", &d.tags);
        }
        if !d.links.is_empty() {
            let mut links = match n.front.get("links") {
                Some(Value::Sequence(s)) => s.clone(),
                _ => vec![],
            };
            for l in &d.links {
                let mut m = Mapping::new();
                m.insert("rel".into(), l.rel.clone().into());
                m.insert("target".into(), l.target.clone().into());
                m.insert("confidence".into(), Value::from(l.confidence));
                if let Some(note) = &l.note {
                    m.insert("note".into(), note.clone().into());
                }
                links.push(Value::Mapping(m));
            }
            n.set("links", Value::Sequence(links));
        }
        n.set_str("updated", &day);
        // Entry lines replicate child summaries verbatim.
        if let Some(parent) = ids::parent_index(&id) {
            let pnode = match dirty.get(&parent) {
                Some(p) => Some(p.clone()),
                None => std::fs::read_to_string(forest.join(ids::id_to_path(&parent)))
                    .ok()
                    .and_then(|t| Node::parse(&t).ok()),
            };
            if let Some(mut p) = pnode {
                p.body = index::upsert_entry(&p.body, DIRECT_BANANAS, &id, &entry_line(&id, &d.summary, None));
                p.set_str("updated", &day);
                dirty.insert(parent, p);
            }
        }
        report.curated.push(id.clone());
        dirty.insert(id, n);
    }
    report.curated.sort();
    report.still_pending.sort();
    if dirty.is_empty() {
        return Ok(report);
    }
    let changes: Vec<Change> = dirty
        .iter()
        .map(|(id, n)| Change::Write { path: ids::id_to_path(id), bytes: n.to_text().into_bytes() })
        .collect();
    let msg =
        format!("gardener(curate): {} pending nodes curated\n\n{}\n", report.curated.len(), report.curated.join("\n"));
    report.commit = git.commit_batch(&changes, &msg)?.map(|o| o.to_string());
    if let Ok(mut cat) = crate::derived::open_catalog(forest) {
        let rows: Vec<_> = dirty.iter().map(|(id, n)| catalog_row(id, n)).collect();
        let _ = cat.upsert(&rows);
    }
    Ok(report)
}
