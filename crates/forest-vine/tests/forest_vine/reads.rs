//! The read contracts on the fixture: locate/sniff split, look, move,
//! pick pages and sections, scan cursor walk, coverage accounting.

use super::*;

fn fixture() -> (tempfile::TempDir, Vine) {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let v = open(&root, false);
    (d, v)
}

#[test]
fn locate_searches_scent_and_sniff_bodies() {
    let (_d, mut v) = fixture();
    let out = call(&mut v, "locate", json!({"query": "sales by region Q1 2026", "k": 5}));
    let ids: Vec<&str> = out["results"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"sales/report-q1-2026"), "{ids:?}");
    for r in out["results"].as_array().unwrap() {
        for k in ["id", "kind", "type", "title", "summary", "trail", "score", "heat", "body_tokens"] {
            assert!(r.get(k).is_some(), "{k}");
        }
        assert!(["note", "branch"].contains(&r["kind"].as_str().unwrap()));
    }
    // A body-only term: sniff finds it, locate does not.
    let s = call(&mut v, "sniff", json!({"terms": ["seed 1045"]}));
    assert_eq!(s["results"][0]["id"], "projects/mixerllm/experiment-log");
    assert!(s["results"][0]["matches"][0]["snippet"].as_str().unwrap().to_lowercase().contains("seed 1045"));
    let l = call(&mut v, "locate", json!({"query": "zzqx-nothing"}));
    assert_eq!(l["results"], json!([]));
    assert_eq!(l["searched"], json!(82));
    assert!(l["hint"].as_str().unwrap().contains("sniff"));
    assert!(!l["hint"].as_str().unwrap().contains("zzqx"));
    let e = err(&mut v, "locate", json!({"query": "x", "scope": "everything"}));
    assert_eq!(e.code, "E_SCHEMA");
    assert!(e.message.contains("notes") && !e.message.contains("bananas"));
    let b = call(&mut v, "locate", json!({"query": "sales", "scope": "branches"}));
    assert!(b["results"].as_array().unwrap().iter().all(|r| r["kind"] == "branch"));
    let w = call(&mut v, "locate", json!({"query": "sales", "since": "2020", "until": "2020"}));
    assert_eq!(w["matched_window"], json!(0));
    assert!(w["hint"].as_str().unwrap().contains("calendar()"));
}

#[test]
fn look_move_and_pick() {
    let (_d, mut v) = fixture();
    let l = call(&mut v, "look", json!({"id": "sales/_index"}));
    assert!(l["children"].as_array().unwrap().iter().any(|c| c["id"] == "sales/report-q1-2026"));
    assert!(l.get("cross_trails").is_some() && l.get("outline").is_none());
    let ds = call(&mut v, "look", json!({"id": "sales/report-q1-2026"}));
    assert!(ds["query_manual"]["tables"].get("sales").is_some());
    assert!(ds["sample_rows"]["rows"].as_array().unwrap().len() <= 3);
    assert!(!ds["query_manual"]["example_queries"].as_array().unwrap().is_empty());
    let f = call(&mut v, "look", json!({"id": "sales/report-q1-2026", "fields": ["summary", "edges_out"]}));
    let keys: Vec<&String> = f.as_object().unwrap().keys().collect();
    assert!(keys.iter().all(|k| ["id", "summary", "edges_out", "truncated"].contains(&k.as_str())), "{keys:?}");
    let e = err(&mut v, "look", json!({"id": "nao/existe"}));
    assert_eq!(e.code, "E_NOT_FOUND");
    let batch = call(&mut v, "look", json!({"id": ["sales/_index", "nao/existe", "sales/_index"]}));
    assert_eq!(batch["missing"], json!(["nao/existe"]));
    assert_eq!(batch["nodes"].as_array().unwrap().len(), 1);
    let e = err(&mut v, "look", json!({"id": (0..11).map(|i| format!("n{i}")).collect::<Vec<_>>()}));
    assert!(e.message.contains("10"));
    let m = call(&mut v, "move", json!({"id": "projects/mixerllm/_index", "rel": "children"}));
    assert!(!m["neighbors"].as_array().unwrap().is_empty());
    let e = err(&mut v, "move", json!({"id": "sales/_index", "direction": "all"}));
    assert!(e.message.contains("direction") && e.message.contains("'all'") && e.hint.contains("both"));
    let p = call(&mut v, "pick", json!({"id": "concepts/stigmergy"}));
    let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["id", "title", "body", "body_tokens", "truncated"]);
    let e = err(&mut v, "pick", json!({"id": "concepts/stigmergy", "section": "No Such Header"}));
    assert_eq!(e.code, "E_NOT_FOUND");
    assert!(e.hint.starts_with("Available sections: ["));
    let e = err(&mut v, "pick", json!({"id": "concepts/stigmergy", "after": "page-3"}));
    assert!(e.message.contains("page-3"));
}

#[test]
fn scan_cursor_walk_is_disjoint_and_complete() {
    let (_d, mut v) = fixture();
    let first = call(&mut v, "scan", json!({"parent_id": "_index", "recursive": true}));
    let total = first["total"].as_u64().unwrap();
    assert!(total > first["returned"].as_u64().unwrap());
    let mut after = String::new();
    let mut seen: Vec<String> = vec![];
    loop {
        let page = call(
            &mut v,
            "scan",
            json!({"parent_id": "_index", "recursive": true, "after": after, "fields": ["id", "summary"]}),
        );
        for n in page["nodes"].as_array().unwrap() {
            seen.push(n["id"].as_str().unwrap().to_string());
        }
        match page.get("next") {
            Some(n) => after = n.as_str().unwrap().to_string(),
            None => break,
        }
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, seen, "ascending and unique");
    assert_eq!(seen.len() as u64, total);
    let s = call(&mut v, "scan", json!({"parent_id": "sales/_index", "filter": {"type": "dataset"}}));
    assert_eq!(s["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(s["nodes"][0]["id"], "sales/report-q1-2026");
    assert_eq!(err(&mut v, "scan", json!({"parent_id": "_index", "filter": {"vibe": "good"}})).code, "E_SCHEMA");
    assert!(err(&mut v, "scan", json!({"parent_id": "_index", "fields": ["id", "sumary"]})).message.contains("sumary"));
    let cov = call(&mut v, "coverage", json!({}));
    let sum: u64 = cov["roots"].as_array().unwrap().iter().map(|r| r["nodes"].as_u64().unwrap()).sum();
    assert_eq!(sum + 1 + cov["system"].as_u64().unwrap(), cov["total"].as_u64().unwrap());
}

#[test]
fn look_lists_sub_branches_before_leaves() {
    let (_d, mut v) = fixture();
    let l = call(&mut v, "look", json!({"id": "projects/_index"}));
    let ids: Vec<&str> = l["children"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    // By id alone the leaf would come first; the budget clip cuts from the
    // tail, so the way down is listed first.
    assert_eq!(ids, vec!["projects/mixerllm/_index", "projects/monkeyllm/_index", "projects/audio-pipeline"]);
}
