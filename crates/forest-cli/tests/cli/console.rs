//! The web console of `forest serve --transport http` (`/ui/`), over real
//! HTTP on loopback and in a real headless Chromium: sign-in with a
//! scoped token, the same `locate` ids as MCP and the CLI, scopes on every
//! page, CSRF and Origin/Host checks, hostile node text escaped, path
//! traversal and oversized queries refused with one clear error.

use serde_json::{json, Value};

use super::serve_access::{company, request as req, serve, token, Session};
use super::*;

/// Sign in with `tok`: the session cookie (`name=value`).
fn login(addr: &str, tok: &str) -> String {
    let origin = format!("http://{addr}");
    let body = format!("token={}", tok.replace('+', "%2B"));
    let (st, head, body) = req(
        addr,
        "POST",
        "/ui/login",
        &[("Origin", &origin), ("Content-Type", "application/x-www-form-urlencoded")],
        &body,
    );
    assert_eq!(st, 303, "{head}{body}");
    let c = head.lines().find_map(|l| l.strip_prefix("set-cookie: ")).expect("a cookie").to_string();
    assert!(c.contains("httponly") && c.contains("samesite=strict") && c.contains("path=/ui"), "{c}");
    assert!(!c.contains(&tok.to_lowercase()), "the cookie never carries the token");
    c.split(';').next().unwrap().to_string()
}

fn page(addr: &str, cookie: &str, path: &str) -> (u16, String) {
    let (st, head, body) = req(addr, "GET", path, &[("Cookie", cookie)], "");
    if st == 200 {
        assert!(head.contains("content-security-policy: default-src 'self'"), "{path}: {head}");
        assert!(!head.contains("unsafe-inline"), "{path}");
    }
    (st, body)
}

fn ids_of(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .map(|a| a.iter().map(|r| r["id"].as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default()
}

/// `company` plus a node whose title and body are hostile HTML and one
/// Gardener run (a real adopt).
fn console_forest(dir: &Path) -> PathBuf {
    let root = company(dir);
    let evil = "---\nid: engineering/xss\ntype: note\ntitle: '\"><img src=x onerror=alert(2)> <script>alert(1)</script>'\nsummary: 'Build notes <script>alert(3)</script> zebra.'\ncreated: '2026-03-02'\nsource: manual\n---\n\n# Hostile\n\n<script>alert(4)</script> \"><img src=x onerror=alert(5)> zebra build\n";
    fs::write(root.join("engineering/xss.md"), evil).unwrap();
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "add", "-A", "."]);
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "plant(engineering/xss): hostile"]);
    let src = dir.join("handbook");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("runbook.md"), "# Runbook\n\nHow to restart the build farm.\n").unwrap();
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // Walked trails: heat over the tree on the health page.
    for (ids, amount) in [(vec!["engineering/build", "engineering/_index"], "0.8"), (vec!["hr/salaries"], "0.5")] {
        let mut a = vec!["heat", "deposit", "--forest", root.to_str().unwrap(), "--amount", amount];
        a.extend(ids);
        assert_eq!(code(&run(&a)), 0);
    }
    root
}

