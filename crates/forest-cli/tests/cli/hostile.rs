//! Issue 27 (part A) end to end: a `--readonly` HTTP server under the
//! hostile-client suite (`ops/mcp/attack.py`, the official Python MCP SDK)
//! survives every attack, answers the honest call after each, stays under
//! 256 MiB and leaves catalog.db, trails.db and git byte-identical; the
//! stdio transport survives the LIKE bomb; `forest fetch` / `fetch --body`
//! refuse symlinks and payloads that leave the forest.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use super::*;

const DS: &str = "sales/report-q1-2026";

pub(super) fn mcp_python() -> Option<PathBuf> {
    match std::env::var("FOREST_TEST_MCP_PYTHON") {
        Ok(p) if Path::new(&p).is_file() => Some(PathBuf::from(p)),
        _ => {
            forest_testkit::skip("FOREST_TEST_MCP_PYTHON unset (run `bash ops/mcp/install.sh`)");
            None
        }
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fixture forest in git plus a node symlink and a directory symlink
/// to outside.
pub(super) fn hostile_forest(dir: &Path) -> PathBuf {
    let root = fixture_forest_in_git(dir);
    let outside = dir.join("outside");
    fs::create_dir_all(&outside).unwrap();
    let secret =
        "---\ntitle: Salary sheet\nsummary: Salaries.\ntype: note\n---\n# Salary sheet\n\nzebra-salary 1000000\n";
    fs::write(outside.join("secret.md"), secret).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), root.join("sales/leak.md")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
    root
}

pub(super) fn shared_state(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = ["catalog.db", "catalog.db-wal", "trails.db", "trails.db-wal"]
        .iter()
        .map(|n| (n.to_string(), fs::read(root.join("_derived").join(n)).unwrap_or_default()))
        .collect();
    out.push(("HEAD".into(), git(root, &["rev-parse", "HEAD"]).into_bytes()));
    out.push(("status".into(), git(root, &["status", "--porcelain"]).into_bytes()));
    out
}

/// Start `forest serve --readonly --transport http --port 0`; returns the
/// child and its MCP URL (read from the stderr banner).
fn serve_http(root: &Path) -> (Child, String) {
    let mut child = bin()
        .args(["serve", "--readonly", "--transport", "http", "--port", "0", "--forest", &f(root)])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("server exited before binding").unwrap();
        if let Some(i) = line.find("http://") {
            break line[i..].trim().to_string();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

fn vm_hwm_kib(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn readonly_http_server_survives_the_attack_suite_and_writes_nothing() {
    let Some(py) = mcp_python() else { return };
    let d = tempfile::tempdir().unwrap();
    let root = hostile_forest(d.path());
    let (mut server, url) = serve_http(&root);
    // A node file written after the catalog was built: reads must not index it.
    let unindexed = "---\ntitle: Unindexed\nsummary: Not indexed.\ntype: note\n---\n# Unindexed\n\nbody\n";
    fs::write(root.join("notes/unindexed.md"), unindexed).unwrap();
    let before = shared_state(&root);
    let out = Command::new(&py).arg(repo().join("ops/mcp/attack.py")).args([&url, DS]).output().unwrap();
    let alive = server.try_wait().unwrap().is_none();
    let hwm = vm_hwm_kib(server.id());
    let after = shared_state(&root);
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "attack.py: {}", String::from_utf8_lossy(&out.stderr));
    assert!(alive, "the server died");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let attacks = r["attacks"].as_array().unwrap();
    assert!(attacks.len() >= 70, "{r}");
    for a in attacks {
        assert_eq!(a["honest_ok"], json!(true), "no honest answer after {a}");
    }
    // A figure for bench/README.md (speed is never asserted in a test).
    let slowest = attacks.iter().filter_map(|a| a["honest_ms"].as_f64()).fold(0.0, f64::max);
    eprintln!("hostile: slowest honest look after an attack {slowest:.0} ms; server VmHWM {} KiB", hwm);
    let code = |n: &str| attacks.iter().find(|a| a["name"] == n).map(|a| a["code"].clone()).unwrap();
    for (name, want) in [
        ("like_20000_wildcards", "E_QUERY_FORBIDDEN"),
        ("randomblob_5e8", "E_QUERY_FORBIDDEN"),
        ("locate_400k_words", "E_SCHEMA"),
        ("look_symlink_node", "E_FORBIDDEN"),
        ("pick_symlink_dir", "E_FORBIDDEN"),
        ("look_unindexed", "E_NOT_FOUND"),
        ("tend_where_1", "E_READONLY"),
        ("plant_passwd", "E_READONLY"),
        ("recursive_cte", "E_TIMEOUT"),
    ] {
        assert_eq!(code(name), json!(want), "{name}");
    }
    for c in r["concurrent"].as_array().unwrap() {
        assert_eq!(c["honest_ok"], json!(true), "{c}");
    }
    assert!(hwm < 256 * 1024, "VmHWM {hwm} KiB");
    for ((name, a), (_, b)) in before.iter().zip(after.iter()) {
        assert!(a == b, "{name} changed under a --readonly server");
    }
}

#[test]
fn stdio_server_survives_the_like_bomb() {
    let Some(py) = mcp_python() else { return };
    let d = tempfile::tempdir().unwrap();
    let root = hostile_forest(d.path());
    let like = format!("SELECT COUNT(*) FROM sales WHERE region LIKE '{}'", "%_".repeat(20_000));
    let script = json!([
        {"tool": "query", "args": {"id": DS, "sql": like}},
        {"tool": "query", "args": {"id": DS, "sql": "SELECT randomblob(5e8)"}},
        {"tool": "look", "args": {"id": "_index"}},
    ]);
    let sp = d.path().join("script.json");
    fs::write(&sp, script.to_string()).unwrap();
    let exe = env!("CARGO_BIN_EXE_forest");
    let out = Command::new(&py)
        .arg(repo().join("ops/mcp/client.py"))
        .arg(&sp)
        .args(["--", exe, "serve", "--readonly", "--forest", &f(&root)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let calls = r["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3, "{r}");
    assert_eq!(calls[0]["is_error"], json!(true));
    assert!(calls[0]["text"].as_str().unwrap().contains("E_QUERY_FORBIDDEN"), "{r}");
    assert_eq!(calls[2]["is_error"], json!(false), "{r}");
}

#[test]
fn fetch_refuses_symlinks_and_payloads_outside_the_forest() {
    let d = tempfile::tempdir().unwrap();
    let root = hostile_forest(d.path());
    for (i, payload) in ["../../../../../../etc/passwd", "/etc/passwd", "file:///etc/passwd"].iter().enumerate() {
        let node = format!(
            "---\ntitle: Evil {i}\nsummary: Escapes.\ntype: note\npayload: '{payload}'\npayload_type: pdf\n---\n# Evil\n"
        );
        fs::write(root.join(format!("notes/evil{i}.md")), node).unwrap();
    }
    let o = run(&["fetch", "--forest", &f(&root), "--json", "notes/evil0", "notes/evil1", "notes/evil2", "sales/leak"]);
    assert_ne!(code(&o), 0);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    for item in r["items"].as_array().unwrap() {
        assert!(item["path"].is_null(), "{item}");
        assert!(item["error"].as_str().unwrap().starts_with("E_FORBIDDEN"), "{item}");
    }
    let payloads = root.join("_derived/payloads");
    let copied = fs::read_dir(&payloads).map(|d| d.filter_map(Result::ok).filter(|e| e.path().is_file()).count());
    assert_eq!(copied.unwrap_or(0), 0, "nothing copied into _derived/payloads");
    for id in ["sales/leak", "linked/secret"] {
        let o = run(&["fetch", "--body", "--forest", &f(&root), id]);
        assert_ne!(code(&o), 0, "{id}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("E_FORBIDDEN"), "{id}");
        assert!(!String::from_utf8_lossy(&o.stdout).contains("zebra-salary"), "{id}");
    }
    let o = run(&["validate", "--forest", &f(&root), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let issues = v["issues"].as_array().unwrap();
    for id in ["sales/leak", "linked"] {
        assert!(issues.iter().any(|i| i["id"] == id && i["level"] == "error"), "{id}: {v}");
    }
}
