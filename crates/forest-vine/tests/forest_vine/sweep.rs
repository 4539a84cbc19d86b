//! The budget sweep: every read primitive on every given node stays within
//! its ceiling by the dialect's estimator, and every clipped answer says
//! so. Shared by the Vine's tests (fixture forests) and the CLI's (a forest
//! the Gardener adopted: the Vine itself does not depend on the Gardener),
//! included by path into both test binaries.

use forest_vine::{budget_of, estimate, Vine};
use serde_json::{json, Value};

fn call(v: &mut Vine, prim: &str, a: Value) -> Value {
    match v.call(prim, &a.as_object().cloned().unwrap_or_default()) {
        Ok(x) => x,
        Err(e) => panic!("{prim}({a}) failed: {e:?}"),
    }
}

pub fn check(prim: &str, out: &Value) {
    let budget = budget_of(prim).unwrap();
    let t = estimate(out);
    assert!(t <= budget, "{prim}: {t} tokens > {budget}: {}", &out.to_string()[..300.min(out.to_string().len())]);
}

/// A clipped answer names what it dropped.
pub fn explicit(out: &Value) {
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
