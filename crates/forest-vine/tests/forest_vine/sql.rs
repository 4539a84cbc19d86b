//! query/tend injection suites: the contract's attack list and our own.
//! A hostile string never changes the payload through `query`; `tend`
//! refuses every multi-statement, DDL or WHERE-less mutation.

use super::*;

const DS: &str = "sales/report-q1-2026";

fn sha(root: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(root.join("sales/report-q1-2026.db")).unwrap()))
}

fn count(v: &mut Vine) -> i64 {
    let out = call(v, "query", json!({"id": DS, "sql": "SELECT COUNT(*) FROM sales"}));
    out["rows"][0][0].as_i64().unwrap()
}

/// The contract's 13 statements, EXPLAIN, plus ours: comment tricks,
/// literal/identifier smuggling, pragma functions, ATTACH through a
/// function, writes hidden in CTEs, load_extension, recursive bombs.
const HOSTILE: &[&str] = &[
    "SELECT 1; DROP TABLE sales",
    "DROP TABLE sales",
    "DELETE FROM sales",
    "INSERT INTO sales VALUES ('2026-01-01','X','x','N','web',1,1.0,1.0)",
    "UPDATE sales SET value = 0",
    "ALTER TABLE sales ADD COLUMN hacked TEXT",
    "CREATE TABLE pwn (x)",
    "ATTACH DATABASE 'other.db' AS pwn",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA writable_schema = 1",
    "WITH x AS (SELECT 1) INSERT INTO sales SELECT * FROM x",
    "VACUUM",
    "SELECT * FROM sales; PRAGMA writable_schema=1",
    "EXPLAIN SELECT 1",
    "SELECT 1 /* ; */ ; DELETE FROM sales",
    "SELECT 1 -- comment\n; DELETE FROM sales",
    "  select * from sales ;;; delete from sales",
    "WITH RECURSIVE r(n) AS (SELECT 1) DELETE FROM sales",
    "SELECT * FROM pragma_table_info('sales')",
    "SELECT * FROM pragma_database_list",
    "SELECT load_extension('/tmp/x.so')",
    "SELECT writefile('/tmp/pwned', 'x')",
    "REPLACE INTO sales VALUES (1,2,3,4,5,6,7,8)",
    "SELECT * FROM sales WHERE 1=1; VACUUM INTO '/tmp/copy.db'",
    "VACUUM INTO '/tmp/copy.db'",
    "/* lead */ DELETE FROM sales",
];

#[test]
fn hostile_queries_never_change_the_payload() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let before = sha(&root);
    let mut v = open(&root, false);
    assert_eq!(count(&mut v), 600);
    for q in HOSTILE {
        let e = err(&mut v, "query", json!({"id": DS, "sql": q}));
        assert!(["E_QUERY_FORBIDDEN", "E_QUERY_INVALID"].contains(&e.code.as_str()), "{q}: {e:?}");
        assert!(e.envelope()["error"].get("rows").is_none());
    }
    for q in &HOSTILE[..13] {
        assert_eq!(err(&mut v, "query", json!({"id": DS, "sql": q})).code, "E_QUERY_FORBIDDEN", "{q}");
    }
    assert!(!std::path::Path::new("/tmp/pwned").exists());
    // Literals that merely mention keywords are data, not statements.
    let ok = call(
        &mut v,
        "query",
        json!({"id": DS, "sql": "SELECT COUNT(*) FROM sales WHERE region != 'update; drop table sales'"}),
    );
    assert_eq!(ok["rows"][0][0], json!(600));
    assert_eq!(count(&mut v), 600);
    assert_eq!(sha(&root), before, "payload bytes unchanged");
    assert_eq!(err(&mut v, "query", json!({"id": "sales/_index", "sql": "SELECT 1"})).code, "E_QUERY_FORBIDDEN");
}

