//! `forest serve` and the read verbs end to end: a real MCP client nobody
//! here wrote (the official Python SDK from PyPI, `ops/mcp/install.sh`)
//! drives the binary over stdio; concurrency with `forest sync`.

use super::*;
use serde_json::{json, Value};

/// The venv python with `mcp` installed, or None (with a printed SKIP line).
fn mcp_python() -> Option<PathBuf> {
    let candidates = [
        std::env::var("FOREST_TEST_MCP_PYTHON").ok().map(PathBuf::from),
        std::env::var("FOREST_OPS_DIR").ok().map(|d| PathBuf::from(d).join("mcp-venv/bin/python")),
    ];
    for c in candidates.into_iter().flatten() {
        if c.is_file() && Command::new(&c).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success()) {
            return Some(c);
        }
    }
    forest_testkit::skip("no python with the `mcp` SDK (run `bash ops/mcp/install.sh`, export FOREST_TEST_MCP_PYTHON)");
    None
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(super) fn copy_tree(src: &Path, dst: &Path) {
    for e in walkdir::WalkDir::new(src) {
        let e = e.unwrap();
        let to = dst.join(e.path().strip_prefix(src).unwrap());
        if e.file_type().is_dir() {
            fs::create_dir_all(&to).unwrap();
        } else {
            fs::copy(e.path(), &to).unwrap();
        }
    }
}

pub(super) fn fixture_forest(dir: &Path) -> PathBuf {
    let root = dir.join("fixture-forest");
    copy_tree(&fixtures().join("fixture-forest"), &root);
    fs::write(root.join(".gitignore"), "_derived/\n*.db\n.vine.lock\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "add", "-A", "."]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init: fixture"]);
    root
}

/// Run a scripted MCP session against `forest serve` over stdio.
fn mcp_session(py: &Path, root: &Path, script: &Value, extra: &[&str]) -> Value {
    mcp_session_with(py, root, script, extra, "")
}

