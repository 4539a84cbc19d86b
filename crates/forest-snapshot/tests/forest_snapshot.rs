//! Snapshot create/restore against real git and real SQLite: the round trip,
//! the pre-container bare bundle, and (in `forest_snapshot/hostile.rs`)
//! hostile containers, each refused with one error and nothing written.

use forest_snapshot::{create_snapshot, restore_snapshot, CreateOptions, RestoreOptions, SnapshotError};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.org", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn fsck(root: &Path) {
    let out = Command::new("git").args(["fsck", "--strict", "--no-dangling"]).current_dir(root).output().unwrap();
    assert!(out.status.success(), "fsck: {}", String::from_utf8_lossy(&out.stderr));
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

/// A small forest in git (two commits, a branch) with a real SQLite dataset
/// payload beside its node and two `_assets/` files at different depths.
fn forest(dir: &Path) -> PathBuf {
    let root = dir.join("acme");
    fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    write(&root, ".gitignore", b"_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n");
    write(&root, "_index.md", b"---\nid: _index\ntitle: Acme\n---\n# Acme\n");
    write(&root, "_meta/schema.md", b"---\nid: _meta/schema\ntitle: Schema\n---\n# Schema\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "init"]);
    write(
        &root,
        "data/sales.md",
        b"---\nid: data/sales\ntitle: Sales\ntype: dataset\npayload: sales.db\n---\n# Sales\n",
    );
    write(
        &root,
        "media/photo.md",
        b"---\nid: media/photo\ntitle: Photo\ntype: media\npayload: _assets/photo.png\n---\n# Photo\n",
    );
    write(
        &root,
        "media/remote.md",
        b"---\nid: media/remote\ntitle: Remote\npayload: s3://bucket/remote.pdf\n---\n# Remote\n",
    );
    let db = rusqlite::Connection::open(root.join("data/sales.db")).unwrap();
    db.execute_batch(
        "CREATE TABLE sales (region TEXT, amount INTEGER); INSERT INTO sales VALUES ('north', 10), ('south', 20);",
    )
    .unwrap();
    drop(db);
    write(&root, "media/_assets/photo.png", b"\x89PNG\r\n\x1a\nnot really a picture");
    write(&root, "media/_assets/deep/scan.pdf", b"%PDF-1.4 scan");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "plant: sales, photo"]);
    git(&root, &["branch", "keep"]);
    // Never travels: derived caches and hidden names.
    write(&root, "_derived/catalog.db", b"cache");
    root
}

fn snapshot_of(root: &Path, out: &Path) -> forest_snapshot::CreateReport {
    create_snapshot(root, Some(out), &CreateOptions::default()).unwrap()
}

/// Names in the parent of `dest` other than the expected ones (staging leftovers).
fn leftovers(dir: &Path, expected: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !expected.contains(&n.as_str()))
        .collect();
    v.sort();
    v
}

