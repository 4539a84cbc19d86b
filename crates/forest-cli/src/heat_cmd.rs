//! `forest heat deposit|show`: pheromone trails by hand.

use anyhow::Result;
use clap::Subcommand;
use forest_catalog::Trails;
use forest_derived::catalog::TRAILS_PATH;
use serde::Serialize;

use crate::cli::{forest_root, print_json, ForestArg};

#[derive(Subcommand)]
pub(crate) enum HeatCmd {
    /// Add heat to nodes (capped at 1.0).
    Deposit {
        #[command(flatten)]
        f: ForestArg,
        ids: Vec<String>,
        #[arg(long, default_value_t = 0.1)]
        amount: f64,
        #[arg(long)]
        session: Option<String>,
    },
    /// Heat statistics and the hottest nodes.
    Show {
        #[command(flatten)]
        f: ForestArg,
        #[arg(long)]
        json: bool,
    },
}

/// `forest heat ...`.
pub(crate) fn run(cmd: HeatCmd) -> Result<u8> {
    match cmd {
        HeatCmd::Deposit { f, ids, amount, session } => {
            let root = forest_root(&f)?;
            let mut trails = Trails::open(&root.join(TRAILS_PATH))?;
            trails.deposit(&ids, amount, session.as_deref().unwrap_or(""))?;
            Ok(0)
        }
        HeatCmd::Show { f, json } => show(&f, json),
    }
}

fn show(f: &ForestArg, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let trails = Trails::open(&root.join(TRAILS_PATH))?;
    let stats = trails.stats()?;
    let mut rows = trails.persistent_rows()?;
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    rows.truncate(20);
    let out = HeatReport {
        version: 1,
        stats,
        hottest: rows.into_iter().map(|(id, heat, updated)| HeatRow { id, heat, updated }).collect(),
    };
    if json {
        print_json(&out)?;
    } else {
        println!("rows {}  max {:.4}  mean {:.4}", out.stats.rows, out.stats.max, out.stats.mean);
        for r in &out.hottest {
            println!("{:.4}  {}", r.heat, r.id);
        }
    }
    Ok(0)
}

/// `forest heat show --json`.
#[derive(Serialize, schemars::JsonSchema)]
pub struct HeatReport {
    /// Report shape version.
    pub version: u32,
    /// Persistent-scope statistics.
    pub stats: forest_catalog::HeatStats,
    /// Up to 20 hottest nodes.
    pub hottest: Vec<HeatRow>,
}

/// One heat row.
#[derive(Serialize, schemars::JsonSchema)]
pub struct HeatRow {
    /// Node id.
    pub id: String,
    /// Persistent heat.
    pub heat: f64,
    /// Unix seconds of the last deposit/decay.
    pub updated: f64,
}