#[test]
fn console_pages_follow_the_token_and_refuse_hostile_requests() {
    let d = tempfile::tempdir().unwrap();
    let root = console_forest(d.path());
    let eng = token(&root, "eng", "read", &["engineering"]);
    let ops = token(&root, "ops", "read", &[]);
    let srv = serve(&root, &[]);
    let a = srv.addr.as_str();
    let origin = format!("http://{a}");

    // No cookie: pages send to the login form, the JSON route is 401.
    let (st, head, _) = req(a, "GET", "/ui/search?q=build", &[], "");
    assert_eq!(st, 303);
    assert!(head.contains("location: /ui/login"), "{head}");
    assert_eq!(req(a, "GET", "/ui/api/locate?q=build", &[], "").0, 401);
    assert_eq!(req(a, "GET", "/ui/node/engineering/build", &[("Cookie", "forest_console=forged")], "").0, 303);
    // Sign-in: CSRF-safe (Origin required, a foreign one refused), bad tokens 401.
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let body = format!("token={eng}");
    assert_eq!(req(a, "POST", "/ui/login", &form, &body).0, 403, "no Origin");
    let evil = [form[0], ("Origin", "http://evil.example")];
    assert_eq!(req(a, "POST", "/ui/login", &evil, &body).0, 403, "foreign Origin");
    let ok = [form[0], ("Origin", origin.as_str())];
    let (st, _, page_body) = req(a, "POST", "/ui/login", &ok, "token=fst_garbage");
    assert_eq!(st, 401);
    assert!(page_body.contains("unknown token"), "{page_body}");
    let ce = login(a, &eng);
    let co = login(a, &ops);
    // A foreign Origin or Host on a page is refused like MCP's.
    assert_eq!(req(a, "GET", "/ui/search", &[("Cookie", &ce), ("Origin", "http://evil.example")], "").0, 403);
    assert_eq!(req(a, "GET", "/ui/search", &[("Cookie", &ce), ("Host", "evil.example")], "").0, 403);

    // The same locate as MCP (scoped) and the CLI (unscoped): same ids, same order.
    let (st, j) = page(a, &ce, "/ui/api/locate?q=build+pipeline+zebra");
    assert_eq!(st, 200, "{j}");
    let console_eng: Value = serde_json::from_str(&j).unwrap();
    let mut s = Session::open(a, Some(&eng)).unwrap();
    let mcp = s.call("locate", json!({"query": "build pipeline zebra", "k": 20}));
    assert!(!ids_of(&mcp).is_empty(), "{mcp}");
    assert_eq!(ids_of(&console_eng), ids_of(&mcp));
    let (_, j) = page(a, &co, "/ui/api/locate?q=build+pipeline+zebra");
    let console_ops: Value = serde_json::from_str(&j).unwrap();
    let cli = run(&["locate", "--forest", &f(&root), "--json", "-k", "20", "build", "pipeline", "zebra"]);
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(ids_of(&console_ops), ids_of(&cli));

    pages_keep_to_the_token(a, &ce, &co);
    hostile_requests_get_one_refusal(a, &ce);

    // Guessing tokens on the form is limited per address, as bearer tokens are.
    let codes: Vec<u16> = (0..25).map(|_| req(a, "POST", "/ui/login", &ok, "token=fst_guess").0).collect();
    assert_eq!(codes[0], 401);
    assert_eq!(codes[24], 429, "{codes:?}");
    // Sign out: the session is gone server-side.
    let (st, _, _) = req(a, "POST", "/ui/logout", &[("Cookie", &ce), ("Origin", &origin)], "");
    assert_eq!(st, 303);
    assert_eq!(page(a, &ce, "/ui/search").0, 303);
    // No raw token or session id in the audit and access logs.
    for log in [".forest/audit.log", ".forest/access.log"] {
        let text = fs::read_to_string(root.join(log)).unwrap_or_default();
        assert!(!text.contains(&eng) && !text.contains(ce.split('=').nth(1).unwrap()), "{log}");
    }
}

/// The engineering token never sees hr/ on any page; browse, node,
/// history and health pages show what each token may read.
fn pages_keep_to_the_token(a: &str, ce: &str, co: &str) {
    // Scope: the engineering token never sees hr/ on any page.
    let (_, hits) = page(a, co, "/ui/search?q=zanzibar");
    assert!(hits.contains("hr&#x2f;salaries"), "the unscoped token finds it: {hits}");
    for p in [
        "/ui/search?q=zanzibar",
        "/ui/search?q=salaries",
        "/ui/browse",
        "/ui/health",
        "/ui/node/engineering/build",
        "/ui/history/engineering/build",
    ] {
        let (st, body) = page(a, ce, p);
        assert_eq!(st, 200, "{p}: {body}");
        // (The query itself is echoed: the secret's own words are not looked for.)
        assert!(!body.contains("hr&#x2f;") && !body.contains("hr/") && !body.contains("Salaries"), "{p}: {body}");
        assert!(!body.contains("salary sheet") && !body.contains("People operations"), "{p}: {body}");
    }
    for p in [
        "/ui/node/hr/salaries",
        "/ui/browse/hr/_index",
        "/ui/node/_index",
        "/ui/browse/_index",
        "/ui/history/hr/salaries",
    ] {
        let (st, body) = page(a, ce, p);
        assert_eq!(st, 404, "{p}: {body}");
        assert!(!body.contains("Salaries") && !body.contains("salary sheet"), "{p}");
    }
    // Browse from the master down to a node (unscoped), and from the
    // token's branch (scoped).
    let (st, master) = page(a, co, "/ui/browse");
    assert_eq!(st, 200);
    assert!(master.contains("&#x2f;ui&#x2f;browse&#x2f;engineering&#x2f;_index"), "{master}");
    let (_, branch) = page(a, ce, "/ui/browse/engineering/_index");
    assert!(branch.contains("&#x2f;ui&#x2f;node&#x2f;engineering&#x2f;build"), "{branch}");
    let (st, node) = page(a, ce, "/ui/node/engineering/build");
    assert_eq!(st, 200);
    assert!(node.contains("Build pipeline") && node.contains("How the build pipeline runs."), "{node}");
    // The history: the owner reads the commit; the scoped token not its
    // subject, which also names hr/.
    let (st, h) = page(a, co, "/ui/history/engineering/build");
    assert_eq!(st, 200);
    assert!(h.contains("init: company"), "{h}");
    let (_, h) = page(a, ce, "/ui/history/engineering/build");
    assert!(!h.contains("init: company") && h.contains("withheld"), "{h}");
    // An adopted node names the file it came from.
    let (st, node) = page(a, co, "/ui/node/runbook");
    assert_eq!(st, 200);
    assert!(node.contains("id=\"origin\">file:&#x2f;&#x2f;") && node.contains("handbook&#x2f;runbook.md"), "{node}");
    // Health: the owner sees the adopt run; the scoped token its branch only.
    let (_, h) = page(a, co, "/ui/health");
    assert!(h.contains("gardener(adopt)") && h.contains("<svg"), "{h}");
    assert!(h.contains("<title id=\"heat-t\">"), "heat over the tree: {h}");
    let (_, h) = page(a, ce, "/ui/health");
    assert!(!h.contains("gardener(adopt)") && h.contains("engineering"), "{h}");
    assert!(h.contains("<title id=\"heat-t\">") && h.contains(">1.60<"), "engineering's heat alone: {h}");
    assert!(!h.contains(">hr<") && !h.contains(">0.50<"), "no bar of hr: {h}");
}

