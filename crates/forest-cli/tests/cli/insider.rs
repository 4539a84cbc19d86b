//! Issue 48: a hostile member of the team with tokens scoped to
//! `engineering/` (one read, one write) against a forest adopted from a
//! drive holding `hr/`, `engineering/` and `engineering-private/`, over
//! real HTTP (the official Python MCP SDK where a client runs tools; raw
//! HTTP for what sits below MCP). Each attack of the issue is made and
//! shown to hold.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::hostile::mcp_python;
use super::serve_access::{http, serve, token, Session};
use super::*;

const SECRET: &str = "zanzibar";

fn write_file(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A forest adopted (bodies by reference) from a drive with the salary
/// sheets in `hr/`, plus the three tokens: `eng-reader`, `eng-writer`
/// (both `engineering/`) and `ops` (write, whole forest).
struct Company {
    _dir: tempfile::TempDir,
    root: PathBuf,
    reader: String,
    writer: String,
    ops: String,
}

fn company() -> Company {
    let dir = tempfile::tempdir().unwrap();
    let root = init(dir.path());
    let drive = dir.path().join("drive");
    write_file(&drive, "hr/salary1.md", &format!("# Salary sheet 1\n\nAlice {SECRET} salary 1000000.\n"));
    write_file(&drive, "hr/salary2.md", &format!("# Salary sheet 2\n\nBob {SECRET} salary 900000.\n"));
    write_file(&drive, "engineering/build.md", "# Build pipeline\n\nHow the build pipeline runs on quince runners.\n");
    write_file(&drive, "engineering-private/keys.md", &format!("# Keys\n\nThe {SECRET} signing keys.\n"));
    let o = run(&["adopt", "--forest", &f(&root), "--content", "reference", drive.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(root.join("hr/salary1.md").is_file() && root.join("engineering/build.md").is_file());
    let reader = token(&root, "eng-reader", "read", &["engineering"]);
    let writer = token(&root, "eng-writer", "write", &["engineering"]);
    let ops = token(&root, "ops", "write", &[]);
    Company { _dir: dir, root, reader, writer, ops }
}

/// Run `ops/mcp/sessions.py`: one SDK client per token, the steps in order.
fn sdk(py: &Path, url: &str, tokens: &[&str], steps: Value) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops/mcp/sessions.py");
    let o = Command::new(py)
        .args([script.to_str().unwrap(), url, &json!(tokens).to_string(), &steps.to_string()])
        .output()
        .unwrap();
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
    v["results"].as_array().cloned().unwrap_or_else(|| panic!("{v}"))
}

fn plant(id: &str, extra: Value) -> Value {
    let mut n =
        json!({"id": id, "type": "note", "title": "Ref", "summary": "A reference.", "parent": "engineering/_index"});
    for (k, v) in extra.as_object().unwrap() {
        n[k] = v.clone();
    }
    json!({"node": n})
}

#[test]
fn insider_reads_nothing_outside_the_scope_through_references_or_symlinks() {
    let Some(py) = mcp_python() else { return };
    let c = company();
    std::os::unix::fs::symlink("../hr/salary1.md", c.root.join("engineering/hrlink.md")).unwrap();
    let srv = serve(&c.root, &[]);
    let url = format!("http://{}/mcp", srv.addr);

    // Attack 1, at plant: the scoped writer may not point storage keys
    // outside its scope; a reference inside it is fine.
    let leak = json!({"content": "reference", "source_path": "hr/salary1.md"});
    let w = sdk(
        &py,
        &url,
        &[&c.writer],
        json!([
            [0, "plant", plant("engineering/ref-leak", leak.clone())],
            [
                0,
                "plant",
                plant(
                    "engineering/ref-priv",
                    json!({"content": "reference", "source_path": "engineering-private/keys.md"})
                )
            ],
            [0, "plant", plant("engineering/pay-leak", json!({"payload": "../hr/salary1.md", "payload_type": "pdf"}))],
            [0, "plant", plant("engineering/tiered", json!({"tier": "cold"}))],
            [
                0,
                "plant",
                plant("engineering/ref-ok", json!({"content": "reference", "source_path": "engineering/build.md"}))
            ],
        ]),
    );
    for r in &w[..4] {
        assert_eq!(r["error"]["code"], "E_FORBIDDEN", "{r}");
    }
    assert!(w[4].get("error").is_none(), "{}", w[4]);
    // A cross-scope reference already in the forest (planted by the
    // unscoped ops token, or before this check existed).
    let o = sdk(&py, &url, &[&c.ops], json!([[0, "plant", plant("engineering/ref-leak", leak)]]));
    assert!(o[0].get("error").is_none(), "{}", o[0]);

    // Attacks 1 and 2, at read: the scoped reader gets neither the planted
    // reference's target nor the symlinked file, by any tool.
    let r = sdk(
        &py,
        &url,
        &[&c.reader],
        json!([
            [0, "pick", {"id": "engineering/ref-leak"}],
            [0, "pick", {"id": "engineering/hrlink"}],
            [0, "look", {"id": "engineering/hrlink"}],
            [0, "sniff", {"terms": SECRET}],
            [0, "locate", {"query": format!("{SECRET} salary")}],
            [0, "harvest", {"query": format!("{SECRET} salary")}],
            [0, "pick", {"id": "engineering/ref-ok"}],
        ]),
    );
    for (i, x) in r[..6].iter().enumerate() {
        let t = x.to_string();
        // locate and harvest echo the query; nothing else may name the secret.
        assert!(i >= 4 || !t.contains(SECRET), "step {i}: {x}");
        assert!(!t.contains("1000000") && !t.contains("Alice"), "step {i}: {x}");
        assert!(i < 3 || !t.contains("hrlink") && !t.contains("hr/"), "step {i}: {x}");
    }
    for x in &r[..3] {
        assert_eq!(x["error"]["code"], "E_NOT_FOUND", "{x}");
    }
    assert!(r[6].to_string().contains("quince"), "a reference inside the scope is served: {}", r[6]);
    // A look on the writable server did not add the symlink to the catalog.
    let o =
        sdk(&py, &url, &[&c.ops], json!([[0, "look", {"id": "engineering/hrlink"}], [0, "sniff", {"terms": SECRET}]]));
    assert_eq!(o[0]["error"]["code"], "E_NOT_FOUND", "{}", o[0]);
    assert!(!o[1].to_string().contains("hrlink"), "{}", o[1]);
    drop(srv);

    // `forest validate` reports both as errors.
    let v = run(&["validate", "--forest", &f(&c.root), "--json"]);
    assert_ne!(code(&v), 0);
    let v: Value = serde_json::from_slice(&v.stdout).unwrap();
    let issues = v["issues"].as_array().unwrap();
    for id in ["engineering/ref-leak", "engineering/hrlink"] {
        assert!(issues.iter().any(|i| i["id"] == id && i["level"] == "error"), "{id}: {v}");
    }
    assert!(!issues.iter().any(|i| i["id"] == "engineering/ref-ok" && i["level"] == "error"), "{v}");
}

/// One HTTP/1.1 keep-alive connection sending `n` unauthenticated POSTs;
/// the status of each answer.
fn flood(addr: &str, n: usize, bad_token: bool) -> Vec<u16> {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let auth = if bad_token { "Authorization: Bearer fst_guess\r\n" } else { "" };
    let req = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 0\r\n\r\n");
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        w.write_all(req.as_bytes()).unwrap();
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let mut len = 0usize;
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; len];
        r.read_exact(&mut body).unwrap();
        out.push(status);
    }
    out
}

