//! rclone sources against a real rclone server: `rclone serve webdav` on
//! loopback, with a password, reached through a remote of a throwaway
//! rclone config (`.ci/run` installs Debian's `rclone`). Without `rclone`
//! on PATH these tests print a skip line and return.

use super::*;
use serde_json::Value;
use std::net::TcpStream;
use std::process::{Child, Stdio};

const SECRET: &str = "Tr0ub4dor-forest-secret";

/// An rclone server over a folder, killed on drop.
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

/// The two kinds of server the tests run: rclone's own WebDAV and SFTP.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Webdav,
    Sftp,
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

fn serve(kind: Kind, dir: &Path) -> Served {
    let port = free_port();
    let proto = match kind {
        Kind::Webdav => "webdav",
        Kind::Sftp => "sftp",
    };
    let addr = format!("127.0.0.1:{port}");
    // No directory cache: a sync must see an edit made a second earlier.
    let child = Command::new("rclone")
        .args(["serve", proto, "--dir-cache-time", "0s", "--addr", &addr, "--user", "forest", "--pass", SECRET])
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
    panic!("rclone serve {proto} did not listen on {port}");
}

/// An rclone config naming the server as remote `drive` (password obscured
/// as rclone stores it).
fn config(kind: Kind, dir: &Path, port: u16) -> PathBuf {
    let o = Command::new("rclone").args(["obscure", SECRET]).output().unwrap();
    let obscured = String::from_utf8(o.stdout).unwrap().trim().to_string();
    let remote = match kind {
        Kind::Webdav => format!("type = webdav\nurl = http://127.0.0.1:{port}\nvendor = other\nuser = forest\n"),
        Kind::Sftp => format!(
            "type = sftp\nhost = 127.0.0.1\nport = {port}\nuser = forest\nshell_type = none\n\
             md5sum_command = none\nsha1sum_command = none\n"
        ),
    };
    let p = dir.join("rclone.conf");
    fs::write(&p, format!("[drive]\n{remote}pass = {obscured}\n")).unwrap();
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
    // What a Google Doc looks like through rclone: its DOCX export, listed
    // and read under the exported name.
    fs::copy(fixtures_data("quarterly-review.docx"), corpus.join("Quarterly Plan.docx")).unwrap();
    // A dataset: its title and table name come from the file name.
    write(&corpus, "team-0/crane-budget.csv", "id,item,qty\n1,bolts,4\n2,nuts,9\n");
    28
}

fn fixtures_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../converters/forest-convert/tests/data").join(name)
}

/// Node files of a forest (ids) with their title, summary and body: what
/// must not depend on whether the files came through rclone or not.
fn tree(root: &Path) -> std::collections::BTreeMap<String, String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git" && e.file_name() != "_derived" && e.file_name() != "_meta")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| {
            let text = fs::read_to_string(e.path()).unwrap();
            let kept: Vec<&str> = text
                .lines()
                .filter(|l| !l.starts_with(' ') && !l.starts_with("- "))
                .filter(|l| {
                    !["origin:", "payload:", "source_", "updated:", "created:"].iter().any(|k| l.starts_with(k))
                })
                .collect();
            (e.path().strip_prefix(root).unwrap().display().to_string(), kept.join("\n"))
        })
        .collect()
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

/// A wrapper standing in for rclone whose recursive listing breaks off
/// half-way (fault injection; everything else runs the real rclone).
fn broken_rclone(dir: &Path) -> PathBuf {
    let p = dir.join("rclone-broken.sh");
    fs::write(
        &p,
        "#!/bin/sh\ncase \"$*\" in\n*--recursive*) rclone \"$@\" | head -n 6; exit 5 ;;\n*) exec rclone \"$@\" ;;\nesac\n",
    )
    .unwrap();
    let mut perm = fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    fs::set_permissions(&p, perm).unwrap();
    p
}

/// A wrapper that records each rclone command line before running the real
/// rclone (to count processes), and the file it records into.
fn counting_rclone(dir: &Path) -> (PathBuf, PathBuf) {
    let (p, log) = (dir.join("rclone-counting.sh"), dir.join("rclone-calls.log"));
    let script = format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec rclone \"$@\"\n", log.display());
    fs::write(&p, script).unwrap();
    let mut perm = fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    fs::set_permissions(&p, perm).unwrap();
    (p, log)
}

