//! One Ranger cycle (dialect §5.7): evaporate -> session TTL -> payload
//! cache -> link lifecycle -> landmarks -> (one commit) -> health -> gc.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use crate::config::RANGER_CONFIG_PATH;
use forest_catalog::{Catalog, Trails};
use forest_derived::catalog::{catalog_row, open_catalog, TRAILS_PATH};
use forest_git::{Change, GcOutcome, GitForest};
use forest_model::ids;
use forest_model::index::{entry_line, replace_section, section_entries, LANDMARKS};
use forest_model::node::{today, Node};
use forest_model::yaml::Value;
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;

use crate::cache::{evict_payloads, PayloadCacheReport};
use crate::health::{health, HealthReport};
use crate::plan::{plan_landmarks, plan_links, DegreeEntry, LinkAction, ManagedLink};
use crate::{RangerConfig, RangerError, Result};

/// `{decayed, removed, stale_sessions_cleared}` (dialect §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EvaporationReport {
    /// Persistent rows decayed and re-stamped.
    pub decayed: usize,
    /// Persistent rows that fell below 0.01 and were deleted.
    pub removed: usize,
    /// Session rows older than the TTL deleted.
    pub stale_sessions_cleared: usize,
}

/// Link lifecycle outcome (dialect §5.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct LinksReport {
    /// `"<src> <rel>-><target>"` of promoted links.
    pub promoted: Vec<String>,
    /// `"<src> <rel>-><target>"` of pruned links.
    pub pruned: Vec<String>,
    /// `"<id>: <reason>"` for sources left alone (uncommitted edits,
    /// unreadable file).
    pub skipped: Vec<String>,
}

/// Landmarks outcome (dialect §5.5).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LandmarksReport {
    /// Lines in the desired `## Landmarks` section.
    pub landmarks: usize,
    /// Whether the section was rewritten.
    pub changed: bool,
    /// Why the refresh was not attempted, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// What `git gc --auto` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GcStatus {
    /// git ran (it decides itself whether there was anything to pack).
    Ran,
    /// git missing or failed; never fails the run.
    Unavailable,
}

/// Wall time per phase, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct Timings {
    /// Evaporation and session TTL.
    pub evaporation: f64,
    /// Payload-cache eviction.
    pub payload_cache: f64,
    /// Link lifecycle planning (catalog query, source re-reads).
    pub links: f64,
    /// Landmark planning.
    pub landmarks: f64,
    /// The commit and the catalog upserts after it.
    pub commit: f64,
    /// Health report.
    pub health: f64,
    /// `git gc --auto`.
    pub gc: f64,
    /// Whole run.
    pub total: f64,
}

/// Report of one run: the dialect's keys plus `timings_ms` and `commit`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RangerReport {
    /// Heat evaporation.
    pub evaporation: EvaporationReport,
    /// Payload-cache eviction.
    pub payload_cache: PayloadCacheReport,
    /// Link lifecycle.
    pub links: LinksReport,
    /// Landmarks refresh.
    pub landmarks: LandmarksReport,
    /// Health after the run's commit.
    pub health: HealthReport,
    /// `git gc --auto`.
    pub gc: GcStatus,
    /// Per-phase wall time.
    pub timings_ms: Timings,
    /// The run's commit id, `None` when nothing changed.
    pub commit: Option<String>,
    /// Nodes the full model embedded when the run rebuilt a fast canopy
    /// (`canopy_full_max_nodes` in `_meta/ranger.yaml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canopy_upgraded: Option<usize>,
    /// The budgeted curation after the pass (`curation:` in
    /// `_meta/ranger.yaml`; run by `forest ranger run`, not by this crate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curation: Option<forest_derived::curation::PendingReport>,
    /// Why a configured curation did not run (no LLM endpoint, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curation_skipped: Option<String>,
}

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 10_000.0).round() / 10.0
}

/// Mapped pack windows a Ranger process keeps (see
/// [`forest_git::limit_pack_windows`]): it reads passports scattered over
/// the whole forest, where the Gardener writes loose objects.
const PACK_WINDOWS: usize = 64 << 20;

