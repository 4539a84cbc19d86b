//! `forest curate --pending [--budget N|DURATION]` and the budgeted
//! curation a Ranger run spends (`curation:` in `_meta/ranger.yaml`).
//!
//! The Ranger crate never builds a Curator (the endpoint comes from the
//! environment, which is this binary's business): `forest ranger run` and
//! the daemon call the Gardener's budgeted curation here (its report is
//! `forest_derived::curation::PendingReport`, which the Ranger's report holds), after the
//! Ranger's pass and its commit, under the same writer lock.

use std::path::Path;

use anyhow::Result;
use forest_derived::curation::{Budget, BudgetError, PendingReport};
use forest_gardener::pending::curate_budgeted;
use forest_git::{GitForest, WriterLock};

use crate::cli::{forest_root, print_json, ForestArg, EXIT_PARTIAL};
use crate::garden_cmd::curation_parts;

/// clap's parser of `--budget`.
pub(crate) fn parse_budget(s: &str) -> std::result::Result<Budget, BudgetError> {
    Budget::parse(s)
}

/// One line of text for a curation run.
pub(crate) fn summary_line(r: &PendingReport) -> String {
    let by = serde_json::to_value(r.stopped_by).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    format!(
        "{} pending: {} curated, {} kept derived, {} left (stopped: {by})",
        r.pending,
        r.curated.len(),
        r.kept_derived.len(),
        r.left
    )
}

pub(crate) fn cmd_curate(f: &ForestArg, budget: Option<Budget>, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let _lock = WriterLock::acquire(&root)?;
    let git = GitForest::open(&root)?;
    let r = curate(&root, &git, &budget.unwrap_or_default())?;
    if json {
        print_json(&r)?;
    } else {
        println!("{}", summary_line(&r));
    }
    let offline = r.stopped_by == forest_derived::curation::StoppedBy::Offline;
    Ok(if r.kept_derived.is_empty() && !offline { 0 } else { EXIT_PARTIAL })
}

fn curate(root: &Path, git: &GitForest, budget: &Budget) -> Result<PendingReport> {
    let (curator, cands, directives) = curation_parts(root)?;
    let hook = forest_gardener::curate::CuratorHook::new(&curator, Some(&cands), &directives);
    Ok(curate_budgeted(root, git, &hook, budget, &|| curator.offline())?)
}

/// What the `curation:` block of a Ranger run did.
pub(crate) enum RangerCuration {
    /// No block: curation is off.
    Off,
    /// The run's report.
    Ran(PendingReport),
    /// Configured but not run (no endpoint), with the reason.
    Skipped(String),
    /// Configured and failed (bad block, unreachable catalog, a commit).
    Failed(String),
}

/// Spend the `curation:` budget of `_meta/ranger.yaml`, if set. The caller
/// holds the writer lock. No endpoint configured is a skip, not an error.
pub(crate) fn ranger_curation(root: &Path, git: &GitForest, cfg: &forest_ranger::RangerConfig) -> RangerCuration {
    let Some(block) = &cfg.curation else { return RangerCuration::Off };
    let budget = match block.budget() {
        Ok(b) => b,
        Err(e) => return RangerCuration::Failed(e.to_string()),
    };
    if std::env::var("MONKEYLLM_LLM_ENDPOINT").or_else(|_| std::env::var("OPENAI_BASE_URL")).is_err() {
        return RangerCuration::Skipped(
            "no LLM endpoint configured (MONKEYLLM_LLM_ENDPOINT or OPENAI_BASE_URL)".to_string(),
        );
    }
    match curate(root, git, &budget) {
        Ok(r) => RangerCuration::Ran(r),
        Err(e) => RangerCuration::Failed(format!("{e:#}")),
    }
}

/// Fold a Ranger curation into the run's report, with one stderr line when
/// it was configured but did not run; the exit code (partial on a failure).
pub(crate) fn into_report(c: RangerCuration, r: &mut forest_ranger::RangerReport) -> u8 {
    match c {
        RangerCuration::Off => 0,
        RangerCuration::Ran(p) => {
            r.curation = Some(p);
            0
        }
        RangerCuration::Skipped(why) => {
            eprintln!("ranger: curation skipped: {why}");
            r.curation_skipped = Some(why);
            0
        }
        RangerCuration::Failed(why) => {
            eprintln!("ranger: curation failed: {why}");
            r.curation_skipped = Some(why);
            EXIT_PARTIAL
        }
    }
}

/// The daemon's curation after each successful run: its own lock (the
/// daemon released the Ranger's), skipped when another writer holds it.
pub(crate) fn daemon_curation(root: &Path) {
    let Ok(cfg) = forest_ranger::RangerConfig::load(root) else { return };
    if cfg.curation.is_none() {
        return;
    }
    let Ok(_lock) = WriterLock::acquire(root) else {
        eprintln!("ranger: curation skipped: the forest is locked by another writer");
        return;
    };
    let Ok(git) = GitForest::open(root) else { return };
    match ranger_curation(root, &git, &cfg) {
        RangerCuration::Off => {}
        RangerCuration::Ran(p) => eprintln!("ranger: curation {}", summary_line(&p)),
        RangerCuration::Skipped(why) => eprintln!("ranger: curation skipped: {why}"),
        RangerCuration::Failed(why) => eprintln!("ranger: curation failed: {why}"),
    }
}
