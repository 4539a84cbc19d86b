//! `look` on every branch of a forest (issue 14: do branch digests fit the
//! 500-token budget?).
//!
//! usage: cargo run --release -p forest-vine --example look_branches FOREST
//!
//! Prints the number of branches, the largest digest (payload estimate,
//! vine §1.3) and how many are over 500 tokens, how many digests the budget
//! clipped and which fields it clipped, the children shown vs listed over
//! all branches, the most children a branch lists, and the children shown
//! vs listed for the worst clipped branch, and how many sub-branch
//! children (the way further down) the clip hid.

use std::collections::BTreeMap;

use forest_vine::{estimate, Vine, VineOptions, LOOK_BUDGET};
use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(root) = args.get(1) else {
        eprintln!("usage: look_branches FOREST");
        std::process::exit(2);
    };
    let mut v = match Vine::open(std::path::Path::new(root), VineOptions::default()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("open: {e}");
            std::process::exit(1);
        }
    };
    let branches: Vec<String> = forest_model::walk::node_paths(std::path::Path::new(root))
        .into_iter()
        .filter(|p| p.ends_with("_index.md") && !p.starts_with("_meta/"))
        .filter_map(|p| p.strip_suffix(".md").map(str::to_string))
        .collect();
    let (mut clipped, mut failed, mut most_children) = (0usize, 0usize, (0usize, String::new()));
    let mut fields: BTreeMap<String, usize> = BTreeMap::new();
    let mut worst: Option<(usize, usize, String)> = None;
    let (mut largest, mut over, mut shown_all, mut listed_all) = ((0usize, String::new()), 0usize, 0usize, 0usize);
    // Sub-branch children (the way on down) listed vs shown.
    let (mut sub_listed, mut sub_shown, mut sub_cut_branches) = (0usize, 0usize, 0usize);
    for id in &branches {
        let args = json!({ "id": id });
        let digest = match v.call("look", args.as_object().expect("object")) {
            Ok(d) => d,
            Err(e) => {
                failed += 1;
                eprintln!("look {id}: {e}");
                continue;
            }
        };
        let shown = digest.get("children").and_then(Value::as_array).map_or(0, Vec::len);
        let listed = std::fs::read_to_string(std::path::Path::new(root).join(format!("{id}.md")))
            .map(|t| t.lines().filter(|l| l.starts_with("- [[")).count())
            .unwrap_or(0);
        let is_branch = |c: &Value| c.get("id").and_then(Value::as_str).is_some_and(|i| i.ends_with("/_index"));
        let shown_subs =
            digest.get("children").and_then(Value::as_array).map_or(0, |a| a.iter().filter(|c| is_branch(c)).count());
        let listed_subs = std::fs::read_to_string(std::path::Path::new(root).join(format!("{id}.md")))
            .map(|t| t.lines().filter(|l| l.starts_with("- [[") && l.contains("/_index]]")).count())
            .unwrap_or(0);
        sub_listed += listed_subs;
        sub_shown += shown_subs;
        sub_cut_branches += usize::from(shown_subs < listed_subs);
        let size = estimate(&digest);
        if size > largest.0 {
            largest = (size, id.clone());
        }
        over += usize::from(size > LOOK_BUDGET);
        shown_all += shown;
        listed_all += listed;
        if listed > most_children.0 {
            most_children = (listed, id.clone());
        }
        if digest.get("truncated").and_then(Value::as_bool) == Some(true) {
            clipped += 1;
            for f in digest.get("truncated_fields").and_then(Value::as_array).into_iter().flatten() {
                *fields.entry(f.as_str().unwrap_or("?").to_string()).or_default() += 1;
            }
            if worst.as_ref().is_none_or(|w| listed.saturating_sub(shown) > w.0.saturating_sub(w.1)) {
                worst = Some((listed, shown, id.clone()));
            }
        }
    }
    println!(
        "branches {}: look failed {failed}, clipped by the 500-token budget {clipped} (fields {fields:?}); \
         most entry lines {} ({})",
        branches.len(),
        most_children.0,
        most_children.1
    );
    println!(
        "largest digest {} tokens ({}); over {LOOK_BUDGET}: {over}; children shown {shown_all} of {listed_all} listed",
        largest.0, largest.1
    );
    println!(
        "sub-branch children shown {sub_shown} of {sub_listed} listed; branches hiding a sub-branch: {sub_cut_branches}"
    );
    if let Some((listed, shown, id)) = worst {
        println!("worst clipped: {id} lists {listed} entries, look shows {shown} children");
    }
}
