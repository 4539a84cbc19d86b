//! Scoped access: a token that sees `engineering/` gets no node, hit,
//! neighbour, digest entry, count or row from `hr/` (or anywhere else)
//! through any tool, and writes outside its branches are refused.

use forest_vine::access::Access;
use forest_vine::tools::TOOLS;

use super::*;

const SECRET: &str = "zanzibar";

fn md(id: &str, ty: &str, title: &str, summary: &str, extra: &str, body: &str) -> String {
    format!(
        "---\nid: {id}\ntype: {ty}\ntitle: {title}\nsummary: '{summary}'\ncreated: '2026-03-02'\nupdated: '2026-03-05'\ntags:\n- {}\nsource: manual\n{extra}---\n\n# {title}\n\n{body}\n",
        id.split('/').next().unwrap()
    )
}

/// The fixture forest plus `engineering/` and `hr/` (the secret word only
/// in `hr/`; links both ways between them; a dataset in each).
pub fn two_branch_forest(dir: &Path) -> PathBuf {
    let root = dir.join("company");
    copy_dir(&fixtures().join("fixture-forest"), &root);
    let w = |rel: &str, text: String| {
        std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        std::fs::write(root.join(rel), text).unwrap();
    };
    let db = fixtures().join("fixture-forest/sales/report-q1-2026.db");
    w(
        "engineering/_index.md",
        md(
            "engineering/_index",
            "branch",
            "Engineering",
            "Build and release engineering.",
            "",
            "## Direct bananas\n- [[engineering/build]] — Build pipeline.\n- [[engineering/metrics]] — Build metrics.",
        ),
    );
    w(
        "engineering/build.md",
        md(
            "engineering/build",
            "note",
            "Build pipeline",
            "How the build pipeline runs and who pays for its machines.",
            "links:\n- rel: related-to\n  target: hr/salaries\n",
            "## Steps\n\nThe pipeline compiles, tests and ships.\n",
        ),
    );
    w(
        "engineering/metrics.md",
        md(
            "engineering/metrics",
            "dataset",
            "Build metrics",
            "Build metrics by region, a dataset.",
            "payload: metrics.db\npayload_type: sqlite\n",
            "## Query manual\n\n`sales(date, sku, product, region, channel, qty, value, margin)`\n",
        ),
    );
    std::fs::copy(&db, root.join("engineering/metrics.db")).unwrap();
    w(
        "hr/_index.md",
        md(
            "hr/_index",
            "branch",
            "HR zanzibar",
            "People operations, zanzibar pay bands.",
            "",
            "## Direct bananas\n- [[hr/salaries]] — zanzibar salaries.\n",
        ),
    );
    w(
        "hr/salaries.md",
        md(
            "hr/salaries",
            "note",
            "Salaries zanzibar",
            "The zanzibar salary sheet of every engineer.",
            "links:\n- rel: related-to\n  target: engineering/build\n",
            "## Sheet\n\nzanzibar pipeline 120k\n",
        ),
    );
    w(
        "hr/payroll.md",
        md(
            "hr/payroll",
            "dataset",
            "Payroll zanzibar",
            "Payroll rows, zanzibar.",
            "payload: payroll.db\npayload_type: sqlite\n",
            "## Query manual\n\n`sales(...)`\n",
        ),
    );
    std::fs::copy(&db, root.join("hr/payroll.db")).unwrap();
    std::fs::write(root.join(".gitignore"), "_derived/\n*.db\n.vine.lock\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "add", "-A", "."]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init: company"]);
    root
}

