//! `forest sync --shard I/N --store URI`: the worker of a distributed ingest
//! (issue 16). No writer lock and no commit: it only fills the store.

use crate::cli::{print_json, GardenArgs, EXIT_PARTIAL};
use crate::progress;
use anyhow::{bail, Result};
use forest_gardener::prepared::{PreparedRun, Shard};
use forest_git::GitForest;
use std::path::Path;
use std::sync::Arc;

/// Run one shard; exit 3 when a file could not be stored.
pub fn worker(
    root: &Path,
    spec: &str,
    source: Option<&str>,
    prepared: Option<Arc<PreparedRun>>,
    g: &GardenArgs,
) -> Result<u8> {
    let Some(run) = prepared else { bail!("E_SCHEMA: --shard needs --store URI (s3://bucket/prefix or a directory)") };
    let shard = Shard::parse(spec, std::env::var("JOB_COMPLETION_INDEX").ok().as_deref())?;
    // Opening reads HEAD; a worker never commits, so it takes no writer lock.
    let git = GitForest::open(root)?;
    let bar = progress::Bar::new();
    let report = if g.curate {
        let curator = crate::garden_cmd::build_curator(root)?;
        run.set_model(curator.model());
        let config = forest_derived::config::GardenerConfig::load(root)?;
        // No candidate set: closed-catalog proposals are the committer's.
        let hook = forest_gardener::curate::CuratorHook::new(&curator, None, &config.directives);
        let mut r = forest_gardener::prepare(root, &git, source, shard, &run, Some(&hook), &bar)?;
        r.curation = Some(serde_json::to_value(curator.stats())?);
        r
    } else {
        forest_gardener::prepare(root, &git, source, shard, &run, None, &bar)?
    };
    if g.json {
        print_json(&report)?;
    } else {
        println!("shard {} into {}", report.shard, report.store);
        for s in &report.sources {
            println!(
                "source {}: {} seen, {} in shard, {} unchanged, {} already prepared, {} prepared ({} curated), {} left to the committer",
                s.source, s.files_seen, s.in_shard, s.unchanged, s.already_prepared, s.prepared, s.curated, s.left_to_committer
            );
            for e in &s.errors {
                println!("  error: {}: {}", e.path, e.message);
            }
        }
    }
    Ok(if report.partial() { EXIT_PARTIAL } else { 0 })
}
