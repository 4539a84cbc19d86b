//! Budgets: every read primitive on every node of the fixture forest (and
//! of a forest with pathological nodes) stays within its ceiling by the
//! dialect's estimator, and every clipped answer says so.

use super::sweep::{check, every_read, explicit};
use super::*;

#[test]
fn every_node_of_the_fixture_within_budget() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    let ids: Vec<String> = v.catalog().dump().unwrap().nodes.into_iter().map(|n| n.id.into_string()).collect();
    assert_eq!(ids.len(), 82);
    let calls = every_read(&mut v, &ids);
    assert!(calls >= 82 * 5);
    for q in ["sales by region Q1 2026", "mixer", "the", "tropicália tech people", "benchmark p95 latency"] {
        for k in [1, 5, 50] {
            let out = call(&mut v, "locate", json!({"query": q, "k": k, "include": ["outline"]}));
            check("locate", &out);
            explicit(&out);
            let out = call(&mut v, "harvest", json!({"query": q, "k": 5}));
            check("harvest", &out);
        }
    }
    let out = call(&mut v, "sniff", json!({"terms": ["de"], "k": 20}));
    check("sniff", &out);
    assert_eq!(out["truncated"], json!(true));
    let out = call(
        &mut v,
        "scan",
        json!({"parent_id": "_index", "recursive": true, "fields": ["id", "title", "summary", "tags", "trail", "outline"]}),
    );
    check("scan", &out);
    assert_eq!(out["truncated"], json!(true));
    assert!(out["dropped"].as_array().is_some_and(|d| !d.is_empty()) || out.get("dropped_count").is_some());
    let out = call(&mut v, "coverage", json!({}));
    check("coverage", &out);
}

/// Pathological nodes: a giant body, 40 sections, 20 links, long lines.
#[test]
fn giant_nodes_are_clipped_and_say_so() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut body = String::from("# Giant\n\n");
    for i in 0..80 {
        body.push_str(&format!(
            "## Section {i:02} with a long header name to cost tokens\n\n{}\n\n",
            "word \"quoted\"\tand\nnewline ".repeat(60)
        ));
    }
    body.push_str(&"x".repeat(20000));
    let links: String = (0..20).map(|i| format!("- rel: related-to\n  target: notes/t{i}\n")).collect();
    let text = format!(
        "---\nid: notes/giant\ntype: note\ntitle: Giant\nsummary: A deliberately giant test note with many sections and links.\ncreated: '2026-01-01'\nupdated: '2026-01-01'\nlinks:\n{links}---\n\n{body}"
    );
    std::fs::write(root.join("notes/giant.md"), text).unwrap();
    let mut v = open(&root, false);
    let look = call(&mut v, "look", json!({"id": "notes/giant"}));
    check("look", &look);
    assert_eq!(look["truncated"], json!(true));
    assert!(look["truncated_fields"].as_array().unwrap().contains(&json!("outline")));
    assert!(look["stats"]["degree"].as_u64().unwrap() >= 20);
    let mut next: Option<String> = None;
    let mut whole = String::new();
    let mut pages = 0;
    loop {
        let out = call(&mut v, "pick", json!({"id": "notes/giant", "after": next.clone().unwrap_or_default()}));
        check("pick", &out);
        whole.push_str(out["body"].as_str().unwrap());
        pages += 1;
        match out.get("next") {
            Some(n) => next = n.as_str().map(String::from),
            None => break,
        }
        assert!(pages < 200);
    }
    let node = forest_model::node::Node::parse(&std::fs::read_to_string(root.join("notes/giant.md")).unwrap()).unwrap();
    // The 20000-char last block is hard-cut; everything before it reassembles byte for byte.
    let head = &node.body[..node.body.rfind("\n\n").unwrap() + 2];
    assert!(whole.starts_with(head), "pages reassemble the body");
    let mv = call(&mut v, "move", json!({"id": "notes/giant", "direction": "both"}));
    check("move", &mv);
}