fn lines(p: &Path) -> Vec<Value> {
    fs::read_to_string(p).unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

#[test]
fn insider_cannot_silence_the_audit_lock_out_the_team_or_share_a_session() {
    let c = company();
    let mut srv = serve(&c.root, &["--max-sessions-per-token", "3"]);
    let addr = srv.addr.clone();
    // An authorised write: its audit line must survive what follows.
    let mut w = Session::open(&addr, Some(&c.writer)).unwrap();
    let g = w.call("graft", json!({"id": "engineering/build", "patch": {"set_frontmatter": {"title": "Build v2"}}}));
    assert!(g.get("error").is_none(), "{g}");

    // Attack 3: 10^5 unauthenticated requests (4 connections, half with a
    // wrong token). Past the limit they get 429, and they write no line each.
    let started = Instant::now();
    let a: &str = &addr;
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|i| s.spawn(move || flood(a, 25_000, i % 2 == 1))).collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let flood_s = started.elapsed().as_secs_f64();
    assert_eq!(statuses.len(), 100_000);
    assert!(statuses.iter().all(|s| *s == 401 || *s == 429), "only 401/429");
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert!(limited > 90_000, "{limited} of 10^5 limited");
    // The honest client behind the same address still gets in at once.
    let t = Instant::now();
    let mut honest = Session::open(&addr, Some(&c.reader)).unwrap();
    let ok = honest.call("look", json!({"id": "engineering/build"}));
    let honest_ms = t.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(ok["id"], "engineering/build", "{ok}");
    eprintln!("insider: 10^5 unauthenticated requests in {flood_s:.1} s ({limited} answered 429); honest session + look after it {honest_ms:.0} ms");

    // Attack 4: the reader at its session cap (3) leaves the others able to
    // open a session and look.
    let mut held = vec![];
    loop {
        match Session::open(&addr, Some(&c.reader)) {
            Ok(s) => held.push(s),
            Err((st, body)) => {
                assert_eq!(st, 429, "{body}");
                assert!(body.contains("E_BUSY"), "{body}");
                break;
            }
        }
        assert!(held.len() <= 3, "the per-token cap holds");
    }
    let mut other = Session::open(&addr, Some(&c.ops)).unwrap();
    assert_eq!(other.call("look", json!({"id": "engineering/_index"}))["id"], "engineering/_index");

    // Attack 5: a session is bound to its token: the reader cannot use or
    // close the ops session even with its id.
    let ops_sid = other.id.clone();
    let mut stolen = Session::open(&addr, Some(&c.writer)).unwrap();
    stolen.id = ops_sid.clone();
    let look = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "look", "arguments": {"id": "engineering/build"}}});
    assert_eq!(stolen.post(&look).0, 404);
    let auth = format!("Bearer {}", c.writer);
    let (st, _, _) = http(&addr, "DELETE", &[("Mcp-Session-Id", &ops_sid), ("Authorization", &auth)], "");
    assert_eq!(st, 404, "another token cannot close the session");
    assert_eq!(other.call("look", json!({"id": "engineering/build"}))["id"], "engineering/build");

    // Attack 6: history of an engineering node withholds the adopt commit
    // message, which counts the hidden hr/ nodes.
    let h = honest.call("history", json!({"id": "engineering/build"}));
    let entries = h["entries"].as_array().unwrap_or_else(|| panic!("{h}"));
    assert!(entries.len() >= 2, "{h}");
    assert!(!h.to_string().contains("planted"), "{h}");
    assert!(entries.iter().any(|e| e["message"].as_str().unwrap().starts_with("(withheld")), "{h}");
    assert!(entries.iter().any(|e| e["message"].as_str().unwrap().contains("graft")), "its own graft shows: {h}");

    // Attack 7: an Origin that only starts like a loopback one.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let o = [("Origin", "http://localhost:8000.evil.example"), ("Authorization", auth.as_str())];
    assert_eq!(http(&addr, "POST", &o, &init.to_string()).0, 403);

    // A clean stop writes the open failed-login windows; the audit log
    // kept the write, the access log holds a few aggregated lines.
    drop((w, honest, held, other, stolen));
    assert!(srv.stop().success());
    let audit = lines(&c.root.join(".forest/audit.log"));
    assert!(
        audit.iter().any(|l| l["who"] == "eng-writer" && l["tool"] == "graft" && l["outcome"] == "ok"),
        "{audit:?}"
    );
    assert!(!c.root.join(".forest/audit.log.1").exists(), "nothing rotated the audit log");
    let access = lines(&c.root.join(".forest/access.log"));
    let failed: Vec<&Value> = access.iter().filter(|l| l["code"] == "unauthenticated").collect();
    let counted: u64 = failed.iter().map(|l| l["count"].as_u64().unwrap()).sum();
    assert_eq!(counted, 100_000, "every failure is counted once");
    assert!(failed.len() <= 2 + 2 * (flood_s as usize / 10 + 1), "{} aggregated lines", failed.len());
    assert!(access.iter().any(|l| l["code"] == "session_not_owned" && l["who"] == "eng-writer"), "{access:?}");
    eprintln!("insider: access.log {} lines for 10^5 failed logins", failed.len());
}

