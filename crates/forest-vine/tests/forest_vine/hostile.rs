//! A hostile client against the engines and the server's pool: SQL bombs,
//! oversized inputs, calls past their deadline, constant-true tend, symlinks
//! and payloads that lead outside the forest, and a `--readonly` pool that
//! must write nothing shared. Every refusal is one clear envelope; the next
//! honest call still works. A bounded proptest walks the request surface.

use std::time::{Duration, Instant};

use forest_vine::pool::{CallCtx, Pool};
use proptest::prelude::*;

use super::*;

const DS: &str = "sales/report-q1-2026";

fn code(v: &mut Vine, prim: &str, a: Value) -> &'static str {
    err(v, prim, a).code.as_str()
}

fn honest_count(v: &mut Vine) -> i64 {
    call(v, "query", json!({"id": DS, "sql": "SELECT COUNT(*) FROM sales"}))["rows"][0][0].as_i64().unwrap()
}

#[test]
fn sql_bombs_are_clear_refusals_and_the_engine_goes_on() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    let wild = "%_".repeat(20_000);
    let glob = "*?".repeat(20_000);
    for sql in [
        format!("SELECT COUNT(*) FROM sales WHERE region LIKE '{wild}'"),
        format!("SELECT COUNT(*) FROM sales WHERE region GLOB '{glob}'"),
        "SELECT randomblob(5e8)".to_string(),
        "SELECT length(zeroblob(500000000))".to_string(),
        "SELECT length(printf('%.*c', 500000000, 'x'))".to_string(),
        "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r".to_string(),
        format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000)),
    ] {
        let e = err(&mut v, "query", json!({"id": DS, "sql": sql}));
        assert!(["E_QUERY_FORBIDDEN", "E_QUERY_INVALID", "E_TIMEOUT"].contains(&e.code.as_str()), "{e:?}");
        assert_eq!(honest_count(&mut v), 600);
    }
    // A wide text cell comes back elided, not whole.
    let out = call(&mut v, "query", json!({"id": DS, "sql": "SELECT hex(randomblob(100000)) AS h"}));
    let cell = out["rows"].get(0).and_then(|r| r[0].as_str()).unwrap_or("");
    assert!(cell.len() < 10_000, "cell of {} bytes", cell.len());
}

#[test]
fn oversized_inputs_are_refused_fast() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    let words = "pelican ".repeat(400_000);
    assert_eq!(code(&mut v, "locate", json!({"query": words})), "E_SCHEMA");
    assert_eq!(code(&mut v, "harvest", json!({"query": words})), "E_SCHEMA");
    assert_eq!(code(&mut v, "sniff", json!({"terms": ["x".repeat(10_000)]})), "E_SCHEMA");
    let ids: Vec<String> = (0..5000).map(|i| format!("n/{i}")).collect();
    assert_eq!(code(&mut v, "look", json!({"id": ids})), "E_SCHEMA");
    let sql = format!("SELECT 1 WHERE '{}' = ''", "a".repeat(200_000));
    assert_eq!(code(&mut v, "query", json!({"id": DS, "sql": sql})), "E_SCHEMA");
    let e = err(&mut v, "locate", json!({"query": words}));
    assert!(e.message.contains("too large"), "{e:?}");
    assert!(!call(&mut v, "locate", json!({"query": "returns"}))["results"].as_array().unwrap().is_empty());
}

#[test]
fn long_primitives_stop_at_the_call_deadline() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    let bomb = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r";
    for (prim, a) in [
        ("sniff", json!({"terms": ["the"]})),
        ("scan", json!({"parent_id": "_index", "recursive": true})),
        ("locate", json!({"query": "sales"})),
        ("harvest", json!({"query": "sales returns"})),
        ("query", json!({"id": DS, "sql": bomb})),
    ] {
        let e = v.call_until(prim, &args(a), Some(Instant::now())).unwrap_err();
        assert_eq!(e.code, "E_TIMEOUT", "{prim}: {e:?}");
    }
    // The same engine answers the next call with no deadline in the way.
    assert_eq!(honest_count(&mut v), 600);
}