/// One full Ranger cycle at clock `now` (unix seconds). The caller holds
/// the writer lock. Makes at most ONE commit (link changes + landmarks).
pub fn run(forest: &Path, git: &GitForest, now: f64, cfg: &RangerConfig) -> Result<RangerReport> {
    cfg.validate()?;
    forest_git::limit_pack_windows(PACK_WINDOWS);
    let start = Instant::now();
    let mut timings = Timings::default();

    let t = Instant::now();
    let mut trails = Trails::open(&forest.join(TRAILS_PATH))?;
    let ev = trails.evaporate(now, cfg.half_life_days)?;
    let stale_sessions_cleared = trails.clear_stale_sessions(now, cfg.session_ttl_hours)?;
    let evaporation = EvaporationReport { decayed: ev.decayed, removed: ev.removed, stale_sessions_cleared };
    timings.evaporation = ms(t);

    let t = Instant::now();
    let payload_cache = evict_payloads(forest, cfg.payload_cache_gb)?;
    timings.payload_cache = ms(t);

    let t = Instant::now();
    // Chain of trust (forest_catalog::verified): only a run that found the
    // catalog as a verified run left it may vouch for what it leaves.
    let catalog_path = forest.join(forest_derived::catalog::CATALOG_PATH);
    let trusted = forest_catalog::verified::is_verified(&catalog_path);
    let mut catalog = open_catalog(forest)?;
    let tended = tend_links(forest, git, &mut catalog, &trails, cfg)?;
    timings.links = ms(t);

    let t = Instant::now();
    let mut rewritten = tended.rewritten;
    let landmarks = refresh_landmarks(forest, git, &catalog, &tended.pruned_edges, &mut rewritten)?;
    timings.landmarks = ms(t);

    let t = Instant::now();
    let links = tended.report;
    let config_change = crate::config::versioned_change(forest, git)?;
    let message = commit_message(&tended.actions, &links, &landmarks, config_change.is_some());
    // The report keeps the labels; the actions were for the message.
    drop(tended.actions);
    drop(tended.pruned_edges);
    let changes: Vec<Change> = rewritten
        .iter()
        .map(|(id, blob)| Change::Stored { path: ids::id_to_path(id), blob: *blob })
        .chain(config_change)
        .collect();
    // The run's one commit (or none).
    let commit = if changes.is_empty() { None } else { git.commit_batch(&changes, &message)?.map(|o| o.to_string()) };
    drop(changes);
    if commit.is_some() {
        let committed_ms = ms(t);
        // Files first, catalog after: a crash in between leaves a stale
        // catalog that the next run heals (it re-reads the sources).
        let s = Instant::now();
        settle(forest, &mut catalog, rewritten.keys())?;
        if let Err(e) = forest_canopy::maintain_forest(forest, &catalog) {
            tracing::warn!(event = "canopy.stale", code = e.code(), error = %forest_model::error_chain(&e));
        }
        tracing::info!(event = "ranger.commit", files = rewritten.len(), git_ms = committed_ms, settle_ms = ms(s));
    }
    drop(rewritten);
    timings.commit = ms(t);

    let canopy_upgraded = crate::canopy::second_tier(forest, &catalog, cfg);

    let t = Instant::now();
    let health = health(forest, &catalog, &trails)?;
    timings.health = ms(t);
    drop(catalog);
    if trusted {
        forest_catalog::verified::mark_verified(&catalog_path);
    }

    let t = Instant::now();
    let gc = match git.gc_auto() {
        GcOutcome::Ran => GcStatus::Ran,
        GcOutcome::Unavailable => GcStatus::Unavailable,
    };
    timings.gc = ms(t);
    timings.total = ms(start);

    Ok(RangerReport {
        evaporation,
        payload_cache,
        links,
        landmarks,
        health,
        gc,
        timings_ms: timings,
        commit,
        canopy_upgraded,
        curation: None,
        curation_skipped: None,
    })
}

