//! `forest curate --pending [--budget N|DURATION]`: curate ingested leaves
//! that still carry a machine-derived summary (the Curator fell back, kept
//! the derived scent, or was not used), in order of demand
//! ([`crate::demand`]: shared heat, opens, recency), until the budget is
//! spent. Every candidate goes through the hook's validate-and-retry; what
//! was curated is committed every [`COMMIT_EVERY`] documents, so a run cut
//! short keeps its work. A curated node is never pending again, so the next
//! run continues with the rest.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use crate::demand::attempts::Attempts;
use crate::demand::{self, Demand};
use crate::error::GardenError;
use crate::options::{Curate, Draft, DraftLink};
use forest_derived::catalog::catalog_row;
use forest_derived::curation::{stopped_by, Budget, PendingReport};
use forest_git::{Change, GitForest};
use forest_model::ids;
use forest_model::index::{self, entry_line, DIRECT_BANANAS};
use forest_model::node::{today, Node};
use forest_model::scent::{is_pending_curation, summary_fingerprint, validate_summary};
use forest_model::walk::node_paths;
use forest_model::yaml::{Mapping, Value};
use rayon::prelude::*;

/// Curated documents per commit.
pub const COMMIT_EVERY: usize = 64;

/// Curate every pending leaf (no budget), in order of demand.
pub fn curate_pending(forest: &Path, git: &GitForest, hook: &dyn Curate) -> Result<PendingReport, GardenError> {
    curate_budgeted(forest, git, hook, &Budget::default(), &|| false)
}

