//! rclone sources against a real rclone server: `rclone serve webdav` on
//! loopback, with a password, reached through a remote of a throwaway
//! rclone config (`.ci/run` installs Debian's `rclone`). Without `rclone`
//! on PATH these tests print a skip line and return.

use super::*;
use serde_json::Value;
use std::net::TcpStream;
use std::process::{Child, Stdio};

const SECRET: &str = "Tr0ub4dor-forest-secret";

/// A WebDAV server over a folder, killed on drop.
struct Served {
    child: Child,
    port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rclone_installed() -> bool {
    let ok = Command::new("rclone").arg("version").output().is_ok_and(|o| o.status.success());
    if !ok {
        forest_testkit::skip("rclone is not installed (Debian package rclone; .ci/run installs it)");
    }
    ok
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn serve(dir: &Path, port: u16) -> Served {
    let child = Command::new("rclone")
        .args([
            "serve",
            "webdav",
            "--dir-cache-time",
            "0s",
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--user",
            "forest",
            "--pass",
            SECRET,
        ])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Dropping `Served` kills and reaps the server on every path.
    let served = Served { child, port };
    for _ in 0..200 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return served;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("rclone serve webdav did not listen on {port}");
}

/// An rclone config naming the server as remote `drive` (password obscured
/// as rclone stores it).
fn config(dir: &Path, port: u16) -> PathBuf {
    let o = Command::new("rclone").args(["obscure", SECRET]).output().unwrap();
    let obscured = String::from_utf8(o.stdout).unwrap().trim().to_string();
    let p = dir.join("rclone.conf");
    fs::write(
        &p,
        format!(
            "[drive]\ntype = webdav\nurl = http://127.0.0.1:{port}\nvendor = other\nuser = forest\npass = {obscured}\n"
        ),
    )
    .unwrap();
    p
}

fn frc(args: &[&str]) -> Output {
    bin().env_remove("RCLONE_CONFIG").env_remove("FOREST_RCLONE").args(args).output().unwrap()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    })
}

fn src(r: &Value) -> &Value {
    &r["sources"][0]
}

fn count(r: &Value, key: &str) -> usize {
    src(r)[key].as_array().map(|a| a.len()).unwrap_or(0)
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A drive of 3 team folders, a name with a space, an HTML page and a
/// nested forest (never a source).
fn drive(dir: &Path) -> usize {
    let corpus = dir.join("corpus");
    for i in 0..24 {
        write(
            &corpus,
            &format!("team-{}/minutes-{i:02}.md", i % 3),
            &format!("# Minutes {i}\n\nThe crane crew met on day {i} and agreed on load limit {}.\n", 10 + i),
        );
    }
    write(&corpus, "Handbook draft.md", "# Handbook\n\nHow we onboard riggers.\n");
    write(&corpus, "pages/intro.html", "<html><head><title>Intro</title></head><body><p>Welcome.</p></body></html>");
    write(&corpus, "Nested/_index.md", "---\ntype: branch\n---\n# Nested\n");
    write(&corpus, "Nested/A.md", "# A\n\nInside another forest.\n");
    26
}

/// Every file of the forest (work tree and `.git`), the reports and the
/// logs are free of the password, plain or obscured.
fn assert_no_secret(root: &Path, texts: &[&Output], conf: &Path) {
    let obscured = fs::read_to_string(conf).unwrap();
    let obscured = obscured.lines().find_map(|l| l.strip_prefix("pass = ")).unwrap().to_string();
    for e in walkdir::WalkDir::new(root).into_iter().filter_map(|e| e.ok()).filter(|e| e.file_type().is_file()) {
        let bytes = fs::read(e.path()).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(SECRET) && !text.contains(&obscured), "secret in {}", e.path().display());
    }
    let grep = Command::new("git").args(["-C", &f(root), "grep", "-I", "-e", SECRET, "-e", &obscured, "HEAD"]).output();
    assert!(grep.unwrap().stdout.is_empty(), "secret in a committed file");
    for o in texts {
        let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(!all.contains(SECRET) && !all.contains(&obscured), "secret in output: {all}");
    }
}