/// Result of the lifecycle phase, before the commit.
struct Tended {
    report: LinksReport,
    actions: Vec<LinkAction>,
    /// Blobs of the rewritten nodes by id (committed together with the
    /// landmarks). Stored as they are made: a run after a long gap rewrites
    /// up to every source of a managed link, ~18 KB each when held parsed.
    rewritten: BTreeMap<String, forest_git::Oid>,
    /// `(src, dst)` of pruned links, to correct catalog degrees in memory.
    pruned_edges: Vec<(String, String)>,
}

type LinkKey = (String, String, u64);
/// A source's id with its text and parse, or why it could not be read.
/// A source's managed links and, when the catalog disagreed, its row.
type Scanned = (String, std::result::Result<(Vec<ManagedLink>, Option<forest_catalog::NodeRow>), NodeReadError>);

fn key(rel: &str, target: &str, confidence: f64) -> LinkKey {
    (rel.to_string(), target.to_string(), confidence.to_bits())
}

/// Managed links of a node's frontmatter, in file order.
fn managed_of(id: &str, node: &Node) -> Vec<ManagedLink> {
    node.links()
        .into_iter()
        .filter_map(|l| {
            let m = ManagedLink { src: id.to_string(), rel: l.rel, target: l.target, confidence: l.confidence? };
            m.is_managed().then_some(m)
        })
        .collect()
}