/// Curate pending leaves in order of demand until `budget` is spent: a
/// document budget hands at most that many to the model; a time budget
/// takes no new document once it has elapsed (those in flight finish and
/// are committed). Once `offline()` says the endpoint is down, no new
/// document is taken either, and what came back while it was down is not
/// counted as an attempt of its leaf.
pub fn curate_budgeted(
    forest: &Path,
    git: &GitForest,
    hook: &dyn Curate,
    budget: &Budget,
    offline: &(dyn Fn() -> bool + Sync),
) -> Result<PendingReport, GardenError> {
    let started = Instant::now();
    let attempts = Attempts::open(forest);
    let order = demand::order(demand::signals::gather(forest, scan_pending(forest), attempts.as_ref()));
    let total = order.len();
    let limit = budget.docs.map_or(total, |n| n.min(total));
    let deadline = budget.time.map(|t| started + t);
    let mut report = PendingReport { version: 2, pending: total, ..Default::default() };
    let next = AtomicUsize::new(0);
    let (time_up, went_offline) = (AtomicBool::new(false), AtomicBool::new(false));
    let workers = hook.concurrency().clamp(1, 256).min(limit.max(1));
    std::thread::scope(|s| -> Result<(), GardenError> {
        let (tx, rx) = crossbeam_channel::bounded::<Taken>(workers * 2);
        for _ in 0..workers {
            let tx = tx.clone();
            let (order, next, time_up, went_offline) = (&order, &next, &time_up, &went_offline);
            s.spawn(move || loop {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    time_up.store(true, Ordering::SeqCst);
                    break;
                }
                if offline() {
                    went_offline.store(true, Ordering::SeqCst);
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= limit {
                    break;
                }
                let id = &order[i].id;
                let out = curate_one(forest, hook, id);
                if tx.send(Taken { id: id.clone(), out, offline: offline() }).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // A failed commit returns here: `rx` drops and the workers stop.
        let mut batch = Vec::with_capacity(COMMIT_EVERY);
        for item in rx {
            batch.push(item);
            if batch.len() >= COMMIT_EVERY {
                commit_batch(forest, git, std::mem::take(&mut batch), &mut report, attempts.as_ref())?;
            }
        }
        commit_batch(forest, git, batch, &mut report, attempts.as_ref())
    })?;
    let taken = next.load(Ordering::SeqCst).min(limit);
    let (time_up, went_offline) = (time_up.load(Ordering::SeqCst), went_offline.load(Ordering::SeqCst));
    report.stopped_by = stopped_by(taken, total, budget, time_up, went_offline);
    report.curated.sort();
    report.kept_derived.sort();
    report.still_pending = report.kept_derived.clone();
    report.left = total - report.curated.len();
    report.commit = report.commits.last().cloned();
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        event = "gardener.curate_pending.done",
        curated = report.curated.len(),
        kept_derived = report.kept_derived.len(),
        left = report.left,
        stopped_by = ?report.stopped_by
    );
    Ok(report)
}

/// One leaf handed to the model: the node and draft (`None`: unreadable
/// or no longer pending), and whether the Curator was offline after it.
struct Taken {
    id: String,
    out: Option<(Node, Draft)>,
    offline: bool,
}

/// Every pending leaf (`_meta/*` and branches excluded), cold, with the
/// time its source last changed and its `scent_hash`.
fn scan_pending(forest: &Path) -> Vec<(Demand, String)> {
    node_paths(forest)
        .par_iter()
        .filter_map(|rel| {
            let id = rel.strip_suffix(".md")?;
            if ids::is_branch_id(id) || ids::is_meta(id) {
                return None;
            }
            let n = Node::parse(&std::fs::read_to_string(forest.join(rel)).ok()?).ok()?;
            let hash = n.get_str("scent_hash").unwrap_or_default();
            is_pending_curation(&n).then(|| (Demand::cold(id, changed_at(&n)), hash))
        })
        .collect()
}

/// `source_mtime` (unix seconds), else the `updated` day, else 0.
fn changed_at(n: &Node) -> f64 {
    if let Some(t) = n.front.get("source_mtime").and_then(Value::as_f64).filter(|t| t.is_finite()) {
        return t;
    }
    n.get_str("updated")
        .and_then(|d| chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok())
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map_or(0.0, |t| t.and_utc().timestamp() as f64)
}

/// Read `id` again (it may have changed since the scan only through this
/// run, which holds the writer lock) and hand it to the hook; `None` when
/// it is unreadable or no longer pending.
fn curate_one(forest: &Path, hook: &dyn Curate, id: &str) -> Option<(Node, Draft)> {
    let n = Node::parse(&std::fs::read_to_string(forest.join(ids::id_to_path(id))).ok()?).ok()?;
    if !is_pending_curation(&n) {
        return None;
    }
    let mut d = Draft {
        id: id.to_string(),
        parent: ids::parent_index(id).unwrap_or_else(|| ids::MASTER.into()),
        title: n.title().unwrap_or_else(|| id.to_string()),
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
    Some((n, d))
}

/// Write the curated drafts of one batch (and their parents' entry lines)
/// as one commit; drafts whose derived scent stays are reported and
/// counted as an attempt (unless the endpoint was down).
fn commit_batch(
    forest: &Path,
    git: &GitForest,
    batch: Vec<Taken>,
    report: &mut PendingReport,
    attempts: Option<&Attempts>,
) -> Result<(), GardenError> {
    let day = today();
    let mut dirty: BTreeMap<String, Node> = BTreeMap::new();
    let mut curated = vec![];
    for Taken { id, out, offline } in batch {
        let Some((mut n, d)) = out else { continue };
        if d.scent != "llm" || validate_summary(&d.summary).is_err() {
            if let Some(a) = attempts.filter(|_| !offline) {
                a.kept(&id, &n.get_str("scent_hash").unwrap_or_default());
            }
            report.kept_derived.push(id);
            continue;
        }
        if let Some(a) = attempts {
            a.forget(&id);
        }
        apply_draft(&mut n, &d, &day);
        // Entry lines replicate child summaries verbatim.
        if let Some(parent) = ids::parent_index(&id) {
            let pnode = match dirty.remove(&parent) {
                Some(p) => Some(p),
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
        curated.push(id.clone());
        dirty.insert(id, n);
    }
    if curated.is_empty() {
        return Ok(());
    }
    let changes: Vec<Change> = dirty
        .iter()
        .map(|(id, n)| Change::Write { path: ids::id_to_path(id), bytes: n.to_text().into_bytes() })
        .collect();
    curated.sort();
    let msg = format!("gardener(curate): {} pending nodes curated\n\n{}\n", curated.len(), curated.join("\n"));
    if let Some(oid) = git.commit_batch(&changes, &msg)? {
        report.commits.push(oid.to_string());
    }
    if let Ok(mut cat) = forest_derived::catalog::open_catalog(forest) {
        let rows: Vec<_> = dirty.iter().map(|(id, n)| catalog_row(id, n)).collect();
        let _ = cat.upsert(&rows);
    }
    report.curated.extend(curated);
    Ok(())
}

/// A curated draft's scent onto its node: summary, fingerprint, tags and
/// the links the hook proposed.
fn apply_draft(n: &mut Node, d: &Draft, day: &str) {
    // The derived scent it replaces stays findable (its terms become tags).
    let derived = n.get_str("summary").unwrap_or_default();
    let tags = forest_model::kept_terms::kept_tags(&derived, &n.get_list("tags"), &d.summary, &d.tags);
    n.set_str("summary", &d.summary);
    n.set_str("scent", "llm");
    n.set_str("scent_hash", &summary_fingerprint(&d.summary));
    if !tags.is_empty() {
        n.set_list("tags", &tags);
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
    n.set_str("updated", day);
}