/// Hostile text is escaped; traversal and oversized paths get one clear
/// refusal.
fn hostile_requests_get_one_refusal(a: &str, ce: &str) {
    // Hostile text in titles and bodies is escaped on every page.
    for p in ["/ui/node/engineering/xss", "/ui/search?q=zebra", "/ui/browse/engineering/_index"] {
        let (st, body) = page(a, ce, p);
        assert_eq!(st, 200, "{p}");
        assert!(!body.contains("<script>alert") && !body.contains("<img src=x"), "{p}: {body}");
        assert_eq!(body.matches("<script").count(), 1, "only the console's own script: {p}");
    }
    // Path traversal, raw and encoded, and oversized queries: one clear refusal.
    for p in [
        "/ui/node/../../etc/passwd",
        "/ui/node/%2e%2e/%2e%2e/etc/passwd",
        "/ui/node/engineering%2f..%2f..%2fetc%2fpasswd",
        "/ui/node/..%5c..%5cetc%5cpasswd",
        "/ui/static/..%2f..%2fCargo.toml",
        "/ui/browse/engineering/%00",
    ] {
        let (st, body) = page(a, ce, p);
        assert_eq!(st, 400, "{p}: {body}");
        assert!(body.contains("E_SCHEMA") && !body.contains("root:") && !body.contains("[package]"), "{p}");
    }
    let long = format!("/ui/search?q={}", "x".repeat(300));
    let (st, body) = page(a, ce, &long);
    assert_eq!(st, 414);
    assert!(body.contains("a search is at most 256 characters"), "{body}");
    let huge = format!("/ui/search?q={}", "x".repeat(20_000));
    assert!([414, 431].contains(&page(a, ce, &huge).0));
    let (st, body) = page(a, ce, &format!("/ui/node/{}", "a/".repeat(400)));
    assert!([400, 414].contains(&st), "{st} {body}");
}

#[test]
fn no_ui_serves_no_console() {
    let d = tempfile::tempdir().unwrap();
    let root = company(d.path());
    let eng = token(&root, "eng", "read", &["engineering"]);
    let srv = serve(&root, &["--no-ui"]);
    let (st, _, body) = req(&srv.addr, "GET", "/ui/search", &[], "");
    assert_eq!(st, 401, "the MCP guard answers: {body}");
    assert!(!body.contains("<html"));
    let origin = format!("http://{}", srv.addr);
    let form = [("Origin", origin.as_str()), ("Content-Type", "application/x-www-form-urlencoded")];
    let (st, _, _) = req(&srv.addr, "POST", "/ui/login", &form, &format!("token={eng}"));
    assert_eq!(st, 401, "no login either: the MCP guard wants a bearer token");
}

