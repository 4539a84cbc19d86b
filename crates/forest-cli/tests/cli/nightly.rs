//! Operator runs of the binary: a forest cloned elsewhere syncs with its
//! versioned sources; nightly syncs over files that cannot be converted are
//! quiet (nothing on stderr), cheap (0 bytes read) and exit 0 until a file's
//! bytes change; `${VAR}` source uris.

use super::*;
use serde_json::Value;

fn report(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    })
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
}

fn paths(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|x| x["path"].as_str().map(String::from)).collect()).unwrap_or_default()
}

fn clean_source(dir: &Path) -> PathBuf {
    let src = dir.join("drive/shared");
    fs::create_dir_all(src.join("notes")).unwrap();
    fs::write(src.join("notes/alpha.md"), "# Alpha\n\nThe alpha note.\n").unwrap();
    fs::write(src.join("notes/beta.txt"), "Beta plain text.\n").unwrap();
    fs::write(src.join("table.csv"), "a,b\n1,2\n3,4\n").unwrap();
    src
}

#[test]
fn cloned_forest_syncs_with_its_recorded_sources() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = clean_source(d.path());
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // The config is versioned, in the adopt's own commit.
    let in_head = git(&root, &["show", "--name-only", "--format=", "HEAD"]);
    assert!(in_head.lines().any(|l| l == "_meta/gardener.yaml"), "{in_head}");
    assert!(in_head.lines().any(|l| l == "notes/alpha.md"), "{in_head}");
    assert_eq!(git(&root, &["status", "--porcelain"]), "");

    let clone = d.path().join("clone");
    let out = Command::new("git").args(["clone", "-q", &f(&root), &f(&clone)]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let head = git(&clone, &["rev-parse", "HEAD"]);
    let o = run(&["sync", "--forest", &f(&clone), "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(&o);
    let names: Vec<&str> = r["sources"].as_array().unwrap().iter().filter_map(|s| s["source"].as_str()).collect();
    assert_eq!(names, ["default"]);
    let s = &r["sources"][0];
    assert_eq!(s["files_seen"], 3);
    assert_eq!(s["unchanged"], 3, "{r:#}");
    assert!(s["errors"].as_array().unwrap().is_empty(), "{r:#}");
    assert!(strs(&s["planted"]).is_empty(), "{r:#}");
    assert!(strs(&r["commits"]).is_empty());
    // The second run holds the stat fast path: nothing read, nothing committed.
    let o = run(&["sync", "--forest", &f(&clone), "--json"]);
    assert_eq!(code(&o), 0);
    let r = report(&o);
    assert_eq!(r["sources"][0]["bytes_read"], 0, "{r:#}");
    assert!(strs(&r["commits"]).is_empty());
    assert_eq!(git(&clone, &["rev-parse", "HEAD"]), head);
    // A change at the source lands in the clone.
    fs::write(src.join("notes/gamma.md"), "# Gamma\n\nNew.\n").unwrap();
    let r = report(&run(&["sync", "--forest", &f(&clone), "--json"]));
    assert_eq!(strs(&r["sources"][0]["planted"]), ["notes/gamma"]);
}

#[test]
fn nightly_sync_over_broken_files_is_quiet_and_cheap() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("drive");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("good.md"), "# Good\n\nLands.\n").unwrap();
    // Binary bytes without a known magic: neither extension nor content is claimed.
    fs::write(src.join("blob.xyz"), b"\x00\x13\x37\xde\xad\xbe\xef no converter claims this").unwrap();
    fs::write(src.join("empty.txt"), "").unwrap();
    // A zip header and nothing behind it: the bytes agree with .docx, the converter fails.
    fs::write(src.join("broken.docx"), b"PK\x03\x04 truncated zip archive").unwrap();
    std::os::unix::fs::symlink(src.join("gone.md"), src.join("dangling.md")).unwrap();

    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--json"]);
    let r = report(&o);
    let s = &r["sources"][0];
    assert_eq!(strs(&s["planted"]), ["good"]);
    assert_eq!(strs(&s["unsupported"]), ["blob.xyz"]);
    assert_eq!(paths(&s["errors"]), ["broken.docx"], "{r:#}");
    let mut skipped = paths(&s["skipped"]);
    skipped.sort();
    assert_eq!(skipped, ["dangling.md", "empty.txt"], "{r:#}");
    let dangling = s["skipped"].as_array().unwrap().iter().find(|e| e["path"] == "dangling.md").unwrap();
    assert!(dangling["message"].as_str().unwrap().starts_with("dangling symlink"), "{dangling}");
    assert!(!dangling["message"].as_str().unwrap().contains("vanished"));
    assert_eq!(code(&o), 3, "a new failure is partial");

    // The nightly run: nothing new, nothing read, nothing said on stderr.
    let head = git(&root, &["rev-parse", "HEAD"]);
    let o = run(&["sync", "--forest", &f(&root)]);
    assert_eq!(code(&o), 0, "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "", "a default run is quiet");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("4 known problem(s)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run(&["sync", "--forest", &f(&root), "--json"]);
    assert_eq!(code(&o), 0);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    let r = report(&o);
    let s = &r["sources"][0];
    assert_eq!(s["bytes_read"], 0, "{r:#}");
    assert_eq!(s["known_problems"], 4, "{r:#}");
    for key in ["errors", "skipped", "unsupported", "planted"] {
        assert!(s[key].as_array().unwrap().is_empty(), "{key}: {r:#}");
    }
    assert!(strs(&r["commits"]).is_empty());
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "no commit");

    // `forest health` lists the known problems with their reasons.
    let h = report(&run(&["health", "--forest", &f(&root), "--json"]));
    let mut known = paths(&h["known_problems"]);
    known.sort();
    assert_eq!(known, ["blob.xyz", "broken.docx", "dangling.md", "empty.txt"], "{h:#}");

    // New bytes in one broken file: exactly that file is retried.
    fs::write(src.join("broken.docx"), b"PK\x03\x04 still truncated, but other bytes").unwrap();
    let size = fs::metadata(src.join("broken.docx")).unwrap().len();
    let o = run(&["sync", "--forest", &f(&root), "--json"]);
    let r = report(&o);
    let s = &r["sources"][0];
    assert_eq!(paths(&s["errors"]), ["broken.docx"], "{r:#}");
    assert_eq!(s["bytes_read"], size, "{r:#}");
    assert_eq!(s["known_problems"], 3, "{r:#}");
    assert_eq!(code(&o), 3);
    // Fixed bytes: planted, and no longer a known problem.
    fs::remove_file(src.join("broken.docx")).unwrap();
    fs::write(src.join("blob.xyz"), b"\x00\x13\x37\xde\xad changed, still unsupported").unwrap();
    let o = run(&["sync", "--forest", &f(&root), "--json"]);
    let r = report(&o);
    assert_eq!(strs(&r["sources"][0]["unsupported"]), ["blob.xyz"], "{r:#}");
    assert_eq!(code(&o), 0, "unsupported alone is never partial: {r:#}");
    let h = report(&run(&["health", "--forest", &f(&root), "--json"]));
    let mut known = paths(&h["known_problems"]);
    known.sort();
    assert_eq!(known, ["blob.xyz", "dangling.md", "empty.txt"], "a vanished problem is forgotten: {h:#}");
}

