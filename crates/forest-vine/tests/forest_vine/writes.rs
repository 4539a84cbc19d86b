//! Writes: one commit each through the writer lock, E_LOCKED for a second
//! writer, batches all-or-nothing, reinforce-before-create on links.

use super::*;

fn head(root: &Path) -> String {
    git(root, &["rev-parse", "HEAD"]).trim().to_string()
}

fn node(id: &str, summary: &str) -> Value {
    json!({"id": id, "type": "note", "title": format!("T {id}"), "summary": summary, "parent": "notes/_index", "body": "# T\n\n## Part\n\ntext\n"})
}

#[test]
fn plant_graft_transplant_prune_are_one_commit_each() {
    let d = tempfile::tempdir().unwrap();
    let root = forest_copy(d.path(), "fixture-forest");
    let mut v = open(&root, true);
    let second = Vine::open(&root, VineOptions { writable: true, session: None }).unwrap_err();
    assert_eq!(second.code, "E_LOCKED");
    let reader = open(&root, false);
    drop(reader);
    let h0 = head(&root);
    let p = call(
        &mut v,
        "plant",
        json!({"node": node("notes/test-learning", "A learning note planted by the test suite.")}),
    );
    assert_eq!(p["created"], json!(true));
    assert_eq!(p["trail"], json!(["_index", "notes/_index"]));
    assert_eq!(git(&root, &["rev-list", "--count", &format!("{h0}..HEAD")]).trim(), "1");
    assert!(git(&root, &["log", "-1", "--format=%s"]).starts_with("plant(notes/test-learning):"));
    assert!(std::fs::read_to_string(root.join("notes/_index.md"))
        .unwrap()
        .contains("[[notes/test-learning]] — A learning note"));
    assert_eq!(err(&mut v, "plant", json!({"node": node("notes/test-learning", "Again.")})).code, "E_SCHEMA");
    // A batch with one bad node writes nothing.
    let h1 = head(&root);
    let e = err(
        &mut v,
        "plant",
        json!({"node": [node("notes/batch-1", "One."), {"id": "notes/batch-2", "type": "nope", "title": "x", "summary": "y.", "parent": "notes/_index"}]}),
    );
    assert!(e.message.starts_with("notes/batch-2:"), "{}", e.message);
    assert_eq!(head(&root), h1);
    assert!(!root.join("notes/batch-1.md").exists());
    let b = call(&mut v, "plant", json!({"node": [node("notes/batch-1", "One."), node("notes/batch-2", "Two.")]}));
    assert_eq!(b["count"], json!(2));
    assert_eq!(git(&root, &["rev-list", "--count", &format!("{h1}..HEAD")]).trim(), "1");
    // Graft: a shortcut link, then the same link again reinforces (heat, no commit).
    let g = call(
        &mut v,
        "graft",
        json!({"id": "notes/test-learning", "patch": {"add_links": [{"rel": "discovered-shortcut", "target": "sales/returns-q1"}]}}),
    );
    assert!(g["commit"].is_string());
    let h2 = head(&root);
    let g2 = call(
        &mut v,
        "graft",
        json!({"id": "notes/test-learning", "patch": {"add_links": [{"rel": "discovered-shortcut", "target": "sales/returns-q1"}]}}),
    );
    assert_eq!(g2["commit"], Value::Null);
    assert_eq!(g2["fortified"], json!([{"rel": "discovered-shortcut", "target": "sales/returns-q1"}]));
    assert_eq!(head(&root), h2);
    let text = std::fs::read_to_string(root.join("notes/test-learning.md")).unwrap();
    assert_eq!(text.matches("sales/returns-q1").count(), 1);
    assert!(text.contains("discovered_by: agent"));
    assert_eq!(
        err(&mut v, "graft", json!({"id": "notes/test-learning", "patch": {"set_frontmatter": {"type": "x"}}})).code,
        "E_READONLY"
    );
    let s = call(
        &mut v,
        "graft",
        json!({"id": "notes/test-learning", "patch": {"set_frontmatter": {"summary": "A new scent for the learning note."}}}),
    );
    assert!(s["commit"].is_string());
    assert!(std::fs::read_to_string(root.join("notes/_index.md"))
        .unwrap()
        .contains("— A new scent for the learning note."));
    let h3 = head(&root);
    let t = call(&mut v, "transplant", json!({"id": "notes/test-learning", "new_id": "notes/learned"}));
    assert_eq!(t["moved_from"], "notes/test-learning");
    assert_eq!(git(&root, &["rev-list", "--count", &format!("{h3}..HEAD")]).trim(), "1");
    let moved = err(&mut v, "look", json!({"id": "notes/test-learning"}));
    assert_eq!(moved.code, "E_MOVED");
    assert_eq!(moved.data["moved_to"], "notes/learned");
    let hist = call(&mut v, "history", json!({"id": "notes/learned"}));
    assert_eq!(hist["entries"][0]["action"], "transplant");
    // The past before the move comes through the waymark (no --follow).
    let actions: Vec<&str> = hist["entries"].as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    assert!(actions.contains(&"plant") && actions.contains(&"graft"), "history across the move: {actions:?}");
    let pr = err(&mut v, "prune", json!({"id": "sales/returns-q1"}));
    assert_eq!(pr.code, "E_ANCHORED");
    let pr = call(&mut v, "prune", json!({"id": "notes/learned"}));
    assert_eq!(pr["pruned"], json!(true));
    assert!(!root.join("notes/learned.md").exists());
    assert_eq!(err(&mut v, "look", json!({"id": "notes/learned"})).code, "E_NOT_FOUND");
    assert_eq!(err(&mut v, "prune", json!({"id": "_index"})).code, "E_SCHEMA");
    let status = git(&root, &["status", "--porcelain", "--", "*.md"]);
    assert!(status.trim().is_empty(), "work tree follows HEAD: {status}");
}