/// Why a node file the run must read cannot be used.
#[derive(Debug, thiserror::Error)]
enum NodeReadError {
    /// The file could not be read (or is not UTF-8).
    #[error("unreadable: {0}")]
    Unreadable(std::io::Error),
    /// Its frontmatter does not parse.
    #[error(transparent)]
    Parse(#[from] forest_model::node::ParseError),
}

/// A node file's text and its parse.
fn read_node(forest: &Path, id: &str) -> std::result::Result<(String, Node), NodeReadError> {
    let p = forest.join(ids::id_to_path(id));
    let text = std::fs::read_to_string(&p).map_err(NodeReadError::Unreadable)?;
    let node = Node::parse(&text)?;
    Ok((text, node))
}

/// True when the work-tree text's blob is `in_head`, the blob HEAD's tree
/// has at its path (looked up by the caller): one tree lookup and the
/// text's blob id, where a git status call scans the index (links phase of
/// the 10^4-node bench: 1.46 s with status, 0.48 s reading the blob) and
/// reading the blob inflates it.
fn committed(in_head: Option<forest_git::Oid>, text: &str) -> Result<bool> {
    Ok(in_head.is_some() && in_head == Some(forest_git::blob_id(text.as_bytes())?))
}

/// Sources a pass-2 chunk rewrites on one object handle.
const REWRITE_CHUNK: usize = 256;

/// Find managed links through the catalog's edges (`confidence < 1.0`),
/// re-read only those source files (files win), plan, and apply in memory.
fn tend_links(
    forest: &Path,
    git: &GitForest,
    catalog: &mut Catalog,
    trails: &Trails,
    cfg: &RangerConfig,
) -> Result<Tended> {
    // Catalog view of managed links per source.
    let mut by_src: BTreeMap<String, HashSet<LinkKey>> = BTreeMap::new();
    catalog.for_each_managed_edge(|e| {
        if !ids::is_meta(&e.src) {
            by_src.entry(e.src).or_default().insert(key(&e.rel, &e.dst, e.confidence));
        }
        Ok::<(), RangerError>(())
    })?;

    let mut report = LinksReport::default();
    let t = Instant::now();
    let managed = scan_managed(forest, &by_src, catalog, &mut report)?;
    let scan_ms = ms(t);

    let mut endpoints: Vec<String> =
        managed.iter().flat_map(|l| [l.src.clone(), l.target.clone()]).collect::<HashSet<_>>().into_iter().collect();
    endpoints.sort();
    let heat = trails.heat_map(&endpoints, None)?;
    let actions = plan_links(&managed, &heat, cfg);

    let mut per_src: BTreeMap<&str, Vec<&LinkAction>> = BTreeMap::new();
    for a in &actions {
        per_src.entry(a.link().src.as_str()).or_default().push(a);
    }
    let mut rewritten = BTreeMap::new();
    let mut applied = vec![];
    let mut pruned_edges = vec![];
    // Pass 2: re-read only the sources something happens to, in parallel
    // (read, parse, check, rewrite, store the blob); the report is kept in
    // source order after.
    let t = Instant::now();
    let day = today();
    let head = git.head_tree_id()?;
    // A handle on the object store per chunk (the forest's handle is one
    // lock: blob writes and tree lookups took turns).
    let items: Vec<(&str, Vec<&LinkAction>)> = per_src.into_iter().collect();
    let outcomes: Vec<(&str, Pass2)> = items
        .par_chunks(REWRITE_CHUNK)
        .map(|chunk| {
            let objects = git.objects()?;
            chunk
                .iter()
                .map(|(src, acts)| Ok((*src, rewrite_source(forest, &objects, head, src, acts.clone(), &day)?)))
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<Vec<_>>>>()?
        .into_iter()
        .flatten()
        .collect();
    for (src, outcome) in outcomes {
        let (acts, mut kept, blob) = match outcome {
            Pass2::Skipped(reason) => {
                report.skipped.push(format!("{src}: {reason}"));
                continue;
            }
            Pass2::Unchanged => continue,
            Pass2::Rewritten { acts, kept, blob } => (acts, kept, blob),
        };
        // The catalog keeps one edge per (src, rel, dst): a pruned link
        // takes its edge only when no link with its rel and target is left
        // (a file may carry the same link twice with two confidences).
        for a in acts {
            match a {
                LinkAction::Promote { link, .. } => report.promoted.push(link.label()),
                LinkAction::Prune { link } => {
                    report.pruned.push(link.label());
                    if kept.insert((link.rel.clone(), link.target.clone())) {
                        pruned_edges.push((link.src.clone(), link.target.clone()));
                    }
                }
            }
            applied.push(a.clone());
        }
        rewritten.insert(src.to_string(), blob);
    }
    tracing::info!(
        event = "ranger.links",
        sources = by_src.len(),
        rewritten = rewritten.len(),
        scan_ms,
        rewrite_ms = ms(t)
    );
    Ok(Tended { report, actions: applied, rewritten, pruned_edges })
}

/// What pass 2 of [`tend_links`] did to one source.
enum Pass2<'a> {
    /// Left alone, with the reason (unreadable, uncommitted edits).
    Skipped(String),
    /// None of the planned actions applies to the file any more.
    Unchanged,
    /// Rewritten: the actions applied, the (rel, target) pairs left in the
    /// file, the new text's blob.
    Rewritten { acts: Vec<&'a LinkAction>, kept: HashSet<(String, String)>, blob: forest_git::Oid },
}

/// Pass 2 for one source: read it, refuse uncommitted edits, apply the
/// actions on links it still has, store the new text as a blob.
fn rewrite_source<'a>(
    forest: &Path,
    git: &forest_git::Objects,
    head: Option<forest_git::Oid>,
    src: &str,
    acts: Vec<&'a LinkAction>,
    day: &str,
) -> Result<Pass2<'a>> {
    let (text, mut node) = match read_node(forest, src) {
        Ok(n) => n,
        Err(e) => return Ok(Pass2::Skipped(e.to_string())),
    };
    let path = ids::id_to_path(src);
    // Never sweep someone's uncommitted edit into the Ranger's commit.
    let in_head = match head {
        Some(tree) => git.tree_blob_id(tree, &path)?,
        None => None,
    };
    if !committed(in_head, &text)? {
        return Ok(Pass2::Skipped(format!("uncommitted changes in {path}")));
    }
    // Only actions on links the file still has (it may have changed back
    // to HEAD since pass 1).
    let now = managed_of(src, &node);
    let acts: Vec<&LinkAction> = acts.into_iter().filter(|a| now.contains(a.link())).collect();
    if acts.is_empty() {
        return Ok(Pass2::Unchanged);
    }
    apply_actions(&mut node, &acts);
    node.set_str("updated", day);
    let kept: HashSet<(String, String)> = node.links().into_iter().map(|l| (l.rel, l.target)).collect();
    let blob = git.write_blob(node.to_text().as_bytes())?;
    Ok(Pass2::Rewritten { acts, kept, blob })
}

/// Pass 1 of [`tend_links`]: each source's managed links, one node parsed
/// at a time per thread; only the links stay (10^5 parsed passports would
/// not fit). A source the catalog disagrees with gets its row back.
fn scan_managed(
    forest: &Path,
    by_src: &BTreeMap<String, HashSet<LinkKey>>,
    catalog: &mut Catalog,
    report: &mut LinksReport,
) -> Result<Vec<ManagedLink>> {
    let scanned: Vec<Scanned> = by_src
        .iter()
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|(id, keys)| {
            let read = read_node(forest, id).map(|(_, node)| {
                let links = managed_of(id, &node);
                let file_keys: HashSet<LinkKey> = links.iter().map(|l| key(&l.rel, &l.target, l.confidence)).collect();
                // The catalog disagreed with the file (e.g. a run killed
                // between its commit and its catalog upsert): its row.
                let heal = (keys != &file_keys).then(|| catalog_row(id, &node));
                (links, heal)
            });
            (id.clone(), read)
        })
        .collect();
    let mut managed: Vec<ManagedLink> = vec![];
    let mut heal = vec![];
    for (id, read) in scanned {
        match read {
            Ok((links, row)) => {
                managed.extend(links);
                heal.extend(row);
            }
            Err(reason) => report.skipped.push(format!("{id}: {reason}")),
        }
    }
    if !heal.is_empty() {
        catalog.upsert(&heal)?;
    }
    Ok(managed)
}

