//! Gardener commands' shared edge: the Curator wiring behind `--curate`,
//! run options from the flags, and the report rendering (human or JSON).

use std::path::Path;

use anyhow::Result;
use forest_derived::catalog::open_catalog;
use forest_gardener::{GardenReport, RunOptions};
use forest_git::GitForest;

use crate::cli::{print_json, GardenArgs, EXIT_PARTIAL};

pub(crate) fn build_curator(root: &Path) -> Result<forest_curator::Curator> {
    let cache = forest_curator::CurationCache::open(&root.join("_derived/curation.db"))?;
    Ok(forest_curator::Curator::from_env()?.with_cache(cache))
}

/// The Curator, its closed candidate set (the catalog, on its own
/// connection: candidates are read while the run writes) and the directives.
pub(crate) fn curation_parts(
    root: &Path,
) -> Result<(forest_curator::Curator, forest_gardener::curate::CatalogCandidates, String)> {
    let curator = build_curator(root)?;
    let config = forest_derived::config::GardenerConfig::load(root)?;
    open_catalog(root)?;
    let cands = forest_gardener::curate::CatalogCandidates::new(forest_catalog::Catalog::open(
        &root.join(forest_derived::catalog::CATALOG_PATH),
    )?);
    Ok((curator, cands, config.directives))
}

/// Run a Gardener command with the Curator wired in when `--curate` is given,
/// then roll up branch summaries.
pub(crate) fn with_curation(
    root: &Path,
    git: &GitForest,
    g: &GardenArgs,
    run: impl FnOnce(Option<&dyn forest_gardener::Curate>) -> Result<GardenReport, forest_gardener::GardenError>,
) -> Result<GardenReport> {
    with_curation_from(root, git, g, None, run)
}

/// [`with_curation`] for a committer: summaries a worker stored in the
/// prepared store are taken from there (the model id keys the store).
pub(crate) fn with_curation_from(
    root: &Path,
    git: &GitForest,
    g: &GardenArgs,
    prepared: Option<&std::sync::Arc<forest_gardener::prepared::PreparedRun>>,
    run: impl FnOnce(Option<&dyn forest_gardener::Curate>) -> Result<GardenReport, forest_gardener::GardenError>,
) -> Result<GardenReport> {
    if !g.curate {
        return Ok(run(None)?);
    }
    let (curator, cands, directives) = curation_parts(root)?;
    let mut hook = forest_gardener::curate::CuratorHook::new(&curator, Some(&cands), &directives);
    if let Some(p) = prepared {
        p.set_model(curator.model());
        hook = hook.with_prepared(p.clone());
    }
    let mut report = run(Some(&hook))?;
    // Only the branches this run changed, deepest first. Offline (every
    // endpoint refused connections): the batches already wrote the
    // deterministic branch summaries; nothing to roll up.
    if !curator.offline() {
        let changed = forest_gardener::rollup::changed_branches(&report);
        report.rollup =
            Some(forest_gardener::rollup::rollup(root, git, Some(&curator), false, Some(&changed), g.dry_run)?);
    }
    report.curation = Some(serde_json::to_value(curator.stats())?);
    Ok(report)
}

pub(crate) fn run_options(g: &GardenArgs) -> RunOptions {
    RunOptions {
        dry_run: g.dry_run,
        commit_every: g.commit_every.max(1),
        batch_bytes: g.batch_mib.max(1) << 20,
        allow_mass_stale: g.allow_mass_stale,
        ..Default::default()
    }
}

pub(crate) fn finish_garden(report: &GardenReport, json: bool) -> Result<u8> {
    if json {
        print_json(report)?;
    } else {
        print_human(report);
    }
    Ok(if report.failed() {
        eprintln!("forest: E_UNREACHABLE: no source could be read; nothing was synced (the report's errors say why)");
        crate::cli::EXIT_ERROR
    } else if report.partial() {
        EXIT_PARTIAL
    } else {
        0
    })
}

fn print_human(r: &GardenReport) {
    let verb = if r.dry_run { "would be" } else { "" };
    for s in &r.sources {
        println!("source {}: {} files seen", s.source, s.files_seen);
        let head = |l: &Vec<String>| l.iter().take(20).cloned().collect::<Vec<_>>();
        let lists: [(&str, usize, Vec<String>); 6] = [
            ("planted", s.planted.len(), s.planted.iter().take(20).collect()),
            ("branches", s.branches.len(), s.branches.iter().take(20).collect()),
            ("updated", s.updated.len(), s.updated.iter().take(20).collect()),
            ("stale", s.stale.len(), head(&s.stale)),
            ("summary_stale", s.summary_stale.len(), head(&s.summary_stale)),
            ("unsupported", s.unsupported.len(), head(&s.unsupported)),
        ];
        for (name, len, first) in lists {
            if len > 0 {
                println!("  {name} {verb}: {len}");
                for id in first {
                    println!("    {id}");
                }
                if len > 20 {
                    println!("    ... {} more", len - 20);
                }
            }
        }
        for m in &s.moved {
            println!("  moved: {} -> {}", m.from, m.to);
        }
        println!("  unchanged: {}  touched: {}", s.unchanged, s.touched);
        for e in &s.skipped {
            println!("  skipped: {}: {}", e.path, e.message);
        }
        for e in &s.errors {
            println!("  error: {}: {}", e.path, e.message);
        }
        if !s.suspect.is_empty() {
            println!("  suspect (planted, check the body): {}", s.suspect.len());
            for x in s.suspect.iter().take(20) {
                println!("    {} ({}, {}): {}", x.path, x.converter, x.reason, x.message);
            }
            if s.suspect.len() > 20 {
                println!("    ... {} more (--json lists all; forest health lists them)", s.suspect.len() - 20);
            }
        }
        if s.known_problems > 0 {
            println!(
                "  {} known problem(s) unchanged since an earlier run (forest health lists them)",
                s.known_problems
            );
        }
        println!("  {} byte(s) read", s.bytes_read);
        for w in &s.warnings {
            println!("  warning: {w}");
        }
    }
    if r.sources.iter().all(|s| {
        s.planted.is_empty()
            && s.updated.is_empty()
            && s.moved.is_empty()
            && s.stale.is_empty()
            && s.errors.is_empty()
            && s.skipped.is_empty()
            && s.unsupported.is_empty()
    }) {
        println!("nothing to do");
    }
    println!("{} commit(s) in {} ms", r.commits.len(), r.elapsed_ms);
}
