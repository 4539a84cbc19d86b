//! In-process latency of each primitive on an existing forest.
//!
//! usage: cargo run --release -p forest-vine --example bench_vine FOREST [ROUNDS]
//!
//! Picks target ids from the forest itself (a dataset, a branch, a leaf
//! with sections), runs each call ROUNDS times (default 200) on one
//! read-only engine and prints p50/p95 in ms per primitive.

use std::time::Instant;

use forest_vine::{Vine, VineOptions};
use serde_json::{json, Value};

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(root) = args.get(1) else {
        eprintln!("usage: bench_vine FOREST [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(200);
    let mut v = match Vine::open(std::path::Path::new(root), VineOptions::default()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("open: {e}");
            std::process::exit(1);
        }
    };
    let nodes = v.catalog().dump().map(|d| d.nodes).unwrap_or_default();
    let n = nodes.len();
    let leaf = nodes
        .iter()
        .filter(|r| !r.kind.is_branch() && !r.outline.is_empty())
        .max_by_key(|r| r.outline.len())
        .map(|r| r.id.clone())
        .unwrap_or_default();
    let section = nodes.iter().find(|r| r.id == leaf).and_then(|r| r.outline.first().cloned()).unwrap_or_default();
    let branch = nodes
        .iter()
        .filter(|r| r.kind.is_branch() && r.id != "_index")
        .map(|r| r.id.clone())
        .next()
        .unwrap_or("_index".into());
    let dataset = nodes.iter().find(|r| r.node_type == "dataset").map(|r| r.id.clone());
    let word = nodes
        .iter()
        .find(|r| r.id == leaf)
        .map(|r| r.title.split_whitespace().last().unwrap_or("the").to_string())
        .unwrap_or("the".into());
    let mut plan: Vec<(&str, Value)> = vec![
        ("locate", json!({"query": format!("{word} report sales"), "k": 5})),
        ("look", json!({"id": leaf})),
        ("look", json!({"id": branch})),
        ("move", json!({"id": leaf, "direction": "both"})),
        ("pick", json!({"id": leaf})),
        ("pick", json!({"id": leaf, "section": section})),
        ("scan", json!({"parent_id": branch})),
        ("sniff", json!({"terms": [word.to_lowercase()], "scope": branch})),
        ("coverage", json!({})),
    ];
    if n <= 20_000 {
        plan.push(("sniff", json!({"terms": [word.to_lowercase()]})));
        plan.push(("harvest", json!({"query": format!("{word} report")})));
    }
    if let Some(ds) = &dataset {
        plan.push(("query", json!({"id": ds, "sql": "SELECT COUNT(*) FROM sqlite_master"})));
    }
    println!("forest {root}: {n} nodes, {rounds} rounds (leaf {leaf}, branch {branch})");
    println!("{:<10} {:<28} {:>9} {:>9}", "primitive", "args", "p50 ms", "p95 ms");
    for (prim, a) in plan {
        let m = a.as_object().cloned().unwrap_or_default();
        let r = if prim == "sniff" && n > 20_000 || prim == "harvest" { rounds.min(20) } else { rounds };
        let mut t = Vec::with_capacity(r);
        for _ in 0..r {
            let s = Instant::now();
            if let Err(e) = v.call(prim, &m) {
                eprintln!("{prim}: {e}");
                break;
            }
            t.push(s.elapsed().as_secs_f64() * 1000.0);
        }
        if t.is_empty() {
            continue;
        }
        let label: String = a.to_string().chars().take(28).collect();
        println!("{:<10} {:<28} {:>9.3} {:>9.3}", prim, label, pct(&mut t.clone(), 0.5), pct(&mut t, 0.95));
    }
}