#[test]
fn source_uri_with_environment_variable() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    clean_source(d.path());
    let drive = d.path().join("drive");
    let uri = "file://${FOREST_TEST_DRIVE_ROOT}/shared";
    let o = bin().env("FOREST_TEST_DRIVE_ROOT", &drive).args(["adopt", "--forest", &f(&root), uri]).output().unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let cfg = git(&root, &["show", "HEAD:_meta/gardener.yaml"]);
    assert!(cfg.contains("uri: file://${FOREST_TEST_DRIVE_ROOT}/shared"), "recorded as written: {cfg}");
    // Another machine: the drive is mounted elsewhere.
    let moved = d.path().join("mnt");
    fs::create_dir_all(&moved).unwrap();
    fs::rename(&drive, moved.join("drive")).unwrap();
    let o = bin()
        .env("FOREST_TEST_DRIVE_ROOT", moved.join("drive"))
        .args(["sync", "--forest", &f(&root), "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(&o);
    assert_eq!(r["sources"][0]["files_seen"], 3);
    assert!(r["sources"][0]["stale"].as_array().unwrap().is_empty(), "{r:#}");
    // Unset: one clear error naming the variable, nothing written.
    let head = git(&root, &["rev-parse", "HEAD"]);
    let o = bin().env_remove("FOREST_TEST_DRIVE_ROOT").args(["sync", "--forest", &f(&root)]).output().unwrap();
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("FOREST_TEST_DRIVE_ROOT") && err.contains("not set"), "{err}");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
}