/// Rewrite the node's `links` per `actions`; drop the key when empty.
fn apply_actions(node: &mut Node, actions: &[&LinkAction]) {
    let Some(Value::Sequence(seq)) = node.front.get("links").cloned() else {
        return;
    };
    let mut out = Vec::with_capacity(seq.len());
    for mut v in seq {
        let matched = v.as_mapping().and_then(|m| {
            let rel = m.get("rel")?.as_str()?;
            let target = m.get("target")?.as_str()?;
            let c = m.get("confidence")?.as_f64()?;
            actions.iter().find(|a| {
                let l = a.link();
                l.rel == rel && l.target == target && l.confidence.to_bits() == c.to_bits()
            })
        });
        match matched {
            Some(LinkAction::Prune { .. }) => continue,
            Some(LinkAction::Promote { to, .. }) => {
                if let Some(m) = v.as_mapping_mut() {
                    m.insert(Value::String("confidence".into()), Value::Number((*to).into()));
                }
            }
            None => {}
        }
        out.push(v);
    }
    if out.is_empty() {
        node.remove("links");
    } else {
        node.set("links", Value::Sequence(out));
    }
}

/// Landmark candidates: the best `keep` eligible endpoints by (degree
/// desc, id) with their catalog kind/summary. Only an endpoint that would
/// enter the current best set is looked up in `nodes`.
fn landmark_candidates(catalog: &Catalog, keep: usize) -> Result<Vec<DegreeEntry>> {
    // Max-heap on the ranking key: its top is the worst kept.
    let mut best: std::collections::BinaryHeap<(std::cmp::Reverse<i64>, String, Option<String>, String)> =
        Default::default();
    catalog.scan_degrees(|id, degree| {
        if ids::is_meta(id) || ids::is_branch_id(id) {
            return Ok(());
        }
        let enters =
            best.len() < keep || best.peek().is_some_and(|w| (std::cmp::Reverse(degree), id) < (w.0, w.1.as_str()));
        if !enters {
            return Ok(());
        }
        match catalog.kind_and_summary(id)? {
            Some((kind, summary)) if kind != "branch" => {
                best.push((std::cmp::Reverse(degree), id.to_string(), Some(kind), summary));
                if best.len() > keep {
                    best.pop();
                }
            }
            _ => {}
        }
        Ok::<(), RangerError>(())
    })?;
    Ok(best.into_iter().map(|(d, id, kind, summary)| DegreeEntry { id, degree: d.0, kind, summary }).collect())
}