#[test]
fn tend_refuses_constant_where_and_statements_over_budget() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let db = root.join("sales/report-q1-2026.db");
    let before = std::fs::read(&db).unwrap();
    let mut v = open(&root, true);
    for sql in [
        "UPDATE sales SET value = 0 WHERE 1",
        "UPDATE sales SET value = 0 WHERE 1=1",
        "UPDATE sales SET value = 0 WHERE 'a'='a'",
        "DELETE FROM sales WHERE NOT 0",
        "DELETE FROM sales WHERE (SELECT 1)",
        "INSERT INTO sales (region) VALUES (randomblob(100000000))",
        "INSERT INTO sales (region) SELECT hex(randomblob(20000)) FROM sales",
    ] {
        let e = err(&mut v, "tend", json!({"id": DS, "sql": sql}));
        assert_eq!(e.code, "E_QUERY_FORBIDDEN", "{sql}: {e:?}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before, "nothing committed");
    let ok = call(&mut v, "tend", json!({"id": DS, "sql": "UPDATE sales SET qty = qty WHERE region = 'North'"}));
    assert!(ok["rows_affected"].as_u64().unwrap() > 0, "{ok}");
}

/// A node file and a directory that are symlinks to outside the forest.
fn plant_symlinks(d: &Path, root: &Path) {
    let outside = d.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let secret = "---\ntitle: Salary sheet\nsummary: Salaries of everyone.\ntype: note\n---\n# Salary sheet\n\nceo-salary-zebra 1000000\n";
    std::fs::write(outside.join("secret.md"), secret).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), root.join("sales/leak.md")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
}

#[test]
fn symlinks_out_of_the_forest_are_never_served() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    let nodes = v.catalog().count_nodes().unwrap();
    plant_symlinks(d.path(), &root);
    for (prim, a) in [
        ("pick", json!({"id": "sales/leak"})),
        ("look", json!({"id": "sales/leak"})),
        ("pick", json!({"id": "linked/secret"})),
        ("look", json!({"id": "linked/secret"})),
    ] {
        let e = err(&mut v, prim, a.clone());
        assert_eq!(e.code, "E_FORBIDDEN", "{prim}({a}): {e:?}");
        assert!(e.message.contains("symlink"), "{e:?}");
    }
    let s = call(&mut v, "sniff", json!({"terms": ["ceo-salary-zebra"]}));
    assert!(!s.to_string().contains("ceo-salary-zebra 1000000"), "{s}");
    assert_eq!(v.catalog().count_nodes().unwrap(), nodes, "no catalog row for a symlink");
    let lint = forest_model::lint::lint_forest(&root);
    for id in ["sales/leak", "linked"] {
        assert!(
            lint.issues.iter().any(|i| i.id == id && i.message.contains("symlink")),
            "{id} not reported: {:?}",
            lint.issues
        );
    }
}

#[test]
fn plant_refuses_payloads_outside_the_forest() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let head = git(&root, &["rev-parse", "HEAD"]);
    let mut v = open(&root, true);
    for payload in ["../../../../etc/passwd", "/etc/passwd", "file:///etc/passwd", "file://localhost/etc/passwd"] {
        let node = json!({"id": "notes/evil", "type": "note", "title": "Evil", "summary": "A payload that escapes.",
            "parent": "notes/_index", "payload": payload, "payload_type": "pdf"});
        let e = err(&mut v, "plant", json!({"node": node}));
        assert_eq!(e.code, "E_FORBIDDEN", "{payload}: {e:?}");
    }
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "nothing committed");
    assert!(!root.join("notes/evil.md").exists());
}

fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    ["catalog.db", "catalog.db-wal", "trails.db", "trails.db-wal"]
        .iter()
        .map(|n| (n.to_string(), std::fs::read(root.join("_derived").join(n)).unwrap_or_default()))
        .collect()
}

