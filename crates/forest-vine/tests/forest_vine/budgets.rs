//! Budgets: every read primitive on every node of the fixture forest (and
//! of a forest with pathological nodes) stays within its ceiling by the
//! dialect's estimator, and every clipped answer says so.

use super::*;
use forest_vine::{budget_of, estimate};

fn check(prim: &str, out: &Value) {
    let budget = budget_of(prim).unwrap();
    let t = estimate(out);
    assert!(t <= budget, "{prim}: {t} tokens > {budget}: {}", &out.to_string()[..300.min(out.to_string().len())]);
}

/// A clipped answer names what it dropped.
fn explicit(out: &Value) {
    if out.get("truncated") == Some(&json!(true)) {
        let named = ["dropped", "dropped_count", "truncated_fields", "next", "cut", "hint", "truncated_matches"]
            .iter()
            .any(|k| out.get(*k).is_some());
        let nested = out.get("results").or(out.get("nodes")).is_some();
        assert!(named || nested, "truncated without naming what: {out}");
    }
}

pub fn every_read(v: &mut Vine, ids: &[String]) -> usize {
    let mut calls = 0;
    for id in ids {
        for (prim, a) in [
            ("look", json!({"id": id})),
            ("move", json!({"id": id, "direction": "both"})),
            ("move", json!({"id": id, "rel": "children"})),
            ("pick", json!({"id": id})),
            ("history", json!({"id": id})),
        ] {
            let out = call(v, prim, a);
            check(prim, &out);
            explicit(&out);
            calls += 1;
        }
        let digest = call(v, "look", json!({"id": id}));
        if digest.get("children").is_some() {
            let out = call(
                v,
                "scan",
                json!({"parent_id": id, "recursive": true, "fields": ["id", "title", "summary", "tags", "trail"]}),
            );
            check("scan", &out);
            explicit(&out);
            let out = call(v, "sniff", json!({"terms": ["de", "the"], "scope": id, "k": 20}));
            check("sniff", &out);
        }
        if let Some(outline) = digest.get("outline").and_then(Value::as_array) {
            let names: Vec<Value> = outline.iter().take(10).cloned().collect();
            if !names.is_empty() {
                let out = call(v, "pick", json!({"id": id, "section": names}));
                check("pick", &out);
                explicit(&out);
                let out = call(v, "pick", json!({"id": id, "section": names[0]}));
                check("pick", &out);
            }
        }
    }
    for chunk in ids.chunks(10) {
        let out = call(v, "look", json!({"id": chunk}));
        assert!(estimate(&out) <= 2000, "look batch over 2000");
        for n in out["nodes"].as_array().unwrap() {
            assert!(estimate(n) <= 500);
        }
    }
    for chunk in ids.chunks(5) {
        let out = call(v, "pick", json!({"id": chunk}));
        check("pick", &out);
    }
    calls
}

#[test]
fn every_node_of_the_fixture_within_budget() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    let ids: Vec<String> = v.catalog().dump().unwrap().nodes.into_iter().map(|n| n.id).collect();
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

/// The same sweep over a forest adopted from the dump-ingest fixture.
#[test]
fn every_node_of_an_adopted_dump_within_budget() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("adopted");
    let git = forest_gardener::init::init_forest(&root, "Toucan").unwrap();
    let spec = forest_gardener::AdoptSpec {
        source: fixtures().join("dump-ingest").display().to_string(),
        name: None,
        dest: None,
        content: None,
        archive: None,
        endpoint_url: None,
        path_style: None,
        follow_symlinks: false,
        ..Default::default()
    };
    let opts = forest_gardener::RunOptions::default();
    let rep = forest_gardener::adopt(&root, &git, &spec, &opts, &forest_gardener::NoProgress, None).unwrap();
    assert!(!rep.partial(), "adopt: {:?}", rep.sources.iter().map(|s| &s.errors).collect::<Vec<_>>());
    drop(git);
    let mut v = open(&root, false);
    let ids: Vec<String> = v.catalog().dump().unwrap().nodes.into_iter().map(|n| n.id).collect();
    assert!(ids.len() > 100, "{} nodes", ids.len());
    every_read(&mut v, &ids);
    for row in v.catalog().dump().unwrap().nodes.into_iter().filter(|n| n.node_type == "dataset") {
        let out = call(&mut v, "query", json!({"id": row.id, "sql": "SELECT * FROM sqlite_master"}));
        check("query", &out);
    }
}