#[test]
fn round_trip_keeps_history_payloads_and_assets() {
    let d = tempfile::tempdir().unwrap();
    let root = forest(d.path());
    let snap = d.path().join("out/acme.forest");
    let c = snapshot_of(&root, &snap);
    assert_eq!((c.payloads, c.payloads_omitted), (3, 0), "{c:?}");
    assert_eq!(
        c.payload_bytes,
        ["data/sales.db", "media/_assets/photo.png", "media/_assets/deep/scan.pdf"]
            .iter()
            .map(|p| fs::metadata(root.join(p)).unwrap().len())
            .sum::<u64>()
    );
    assert_eq!(c.bytes, fs::metadata(&snap).unwrap().len());
    assert_eq!(leftovers(&d.path().join("out"), &["acme.forest"]), Vec::<String>::new());

    // The members are exactly the reference's layout.
    let z = zip::ZipArchive::new(fs::File::open(&snap).unwrap()).unwrap();
    let mut names: Vec<String> = z.file_names().map(|n| n.unwrap().into_owned()).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "README.txt",
            "forest.bundle",
            "payloads/data/sales.db",
            "payloads/media/_assets/deep/scan.pdf",
            "payloads/media/_assets/photo.png"
        ]
    );

    let dest = d.path().join("restored");
    let r = restore_snapshot(&snap, &dest, &RestoreOptions::default()).unwrap();
    assert_eq!(r.format, "container");
    assert_eq!(r.head, git(&root, &["rev-parse", "HEAD"]));
    assert_eq!(git(&dest, &["rev-parse", "HEAD^{tree}"]), git(&root, &["rev-parse", "HEAD^{tree}"]));
    assert_eq!(git(&dest, &["rev-parse", "keep"]), git(&root, &["rev-parse", "keep"]), "every branch travels");
    assert_eq!(git(&dest, &["log", "--format=%s"]), "plant: sales, photo\ninit");
    assert_eq!(git(&dest, &["status", "--porcelain"]), "", "payloads are ignored files, the tree is clean");
    assert_eq!(git(&dest, &["remote"]), "", "the clone's origin (the extracted bundle) is gone");
    fsck(&dest);
    assert_eq!((r.nodes, r.restored_payloads, r.payloads_missing), (5, 3, 0), "{r:?}");
    for p in ["data/sales.db", "media/_assets/photo.png", "media/_assets/deep/scan.pdf"] {
        assert_eq!(fs::read(dest.join(p)).unwrap(), fs::read(root.join(p)).unwrap(), "{p}");
    }
    let db = rusqlite::Connection::open(dest.join("data/sales.db")).unwrap();
    let total: i64 = db.query_row("SELECT sum(amount) FROM sales", [], |r| r.get(0)).unwrap();
    assert_eq!(total, 30);
    assert!(!dest.join("_derived").exists(), "derived caches never travel");
    assert_eq!(leftovers(d.path(), &["acme", "out", "restored"]), Vec::<String>::new());

    // Python's zipfile (what the reference reads with) opens it and every CRC holds.
    if let Ok(o) = Command::new("python3")
        .args(["-c", "import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); print(z.testzip())"])
        .arg(&snap)
        .output()
    {
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "None", "{}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn no_payloads_is_said_and_restores_dead_nodes_counted() {
    let d = tempfile::tempdir().unwrap();
    let root = forest(d.path());
    let c = create_snapshot(&root, None, &CreateOptions { with_payloads: false }).unwrap();
    assert_eq!((c.payloads, c.payloads_omitted, c.payload_bytes), (0, 3, 0));
    let day = forest_model::node::today();
    assert_eq!(
        PathBuf::from(&c.snapshot),
        d.path().join(format!("acme-{day}.forest")),
        "default name beside the forest"
    );
    // An existing empty directory is an acceptable target.
    let dest = d.path().join("empty");
    fs::create_dir(&dest).unwrap();
    let r = restore_snapshot(Path::new(&c.snapshot), &dest, &RestoreOptions::default()).unwrap();
    assert_eq!((r.restored_payloads, r.payloads_missing), (0, 2), "the remote payload is not missing");
    // A second restore into the now non-empty target refuses.
    let e = restore_snapshot(Path::new(&c.snapshot), &dest, &RestoreOptions::default()).unwrap_err();
    assert!(matches!(e, SnapshotError::TargetNotEmpty(_)), "{e}");
}

#[test]
fn a_bare_bundle_restores_as_the_pre_container_format() {
    let d = tempfile::tempdir().unwrap();
    let root = forest(d.path());
    let bundle = d.path().join("acme.bundle");
    git(&root, &["bundle", "create", "-q", bundle.to_str().unwrap(), "--all"]);
    let dest = d.path().join("from-bundle");
    let r = restore_snapshot(&bundle, &dest, &RestoreOptions::default()).unwrap();
    assert_eq!(r.format, "bundle");
    assert_eq!(r.head, git(&root, &["rev-parse", "HEAD"]));
    assert_eq!((r.restored_payloads, r.payloads_missing), (0, 2));
    fsck(&dest);
}

#[test]
fn create_refuses_a_directory_without_git() {
    let d = tempfile::tempdir().unwrap();
    let e = create_snapshot(d.path(), Some(&d.path().join("x.forest")), &CreateOptions::default()).unwrap_err();
    assert_eq!(e.code(), "E_NOT_A_FOREST", "{e}");
    assert!(!d.path().join("x.forest").exists());
}

#[path = "forest_snapshot/hostile.rs"]
mod hostile;