/// Plan the master's `## Landmarks` and stage its rewrite in `rewritten`.
fn refresh_landmarks(
    forest: &Path,
    git: &GitForest,
    catalog: &Catalog,
    pruned_edges: &[(String, String)],
    rewritten: &mut BTreeMap<String, forest_git::Oid>,
) -> Result<LandmarksReport> {
    // This run's prunes are not in the catalog yet (it is updated after the
    // commit); without this, the next run would see other degrees and
    // rewrite the landmarks again.
    let mut minus: HashMap<&str, i64> = HashMap::new();
    for (s, d) in pruned_edges {
        *minus.entry(s.as_str()).or_default() += 1;
        *minus.entry(d.as_str()).or_default() += 1;
    }
    // Corrections only lower degrees, so the best MAX + |corrected| by the
    // catalog's degrees contain the best MAX after correction.
    let mut entries = landmark_candidates(catalog, crate::MAX_LANDMARKS + minus.len())?;
    for e in &mut entries {
        e.degree -= minus.get(e.id.as_str()).copied().unwrap_or(0);
    }
    let lines: Vec<String> =
        plan_landmarks(&entries).iter().map(|(id, summary)| entry_line(id, summary, None)).collect();
    let n = lines.len();
    let master = ids::MASTER;
    let mut node = match rewritten.get(master) {
        Some(blob) => {
            let bytes = git.read_blob(*blob)?;
            let text = String::from_utf8_lossy(&bytes);
            Node::parse(&text).map_err(|e| RangerError::Node { id: master.into(), reason: e.to_string() })?
        }
        None => {
            let path = ids::id_to_path(master);
            let (text, node) = read_node(forest, master)
                .map_err(|e| RangerError::Node { id: master.into(), reason: e.to_string() })?;
            let in_head = match git.head_tree_id()? {
                Some(tree) => git.tree_blob_id(tree, &path)?,
                None => None,
            };
            if !committed(in_head, &text)? {
                return Ok(LandmarksReport {
                    landmarks: n,
                    changed: false,
                    skipped: Some(format!("uncommitted changes in {path}")),
                });
            }
            node
        }
    };
    if section_entries(&node.body, LANDMARKS) == lines {
        return Ok(LandmarksReport { landmarks: n, changed: false, skipped: None });
    }
    node.body = replace_section(&node.body, LANDMARKS, &lines);
    node.set_str("updated", &today());
    rewritten.insert(master.to_string(), git.write_blob(node.to_text().as_bytes())?);
    Ok(LandmarksReport { landmarks: n, changed: true, skipped: None })
}

/// Change lines a commit body lists; a run that changes more (a first run
/// after months: 10^5 prunes made a 12.8 MB commit object) ends the list
/// with a count. The run's report lists every change.
const MAX_BODY_LINES: usize = 1000;

/// Subject with the counts; body with the change lines (at most
/// [`MAX_BODY_LINES`], then a count of the rest) and the landmarks line.
fn commit_message(actions: &[LinkAction], links: &LinksReport, landmarks: &LandmarksReport, config: bool) -> String {
    let mut subject = format!("ranger: {} promoted, {} pruned", links.promoted.len(), links.pruned.len());
    if landmarks.changed {
        subject.push_str(", landmarks refreshed");
    }
    if config {
        subject.push_str(&format!(", {RANGER_CONFIG_PATH} recorded"));
    }
    let mut body: Vec<String> = actions.iter().take(MAX_BODY_LINES).map(LinkAction::body_line).collect();
    if actions.len() > MAX_BODY_LINES {
        body.push(format!("... and {} more (the run's report lists them)", actions.len() - MAX_BODY_LINES));
    }
    if landmarks.changed {
        body.push(format!("landmarks {} lines", landmarks.landmarks));
    }
    format!("{subject}\n\n{}\n", body.join("\n"))
}

