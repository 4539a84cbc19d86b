//! `forest health`: the Ranger's health report, with the local sources
//! whose folder is gone.

use anyhow::Result;
use forest_catalog::Trails;
use forest_derived::catalog::{open_catalog, TRAILS_PATH};

use crate::cli::{forest_root, print_json, ForestArg, EXIT_ERROR};
use crate::render;

/// `forest health`.
pub(crate) fn run(f: &ForestArg, check: bool, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let catalog = open_catalog(&root)?;
    let trails = Trails::open(&root.join(TRAILS_PATH))?;
    let h = forest_ranger::health(&root, &catalog, &trails)?;
    // local sources whose folder is gone (a sync of them reads nothing)
    let missing: Vec<String> = forest_derived::config::GardenerConfig::load(&root)
        .map(|c| c.sources)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|s| {
            let p = forest_derived::config::local_path(&s.uri)?;
            (!p.exists()).then(|| format!("{} ({})", s.name, p.display()))
        })
        .collect();
    let (verdict, _) = render::health_verdict(&h, &missing);
    if json {
        print_json(&h)?;
    } else {
        print!("{}", render::health(&h, &missing));
    }
    Ok(if h.lint.errors > 0 || (check && verdict != "healthy") { EXIT_ERROR } else { 0 })
}