fn as_(v: &mut Vine, a: &Access, prim: &str, args_: Value) -> Value {
    match v.call_as(a, prim, &args(args_)) {
        Ok(x) => x,
        Err(e) => e.envelope(),
    }
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Nothing from outside `engineering/` in a payload: no secret word, no
/// id of another branch (beyond the strings the caller sent itself, which
/// refusals echo).
fn assert_clean(prim: &str, sent: &Value, out: &Value) {
    let mut out = out.clone();
    if let Some(o) = out.as_object_mut() {
        o.remove("terms"); // harvest echoes the words it derived from the query
    }
    let mut text = out.to_string();
    let mut echoed = vec![];
    strings(sent, &mut echoed);
    echoed.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for s in echoed {
        text = text.replace(&s, "");
    }
    assert!(!text.to_lowercase().contains(SECRET), "{prim} leaked the secret: {text}");
    for other in ["hr/", "sales/", "projects/", "notes/", "concepts/", "people/"] {
        assert!(!text.contains(other), "{prim} leaked an id under {other}: {text}");
    }
}

/// One call per tool, reads first, with the ids a curious agent would try.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("locate", json!({"query": "zanzibar salaries"})),
        ("locate", json!({"query": "pipeline salary", "k": 20})),
        ("locate", json!({"query": "pipeline", "since": "2020", "until": "2030"})),
        ("look", json!({"id": "engineering/build"})),
        ("look", json!({"id": "engineering/_index"})),
        ("look", json!({"id": ["engineering/build", "hr/salaries"]})),
        ("look", json!({"id": "_index"})),
        ("look", json!({"id": "engineering/metrics"})),
        ("move", json!({"id": "engineering/build", "direction": "both"})),
        ("move", json!({"id": "engineering/_index", "rel": "children"})),
        ("move", json!({"id": "hr/salaries"})),
        ("pick", json!({"id": "engineering/build"})),
        ("pick", json!({"id": "hr/salaries"})),
        ("sniff", json!({"terms": ["zanzibar", "pipeline"], "k": 20})),
        ("sniff", json!({"terms": "zanzibar", "scope": "hr"})),
        ("harvest", json!({"query": "zanzibar salary pipeline", "k": 10})),
        ("scan", json!({"parent_id": "engineering/_index", "recursive": true})),
        ("scan", json!({"parent_id": "_index", "recursive": true})),
        ("coverage", json!({})),
        ("coverage", json!({"scope": "hr"})),
        ("calendar", json!({})),
        ("history", json!({"id": "engineering/build"})),
        ("history", json!({"id": "hr/salaries"})),
        ("query", json!({"id": "engineering/metrics", "sql": "SELECT COUNT(*) AS n FROM sales"})),
        ("query", json!({"id": "hr/payroll", "sql": "SELECT COUNT(*) AS n FROM sales"})),
        ("view", json!({"id": "hr/payroll"})),
        (
            "plant",
            json!({"node": {"id": "hr/new", "type": "note", "title": "x", "summary": "x", "parent": "hr/_index"}}),
        ),
        ("graft", json!({"id": "engineering/build", "patch": {"add_links": [{"rel": "see", "target": "hr/payroll"}]}})),
        ("graft", json!({"id": "hr/salaries", "patch": {"set_frontmatter": {"title": "x"}}})),
        ("tend", json!({"id": "hr/payroll", "sql": "DELETE FROM sales WHERE qty > 0"})),
        ("transplant", json!({"id": "engineering/build", "new_id": "engineering/build2"})),
        ("transplant", json!({"id": "engineering/metrics", "new_id": "hr/metrics"})),
        ("prune", json!({"id": "engineering/build", "force": true})),
        ("close_session", json!({"success": true, "answer_nodes": ["hr/salaries"]})),
    ]
}