/// Nodes whose catalog rows and health records one read of the work tree
/// settles at a time: one catalog and one health-cache transaction per
/// chunk, which holds texts and rows (a few KB a node), not parsed nodes.
const SETTLE_CHUNK: usize = 4096;

/// The catalog's page cache while many chunks settle (the default is
/// 2 MiB): their rows are scattered over the whole catalog, and each
/// chunk's transaction walks the same interior pages again.
const SETTLE_CACHE_KIB: u32 = 64 * 1024;

/// After the commit: the committed nodes' catalog rows (marked stale for
/// re-embedding) and health records, each file read back from the work
/// tree and parsed once, a chunk at a time, so the health pass below (and
/// the next run's) reads none of them and memory stays bounded by the
/// chunk.
fn settle<'a>(forest: &Path, catalog: &mut Catalog, committed: impl Iterator<Item = &'a String>) -> Result<()> {
    let committed: Vec<String> = committed.map(|id| ids::id_to_path(id)).collect();
    if committed.len() > SETTLE_CHUNK {
        catalog.set_page_cache_kib(SETTLE_CACHE_KIB)?;
    }
    for chunk in committed.chunks(SETTLE_CHUNK) {
        let rows = forest_derived::catalog::read_rows_recording_health(forest, chunk);
        catalog.upsert_stale(&rows)?;
    }
    catalog.set_page_cache_kib(2000)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_body_lists_at_most_a_thousand_changes() {
        let prune = |i: usize| LinkAction::Prune {
            link: ManagedLink {
                src: format!("n/{i}"),
                rel: "related-to".into(),
                target: "n/x".into(),
                confidence: 0.3,
            },
        };
        let actions: Vec<LinkAction> = (0..1500).map(prune).collect();
        let links = LinksReport { pruned: actions.iter().map(|a| a.link().label()).collect(), ..Default::default() };
        let landmarks = LandmarksReport { landmarks: 7, changed: true, skipped: None };
        let m = commit_message(&actions, &links, &landmarks, false);
        assert!(m.starts_with("ranger: 0 promoted, 1500 pruned, landmarks refreshed\n\nprune n/0 "), "{m}");
        assert_eq!(m.lines().filter(|l| l.starts_with("prune ")).count(), MAX_BODY_LINES);
        assert!(m.ends_with("... and 500 more (the run's report lists them)\nlandmarks 7 lines\n"), "{m}");
        let few = commit_message(&actions[..2], &links, &landmarks, true);
        assert!(few.contains("prune n/1 related-to->n/x\n") && !few.contains("more"), "{few}");
    }

    #[test]
    fn apply_promotes_prunes_and_drops_empty_links() {
        let text = "---\nid: a\ntype: note\ntitle: A\nlinks:\n- rel: related-to\n  target: b\n  \
                    confidence: 0.3\n- rel: part-of\n  target: c\n---\n\n# A\n";
        let mut n = Node::parse(text).unwrap();
        let l = |t: &str, c: f64| ManagedLink {
            src: "a".into(),
            rel: "related-to".into(),
            target: t.into(),
            confidence: c,
        };
        let promote = LinkAction::Promote { link: l("b", 0.3), to: 0.8 };
        apply_actions(&mut n, &[&promote]);
        let links = n.links();
        assert_eq!(links[0].confidence, Some(0.8));
        assert_eq!(links[1].confidence, None, "structural link untouched");
        let prune = LinkAction::Prune { link: l("b", 0.8) };
        apply_actions(&mut n, &[&prune]);
        assert_eq!(n.links().len(), 1);
        let mut single = Node::parse(&text.replace("- rel: part-of\n  target: c\n", "")).unwrap();
        apply_actions(&mut single, &[&LinkAction::Prune { link: l("b", 0.3) }]);
        assert!(single.front.get("links").is_none());
    }
}
