//! `forest fetch` and `forest prefetch`: FLESH bodies and BONE payloads
//! through the storage tiers and the hash-validated payload cache.

use crate::cli::{forest_root, print_json, ForestArg, EXIT_ERROR};
use anyhow::Result;

pub(crate) fn cmd_fetch_bodies(f: &ForestArg, ids: &[String], json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let cache = forest_derived::tiers::open_cache(&root)?;
    let mut failed = false;
    for id in ids {
        match forest_derived::tiers::read_body(&root, Some(&cache), id) {
            Ok(b) if json => println!("{}", serde_json::json!({"id": id, "body": b})),
            Ok(b) => print!("{b}"),
            Err(e) => {
                failed = true;
                eprintln!("{id}: {e}");
            }
        }
    }
    Ok(if failed { EXIT_ERROR } else { 0 })
}

pub(crate) fn cmd_fetch_payloads(f: &ForestArg, ids: &[String], json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let cache = forest_derived::tiers::open_cache(&root)?;
    let items: Vec<_> = ids.iter().map(|id| forest_derived::tiers::fetch_payload(&root, &cache, id)).collect();
    let failed = items.iter().any(|i| i.error.is_some());
    if json {
        print_json(&forest_derived::tiers::FetchReport { version: 1, items })?;
    } else {
        for i in &items {
            match (&i.path, &i.error) {
                (Some(p), _) => println!("{}\t{p}", i.id),
                (_, Some(e)) => eprintln!("{}: {e}", i.id),
                _ => {}
            }
        }
    }
    Ok(if failed { EXIT_ERROR } else { 0 })
}

pub(crate) fn cmd_prefetch(f: &ForestArg, scope: &str, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let cache = forest_derived::tiers::open_cache(&root)?;
    let r = forest_derived::tiers::prefetch(&root, &cache, scope)?;
    if json {
        print_json(&r)?;
    } else {
        println!("{} fetched, {} already local, {} error(s)", r.fetched.len(), r.already_local, r.errors.len());
        for e in &r.errors {
            eprintln!("{e}");
        }
    }
    Ok(if r.errors.is_empty() { 0 } else { EXIT_ERROR })
}
