//! Commit stage: one batch becomes one git commit, then the derived layer
//! follows (manifest rows, catalog rows, trail re-keys) and staged payloads
//! are renamed into place under a journal that survives a crash.
//!
//! In: a planned (and curated) [`Batch`]. Out: [`Committed`] (the commit
//! id and the per-file problems of the payload renames). The first
//! batch also carries `_meta/gardener.yaml` when it differs from HEAD
//! (validated first; an otherwise empty adopt batch commits it alone).
//! Touches git,
//! the work tree (through the git layer), `_derived/` and staged payloads.

use crate::env::{rss_mib, RunEnv};
use crate::error::GardenError;
use crate::manifest::Manifest;
use crate::report::{err, FileError, SourceReport};
use crate::stages::plan::Batch;
use crate::stages::{CATALOG_DIRTY, PAYLOAD_JOURNAL};
use forest_catalog::Catalog;
use forest_catalog::NodeRow;
use forest_derived::catalog::{catalog_row, TRAILS_PATH};
use forest_git::Change;
use forest_model::ids;
use forest_model::index;
use forest_model::node::Node;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What the commit stage did with one batch.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Committed {
    /// The batch reached the disk (false in a dry run): its ids no longer
    /// need reserving.
    pub(crate) written: bool,
    /// The new commit, when there was anything to commit.
    pub(crate) commit: Option<String>,
    /// Payload renames that failed.
    pub(crate) errors: Vec<FileError>,
}

impl Committed {
    /// Add the commit to the run's list and the problems to the report.
    pub(crate) fn fold(self, report: &mut SourceReport, commits: &mut Vec<String>) {
        commits.extend(self.commit);
        report.errors.extend(self.errors);
    }
}

/// The health-cache records of the last commit, written on a thread of
/// their own while the next batch plans.
#[derive(Default)]
pub(crate) struct HealthRecords(Option<std::thread::JoinHandle<()>>);

impl HealthRecords {
    /// Write the health-cache records of `changes` (just committed) on a
    /// thread of their own. Joined by [`Self::wait`] before the next
    /// commit or payload rename (a record holds the stamp of the file its
    /// text was committed to) and at the end of the source's run.
    fn record_after(&mut self, forest: &Path, changes: Vec<Change>) {
        self.wait();
        if changes.is_empty() {
            return;
        }
        let forest = forest.to_path_buf();
        // No thread (resource limits): the next health pass re-reads them.
        self.0 = std::thread::Builder::new()
            .name("forest-health-records".into())
            .spawn(move || {
                let t = Instant::now();
                let rows = forest_derived::catalog::record_health(&forest, &changes);
                tracing::info!(event = "gardener.health_records", rows, ms = t.elapsed().as_millis() as u64);
            })
            .ok();
    }

    /// Wait for the previous batch's health-cache records.
    pub(crate) fn wait(&mut self) {
        if let Some(h) = self.0.take() {
            // A panic there cost only cache records.
            let _ = h.join();
        }
    }
}

