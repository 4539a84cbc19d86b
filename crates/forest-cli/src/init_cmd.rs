//! `forest init DIR`: an empty forest, its own git repository, one commit.

use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

use crate::cli::print_json;

#[derive(Serialize, schemars::JsonSchema)]
struct InitReport {
    version: u32,
    forest: String,
    commit: String,
}

/// `forest init`.
pub(crate) fn run(dir: &Path, title: &str, json: bool) -> Result<u8> {
    let git = forest_derived::init::init_forest(dir, title).context("init")?;
    let head = git.head_oid()?.map(|o| o.to_string()).unwrap_or_default();
    if json {
        print_json(&InitReport { version: 1, forest: dir.display().to_string(), commit: head })?;
    } else {
        println!("initialised forest '{title}' at {}", dir.display());
    }
    Ok(0)
}