/// A real headless Chromium (Debian's, driven by Selenium): sign in with
/// a scoped token, search as you type, open a node, browse to it from the
/// token's branch, view health; an hr/-free token never shows hr/; no
/// alert from hostile node text; without the cookie, the login form.
/// FOREST_CONSOLE_SHOTS=DIR writes the four pages' screenshots there.
#[test]
fn console_in_a_headless_browser() {
    let Some(py) = std::env::var("FOREST_TEST_BROWSER_PYTHON").ok().map(PathBuf::from).filter(|p| p.is_file()) else {
        forest_testkit::skip("FOREST_TEST_BROWSER_PYTHON unset (run `bash ops/chromium/install.sh`)");
        return;
    };
    let have = |b: &str| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success());
    if !have("chromedriver") || !have("chromium") {
        forest_testkit::skip("chromium or chromedriver missing (run `bash ops/chromium/install.sh` as root)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let root = console_forest(d.path());
    let eng = token(&root, "eng", "read", &["engineering"]);
    let ops = token(&root, "ops", "read", &[]);
    let srv = serve(&root, &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops/chromium/console_browser.py");
    let shots = std::env::var("FOREST_CONSOLE_SHOTS").unwrap_or_default();
    let o = Command::new(&py)
        .args([script.to_str().unwrap(), &format!("http://{}", srv.addr), &eng, &ops, &shots])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("browser script: {err}"));
    assert_eq!(v["no_cookie_url"].as_str().map(|u| u.ends_with("/ui/login")), Some(true), "{v}");
    assert_eq!(v["login_url"].as_str().map(|u| u.contains("/ui/search")), Some(true), "{v}");
    let typed: Vec<&str> = v["typed_ids"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(typed.contains(&"engineering/build"), "search as you type: {v}");
    let submitted: Vec<&str> = v["search_ids"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(typed, submitted, "the script's results are the server's: {v}");
    assert_eq!(v["node_id"], "engineering/build", "{v}");
    assert_eq!(v["browsed_to"], "engineering/build", "{v}");
    assert_eq!(v["health_svgs"].as_u64().map(|n| n >= 1), Some(true), "{v}");
    assert_eq!(v["alerts"], 0, "hostile node text ran no script: {v}");
    assert_eq!(v["xss_title_text"].as_str().map(|t| t.contains("<script>alert(1)</script>")), Some(true), "{v}");
    let seen = v["scoped_texts"].as_array().unwrap();
    assert!(seen.len() >= 5, "{v}");
    for t in seen {
        let t = t.as_str().unwrap_or_default();
        assert!(!t.contains("hr/") && !t.contains("Salaries") && !t.contains("salary sheet"), "saw hr/: {t}");
    }
    assert_eq!(v["owner_sees_hr"], true, "{v}");
    assert_eq!(v["keyboard_focus"], "q", "the search box takes the keyboard: {v}");
}

/// The hostile-forest suite's forest (a node symlinked out of the forest,
/// a linked directory) under a `--readonly` tokenless server: the console
/// serves nothing from outside, refuses hostile URLs and writes nothing.
#[test]
fn console_on_a_hostile_forest_leaks_nothing_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let root = super::hostile::hostile_forest(d.path());
    let srv = serve(&root, &["--readonly"]);
    let a = srv.addr.as_str();
    let before = super::hostile::shared_state(&root);
    // Tokenless loopback: no sign-in, like MCP.
    let (st, body) = page(a, "", "/ui/search?q=zebra-salary");
    assert_eq!(st, 200, "{body}");
    for p in [
        "/ui/search?q=zebra-salary",
        "/ui/api/locate?q=salary+sheet",
        "/ui/node/sales/leak",
        "/ui/node/linked/secret",
        "/ui/browse/linked/_index",
        "/ui/node/sales%2fleak",
        "/ui/node/..%2foutside%2fsecret",
        "/ui/health",
        "/ui/browse",
    ] {
        let (st, body) = page(a, "", p);
        assert!(st < 500, "{p}: {st} {body}");
        assert!(!body.contains("zebra-salary 1000000") && !body.contains("Salary sheet"), "{p}: {body}");
    }
    assert!([403, 404].contains(&page(a, "", "/ui/node/sales/leak").0));
    // Every page once more with the server still answering.
    for p in ["/ui/search?q=revenue", "/ui/node/_index", "/ui/browse/sales/_index", "/ui/health"] {
        assert_eq!(page(a, "", p).0, 200, "{p}");
    }
    let after = super::hostile::shared_state(&root);
    for ((name, x), (_, y)) in before.iter().zip(after.iter()) {
        assert!(x == y, "{name} changed under a --readonly server's console");
    }
}
