//! `forest ranger run|daemon`: the Ranger's maintenance cycle, then the
//! curation the forest's `ranger.yaml` asks for.

use anyhow::{Context, Result};
use clap::Subcommand;
use forest_git::GitForest;

use crate::cli::{forest_root, print_json, ForestArg};
use crate::{curate_cmd, render};

#[derive(Subcommand)]
pub(crate) enum RangerCmd {
    /// One cycle; one audited commit or none.
    Run {
        #[command(flatten)]
        f: ForestArg,
        /// The clock (RFC 3339), for reproducible runs and tests.
        #[arg(long)]
        now: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Run on a cron schedule until SIGTERM/SIGINT (holds the lock only while running).
    Daemon {
        #[command(flatten)]
        f: ForestArg,
        /// Cron expression, e.g. "0 3 * * *".
        #[arg(long)]
        schedule: String,
    },
}

/// `forest ranger ...`.
pub(crate) fn run(cmd: RangerCmd) -> Result<u8> {
    match cmd {
        RangerCmd::Run { f, now, json } => run_once(&f, now.as_deref(), json),
        RangerCmd::Daemon { f, schedule } => daemon(&f, &schedule),
    }
}

fn run_once(f: &ForestArg, now: Option<&str>, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let now = match now {
        Some(t) => {
            chrono::DateTime::parse_from_rfc3339(t)
                .with_context(|| format!("--now expects RFC 3339, got '{t}'"))?
                .timestamp_millis() as f64
                / 1000.0
        }
        None => chrono::Utc::now().timestamp_millis() as f64 / 1000.0,
    };
    let cfg = forest_ranger::RangerConfig::load(&root)?;
    let (_lock, staged) = forest_ranger::lock_after_staging(&root, &cfg)?;
    let git = GitForest::open(&root)?;
    let mut r = forest_ranger::run(&root, &git, now, &cfg)?;
    r.canopy_upgraded = r.canopy_upgraded.map(|n| n + staged);
    let code = curate_cmd::into_report(curate_cmd::ranger_curation(&root, &git, &cfg), &mut r);
    if json {
        print_json(&r)?;
    } else {
        println!(
            "evaporation: {} decayed, {} removed; links: {} promoted, {} pruned; landmarks: {} (changed: {}); {}",
            r.evaporation.decayed,
            r.evaporation.removed,
            r.links.promoted.len(),
            r.links.pruned.len(),
            r.landmarks.landmarks,
            r.landmarks.changed,
            match r.gc {
                forest_ranger::GcStatus::Ran => "git gc --auto ran",
                forest_ranger::GcStatus::Unavailable => "git gc unavailable",
            }
        );
        if let Some(n) = r.canopy_upgraded {
            println!("canopy: rebuilt with the full model ({n} scents embedded)");
        }
        if let Some(c) = &r.curation {
            println!("curation: {}", curate_cmd::summary_line(c));
        }
    }
    Ok(code)
}

fn daemon(f: &ForestArg, schedule: &str) -> Result<u8> {
    let root = forest_root(f)?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    forest_ranger::install_signal_handlers(stop.clone())?;
    let summary = forest_ranger::daemon(&root, schedule, stop, |r| match r {
        Ok(rep) => {
            eprintln!(
                "ranger: run done ({} promoted, {} pruned, commit {:?})",
                rep.links.promoted.len(),
                rep.links.pruned.len(),
                rep.commit
            );
            curate_cmd::daemon_curation(&root);
        }
        Err(e) => eprintln!("ranger: run failed: {}", render::error_chain(e)),
    })?;
    eprintln!(
        "ranger daemon stopped after {} run(s), {} locked, {} failed",
        summary.runs, summary.locked, summary.failed
    );
    Ok(0)
}