/// Commit one batch (its branch scent already derived by the plan stage),
/// then bring the derived layer along.
pub(crate) fn finish_batch(
    env: &RunEnv,
    batch: &mut Batch,
    manifest: &mut Manifest,
    catalog: Option<&mut Catalog>,
    health: &mut HealthRecords,
) -> Result<Committed, GardenError> {
    let mut out = Committed::default();
    let t0 = Instant::now();
    let (mut changes, rows) = serialise(env, batch);
    let prepare_ms = t0.elapsed().as_millis() as u64;
    if env.opts.dry_run {
        return Ok(out);
    }
    // The previous batch's records stamp files this commit may rewrite.
    let head = commit_changes(env, batch, &mut changes, health)?;
    out.commit = head.clone();
    out.errors = land_payloads(env, batch, head.is_some());
    let current_head = match head {
        Some(h) => Some(h),
        None => env.git.head_oid()?.map(|o| o.to_string()),
    };
    let t = Instant::now();
    manifest.apply(&env.src.name, &batch.manifest_up, &batch.manifest_del, current_head.as_deref())?;
    let manifest_ms = t.elapsed().as_millis() as u64;
    let t = Instant::now();
    if let Some(cat) = catalog {
        if !batch.removed_ids.is_empty() {
            cat.remove(&batch.removed_ids).map_err(GardenError::Catalog)?;
        }
        if !rows.is_empty() {
            cat.upsert(&rows).map_err(GardenError::Catalog)?;
        }
        let _ = std::fs::remove_file(env.forest.join(CATALOG_DIRTY));
    }
    let catalog_ms = t.elapsed().as_millis() as u64;
    tracing::info!(event = "gardener.stage", stage = "derived", rows = rows.len(), prepare_ms, manifest_ms, catalog_ms);
    // The health cache learns the nodes just written (payloads are in
    // place now), so the Ranger's next health pass reads none of them.
    // Off the commit path: the records are written while the next batch
    // plans (~54 us a node, one core of two otherwise idle then).
    health.record_after(env.forest, changes);
    if !batch.rekeys.is_empty() {
        if let Ok(mut trails) = forest_catalog::Trails::open(&env.forest.join(TRAILS_PATH)) {
            for (old, new) in &batch.rekeys {
                let _ = trails.rekey(old, new);
            }
        }
    }
    out.written = true;
    Ok(out)
}

/// The batch as file changes and catalog rows: coverage of every touched
/// branch, then every dirty node whose text changed, then the deletes.
fn serialise(env: &RunEnv, batch: &mut Batch) -> (Vec<Change>, Vec<NodeRow>) {
    batch.render_bodies();
    let dirty: Vec<String> = batch.dirty.iter().cloned().collect();
    for id in &dirty {
        if ids::is_branch_id(id) {
            if let Some(n) = batch.nodes.get_mut(id) {
                let cov = index::coverage_of(&n.body);
                if n.get_str("coverage").as_deref() != Some(cov.as_str()) {
                    n.set_str("coverage", &cov);
                }
                n.set_str("updated", &env.today);
            }
        }
    }
    let mut changes: Vec<Change> = vec![];
    let mut rows = vec![];
    for id in &dirty {
        let Some(n) = batch.nodes.get(id) else {
            continue;
        };
        let text = n.to_text();
        let path = ids::id_to_path(id);
        // Never rewrite a file whose content did not change.
        if std::fs::read(env.forest.join(&path)).ok().as_deref() == Some(text.as_bytes()) {
            continue;
        }
        rows.push(catalog_row(id, n));
        changes.push(Change::Write { path, bytes: text.into_bytes() });
    }
    for p in &batch.deletes {
        changes.push(Change::Delete { path: p.clone() });
    }
    (changes, rows)
}

/// One git commit of `changes` (with the config when it travels), after
/// the previous batch's health records and this batch's payload journal;
/// the new HEAD when a commit was made.
fn commit_changes(
    env: &RunEnv,
    batch: &Batch,
    changes: &mut Vec<Change>,
    health: &mut HealthRecords,
) -> Result<Option<String>, GardenError> {
    // The config travels with the first batch that needs it (validated):
    // an adopt commits it even alone; a sync only alongside real changes,
    // so a no-change sync (also over a forest another engine wrote, which
    // never commits it) makes no commit.
    let config_change = if changes.is_empty() && env.command != "adopt" {
        None
    } else {
        forest_derived::config::versioned_change(env.forest, env.git)?
    };
    let config_only = changes.is_empty() && config_change.is_some();
    changes.extend(config_change);
    // The previous batch's records stamp files this commit may rewrite.
    health.wait();
    // Staged payloads are renamed only after the commit; the journal lets
    // the next start finish (or drop) them after a crash in between.
    if !batch.renames.is_empty() {
        write_payload_journal(env.forest, &batch.renames)?;
    }
    if changes.is_empty() {
        return Ok(None);
    }
    let msg = if config_only {
        format!("gardener({}): record {} [source={}]\n", env.command, forest_derived::config::CONFIG_PATH, env.src.name)
    } else {
        commit_message(env, batch)
    };
    let t = Instant::now();
    let committed = env.git.commit_batch(changes, &msg)?;
    tracing::info!(
        event = "gardener.stage",
        stage = "git",
        files = changes.len(),
        ms = t.elapsed().as_millis() as u64,
        rss_mib = rss_mib()
    );
    Ok(committed.map(|oid| oid.to_string()))
}