#[test]
fn a_readonly_pool_writes_nothing_shared() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    drop(open(&root, false)); // builds the catalog once, checkpointed on close
    std::fs::write(
        root.join("notes/unindexed.md"),
        "---\ntitle: Unindexed\nsummary: Not in the catalog yet.\ntype: note\n---\n# Unindexed\n\nbody\n",
    )
    .unwrap();
    plant_symlinks(d.path(), &root);
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let pool = Pool::start(&root, false).unwrap();
    let before = snapshot(&root);
    let git_before = (git(&root, &["rev-parse", "HEAD"]), git(&root, &["status", "--porcelain"]));
    let call = |prim: &str, a: Value| rt.block_on(pool.call(prim, args(a), CallCtx::default()));
    assert!(call("look", json!({"id": "notes/unindexed"})).is_err(), "a read-only server indexes nothing");
    assert_eq!(call("look", json!({"id": "sales/leak"})).unwrap_err().code, "E_FORBIDDEN");
    call("pick", json!({"id": "sales/returns-q1"})).unwrap();
    let look = call("look", json!({"id": "sales/returns-q1", "fields": ["stats"]})).unwrap();
    assert!(look["stats"]["heat"].as_f64().unwrap() > 0.0, "session heat stays in the session: {look}");
    for _ in 0..50 {
        call("close_session", json!({"success": true, "answer_nodes": ["sales/returns-q1"]})).unwrap();
    }
    let bogus: Vec<String> = (0..64).map(|i| format!("bogus/{i}/{}", "x".repeat(200))).collect();
    call("close_session", json!({"success": true, "answer_nodes": bogus})).unwrap();
    assert_eq!(call("plant", json!({"node": {"id": "x"}})).unwrap_err().code, "E_READONLY");
    let look = call("look", json!({"id": "sales/returns-q1", "fields": ["stats"]})).unwrap();
    assert_eq!(look["stats"]["heat"], json!(0.0), "no shared heat: {look}");
    assert!(snapshot(&root) == before, "catalog.db / trails.db changed");
    assert_eq!((git(&root, &["rev-parse", "HEAD"]), git(&root, &["status", "--porcelain"])), git_before);
    // A call already past its deadline is answered E_TIMEOUT, not run.
    let late = CallCtx { deadline: Instant::now() - Duration::from_millis(1), ..CallCtx::default() };
    let e = rt.block_on(pool.call("sniff", args(json!({"terms": ["the"]})), late)).unwrap_err();
    assert_eq!(e.code, "E_TIMEOUT");
}

/// Values a hostile client might put anywhere.
fn hostile_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "[a-z/_.%*?'\" ;-]{0,40}".prop_map(Value::String),
        Just(json!("../../../../etc/passwd")),
        Just(json!("sales/report-q1-2026")),
        Just(json!("SELECT * FROM sales WHERE region LIKE '%_%_%_%'")),
        Just(json!("a\u{0}b")),
        "\\PC{0,20}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const READS: [&str; 13] = [
    "locate",
    "look",
    "move",
    "pick",
    "view",
    "scan",
    "sniff",
    "calendar",
    "coverage",
    "query",
    "history",
    "harvest",
    "close_session",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any arguments to any read primitive: an answer or a known envelope
    /// within the deadline, never a panic.
    #[test]
    fn the_request_surface_never_panics(
        prim in prop::sample::select(READS.to_vec()),
        named in prop::collection::vec((0usize..12, hostile_value()), 0..5),
        extra in prop::option::of(("[a-z]{1,8}", hostile_value())),
    ) {
        static ROOT: once_cell::sync::Lazy<(tempfile::TempDir, PathBuf)> = once_cell::sync::Lazy::new(|| {
            let d = tempfile::tempdir().unwrap();
            let root = forest_copy(d.path(), "fixture-forest");
            (d, root)
        });
        let sig = forest_vine::signature(prim).unwrap();
        let mut a = Map::new();
        for (i, v) in named {
            a.insert(sig[i % sig.len()].0.to_string(), v);
        }
        if let Some((k, v)) = extra {
            a.insert(k, v);
        }
        let mut v = Vine::open(&ROOT.1, forest_vine::VineOptions { writable: false, session: None }).unwrap();
        let deadline = Some(Instant::now() + Duration::from_secs(2));
        if let Err(e) = v.call_until(prim, &a, deadline) {
            prop_assert!(e.code.as_str().starts_with("E_"), "{e:?}");
            prop_assert!(e.code != "E_INTERNAL", "{prim}({a:?}): {e:?}");
        }
    }

    /// The SQL guards and the lexer take any text without panicking.
    #[test]
    fn the_sql_guards_never_panic(sql in "\\PC{0,200}", tail in "[();'\"`\\[\\]/*-]{0,20}") {
        let s = format!("{sql}{tail}");
        let _ = forest_vine::lex(&s);
        let _ = forest_vine::guard_query(&s);
        let _ = forest_vine::guard_tend(&s);
    }
}