#[test]
fn a_scoped_token_sees_nothing_outside_its_branches_through_any_tool() {
    let d = tempfile::tempdir().unwrap();
    let root = two_branch_forest(d.path());
    let mut v = open(&root, true);
    // The owner sees hr/ (the fixture really holds the secret).
    let owner = Access::owner();
    assert!(as_(&mut v, &owner, "sniff", json!({"terms": SECRET})).to_string().contains("hr/salaries"));
    let eng = Access::new("eng", true, &["engineering".into()]);
    let calls = calls();
    for (tool, _, _) in TOOLS.iter().filter(|t| t.0 != "forests") {
        assert!(calls.iter().any(|c| c.0 == *tool), "the walk misses tool {tool}");
    }
    let head = git(&root, &["rev-parse", "HEAD"]);
    for (prim, a) in &calls {
        let out = as_(&mut v, &eng, prim, a.clone());
        assert_clean(prim, a, &out);
    }
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "no refused write committed");
    // Counts are the branch's own: 3 nodes under engineering/.
    let e = as_(&mut v, &eng, "locate", json!({"query": "qqqqnothing"}));
    assert_eq!(e["searched"], json!(3), "{e}");
    let cov = as_(&mut v, &eng, "coverage", json!({}));
    assert_eq!(cov["total"], json!(3), "{cov}");
    let look = as_(&mut v, &eng, "look", json!({"id": "engineering/build"}));
    assert_eq!(look["edges_in"], json!([]), "{look}");
    assert_eq!(look["edges_out"], json!([]), "{look}");
    assert_eq!(look["stats"]["degree"], json!(0), "{look}");
    let ok = as_(&mut v, &eng, "query", json!({"id": "engineering/metrics", "sql": "SELECT COUNT(*) AS n FROM sales"}));
    assert!(ok.get("rows").is_some(), "{ok}");
    // Refusals name their code: reads out of scope are not found, writes forbidden.
    assert_eq!(as_(&mut v, &eng, "look", json!({"id": "hr/salaries"}))["error"]["code"], "E_NOT_FOUND");
    let t = as_(&mut v, &eng, "transplant", json!({"id": "engineering/build", "new_id": "engineering/build2"}));
    assert_eq!(t["error"]["code"], "E_FORBIDDEN", "hr/salaries links to it: {t}");
    assert_eq!(
        as_(&mut v, &eng, "tend", json!({"id": "hr/payroll", "sql": "DELETE FROM sales"}))["error"]["code"],
        "E_FORBIDDEN"
    );
    // Inside its branches a write token writes (one commit) and its
    // catalog rows land in the whole catalog.
    let p = as_(
        &mut v,
        &eng,
        "plant",
        json!({"node": {"id": "engineering/release", "type": "note", "title": "Release", "summary": "How releases ship.", "parent": "engineering/_index"}}),
    );
    assert_eq!(p["created"], json!(true), "{p}");
    assert_ne!(git(&root, &["rev-parse", "HEAD"]), head);
    let all = as_(&mut v, &owner, "coverage", json!({}));
    assert!(all["total"].as_u64().unwrap() > 50, "the owner sees the whole catalog again: {all}");
    assert!(as_(&mut v, &owner, "look", json!({"id": "engineering/release"})).get("error").is_none());
}

#[test]
fn read_tokens_cannot_write_or_lay_shared_heat() {
    let d = tempfile::tempdir().unwrap();
    let root = two_branch_forest(d.path());
    let mut v = open(&root, true);
    let reader = Access::new("r", false, &["engineering/".into()]);
    for (prim, a) in [
        (
            "plant",
            json!({"node": {"id": "engineering/x", "type": "note", "title": "x", "summary": "x", "parent": "engineering/_index"}}),
        ),
        ("graft", json!({"id": "engineering/build", "patch": {"set_frontmatter": {"title": "x"}}})),
        ("tend", json!({"id": "engineering/metrics", "sql": "DELETE FROM sales WHERE qty > 0"})),
        ("prune", json!({"id": "engineering/metrics"})),
        ("transplant", json!({"id": "engineering/metrics", "new_id": "engineering/m2"})),
    ] {
        let e = v.call_as(&reader, prim, &args(a)).unwrap_err();
        assert_eq!(e.code, "E_FORBIDDEN", "{prim}");
        assert!(e.message.contains("may only read"), "{}", e.message);
    }
    let heat = |v: &mut Vine| {
        let l = v.call_as(&Access::owner(), "look", &args(json!({"id": "engineering/build", "fields": ["stats"]})));
        l.unwrap()["stats"]["heat"].as_f64().unwrap()
    };
    v.call_as(&reader, "close_session", &args(json!({"success": true, "answer_nodes": ["engineering/build"]})))
        .unwrap();
    assert_eq!(heat(&mut v), 0.0, "a read token's close lays no shared heat");
    let writer = Access::new("w", true, &["engineering/".into()]);
    v.call_as(&writer, "close_session", &args(json!({"success": true, "answer_nodes": ["engineering/build"]})))
        .unwrap();
    assert!(heat(&mut v) > 0.0, "a write token's close does");
}