/// Rename the staged payloads into place (`committed`: the commit's
/// barrier made them durable), then drop the journal and retired copies;
/// the renames that failed.
fn land_payloads(env: &RunEnv, batch: &mut Batch, committed: bool) -> Vec<FileError> {
    let mut errors = vec![];
    // Fault injection for the crash tests: die between the commit and the
    // payload renames, the window the payload journal exists for.
    if !batch.renames.is_empty() && std::env::var_os("FOREST_FAULT_ABORT_BEFORE_PAYLOAD_RENAME").is_some() {
        std::process::abort();
    }
    if !batch.renames.is_empty() {
        // Staged payloads were written without fsync: the commit's
        // barrier (a filesystem-wide sync before the ref moves) made
        // them durable; without a commit, sync here.
        if !committed {
            let _ = forest_fs::sync_filesystem(env.forest);
        }
        for (staged, fin) in batch.renames.drain(..) {
            if let Err(e) = forest_fs::rename_unsynced(&staged, &fin) {
                errors.push(err(&fin.to_string_lossy(), format!("payload rename failed: {e}")));
            }
        }
        // One sync for all renames, before the journal that redoes them goes.
        let _ = forest_fs::sync_filesystem(env.forest);
    }
    let _ = std::fs::remove_file(env.forest.join(PAYLOAD_JOURNAL));
    // An orphan left by a crash here is only a stale, gitignored copy.
    for old in batch.retired.drain(..) {
        let _ = std::fs::remove_file(old);
    }
    errors
}

/// The commit message of `batch`: counts, then up to 200 ids.
pub(crate) fn commit_message(env: &RunEnv, batch: &Batch) -> String {
    let verb = env.command;
    let mut msg = format!(
        "gardener({verb}): {} planted, {} updated, {} moved, {} stale [source={}]\n\n",
        batch.planted, batch.updated, batch.moved, batch.stale, env.src.name
    );
    for id in batch.ids.iter().take(200) {
        msg.push_str(id);
        msg.push('\n');
    }
    if batch.ids.len() > 200 {
        msg.push_str(&format!("... and {} more\n", batch.ids.len() - 200));
    }
    msg
}

/// A `.<name>.<pid>.<n>.staged` file name (see [`crate::stages::plan::payload::staged_path_for`]).
fn is_staged_name(p: &Path) -> bool {
    p.file_name().map(|n| n.to_string_lossy()).is_some_and(|n| n.starts_with('.') && n.ends_with(".staged"))
}

fn write_payload_journal(forest: &Path, renames: &[(PathBuf, PathBuf)]) -> Result<(), GardenError> {
    let list: Vec<serde_json::Value> = renames
        .iter()
        .map(|(a, b)| serde_json::json!({"staged": a.to_string_lossy(), "final": b.to_string_lossy()}))
        .collect();
    let text = serde_json::to_vec(&list).map_err(GardenError::Journal)?;
    forest_fs::atomic_write(&forest.join(PAYLOAD_JOURNAL), &text).map_err(|e| GardenError::io("payload journal", e))
}