#[test]
fn query_answers_limits_and_budget() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, false);
    let g = call(
        &mut v,
        "query",
        json!({"id": DS, "sql": "SELECT region, SUM(value) AS total FROM sales GROUP BY region ORDER BY total DESC"}),
    );
    let keys: Vec<&String> = g.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["columns", "rows", "row_count", "limited", "elapsed_ms"]);
    assert_eq!(g["columns"], json!(["region", "total"]));
    let all = call(&mut v, "query", json!({"id": DS, "sql": "SELECT * FROM sales"}));
    assert_eq!(all["limited"], json!(true));
    assert!(all["row_count"].as_u64().unwrap() <= 200);
    assert_eq!(all["row_count"].as_u64().unwrap() as usize, all["rows"].as_array().unwrap().len());
    assert!(forest_vine::estimate(&all) <= 2000);
    if all["truncated"] == json!(true) {
        assert!(all["hint"].as_str().unwrap().contains("not by your filter"));
    }
    let five = call(&mut v, "query", json!({"id": DS, "sql": "SELECT * FROM sales LIMIT 5"}));
    assert_eq!(five["row_count"], json!(5));
    assert_eq!(five["limited"], json!(false));
    let e = err(&mut v, "query", json!({"id": DS, "sql": "SELECT * FROM sales_report"}));
    assert_eq!(e.code, "E_QUERY_INVALID");
    assert_eq!(e.hint, "Tables in this dataset: sales.");
    let e = err(&mut v, "query", json!({"id": DS, "sql": "SELECT nope FROM sales"}));
    assert!(e.hint.contains("sales(date, sku"), "{}", e.hint);
    let t0 = std::time::Instant::now();
    let e = err(
        &mut v,
        "query",
        json!({"id": DS, "sql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT COUNT(*) FROM r"}),
    );
    assert_eq!(e.code, "E_TIMEOUT");
    assert!(t0.elapsed().as_secs() < 10);
}

#[test]
fn tend_suite() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut ro = open(&root, false);
    assert_eq!(
        err(&mut ro, "tend", json!({"id": DS, "sql": "DELETE FROM sales WHERE sku = 'A-101'"})).code,
        "E_READONLY"
    );
    drop(ro);
    let before = sha(&root);
    let mut v = open(&root, true);
    let refused = [
        "UPDATE sales SET qty = 0",
        "DELETE FROM sales",
        "SELECT * FROM sales",
        "INSERT INTO sales VALUES (1); DROP TABLE sales",
        "DROP TABLE sales",
        "CREATE TABLE hack (x)",
        "ATTACH DATABASE 'x.db' AS x",
        "PRAGMA writable_schema = 1",
        "BEGIN",
        "DELETE FROM sales WHERE 1=1; DELETE FROM sales",
        "UPDATE sales SET qty = (SELECT 1 WHERE 1)",
        "DELETE FROM sales -- WHERE x",
        "DELETE FROM sales /* WHERE */",
        "UPDATE sales SET region = 'x WHERE y'",
        "WITH d AS (SELECT 1) DELETE FROM sales",
        "INSERT INTO sqlite_master VALUES (1,2,3,4,5)",
        "REPLACE INTO sales VALUES (1,2,3,4,5,6,7,8)",
        "DELETE FROM sales WHERE rowid IN (SELECT rowid FROM sales); VACUUM",
    ];
    for q in refused {
        let e = err(&mut v, "tend", json!({"id": DS, "sql": q}));
        assert!(["E_QUERY_FORBIDDEN", "E_QUERY_INVALID"].contains(&e.code.as_str()), "{q}: {e:?}");
    }
    assert_eq!(sha(&root), before, "refusals leave the payload untouched");
    let e = err(&mut v, "tend", json!({"id": DS, "sql": "INSERT INTO nonexistent VALUES (1)"}));
    assert_eq!(e.code, "E_QUERY_INVALID");
    assert_eq!(sha(&root), before);
    let head0 = git(&root, &["rev-parse", "HEAD"]);
    let ok = call(
        &mut v,
        "tend",
        json!({"id": DS, "sql": "INSERT INTO sales VALUES ('2026-03-31','A-101','Sensor X','North','web',1,10.0,2.0)"}),
    );
    assert_eq!(ok["rows_affected"], json!(1));
    assert_eq!(ok["payload_hash"].as_str().unwrap(), sha(&root));
    let subject = git(&root, &["log", "-1", "--format=%s"]);
    assert!(subject.starts_with("tend(sales/report-q1-2026): INSERT 1 row(s)"), "{subject}");
    assert_ne!(git(&root, &["rev-parse", "HEAD"]), head0);
    assert!(!git(&root, &["ls-files"]).contains(".db"));
    let fm = std::fs::read_to_string(root.join("sales/report-q1-2026.md")).unwrap();
    assert!(fm.contains(&ok["payload_hash"].as_str().unwrap()[..16]));
    assert_eq!(count(&mut v), 601);
    let upd = call(&mut v, "tend", json!({"id": DS, "sql": "UPDATE sales SET qty = qty WHERE sku = 'A-101'"}));
    assert!(upd["rows_affected"].as_u64().unwrap() > 0);
    assert_eq!(
        err(&mut v, "tend", json!({"id": "sales/_index", "sql": "DELETE FROM x WHERE 1"})).code,
        "E_QUERY_FORBIDDEN"
    );
}