#[test]
fn rclone_adopt_sync_and_failures_mark_nothing_stale() {
    if !rclone_installed() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let good = drive(d.path());
    let port = free_port();
    let server = serve(d.path(), port);
    let conf = config(d.path(), server.port);
    let fd = tempfile::tempdir().unwrap();
    let root = init(fd.path());
    let c = conf.to_str().unwrap();

    let adopt = frc(&["adopt", "--forest", &f(&root), "rclone:drive:corpus", "--rclone-config", c, "--json"]);
    let r = json_of(&adopt);
    assert_eq!(code(&adopt), 0, "{}", String::from_utf8_lossy(&adopt.stderr));
    assert_eq!(count(&r, "planted"), good, "{:#}", src(&r));
    assert_eq!(count(&r, "errors"), 0, "{:#}", src(&r)["errors"]);
    assert!(!root.join("nested").exists() && !root.join("Nested").exists(), "a nested forest is never a source");
    let p = fs::read_to_string(root.join("team-1/minutes-04.md")).unwrap();
    assert!(p.contains("origin: rclone://drive/corpus/team-1/minutes-04.md"), "{p}");
    assert!(fs::read_to_string(root.join("handbook-draft.md"))
        .unwrap()
        .contains("rclone://drive/corpus/Handbook%20draft.md"));
    let cfg = fs::read_to_string(root.join("_meta/gardener.yaml")).unwrap();
    assert!(cfg.contains("uri: rclone:drive:corpus/") && cfg.contains(&format!("rclone_config: {c}")), "{cfg}");
    assert!(!cfg.contains("source_root"), "no local source_root for a remote source: {cfg}");
    fsck(&root);
    assert_eq!(code(&run(&["validate", "--forest", &f(&root)])), 0);
    assert!(!root.join("_derived/tmp/rclone-listing").exists(), "the listing spill is removed");

    // No change: nothing read, nothing committed.
    let head = git(&root, &["rev-parse", "HEAD"]);
    let quiet = frc(&["sync", "--forest", &f(&root), "--json"]);
    let r = json_of(&quiet);
    assert_eq!(code(&quiet), 0, "{}", String::from_utf8_lossy(&quiet.stderr));
    assert_eq!(src(&r)["unchanged"].as_u64(), Some(good as u64), "{r:#}");
    assert_eq!(src(&r)["bytes_read"].as_u64(), Some(0), "a no-change sync reads nothing");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);

    // New, changed (another size), deleted.
    let corpus = d.path().join("corpus");
    write(&corpus, "team-0/new-note.md", "# New\n\nA new note about slings.\n");
    write(&corpus, "team-1/minutes-01.md", "# Minutes 1\n\nRewritten after the audit of the crane logs.\n");
    fs::remove_file(corpus.join("team-2/minutes-02.md")).unwrap();
    let changed = frc(&["sync", "--forest", &f(&root), "--json"]);
    let r = json_of(&changed);
    assert_eq!(code(&changed), 0, "{}", String::from_utf8_lossy(&changed.stderr));
    assert_eq!(src(&r)["planted"], serde_json::json!(["team-0/new-note"]), "{r:#}");
    assert_eq!(src(&r)["updated"], serde_json::json!(["team-1/minutes-01"]));
    assert_eq!(src(&r)["stale"], serde_json::json!(["team-2/minutes-02"]));
    assert!(fs::read_to_string(root.join("team-1/minutes-01.md")).unwrap().contains("audit of the crane logs"));
    let head = git(&root, &["rev-parse", "HEAD"]);

    // Failures are one clear error each, and mark nothing stale.
    let cfg_path = root.join("_meta/gardener.yaml");
    let missing = bin()
        .env("FOREST_RCLONE", "/nonexistent/rclone")
        .args(["sync", "--forest", &f(&root), "--json"])
        .output()
        .unwrap();
    let r = json_of(&missing);
    assert_eq!(code(&missing), 3, "{}", String::from_utf8_lossy(&missing.stderr));
    assert_eq!(count(&r, "stale"), 0);
    assert!(src(&r)["errors"].to_string().contains("rclone is not installed"), "{r:#}");

    fs::write(&cfg_path, cfg.replace("rclone:drive:", "rclone:nosuch:")).unwrap();
    let unknown = frc(&["sync", "--forest", &f(&root), "--json"]);
    let r = json_of(&unknown);
    assert_eq!(code(&unknown), 3, "{}", String::from_utf8_lossy(&unknown.stderr));
    assert_eq!(count(&r, "stale"), 0);
    assert!(src(&r)["errors"].to_string().contains("no such remote"), "{r:#}");
    fs::write(&cfg_path, &cfg).unwrap();

    drop(server); // the drive goes offline
    let offline = frc(&["sync", "--forest", &f(&root), "--json"]);
    let r = json_of(&offline);
    assert_eq!(code(&offline), 3, "{}", String::from_utf8_lossy(&offline.stderr));
    assert_eq!(count(&r, "stale"), 0, "{r:#}");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "nothing committed");
    // The map works offline.
    assert_eq!(code(&run(&["validate", "--forest", &f(&root)])), 0);
    assert_no_secret(&root, &[&adopt, &quiet, &changed, &missing, &unknown, &offline], &conf);
}

#[test]
fn rclone_reference_bodies_are_read_back_and_verified() {
    if !rclone_installed() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    drive(d.path());
    let server = serve(d.path(), free_port());
    let conf = config(d.path(), server.port);
    let fd = tempfile::tempdir().unwrap();
    let root = init(fd.path());
    let c = conf.to_str().unwrap();
    let o =
        frc(&["adopt", "--forest", &f(&root), "rclone:drive:corpus", "--rclone-config", c, "--content", "reference"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let note = fs::read_to_string(root.join("team-2/minutes-05.md")).unwrap();
    assert!(note.contains("content: reference"), "{note}");

    // FLESH by reference is read live through rclone (config from the source).
    let o = frc(&["fetch", "--forest", &f(&root), "--body", "team-2/minutes-05"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("load limit 15"));

    // The verified copy now sits in the payload cache and is served from
    // there while it still matches the passport's hash.
    write(&d.path().join("corpus"), "team-2/minutes-05.md", "# Minutes 5\n\nTampered.\n");
    let o = frc(&["fetch", "--forest", &f(&root), "--body", "team-2/minutes-05"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("load limit 15"));
    // Changed at the source since the sync, and not cached: refused, not served.
    fs::remove_dir_all(root.join("_derived/payloads")).unwrap();
    let o = frc(&["fetch", "--forest", &f(&root), "--body", "team-2/minutes-05"]);
    assert_ne!(code(&o), 0);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("Tampered"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("changed since the last sync"), "{o:?}");
}