/// Finish payload renames interrupted by a crash: a staged payload whose
/// sha256 is the one its passport (at HEAD, in the work tree) records is
/// moved into place; anything else is dropped (the next sync rebuilds it).
pub fn recover_payloads(forest: &Path) {
    let path = forest.join(PAYLOAD_JOURNAL);
    let Ok(bytes) = std::fs::read(&path) else { return };
    let list: Vec<serde_json::Value> = serde_json::from_slice(&bytes).unwrap_or_default();
    for item in list {
        let (Some(staged), Some(fin)) = (item["staged"].as_str(), item["final"].as_str()) else { continue };
        let (staged, fin) = (PathBuf::from(staged), PathBuf::from(fin));
        if !staged.exists() {
            continue;
        }
        let want = std::fs::read_to_string(fin.with_extension("md"))
            .ok()
            .and_then(|t| Node::parse(&t).ok())
            .and_then(|n| n.get_str("payload_hash"));
        let have = std::fs::read(&staged).ok().map(|b| hex::encode(Sha256::digest(&b)));
        if want.is_some() && want == have {
            let _ = forest_fs::atomic_rename(&staged, &fin);
        } else if is_staged_name(&staged) {
            let _ = std::fs::remove_file(&staged);
        }
    }
    let _ = std::fs::remove_file(&path);
}

#[cfg(test)]
mod tests {
    use super::{commit_message, finish_batch, HealthRecords};
    use crate::env::testing::Fixture;
    use crate::manifest::Manifest;
    use crate::reconcile::ManifestEntry;
    use crate::report::SourceReport;
    use crate::stages::plan::Batch;
    use forest_model::node::Node;

    #[test]
    fn one_batch_is_one_commit_then_the_manifest_follows() {
        let fx = Fixture::new();
        let env = fx.env();
        let (mut report, mut commits, mut health) = (SourceReport::default(), vec![], HealthRecords::default());
        let mut batch = Batch::default();
        let n = Node::parse("---\nid: x\ntype: note\ntitle: X\nsummary: About x.\n---\n# X\n").expect("node");
        batch.put("x", n);
        batch.planted = 1;
        batch.ids.push("x".into());
        let e = ManifestEntry {
            id: "x".into(),
            size: 1,
            mtime_ms: 1,
            hash: "blake3:x".into(),
            vanished: false,
            etag: None,
        };
        batch.manifest_up.push(("x.md".into(), e));
        let before = fx.git.head_oid().expect("head");
        let mut manifest = Manifest::open(std::path::Path::new(":memory:")).expect("manifest");
        let done = finish_batch(&env, &mut batch, &mut manifest, None, &mut health).expect("commit");
        assert!(done.written && done.errors.is_empty());
        done.fold(&mut report, &mut commits);
        let head = fx.git.head_oid().expect("head");
        assert_ne!(head, before);
        assert_eq!(commits, vec![head.map(|o| o.to_string()).unwrap_or_default()]);
        assert!(fx.forest.join("x.md").exists());
        assert_eq!(manifest.head().expect("head"), commits.first().cloned());
        assert_eq!(manifest.count("default").expect("count"), 1);
        assert!(commit_message(&env, &batch)
            .starts_with("gardener(adopt): 1 planted, 0 updated, 0 moved, 0 stale [source=default]"));
        // The same batch again writes nothing: no second commit.
        let again = finish_batch(&env, &mut batch, &mut manifest, None, &mut health).expect("no-op");
        again.fold(&mut report, &mut commits);
        assert_eq!(commits.len(), 1);
    }

    #[test]
    fn a_commit_and_its_problems_fold_into_the_run() {
        let mut report = SourceReport::default();
        let mut commits = vec!["c1".to_string()];
        let done = super::Committed {
            written: true,
            commit: Some("c2".into()),
            errors: vec![crate::report::err("a.db", "payload rename failed: gone")],
        };
        done.fold(&mut report, &mut commits);
        super::Committed::default().fold(&mut report, &mut commits);
        assert_eq!(commits, ["c1", "c2"], "a batch without a commit adds none");
        assert_eq!(report.errors.len(), 1);
        assert_eq!(report.errors[0].path, "a.db");
    }
}
