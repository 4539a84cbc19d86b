//! `forest token` and `forest serve --transport http` with tokens, over
//! real HTTP on loopback: 401 without or with a bad token, read tokens
//! refused on writes, a scoped token blind outside its branches, refused
//! calls in the audit log, Origin and bind checks, the session cap.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::time::Duration;

use serde_json::{json, Value};

use super::*;

/// A running `forest serve --transport http --port 0`; killed on drop.
pub(super) struct Server {
    pub(super) child: Child,
    pub(super) addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// SIGTERM (a clean stop) and wait for the exit status.
    pub(super) fn stop(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let o = Command::new("kill").args(["-TERM", &pid]).output().unwrap();
        assert!(o.status.success(), "kill -TERM {pid}");
        self.child.wait().unwrap()
    }
}

pub(super) fn serve(root: &Path, extra: &[&str]) -> Server {
    let child = bin()
        .args(["serve", "--transport", "http", "--port", "0", "--forest", &f(root)])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Owned at once: a panic below kills and reaps it (Drop).
    let mut srv = Server { child, addr: String::new() };
    let mut err = BufReader::new(srv.child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap_or(0) > 0, "serve exited before binding");
        if let Some(rest) = line.split("http://").nth(1) {
            srv.addr = rest.split('/').next().unwrap().to_string();
            // Keep draining stderr so the server never blocks on it.
            std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
            return srv;
        }
    }
}

/// One MCP HTTP request; returns (status, headers lower-cased, body).
pub(super) fn http(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let mut h = vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    h.extend_from_slice(headers);
    request(addr, method, "/mcp", &h, body)
}

/// One raw HTTP request (the path sent as given, unnormalised; `Host` the
/// address unless given); returns (status, headers lower-cased, body).
pub(super) fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_lowercase(), body.to_string())
}

/// The JSON-RPC messages of a response body (plain JSON or SSE `data:`;
/// chunked framing lines are skipped).
fn messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:").map(str::trim).or(Some(l.trim())))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

/// An initialised MCP session over HTTP.
pub(super) struct Session<'a> {
    addr: &'a str,
    token: Option<String>,
    pub(super) id: String,
    next: u64,
}

impl<'a> Session<'a> {
    pub(super) fn open(addr: &'a str, token: Option<&str>) -> Result<Session<'a>, (u16, String)> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut h: Vec<(&str, &str)> = vec![];
        if let Some(a) = &auth {
            h.push(("Authorization", a));
        }
        let (st, head, body) = http(addr, "POST", &h, &init.to_string());
        if st != 200 {
            return Err((st, head + &body));
        }
        let id = head
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id:"))
            .map(|s| s.trim().to_string())
            .expect("session id");
        let mut s = Session { addr, token: token.map(String::from), id, next: 1 };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (st, _, _) = s.post(&note);
        assert_eq!(st, 202);
        Ok(s)
    }

    pub(super) fn post(&mut self, msg: &Value) -> (u16, String, String) {
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}")).unwrap_or_default();
        let mut h: Vec<(&str, &str)> = vec![("Mcp-Session-Id", &self.id)];
        if self.token.is_some() {
            h.push(("Authorization", &auth));
        }
        http(self.addr, "POST", &h, &msg.to_string())
    }

    /// `tools/call`: the tool's JSON payload (success or envelope).
    pub(super) fn call(&mut self, tool: &str, args: Value) -> Value {
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call", "params": {"name": tool, "arguments": args}});
        let (st, _, body) = self.post(&msg);
        assert_eq!(st, 200, "{tool}: {body}");
        let m = messages(&body).into_iter().find(|m| m.get("id") == Some(&json!(self.next))).expect(&body);
        let text = m["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    }
}

/// The fixture forest plus `engineering/` and `hr/` (the secret only in hr/).
pub(super) fn company(dir: &Path) -> PathBuf {
    let root = dir.join("company");
    copy_dir(&fixtures().join("fixture-forest"), &root);
    let note = |id: &str, title: &str, summary: &str, ty: &str| {
        format!("---\nid: {id}\ntype: {ty}\ntitle: {title}\nsummary: '{summary}'\ncreated: '2026-03-02'\nsource: manual\n---\n\n# {title}\n\n{summary}\n")
    };
    for (id, title, summary, ty) in [
        ("engineering/_index", "Engineering", "Build and release engineering.", "branch"),
        ("engineering/build", "Build pipeline", "How the build pipeline runs.", "note"),
        ("hr/_index", "HR", "People operations, zanzibar bands.", "branch"),
        ("hr/salaries", "Salaries zanzibar", "The zanzibar salary sheet.", "note"),
    ] {
        fs::create_dir_all(root.join(id).parent().unwrap()).unwrap();
        fs::write(root.join(format!("{id}.md")), note(id, title, summary, ty)).unwrap();
    }
    fs::write(root.join(".gitignore"), "_derived/\n*.db\n.vine.lock\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "add", "-A", "."]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init: company"]);
    root
}

