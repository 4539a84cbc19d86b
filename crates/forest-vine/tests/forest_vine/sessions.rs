//! Sessions: traces, session-scoped heat during a hunt, deposits on close,
//! shortcut suggestions, and the shared trails.db schema.

use super::*;
use forest_catalog::Trails;

#[test]
fn hunt_deposits_heat_on_close_and_ranger_evaporates_it() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    let session = v.session().to_string();
    call(&mut v, "locate", json!({"query": "returns q1"}));
    call(&mut v, "look", json!({"id": "sales/_index"}));
    call(&mut v, "pick", json!({"id": "sales/returns-q1"}));
    // Session heat (β = 0.5) is visible to ranking while the hunt runs.
    let look = call(&mut v, "look", json!({"id": "sales/returns-q1", "fields": ["stats"]}));
    assert!((look["stats"]["heat"].as_f64().unwrap() - 0.1).abs() < 1e-9, "{look}");
    let trace = std::fs::read_to_string(root.join(format!("_derived/traces/{session}.jsonl"))).unwrap();
    let prims: Vec<String> = trace
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["primitive"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(prims, ["locate", "look", "pick", "look"]);
    let closed = call(&mut v, "close_session", json!({"success": true, "answer_nodes": ["sales/returns-q1"]}));
    assert_eq!(closed["metrics"]["trail_len"], json!(2));
    assert_eq!(closed["metrics"]["hops_to_banana"], json!(1));
    assert_eq!(closed["suggest_shortcuts"], json!([]));
    assert_ne!(v.session(), session, "a closed session is not re-counted");
    drop(v);
    let t = Trails::open(&root.join("_derived/trails.db")).unwrap();
    let rows = t.persistent_rows().unwrap();
    let heat = |id: &str| rows.iter().find(|r| r.0 == id).map(|r| r.1).unwrap_or(0.0);
    assert!((heat("sales/returns-q1") - 0.1).abs() < 1e-9);
    assert!((heat("sales/_index") - 0.1).abs() < 1e-9);
    assert!((heat("_index") - 0.1).abs() < 1e-9);
    assert_eq!(t.get_heat("sales/returns-q1", Some(&session)).unwrap(), 0.1, "session scope cleared on close");
    // The Ranger's evaporation reads the same rows: a week later they decay.
    let mut t = t;
    let ev = t.evaporate(forest_catalog::pyjson::round4(1.0e10), 7.0).unwrap();
    assert!(ev.decayed + ev.removed >= 3);
}

#[test]
fn failed_close_deposits_nothing_and_long_trails_suggest_shortcuts() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    call(&mut v, "pick", json!({"id": "sales/returns-q1"}));
    call(&mut v, "close_session", json!({"success": false, "answer_nodes": ["sales/returns-q1"]}));
    let t = Trails::open(&root.join("_derived/trails.db")).unwrap();
    assert!(t.persistent_rows().unwrap().is_empty());
    for (p, a) in [
        ("locate", json!({"query": "targets"})),
        ("pick", json!({"id": "sales/discount-policy"})),
        ("locate", json!({"query": "targets 2026"})),
        ("pick", json!({"id": "sales/_index"})),
        ("pick", json!({"id": "sales/targets-2026"})),
    ] {
        call(&mut v, p, a);
    }
    let closed = call(&mut v, "close_session", json!({"success": true, "answer_nodes": ["sales/targets-2026"]}));
    assert_eq!(closed["metrics"]["trail_len"], json!(4));
    assert_eq!(closed["metrics"]["hops_to_banana"], json!(0));
    assert_eq!(closed["suggest_shortcuts"], json!(["sales/targets-2026"]));
}