#[test]
fn two_clients_close_their_own_sessions() {
    let Some(py) = mcp_python() else { return };
    let c = company();
    let srv = serve(&c.root, &[]);
    let url = format!("http://{}/mcp", srv.addr);
    let r = sdk(
        &py,
        &url,
        &[&c.ops, &c.reader],
        json!([
            [0, "pick", {"id": "hr/salary1"}],
            [0, "look", {"id": "hr/salary2"}],
            [0, "sniff", {"terms": SECRET}],
            [1, "look", {"id": "engineering/build"}],
            [1, "close_session", {"success": false, "answer_nodes": []}],
            [0, "close_session", {"success": true, "answer_nodes": ["hr/salary1"]}],
        ]),
    );
    let (scoped, whole) = (&r[4], &r[5]);
    assert_eq!(scoped["metrics"]["calls"], 1, "{scoped}");
    assert!(!scoped.to_string().contains("hr/"), "{scoped}");
    assert_eq!(whole["metrics"]["calls"], 3, "the scoped close reset nothing: {whole}");
    assert_eq!(whole["metrics"]["trail_len"], 0, "{whole}");
    assert_ne!(scoped["session"], whole["session"]);
}

#[test]
fn readonly_writes_no_trace_and_a_clean_stop_checkpoints_sqlite() {
    let c = company();
    let traces = c.root.join("_derived/traces");
    let _ = fs::remove_dir_all(&traces);
    let srv = serve(&c.root, &["--readonly"]);
    let mut s = Session::open(&srv.addr, Some(&c.reader)).unwrap();
    assert_eq!(s.call("look", json!({"id": "engineering/build"}))["id"], "engineering/build");
    assert!(s.call("pick", json!({"id": "engineering/build"})).to_string().contains("quince"));
    drop(s);
    drop(srv);
    assert!(!traces.exists(), "a --readonly server wrote traces");

    let mut srv = serve(&c.root, &[]);
    let mut s = Session::open(&srv.addr, Some(&c.ops)).unwrap();
    let g = s.call("graft", json!({"id": "engineering/build", "patch": {"set_frontmatter": {"title": "Build v3"}}}));
    assert!(g.get("error").is_none(), "{g}");
    assert!(s.call("pick", json!({"id": "engineering/build"})).to_string().contains("quince"));
    drop(s);
    let wal = |db: &str| fs::metadata(c.root.join(format!("_derived/{db}-wal"))).map(|m| m.len()).unwrap_or(0);
    let before = (wal("catalog.db"), wal("trails.db"));
    assert!(srv.stop().success());
    for db in ["catalog.db", "trails.db"] {
        assert_eq!(wal(db), 0, "{db}: the write-ahead log was checkpointed on SIGTERM");
    }
    eprintln!("insider: WAL bytes before SIGTERM (catalog, trails) {before:?}, after (0, 0)");
    let o = run(&["look", "--forest", &f(&c.root), "--json", "engineering/build"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("Build v3"), "{}", String::from_utf8_lossy(&o.stdout));
}