pub(super) fn token(root: &Path, name: &str, scope: &str, branches: &[&str]) -> String {
    let mut a = vec!["token", "create", name, "--scope", scope, "--forest", root.to_str().unwrap()];
    for b in branches {
        a.extend(["--branch", b]);
    }
    let o = run(&a);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

#[test]
fn tokens_gate_http_and_scope_what_each_caller_sees() {
    let d = tempfile::tempdir().unwrap();
    let root = company(d.path());
    let reader = token(&root, "eng-reader", "read", &["engineering"]);
    let writer = token(&root, "ops", "write", &[]);
    let list = run(&["token", "list", "--json", "--forest", root.to_str().unwrap()]);
    let l: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(l["tokens"].as_array().unwrap().len(), 2);
    assert!(!String::from_utf8_lossy(&list.stdout).contains(&reader[4..]), "list never shows secrets");
    let store = fs::read_to_string(root.join(".forest/tokens")).unwrap();
    assert!(!store.contains(&reader[4..]) && !store.contains(&writer[4..]), "only hashes are stored");
    assert!(git(&root, &["status", "--porcelain"]).trim().is_empty(), "the store is not versioned");

    let srv = serve(&root, &[]);
    // No token, a garbage token: 401 with a Bearer challenge.
    let (st, head) = Session::open(&srv.addr, None).err().unwrap();
    assert_eq!(st, 401);
    assert!(head.contains("www-authenticate: bearer realm=\"forest\""), "{head}");
    let (st, head) = Session::open(&srv.addr, Some("garbage")).err().unwrap();
    assert_eq!(st, 401);
    assert!(head.contains("error=\"invalid_token\""), "{head}");
    // The read token scoped to engineering/.
    let mut s = Session::open(&srv.addr, Some(&reader)).unwrap();
    let hits = s.call("sniff", json!({"terms": "zanzibar"}));
    assert!(!hits.to_string().contains("zanzibar") && !hits.to_string().contains("hr/"), "{hits}");
    let look = s.call("look", json!({"id": "hr/salaries"}));
    assert_eq!(look["error"]["code"], "E_NOT_FOUND", "{look}");
    let ok = s.call("look", json!({"id": "engineering/build"}));
    assert_eq!(ok["id"], "engineering/build", "{ok}");
    let planted = s.call("plant", json!({"node": {"id": "engineering/x", "type": "note", "title": "X", "summary": "x.", "parent": "engineering/_index"}}));
    assert_eq!(planted["error"]["code"], "E_FORBIDDEN", "{planted}");
    // The unscoped write token sees hr/ and writes.
    let mut w = Session::open(&srv.addr, Some(&writer)).unwrap();
    assert!(w.call("sniff", json!({"terms": "zanzibar"})).to_string().contains("hr/salaries"));
    let g = w.call(
        "graft",
        json!({"id": "engineering/build", "patch": {"set_frontmatter": {"title": "Build pipeline v2"}}}),
    );
    assert!(g.get("error").is_none(), "{g}");
    // Audit: who, what, outcome of the refusals and the write.
    let audit = fs::read_to_string(root.join(".forest/audit.log")).unwrap();
    let lines: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let has = |who: &str, tool: &str, outcome: &str| {
        lines.iter().any(|l| l["who"] == who && l["tool"] == tool && l["outcome"] == outcome)
    };
    // Failed logins go to the access log (aggregated per peer, written
    // when their window ends: at the latest when the server stops).
    assert!(!has("-", "http", "refused"), "{audit}");
    assert!(has("eng-reader", "look", "refused"), "{audit}");
    assert!(has("eng-reader", "plant", "refused"), "{audit}");
    assert!(has("ops", "graft", "ok"), "{audit}");
    assert!(lines.iter().any(|l| l["ids"] == json!(["hr/salaries"])), "{audit}");
    assert!(git(&root, &["status", "--porcelain"]).trim().is_empty(), "tokens and audit stay out of git");
    // A revoked token is refused after a restart.
    drop(srv);
    assert_eq!(code(&run(&["token", "revoke", "eng-reader", "--forest", root.to_str().unwrap()])), 0);
    let srv = serve(&root, &[]);
    assert_eq!(Session::open(&srv.addr, Some(&reader)).err().unwrap().0, 401);
    assert!(Session::open(&srv.addr, Some(&writer)).is_ok());
}

#[test]
fn origins_binds_and_sessions_are_bounded() {
    let d = tempfile::tempdir().unwrap();
    let root = company(d.path());
    // Without tokens: loopback only, one clear error otherwise.
    let o =
        run(&["serve", "--transport", "http", "--host", "0.0.0.0", "--port", "0", "--forest", root.to_str().unwrap()]);
    assert_ne!(code(&o), 0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("without tokens"), "{err}");
    let srv = serve(
        &root,
        &["--max-sessions", "2", "--max-sessions-per-token", "2", "--allow-origin", "https://app.example:443"],
    );
    // A body over the 4 MiB cap is refused before rmcp parses it.
    let big = format!("{{\"pad\": \"{}\"}}", "x".repeat((4 << 20) + 16));
    let (st, _, body) = http(&srv.addr, "POST", &[], &big);
    assert_eq!(st, 413, "{}", &body[..body.len().min(300)]);
    assert!(body.contains("E_SCHEMA") && body.contains("request body over"), "{body}");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let (st, _, _) = http(&srv.addr, "POST", &[("Origin", "http://evil.example")], &init);
    assert_eq!(st, 403, "a foreign Origin is refused");
    let (st, _, _) = http(&srv.addr, "POST", &[("Origin", "https://app.example")], &init);
    assert_eq!(st, 200, "an allowed Origin passes");
    let local = format!("http://{}", srv.addr);
    let (st, head, _) = http(&srv.addr, "POST", &[("Origin", &local)], &init);
    assert_eq!(st, 200, "loopback origins pass");
    let (st, _, body) = http(&srv.addr, "POST", &[], &init);
    assert_eq!(st, 429, "the third session is over the (tokenless) client's cap: {body}");
    assert!(body.contains("E_BUSY"), "{body}");
    // Closing a session answers 200 (clients log rmcp's 202 as a failure)
    // and frees its place under the cap.
    let sid = head.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).expect("a session id").trim().to_string();
    let (st, _, body) = http(&srv.addr, "DELETE", &[("Mcp-Session-Id", &sid)], "");
    assert_eq!(st, 200, "{body}");
    let (st, _, body) = http(&srv.addr, "POST", &[], &init);
    assert_eq!(st, 200, "a closed session frees its place: {body}");
}