/// [`mcp_session`] whose server also gets the variables named in
/// `pass_env` (comma-separated; the SDK passes only a safe few).
fn mcp_session_with(py: &Path, root: &Path, script: &Value, extra: &[&str], pass_env: &str) -> Value {
    let d = tempfile::tempdir().unwrap();
    let sp = d.path().join("script.json");
    fs::write(&sp, script.to_string()).unwrap();
    let mut args: Vec<String> = vec![
        repo().join("ops/mcp/client.py").display().to_string(),
        sp.display().to_string(),
        "--".into(),
        env!("CARGO_BIN_EXE_forest").into(),
        "serve".into(),
        "--forest".into(),
        root.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out =
        Command::new(py).args(&args).env("FOREST_TODAY", DAY).env("FOREST_CLIENT_PASS_ENV", pass_env).output().unwrap();
    assert!(out.status.success(), "client: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn payload(call: &Value) -> Value {
    serde_json::from_str(call["text"].as_str().unwrap()).unwrap()
}

#[test]
fn mcp_client_lists_tools_hunts_and_closes_then_ranger_evaporates() {
    let Some(py) = mcp_python() else { return };
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest(d.path());
    let script = json!([
        {"list_tools": true},
        {"tool": "locate", "args": {"query": "quarter returns seal failure", "k": 3}},
        {"tool": "look", "args": {"id": "sales/_index"}},
        {"tool": "move", "args": {"id": "sales/_index", "rel": "children"}},
        {"tool": "pick", "args": {"id": "sales/returns-q1"}},
        {"tool": "look", "args": {"id": "nao/existe"}},
        {"tool": "locate", "args": {"query": "x", "k": "three"}},
        {"tool": "forests", "args": {}},
        {"tool": "close_session", "args": {"success": true, "answer_nodes": ["sales/returns-q1"]}},
    ]);
    let out = mcp_session(&py, &root, &script, &[]);
    assert_eq!(out["serverInfo"]["name"], "vine");
    let calls = out["calls"].as_array().unwrap();
    // Tool names and argument names are the reference server's.
    let reference: Value = serde_json::from_str(
        &fs::read_to_string(repo().join("crates/forest-vine/tests/reference-tools.json")).unwrap(),
    )
    .unwrap();
    let listed = calls[0]["tools"].as_array().unwrap();
    let want = reference["tools"].as_array().unwrap();
    assert_eq!(listed.len(), 18);
    for (a, b) in listed.iter().zip(want) {
        assert_eq!(a["name"], b["name"]);
        let keys = |t: &Value| t["inputSchema"]["properties"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(a), keys(b), "{}", a["name"]);
        assert_eq!(a["inputSchema"]["required"], b["inputSchema"]["required"]);
    }
    let loc = payload(&calls[1]);
    assert!(loc["results"].as_array().unwrap().iter().any(|r| r["id"] == "sales/returns-q1"), "{loc}");
    assert!(payload(&calls[2])["children"].as_array().unwrap().len() >= 4);
    assert!(!payload(&calls[3])["neighbors"].as_array().unwrap().is_empty());
    assert!(payload(&calls[4])["body"].as_str().unwrap().contains("seal failure"));
    assert_eq!(calls[5]["is_error"], json!(true));
    assert_eq!(payload(&calls[5])["error"]["code"], "E_NOT_FOUND");
    assert_eq!(payload(&calls[6])["error"]["code"], "E_SCHEMA");
    assert_eq!(payload(&calls[7])["mode"], "single");
    let closed = payload(&calls[8]);
    // Raising calls leave no event: locate, look, move, pick.
    assert_eq!(closed["metrics"]["calls"], json!(4), "{closed}");
    assert_eq!(closed["metrics"]["trail_len"], json!(3));
    assert_eq!(closed["metrics"]["hops_to_banana"], json!(2));
    // The heat is in _derived/trails.db, in the schema the Ranger reads.
    let o = bin().args(["heat", "show", "--json", "--forest", &f(&root)]).output().unwrap();
    let heat: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = heat["hottest"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    for id in ["sales/returns-q1", "sales/_index", "_index"] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    let o = bin()
        .args(["ranger", "run", "--json", "--now", "2099-01-01T00:00:00Z", "--forest", &f(&root)])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ev = &r["evaporation"];
    assert!(ev["decayed"].as_u64().unwrap() + ev["removed"].as_u64().unwrap() >= 3, "{ev}");
    let o = bin().args(["heat", "show", "--json", "--forest", &f(&root)]).output().unwrap();
    let after: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(after["stats"]["max"].as_f64().unwrap() < heat["stats"]["max"].as_f64().unwrap());
}

#[test]
fn readonly_server_refuses_writes_over_mcp() {
    let Some(py) = mcp_python() else { return };
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest(d.path());
    let script = json!([
        {"tool": "tend", "args": {"id": "sales/report-q1-2026", "sql": "DELETE FROM sales WHERE 1"}},
        {"tool": "query", "args": {"id": "sales/report-q1-2026", "sql": "SELECT COUNT(*) FROM sales"}},
    ]);
    let out = mcp_session(&py, &root, &script, &["--readonly"]);
    let calls = out["calls"].as_array().unwrap();
    assert_eq!(payload(&calls[0])["error"]["code"], "E_READONLY");
    assert_eq!(payload(&calls[1])["rows"], json!([[600]]));
}

#[test]
fn cli_verbs_answer_json() {
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest(d.path());
    let j = |args: &[&str]| -> (i32, Value) {
        let mut a: Vec<&str> = args.to_vec();
        let fr = f(&root);
        a.extend(["--json", "--forest", &fr]);
        let o = bin().args(&a).output().unwrap();
        (code(&o), serde_json::from_slice(&o.stdout).unwrap_or(Value::Null))
    };
    let (c, v) = j(&["look", "sales/_index"]);
    assert_eq!(c, 0);
    assert!(v["children"].is_array());
    let (_, v) = j(&["move", "people/jimmy-wesley", "--direction", "in"]);
    assert!(v["neighbors"].is_array());
    let (_, v) = j(&["pick", "sales/report-q1-2026", "--section", "Query manual"]);
    assert_eq!(v["section"], "Query manual");
    let (_, v) = j(&["sniff", "seed 1045"]);
    assert_eq!(v["results"][0]["id"], "projects/mixerllm/experiment-log");
    let (_, v) = j(&["scan", "sales/_index", "--filter", "type=dataset"]);
    assert_eq!(v["nodes"][0]["id"], "sales/report-q1-2026");
    let (_, v) = j(&["harvest", "seed 1045 discarded"]);
    assert!(!v["results"].as_array().unwrap().is_empty());
    let (_, v) = j(&["query", "sales/report-q1-2026", "SELECT COUNT(*) FROM sales"]);
    assert_eq!(v["rows"], json!([[600]]));
    let (c, v) = j(&["query", "sales/report-q1-2026", "DROP TABLE sales"]);
    assert_eq!(c, 1);
    assert_eq!(v["error"]["code"], "E_QUERY_FORBIDDEN");
}

/// `forest serve --readonly` over HTTP answers while `forest sync` commits
/// batches into the same forest: no read sees a torn file or an error.
#[test]
fn readonly_http_server_answers_during_sync() {
    let Some(py) = mcp_python() else { return };
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    fs::create_dir_all(&src).unwrap();
    for i in 0..40 {
        fs::write(src.join(format!("doc{i:03}.md")), format!("# Doc {i}\n\nFirst batch body {i} about pelicans.\n"))
            .unwrap();
    }
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--commit-every", "10"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let port = 18231u16;
    let mut server = bin()
        .args(["serve", "--readonly", "--transport", "http", "--port", &port.to_string(), "--forest", &f(&root)])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    // Rewrite every source file so sync commits 4 batches while we read.
    for i in 0..40 {
        fs::write(
            src.join(format!("doc{i:03}.md")),
            format!("# Doc {i}\n\nSecond batch body {i} about herons, much longer {}.\n", "x ".repeat(200)),
        )
        .unwrap();
    }
    let sync = bin()
        .args(["sync", "--forest", &f(&root), "--commit-every", "10"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let reader = repo().join("ops/mcp/http_reader.py");
    let out = Command::new(&py)
        .args([reader.to_str().unwrap(), &format!("http://127.0.0.1:{port}/mcp"), "6"])
        .output()
        .unwrap();
    let sync_out = sync.wait_with_output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(sync_out.status.success());
    assert!(out.status.success(), "reader: {}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(r["calls"].as_u64().unwrap() >= 20, "{r}");
    assert_eq!(r["errors"], json!([]), "{r}");
    assert_eq!(r["torn"], json!(0), "{r}");
    let commits = git(&root, &["log", "--format=%s"]);
    assert!(commits.lines().count() >= 4, "{commits}");
}

/// One `locate`: for every question of the reference's question sets, the
/// MCP tool (the Python SDK over stdio) and `forest locate --json` return
/// the same ids in the same order, with the canopy (hybrid, the default
/// fusion) and without it (BM25), and with the reference's RRF named.
#[test]
fn mcp_and_cli_locate_rank_every_question_alike() {
    let Some(py) = mcp_python() else { return };
    let Ok(model) = std::env::var("FOREST_EMBED_MODEL") else {
        forest_testkit::skip("FOREST_EMBED_MODEL unset (bash ops/embed/install.sh)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest(d.path());
    let mut questions: Vec<String> = vec![];
    for set in ["questions-demo.json", "questions-v1.json"] {
        let qs: Value = serde_json::from_str(&fs::read_to_string(fixtures().join(set)).unwrap()).unwrap();
        questions.extend(qs.as_array().unwrap().iter().map(|q| q["question"].as_str().unwrap().to_string()));
    }
    let cli_ids = |q: &str, extra: &[&str]| -> (Vec<String>, Value) {
        let o = bin()
            .args(["locate", "--json", "--forest", &f(&root)])
            .args(extra)
            .arg("--")
            .arg(q)
            .env("FOREST_EMBED_MODEL", &model)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["results"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect(), v)
    };
    let compare = |stage: &str, fusion: Option<&str>| {
        let script: Vec<Value> = questions
            .iter()
            .map(|q| match fusion {
                Some(fu) => json!({"tool": "locate", "args": {"query": q, "fusion": fu}}),
                None => json!({"tool": "locate", "args": {"query": q}}),
            })
            .collect();
        let out = mcp_session_with(&py, &root, &Value::Array(script), &[], "FOREST_EMBED_MODEL");
        let calls = out["calls"].as_array().unwrap();
        assert_eq!(calls.len(), questions.len());
        let mut notes = 0;
        for (q, call) in questions.iter().zip(calls) {
            let mcp = payload(call);
            let ids: Vec<String> =
                mcp["results"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
            let extra: Vec<&str> = fusion.map(|fu| vec!["--fusion", fu]).unwrap_or_default();
            let (cli, whole) = cli_ids(q, &extra);
            assert_eq!(ids, cli, "{stage}: {q}");
            assert_eq!(mcp.get("note"), whole.get("note"), "{stage}: {q}");
            notes += usize::from(mcp.get("note").is_some());
        }
        notes
    };
    assert_eq!(compare("no canopy, default", None), 0, "no canopy and no fusion named: BM25, silently");
    for encoder in ["fast", "full"] {
        let o = bin()
            .args(["canopy", "build", "--encoder", encoder, "--forest", &f(&root)])
            .env("FOREST_EMBED_MODEL", &model)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            compare(&format!("{encoder} canopy, default (blend)"), None),
            0,
            "the canopy answers every question"
        );
        assert_eq!(compare(&format!("{encoder} canopy, rrf"), Some("rrf")), 0);
    }
    assert_eq!(compare("canopy, bm25", Some("bm25")), 0);
    // the canopy changes the ranking: hybrid and BM25 differ on some question
    let differ = questions.iter().filter(|q| cli_ids(q, &[]).0 != cli_ids(q, &["--fusion", "bm25"]).0).count();
    assert!(differ > 0, "the default ranking read the canopy");
}
