//! `forest reindex`: `_derived/catalog.db` rebuilt from the Markdown.

use anyhow::Result;
use forest_derived::catalog::reindex;
use serde::Serialize;

use crate::cli::{forest_root, print_json, ForestArg};

/// `forest reindex`.
pub(crate) fn run(f: &ForestArg, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let started = std::time::Instant::now();
    let n = reindex(&root)?;
    let out = ReindexReport { version: 1, nodes: n, elapsed_ms: started.elapsed().as_millis() as u64 };
    if json {
        print_json(&out)?;
    } else {
        println!("reindexed {} nodes in {} ms", out.nodes, out.elapsed_ms);
    }
    Ok(0)
}

/// `forest reindex --json`.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ReindexReport {
    /// Report shape version.
    pub version: u32,
    /// Nodes indexed.
    pub nodes: usize,
    /// Wall time.
    pub elapsed_ms: u64,
}
