//! `forest rollup`: branch summaries deepest-first (the LLM with
//! `--curate`, else deterministic).

use anyhow::Result;
use forest_git::{GitForest, WriterLock};

use crate::cli::{forest_root, print_json, ForestArg};
use crate::garden_cmd::build_curator;

/// `forest rollup`.
pub(crate) fn run(f: &ForestArg, all: bool, curate: bool, dry_run: bool, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let _lock = WriterLock::acquire(&root)?;
    let git = GitForest::open(&root)?;
    let curator = if curate { Some(build_curator(&root)?) } else { None };
    let r = forest_gardener::rollup::rollup(&root, &git, curator.as_ref(), all, None, dry_run)?;
    if json {
        print_json(&r)?;
    } else {
        println!("rolled {} branch(es), {} deterministic, {} skipped", r.rolled.len(), r.fallbacks.len(), r.skipped);
    }
    Ok(0)
}