fn sync_json(root: &Path, env: &[(&str, &str)]) -> (Output, Value) {
    let mut c = bin();
    c.env_remove("RCLONE_CONFIG").env_remove("FOREST_RCLONE");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.args(["sync", "--forest", &f(root), "--json"]).output().unwrap();
    let r = json_of(&o);
    (o, r)
}

/// Adopt, no-change sync, edits (new, changed, deleted, renamed), then
/// failures (a listing cut half-way, no binary, unknown remote, the server
/// gone), over one kind of server.
fn adopt_sync_and_failures(kind: Kind) {
    let d = tempfile::tempdir().unwrap();
    let good = drive(d.path());
    let server = serve(kind, d.path());
    let conf = config(kind, d.path(), server.port);
    let fd = tempfile::tempdir().unwrap();
    let root = init(fd.path());
    let c = conf.to_str().unwrap();

    let (counting, calls) = counting_rclone(d.path());
    let adopt = bin()
        .env_remove("RCLONE_CONFIG")
        .env("FOREST_RCLONE", &counting)
        .args(["adopt", "--forest", &f(&root), "rclone:drive:corpus", "--rclone-config", c, "--json"])
        .output()
        .unwrap();
    let r = json_of(&adopt);
    assert_eq!(code(&adopt), 0, "{kind:?}: {}", String::from_utf8_lossy(&adopt.stderr));
    // The bytes come in one batch download per window, not a process per file.
    let calls = fs::read_to_string(calls).unwrap();
    let called = |cmd: &str| calls.lines().filter(|l| l.split_whitespace().any(|w| w == cmd)).count();
    let (copies, cats) = (called("copy"), called("cat"));
    assert!((1..=2).contains(&copies) && cats == 0, "{kind:?}: {copies} copy and {cats} cat calls:\n{calls}");
    // One listing answers the folder census and the nested-forest probe
    // too: no `lsjson` per folder.
    assert_eq!(called("lsjson"), 1, "{kind:?}: one recursive listing only:\n{calls}");
    assert_eq!(count(&r, "planted"), good, "{kind:?}: {:#}", src(&r));
    assert_eq!(count(&r, "errors"), 0, "{:#}", src(&r)["errors"]);
    assert!(!root.join("nested").exists() && !root.join("Nested").exists(), "a nested forest is never a source");
    let p = fs::read_to_string(root.join("team-1/minutes-04.md")).unwrap();
    assert!(p.contains("origin: rclone://drive/corpus/team-1/minutes-04.md"), "{p}");
    let handbook = fs::read_to_string(root.join("handbook-draft.md")).unwrap();
    assert!(handbook.contains("rclone://drive/corpus/Handbook%20draft.md"), "{handbook}");
    let plan = fs::read_to_string(root.join("quarterly-plan.md")).unwrap();
    assert!(plan.contains("source_path: Quarterly Plan.docx"), "the exported name, honestly: {plan}");
    let budget = fs::read_to_string(root.join("team-0/crane-budget.md")).unwrap();
    assert!(
        budget.contains("crane_budget") && budget.to_lowercase().contains("title: crane budget"),
        "named after the file, not its download slot: {budget}"
    );
    let cfg = fs::read_to_string(root.join("_meta/gardener.yaml")).unwrap();
    assert!(cfg.contains("uri: rclone:drive:corpus/") && cfg.contains(&format!("rclone_config: {c}")), "{cfg}");
    assert!(!cfg.contains("source_root"), "no local source_root for a remote source: {cfg}");
    fsck(&root);
    assert_eq!(code(&run(&["validate", "--forest", &f(&root)])), 0);
    assert!(!root.join("_derived/tmp/rclone-listing").exists(), "the listing spill is removed");
    // The same files adopted from the local folder make the same tree.
    let ld = tempfile::tempdir().unwrap();
    let local = init(ld.path());
    let o = run(&["adopt", "--forest", &f(&local), &d.path().join("corpus").display().to_string()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(tree(&root), tree(&local), "{kind:?}: rclone and local adopts differ");

    // No change: nothing read, nothing committed.
    let head = git(&root, &["rev-parse", "HEAD"]);
    let (quiet, r) = sync_json(&root, &[]);
    assert_eq!(code(&quiet), 0, "{}", String::from_utf8_lossy(&quiet.stderr));
    assert_eq!(src(&r)["unchanged"].as_u64(), Some(good as u64), "{r:#}");
    assert_eq!(src(&r)["bytes_read"].as_u64(), Some(0), "{kind:?}: a no-change sync reads nothing");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);

    // New, changed (another size), deleted, renamed.
    let corpus = d.path().join("corpus");
    write(&corpus, "team-0/new-note.md", "# New\n\nA new note about slings.\n");
    write(&corpus, "team-1/minutes-01.md", "# Minutes 1\n\nRewritten after the audit of the crane logs.\n");
    fs::remove_file(corpus.join("team-2/minutes-02.md")).unwrap();
    fs::create_dir_all(corpus.join("archive")).unwrap();
    fs::rename(corpus.join("team-0/minutes-03.md"), corpus.join("archive/minutes-03.md")).unwrap();
    let (changed, r) = sync_json(&root, &[]);
    assert_eq!(code(&changed), 0, "{}", String::from_utf8_lossy(&changed.stderr));
    assert_eq!(src(&r)["planted"], serde_json::json!(["team-0/new-note"]), "{kind:?}: {r:#}");
    assert_eq!(src(&r)["updated"], serde_json::json!(["team-1/minutes-01"]));
    assert_eq!(src(&r)["stale"], serde_json::json!(["team-2/minutes-02"]));
    assert_eq!(src(&r)["moved"][0]["from"], "team-0/minutes-03", "{r:#}");
    assert_eq!(src(&r)["moved"][0]["to"], "archive/minutes-03");
    assert!(fs::read_to_string(root.join("team-1/minutes-01.md")).unwrap().contains("audit of the crane logs"));
    let head = git(&root, &["rev-parse", "HEAD"]);

    // Failures are one clear error each, and mark nothing stale.
    let broken = broken_rclone(d.path());
    fs::remove_file(corpus.join("team-1/minutes-07.md")).unwrap();
    let (cut, r) = sync_json(&root, &[("FOREST_RCLONE", broken.to_str().unwrap())]);
    // a listing that fails before any file is seen skips the whole source:
    // with the only source skipped nothing is synced, an error (not partial)
    assert_eq!(code(&cut), 1, "{}", String::from_utf8_lossy(&cut.stderr));
    assert_eq!(count(&r, "stale"), 0, "a listing cut half-way marks nothing stale: {r:#}");
    let (missing, r) = sync_json(&root, &[("FOREST_RCLONE", "/nonexistent/rclone")]);
    assert_eq!(code(&missing), 1, "{}", String::from_utf8_lossy(&missing.stderr));
    assert_eq!(count(&r, "stale"), 0);
    assert!(src(&r)["errors"].to_string().contains("rclone is not installed"), "{r:#}");
    let cfg_path = root.join("_meta/gardener.yaml");
    fs::write(&cfg_path, cfg.replace("rclone:drive:", "rclone:nosuch:")).unwrap();
    let (unknown, r) = sync_json(&root, &[]);
    assert_eq!(code(&unknown), 1, "{}", String::from_utf8_lossy(&unknown.stderr));
    assert_eq!(count(&r, "stale"), 0);
    assert!(src(&r)["errors"].to_string().contains("no such remote"), "{r:#}");
    fs::write(&cfg_path, &cfg).unwrap();
    drop(server); // the drive goes offline
    let (offline, r) = sync_json(&root, &[]);
    assert_eq!(code(&offline), 1, "{}", String::from_utf8_lossy(&offline.stderr));
    assert_eq!(count(&r, "stale"), 0, "{r:#}");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "nothing committed");
    // The map works offline.
    assert_eq!(code(&run(&["validate", "--forest", &f(&root)])), 0);
    assert_no_secret(&root, &[&adopt, &quiet, &changed, &cut, &missing, &unknown, &offline], &conf);
}

#[test]
fn rclone_webdav_adopt_sync_and_failures_mark_nothing_stale() {
    if rclone_installed() {
        adopt_sync_and_failures(Kind::Webdav);
    }
}

#[test]
fn rclone_sftp_adopt_sync_and_failures_mark_nothing_stale() {
    if rclone_installed() {
        adopt_sync_and_failures(Kind::Sftp);
    }
}

#[test]
fn rclone_reference_bodies_are_read_back_and_verified() {
    if !rclone_installed() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    drive(d.path());
    let server = serve(Kind::Webdav, d.path());
    let conf = config(Kind::Webdav, d.path(), server.port);
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