#[test]
fn a_directory_symlink_does_not_lead_out_of_the_branch() {
    let d = tempfile::tempdir().unwrap();
    let root = two_branch_forest(d.path());
    std::os::unix::fs::symlink(root.join("hr"), root.join("engineering/people")).unwrap();
    let mut v = open(&root, false);
    let eng = Access::new("eng", false, &["engineering/".into()]);
    for prim in ["pick", "look"] {
        let a = json!({"id": "engineering/people/salaries"});
        let out = as_(&mut v, &eng, prim, a.clone());
        assert_eq!(out["error"]["code"], "E_NOT_FOUND", "{prim}: {out}");
        assert_clean(prim, &a, &out);
    }
}

#[test]
fn a_payload_path_does_not_lead_out_of_the_branch() {
    let d = tempfile::tempdir().unwrap();
    let root = two_branch_forest(d.path());
    let leak = md(
        "engineering/leak",
        "dataset",
        "Leak",
        "A dataset whose payload lies in hr.",
        "payload: ../hr/payroll.db\npayload_type: sqlite\n",
        "x",
    );
    std::fs::write(root.join("engineering/leak.md"), leak).unwrap();
    let mut v = open(&root, false);
    let eng = Access::new("eng", false, &["engineering/".into()]);
    let q = json!({"id": "engineering/leak", "sql": "SELECT COUNT(*) AS n FROM sales"});
    let out = as_(&mut v, &eng, "query", q.clone());
    assert_eq!(out["error"]["code"], "E_NOT_FOUND", "{out}");
    assert!(out.get("rows").is_none());
    // The owner reads it (the rule is the caller's scope, not the path).
    assert!(as_(&mut v, &Access::owner(), "query", q).get("rows").is_some());
}

/// `two_branch_forest` plus a drive recorded as its source, a reference
/// inside `engineering/`, a reference from `engineering/` into the drive's
/// `hr/` (as an unscoped writer could plant it) and a symlinked node file.
fn referenced_forest(dir: &Path) -> PathBuf {
    let root = two_branch_forest(dir);
    let drive = dir.join("drive");
    for (rel, text) in
        [("engineering/spec.md", "# Spec\n\nquince runners\n"), ("hr/pay.md", "# Pay\n\nzanzibar 1000000\n")]
    {
        std::fs::create_dir_all(drive.join(rel).parent().unwrap()).unwrap();
        std::fs::write(drive.join(rel), text).unwrap();
    }
    std::fs::write(root.join("_meta/gardener.yaml"), format!("source_root: {}\n", drive.display())).unwrap();
    for (id, sp) in [("engineering/ref-ok", "engineering/spec.md"), ("engineering/ref-leak", "hr/pay.md")] {
        let extra = format!("content: reference\nsource_path: {sp}\n");
        std::fs::write(root.join(format!("{id}.md")), md(id, "note", "Ref", "A reference.", &extra, "")).unwrap();
    }
    std::fs::create_dir_all(root.join("engineering/deep")).unwrap();
    let deep = md("engineering/deep/_index", "branch", "Deep", "A sub-branch.", "", "## Direct bananas\n");
    std::fs::write(root.join("engineering/deep/_index.md"), deep).unwrap();
    std::os::unix::fs::symlink("../hr/salaries.md", root.join("engineering/hrlink.md")).unwrap();
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "add", "-A", "."]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "references"]);
    root
}