/// The official Python MCP SDK with a bearer token: scoped answers; no
/// token, no session.
#[test]
fn python_sdk_client_with_a_bearer_token() {
    let Some(py) = std::env::var("FOREST_TEST_MCP_PYTHON").ok().map(PathBuf::from).filter(|p| p.is_file()) else {
        forest_testkit::skip("FOREST_TEST_MCP_PYTHON unset (run `bash ops/mcp/install.sh`)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let root = company(d.path());
    let eng = token(&root, "eng", "read", &["engineering"]);
    let srv = serve(&root, &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops/mcp/token_client.py");
    let url = format!("http://{}/mcp", srv.addr);
    let calls = json!([["sniff", {"terms": "zanzibar"}], ["look", {"id": "engineering/build"}], ["graft", {"id": "engineering/build", "patch": {"set_frontmatter": {"title": "x"}}}]]);
    let run_py = |tok: &str| {
        let o = Command::new(&py).args([script.to_str().unwrap(), &url, tok, &calls.to_string()]).output().unwrap();
        serde_json::from_slice::<Value>(&o.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)))
    };
    let ok = run_py(&eng);
    let r = ok["results"].as_array().unwrap_or_else(|| panic!("{ok}"));
    assert!(!r[0].to_string().contains("zanzibar"), "{ok}");
    assert_eq!(r[1]["id"], "engineering/build", "{ok}");
    assert_eq!(r[2]["error"]["code"], "E_FORBIDDEN", "{ok}");
    let refused = run_py("");
    assert!(refused.get("refused").is_some(), "{refused}");
}