#[test]
fn references_and_symlinked_files_are_served_only_where_they_really_lie() {
    let d = tempfile::tempdir().unwrap();
    let root = referenced_forest(d.path());
    let mut v = open(&root, true);
    let eng = Access::new("eng", false, &["engineering/".into()]);
    let ok = as_(&mut v, &eng, "pick", json!({"id": "engineering/ref-ok"}));
    assert!(ok.to_string().contains("quince"), "{ok}");
    // The reference node itself is in scope (look describes it); what it
    // serves from hr/ is not. The symlinked file lies in hr/ altogether.
    for (id, prims) in [("engineering/ref-leak", &["pick"][..]), ("engineering/hrlink", &["pick", "look"][..])] {
        for prim in prims {
            let a = json!({"id": id});
            let out = as_(&mut v, &eng, prim, a.clone());
            assert_eq!(out["error"]["code"], "E_NOT_FOUND", "{prim} {id}: {out}");
            assert_clean(prim, &a, &out);
        }
    }
    let s = as_(&mut v, &eng, "sniff", json!({"terms": SECRET}));
    assert!(!s.to_string().contains("1000000") && !s.to_string().contains("hrlink"), "{s}");
    // The owner reads the reference (its scope is everything), and a look
    // of the symlink on this writable engine does not catalogue it.
    assert!(as_(&mut v, &Access::owner(), "pick", json!({"id": "engineering/ref-leak"}))
        .to_string()
        .contains("1000000"));
    let l = as_(&mut v, &Access::owner(), "look", json!({"id": "engineering/hrlink"}));
    assert_eq!(l["error"]["code"], "E_NOT_FOUND", "{l}");
    assert!(v.catalog().get("engineering/hrlink").unwrap().is_none());
}

#[test]
fn scoped_writers_keep_storage_keys_in_their_branches() {
    let d = tempfile::tempdir().unwrap();
    let root = referenced_forest(d.path());
    let mut v = open(&root, true);
    let w = Access::new("eng-w", true, &["engineering/".into()]);
    let node = |id: &str, extra: Value| {
        let mut n =
            json!({"id": id, "type": "note", "title": "N", "summary": "A node.", "parent": "engineering/_index"});
        for (k, x) in extra.as_object().unwrap() {
            n[k] = x.clone();
        }
        json!({"node": n})
    };
    for (id, extra) in [
        ("engineering/a", json!({"content": "reference", "source_path": "hr/pay.md"})),
        ("engineering/b", json!({"source_path": "hr/pay.md"})),
        ("engineering/c", json!({"content": "reference", "source_path": "hr/pay.md", "source_name": "nope"})),
        ("engineering/d", json!({"payload": "../hr/payroll.db", "payload_type": "sqlite"})),
        ("engineering/e", json!({"payload": "s3://bucket/hr/payroll.db", "payload_type": "sqlite"})),
        ("engineering/f", json!({"tier": "cold"})),
        ("engineering/g", json!({"content": "elsewhere"})),
    ] {
        let out = as_(&mut v, &w, "plant", node(id, extra));
        assert_eq!(out["error"]["code"], "E_FORBIDDEN", "{id}: {out}");
    }
    let ok = as_(
        &mut v,
        &w,
        "plant",
        node("engineering/h", json!({"content": "reference", "source_path": "engineering/spec.md"})),
    );
    assert!(ok.get("error").is_none(), "{ok}");
    // Moving a reference below its source's folder would serve the
    // source to a token scoped to the new folder alone.
    let t = json!({"id": "engineering/ref-ok", "new_id": "engineering/deep/ref-ok"});
    assert_eq!(as_(&mut v, &w, "transplant", t.clone())["error"]["code"], "E_FORBIDDEN");
    assert!(as_(&mut v, &Access::owner(), "transplant", t).get("error").is_none(), "the owner may");
}
