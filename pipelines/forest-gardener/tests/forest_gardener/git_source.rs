//! `git:` sources against real repositories built here with the git CLI
//! (the fixture `dump-ingest` tree, and this project's own `docs/` folder
//! at HEAD), read in place, through a `file://` mirror and from a
//! `git daemon` on loopback.

use super::*;
use forest_gardener::gitsrc::{GitSource, GitSpec};
use std::collections::BTreeMap;

fn sh(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Ada Writer", "-c", "user.email=ada@example.org", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", "2026-11-20T10:00:00+01:00")
        .env("GIT_COMMITTER_DATE", "2026-11-20T10:00:00+01:00")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).into_iter().filter_map(|e| e.ok()).filter(|e| e.file_type().is_file()) {
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::copy(e.path(), dest).unwrap();
    }
}

/// A working repository holding the fixture tree in one commit.
fn fixture_repo(dir: &Path) -> PathBuf {
    let work = dir.join("work");
    fs::create_dir_all(&work).unwrap();
    sh(&work, &["init", "-q", "-b", "main"]);
    copy_tree(&fixtures().join("dump-ingest"), &work);
    sh(&work, &["add", "-A"]);
    sh(&work, &["commit", "-q", "-m", "handbook"]);
    work
}

fn adopt_uri(root: &Path, g: &GitForest, uri: &str) -> GardenReport {
    let spec = AdoptSpec { source: uri.to_string(), ..Default::default() };
    adopt(root, g, &spec, &opts(), &NoProgress, None).unwrap()
}

/// Every node of a forest: id -> (frontmatter without the fields that name
/// the source's location or kind, body).
fn planted(root: &Path) -> BTreeMap<String, (String, String)> {
    let skip = [
        "origin",
        "payload",
        "source_mtime",
        "git_blob",
        "git_commit",
        "git_author",
        "git_date",
        "git_url",
        "source_etag",
    ];
    let mut out = BTreeMap::new();
    for p in forest_model::walk::node_paths(root) {
        let rel = p.trim_end_matches(".md").to_string();
        if rel.starts_with("_meta") {
            continue;
        }
        let n = Node::parse(&fs::read_to_string(root.join(&p)).unwrap()).unwrap();
        let mut front: Vec<String> = n
            .front
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_str().unwrap_or("")))
            .map(|(k, v)| format!("{k:?}={v:?}"))
            .collect();
        front.sort();
        out.insert(rel, (front.join("\n"), n.body.clone()));
    }
    out
}

fn same_tree(a: &Path, b: &Path, what: &str) {
    let (x, y) = (planted(a), planted(b));
    assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>(), "{what}: ids");
    for (id, v) in &x {
        assert_eq!(Some(v), y.get(id), "{what}: {id}");
    }
}

fn adopt_checkout(dir: &Path, work: &Path, sub: Option<&str>) -> (tempfile::TempDir, PathBuf, GitForest) {
    let tree = dir.join("checkout");
    let mut args = vec!["archive", "--format=tar", "HEAD"];
    args.extend(sub);
    let tar = Command::new("git").args(&args).current_dir(work).output().unwrap();
    assert!(tar.status.success());
    fs::create_dir_all(&tree).unwrap();
    let mut x = Command::new("tar").args(["-x", "-C"]).arg(&tree).stdin(std::process::Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(x.stdin.as_mut().unwrap(), &tar.stdout).unwrap();
    assert!(x.wait().unwrap().success());
    let (d, root, g) = setup();
    let src = sub.map_or(tree.clone(), |s| tree.join(s));
    let r = do_adopt(&root, &g, &src);
    assert!(one(&r).errors.is_empty(), "{:?}", one(&r).errors);
    (d, root, g)
}

#[test]
fn git_sources_plant_the_same_tree_as_a_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let work = fixture_repo(dir.path());
    let bare = dir.path().join("bare.git");
    sh(dir.path(), &["clone", "-q", "--bare", work.to_str().unwrap(), bare.to_str().unwrap()]);
    let (_c, checkout, _cg) = adopt_checkout(dir.path(), &work, None);
    let head = sh(&work, &["rev-parse", "HEAD"]);
    let url = format!("file://{}", bare.display());
    for uri in [format!("git:{}", work.display()), format!("git:{}#main", bare.display()), format!("git:{url}")] {
        let (_d, root, g) = setup();
        let r = adopt_uri(&root, &g, &uri);
        let s = one(&r);
        assert!(s.errors.is_empty(), "{uri}: {:?}", s.errors);
        assert_eq!(s.planted.len(), 100, "{uri}");
        same_tree(&checkout, &root, &uri);
        let n = read_node(&root, "notes/budget/note-05");
        assert_eq!(n.get_str("git_commit").as_deref(), Some(head.as_str()), "{uri}");
        let blob = sh(&work, &["rev-parse", "HEAD:notes/budget/note-05.txt"]);
        assert_eq!(n.get_str("git_blob").as_deref(), Some(blob.as_str()));
        assert_eq!(n.get_str("git_author").as_deref(), Some("Ada Writer"));
        assert_eq!(n.get_str("git_date").as_deref(), Some("2026-11-20T10:00:00+01:00"));
        assert!(n.get_str("origin").unwrap().starts_with("git:"));
        assert_eq!(s.blobs_read, 100, "{uri}: every blob read once on adopt");
        let again = one(&do_sync(&root, &g)).clone();
        assert_eq!((again.blobs_read, again.planted.len(), again.updated.len()), (0, 0, 0), "{uri}: no-change sync");
        fsck(&root);
    }
}

#[test]
fn a_real_docs_folder_from_this_repository() {
    // This project's own documentation at HEAD: real prose people wrote.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if Command::new("git")
        .args(["rev-parse", "HEAD:docs"])
        .current_dir(&repo)
        .output()
        .map_or(true, |o| !o.status.success())
    {
        forest_testkit::skip("not inside this project's git repository (a source archive): no docs/ at HEAD");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_c, checkout, _cg) = adopt_checkout(dir.path(), &repo, Some("docs"));
    let (_d, root, g) = setup();
    let canon = fs::canonicalize(&repo).unwrap();
    let r = adopt_uri(&root, &g, &format!("git:{}#HEAD:docs", canon.display()));
    assert!(one(&r).errors.is_empty(), "{:?}", one(&r).errors);
    assert!(one(&r).planted.len() > 20);
    same_tree(&checkout, &root, "docs at HEAD");
}

#[test]
fn git_sync_reads_only_the_changed_blobs_and_a_rename_is_a_move() {
    let dir = tempfile::tempdir().unwrap();
    let work = fixture_repo(dir.path());
    let (_d, root, g) = setup();
    let r = adopt_uri(&root, &g, &format!("git:{}", work.display()));
    assert!(one(&r).errors.is_empty());
    // Two commits touching four files: edit, add, delete, rename.
    write(&work.join("notes/budget/note-05.txt"), "Weekly sync, rewritten.\n\nNew agenda.\n");
    write(&work.join("notes/added-later.md"), "# Added later\n\nA page added after the adopt.\n");
    sh(&work, &["add", "-A"]);
    sh(&work, &["commit", "-q", "-m", "edit and add"]);
    let old_id = "projects/falcon-arm/q1-2026-update-24";
    sh(&work, &["mv", "projects/falcon-arm/q1-2026-update-24.md", "projects/owl-inspection/moved-update.md"]);
    sh(&work, &["rm", "-q", "sales/orders-batch-09.csv"]);
    sh(&work, &["commit", "-q", "-m", "rename and delete"]);
    let s = one(&do_sync(&root, &g)).clone();
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert_eq!(s.blobs_read, 3, "edited, added and renamed files only: {s:?}");
    assert_eq!(s.updated.len(), 1);
    assert_eq!(s.planted.len(), 1);
    assert_eq!(s.stale.len(), 1);
    assert_eq!(s.moved.len(), 1, "{s:?}");
    assert_eq!(s.moved[0].from, old_id);
    let moved = read_node(&root, &s.moved[0].to);
    assert_eq!(moved.get_list("moved_from"), vec![old_id]);
    assert_eq!(moved.get_str("source_path").as_deref(), Some("projects/owl-inspection/moved-update.md"));
    let edited = read_node(&root, "notes/budget/note-05");
    assert_eq!(edited.get_str("git_commit").as_deref(), Some(sh(&work, &["rev-parse", "HEAD"]).as_str()));
    assert!(edited.body.contains("New agenda"));
    let quiet = one(&do_sync(&root, &g)).clone();
    assert_eq!((quiet.blobs_read, quiet.planted.len(), quiet.updated.len(), quiet.moved.len()), (0, 0, 0, 0));
    fsck(&root);
}

#[test]
fn force_push_missing_ref_and_unreachable_url() {
    let dir = tempfile::tempdir().unwrap();
    let work = fixture_repo(dir.path());
    let server = dir.path().join("server.git");
    sh(dir.path(), &["clone", "-q", "--bare", work.to_str().unwrap(), server.to_str().unwrap()]);
    sh(&work, &["remote", "add", "server", server.to_str().unwrap()]);
    let (_d, root, g) = setup();
    let uri = format!("git:file://{}#main", server.display());
    assert!(one(&adopt_uri(&root, &g, &uri)).errors.is_empty());
    // Rewrite the last commit and force-push it.
    write(&work.join("notes/budget/note-05.txt"), "Rewritten history.\n");
    sh(&work, &["commit", "-q", "-a", "--amend", "-m", "handbook, rewritten"]);
    sh(&work, &["push", "-q", "--force", "server", "main"]);
    let s = one(&do_sync(&root, &g)).clone();
    let said: Vec<&String> = s.warnings.iter().filter(|w| w.contains("history rewritten")).collect();
    assert_eq!(said.len(), 1, "{:?}", s.warnings);
    assert_eq!((s.updated.len(), s.blobs_read), (1, 1), "{s:?}");
    // A commit that adds a page, then a force-push that drops it: the page's
    // node stays (marked stale, never deleted), said once.
    write(&work.join("notes/short-lived.md"), "# Short lived\n\nPushed, then rewritten away.\n");
    sh(&work, &["add", "-A"]);
    sh(&work, &["commit", "-q", "-m", "a page"]);
    sh(&work, &["push", "-q", "server", "main"]);
    assert_eq!(one(&do_sync(&root, &g)).planted.len(), 1);
    sh(&work, &["reset", "-q", "--hard", "HEAD~1"]);
    sh(&work, &["push", "-q", "--force", "server", "main"]);
    let s = one(&do_sync(&root, &g)).clone();
    assert_eq!(s.warnings.iter().filter(|w| w.contains("history rewritten")).count(), 1, "{:?}", s.warnings);
    assert_eq!((s.stale.len(), s.blobs_read, s.errors.len()), (1, 0, 0), "{s:?}");
    assert_eq!(read_node(&root, &s.stale[0]).get_str("source_state").as_deref(), Some("vanished"));
    let nodes = planted(&root).len();
    // The branch is deleted on the server: one error, nothing marked stale.
    sh(&work, &["push", "-q", "server", "main:archive"]);
    sh(&server, &["symbolic-ref", "HEAD", "refs/heads/archive"]);
    sh(&work, &["push", "-q", "server", ":main"]);
    let s = one(&do_sync(&root, &g)).clone();
    assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
    assert!(s.errors[0].message.contains("ref 'main' not found"), "{:?}", s.errors);
    assert!(s.unreachable && s.stale.is_empty(), "{s:?}");
    assert_eq!(planted(&root).len(), nodes);
    sh(&work, &["push", "-q", "server", "main"]);
    // The server disappears: one error, nothing marked stale or lost.
    fs::rename(&server, dir.path().join("gone.git")).unwrap();
    let s = one(&do_sync(&root, &g)).clone();
    assert!(s.unreachable, "{s:?}");
    assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
    assert!(s.errors[0].message.contains("cannot fetch"), "{:?}", s.errors);
    assert!(s.stale.is_empty());
    assert_eq!(planted(&root).len(), nodes);
    // A missing ref: one clear error, no node.
    let (_d2, root2, g2) = setup();
    let s = one(&adopt_uri(&root2, &g2, &format!("git:{}#no-such-branch", work.display()))).clone();
    assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
    assert!(s.errors[0].message.contains("ref 'no-such-branch' not found"), "{:?}", s.errors);
    assert!(s.planted.is_empty());
    // A URL nothing answers on: one error, no node, no commit.
    let (_d3, root3, g3) = setup();
    let s = one(&adopt_uri(&root3, &g3, &format!("git:git://127.0.0.1:{}/nobody.git", free_port()))).clone();
    assert_eq!(s.errors.len(), 1, "{:?}", s.errors);
    assert!(s.errors[0].message.contains("cannot fetch git://127.0.0.1:"), "{:?}", s.errors);
    assert!(s.unreachable && s.planted.is_empty());
    assert_eq!(commit_count(&root3), 1);
}

#[test]
fn large_blobs_are_streamed_to_disk() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("r");
    fs::create_dir_all(&work).unwrap();
    sh(&work, &["init", "-q", "-b", "main"]);
    // Over the in-memory limit, so `git cat-file` streams it.
    let size = forest_gardener::gitsrc::BLOB_IN_MEMORY_MAX as usize + 4096;
    let bytes: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(work.join("big.bin"), &bytes).unwrap();
    sh(&work, &["add", "-A"]);
    sh(&work, &["commit", "-q", "-m", "big"]);
    let spec = GitSpec::parse(&format!("git:{}", work.display())).unwrap();
    let src = GitSource::open(dir.path(), &spec).unwrap();
    let oid = sh(&work, &["rev-parse", "HEAD:big.bin"]);
    let dest = dir.path().join("slot/big.bin");
    let h = src.read_blob_to(&oid, &dest, true).unwrap();
    assert_eq!(fs::read(&dest).unwrap(), bytes);
    assert_eq!(h.blake3, format!("blake3:{}", blake3::hash(&bytes).to_hex()));
    assert_eq!(src.blobs_read(), 1);
}

/// A free loopback port (bound, then released for the daemon).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Daemon(std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn git_daemon_on_loopback() {
    // The daemon binary itself: `git daemon` would run it as a child that
    // outlives a kill of `git`.
    let exec = Command::new("git").arg("--exec-path").output().unwrap();
    let daemon = Path::new(String::from_utf8_lossy(&exec.stdout).trim()).join("git-daemon");
    if !daemon.exists() {
        forest_testkit::skip("git daemon is not installed: the loopback server test did not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = fixture_repo(dir.path());
    let base = dir.path().join("served");
    fs::create_dir_all(&base).unwrap();
    sh(dir.path(), &["clone", "-q", "--bare", work.to_str().unwrap(), base.join("handbook.git").to_str().unwrap()]);
    let port = free_port();
    let child = Command::new(&daemon)
        .args(["--export-all", "--reuseaddr", "--listen=127.0.0.1", &format!("--port={port}")])
        .arg(format!("--base-path={}", base.display()))
        .arg(&base)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _daemon = Daemon(child);
    let up = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "git daemon did not listen on {port}");
    let (_c, checkout, _cg) = adopt_checkout(dir.path(), &work, None);
    let (_d, root, g) = setup();
    let r = adopt_uri(&root, &g, &format!("git:git://127.0.0.1:{port}/handbook.git"));
    assert!(one(&r).errors.is_empty(), "{:?}", one(&r).errors);
    same_tree(&checkout, &root, "git daemon");
    // The same passports' git facts as a local bare clone of the commit.
    let (_b, bare_root, bg) = setup();
    let bare = base.join("handbook.git");
    assert!(one(&adopt_uri(&bare_root, &bg, &format!("git:{}", bare.display()))).errors.is_empty());
    same_tree(&bare_root, &root, "git daemon against the bare clone");
    let (served, local) = (git_facts(&root), git_facts(&bare_root));
    assert_eq!(served.len(), 100);
    assert_eq!(served, local);
    let head = sh(&work, &["rev-parse", "HEAD"]);
    assert!(served.values().all(|f| f[1] == head && f[2] == "Ada Writer" && f[0].len() == 40), "{served:?}");
    assert_eq!(one(&do_sync(&root, &g)).blobs_read, 0);
    // A commit pushed to the served repository: the sync through the
    // daemon reads its one blob.
    write(&work.join("notes/budget/note-05.txt"), "Served by the daemon.\n");
    sh(&work, &["commit", "-q", "-a", "-m", "served"]);
    sh(&work, &["push", "-q", bare.to_str().unwrap(), "main"]);
    let s = one(&do_sync(&root, &g)).clone();
    assert_eq!((s.blobs_read, s.updated.len()), (1, 1), "{s:?}");
    assert!(read_node(&root, "notes/budget/note-05").body.contains("Served by the daemon"));
}

/// Every leaf's git passport fields: id -> [blob, commit, author, date].
fn git_facts(root: &Path) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for p in forest_model::walk::node_paths(root) {
        let n = Node::parse(&fs::read_to_string(root.join(&p)).unwrap()).unwrap();
        if let Some(blob) = n.get_str("git_blob") {
            let f = ["git_commit", "git_author", "git_date"].map(|k| n.get_str(k).unwrap_or_default());
            out.insert(p.trim_end_matches(".md").to_string(), [vec![blob], f.to_vec()].concat());
        }
    }
    out
}

/// A Git LFS pointer to `content`, byte for byte as `git lfs` commits it.
fn lfs_pointer(content: &[u8]) -> (String, String) {
    use sha2::Digest;
    let oid = hex::encode(sha2::Sha256::digest(content));
    (format!("version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {}\n", content.len()), oid)
}

#[test]
fn lfs_pointers_become_bone_references_not_text() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("r");
    fs::create_dir_all(&work).unwrap();
    sh(&work, &["init", "-q", "-b", "main"]);
    write(
        &work.join(".gitattributes"),
        "*.png filter=lfs diff=lfs merge=lfs -text\n*.psd filter=lfs diff=lfs merge=lfs -text\n",
    );
    let banner: &[u8] = b"\x89PNG\r\n\x1a\n not really an image, 4 MB in real life";
    let (png, png_oid) = lfs_pointer(banner);
    let (psd, psd_oid) = lfs_pointer(&[7u8; 5000]);
    write(&work.join("media/launch-banner.png"), &png);
    write(&work.join("design/mockup.psd"), &psd);
    // Text that quotes a pointer is still text.
    write(&work.join("docs/lfs.md"), &format!("# Using LFS\n\nA pointer looks like this:\n\n{psd}\nThat is all.\n"));
    sh(&work, &["add", "-A"]);
    sh(&work, &["commit", "-q", "-m", "assets in LFS"]);
    let (_d, root, g) = setup();
    let s = one(&adopt_uri(&root, &g, &format!("git:{}", work.display()))).clone();
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    for (id, oid, size, ty) in
        [("media/launch-banner", &png_oid, banner.len(), Some("image")), ("design/mockup", &psd_oid, 5000, None)]
    {
        let n = read_node(&root, id);
        assert!(n.body.contains("Stored in Git LFS"), "{id}: {}", n.body);
        assert!(!n.body.contains("version https://git-lfs"), "{id}: the pointer is not planted as text");
        assert!(n.get_str("payload").unwrap().starts_with("git:"), "{id}: a reference to the file at the source");
        assert_eq!(n.get_str("payload_hash").as_deref(), Some(oid.as_str()), "{id}: the LFS object's sha256");
        assert_eq!(n.get_str("payload_type").as_deref(), ty, "{id}");
        assert_eq!(n.get_f64("git_lfs_size"), Some(size as f64), "{id}");
    }
    let doc = read_node(&root, "docs/lfs");
    assert!(doc.body.contains("That is all") && doc.get_str("payload").is_none());
    // The file leaves LFS: the reference goes, the content is converted.
    write(&work.join("design/mockup.psd"), "Layer notes, now plain text.\n");
    sh(&work, &["commit", "-q", "-a", "-m", "out of LFS"]);
    let s = one(&do_sync(&root, &g)).clone();
    assert_eq!((s.blobs_read, s.updated.len()), (1, 1), "{s:?}");
    let n = read_node(&root, "design/mockup");
    assert!(n.get_str("payload").is_none() && n.get_f64("git_lfs_size").is_none(), "{:?}", n.front);
    let lint = forest_model::lint::lint_forest(&root);
    assert_eq!(lint.errors, 0, "{:?}", lint.issues);
    fsck(&root);
}

#[test]
fn a_100_mb_binary_is_streamed_and_nothing_else_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("r");
    fs::create_dir_all(&work).unwrap();
    sh(&work, &["init", "-q", "-b", "main"]);
    // 100 MB that no converter claims (compressible, so the test is quick).
    let size = 100 << 20;
    let mut f = std::io::BufWriter::new(fs::File::create(work.join("firmware.bin")).unwrap());
    for i in 0..size / 4096 {
        let block: Vec<u8> = (0..4096).map(|j| ((i * 31 + j * 7) % 251) as u8).collect();
        std::io::Write::write_all(&mut f, &block).unwrap();
    }
    drop(f);
    write(&work.join("notes/readme.md"), "# Firmware\n\nBuilt nightly.\n");
    sh(&work, &["add", "-A"]);
    sh(&work, &["commit", "-q", "-m", "firmware"]);
    let bare = dir.path().join("served.git");
    sh(dir.path(), &["clone", "-q", "--bare", work.to_str().unwrap(), bare.to_str().unwrap()]);
    let (_d, root, g) = setup();
    let s = one(&adopt_uri(&root, &g, &format!("git:file://{}", bare.display()))).clone();
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert_eq!(s.unsupported, vec!["firmware.bin".to_string()], "{s:?}");
    assert_eq!((s.planted.len(), s.blobs_read), (1, 2), "{s:?}");
    assert!(read_node(&root, "notes/readme").body.contains("Built nightly"));
    let slots = root.join(forest_gardener::source::SLOTS_DIR);
    let left = walkdir::WalkDir::new(&slots).into_iter().filter_map(|e| e.ok()).filter(|e| e.file_type().is_file());
    assert_eq!(left.count(), 0, "download slots are emptied after the batch");
    // The binary is remembered: a sync touching the note reads one blob.
    write(&work.join("notes/readme.md"), "# Firmware\n\nBuilt nightly, signed.\n");
    sh(&work, &["commit", "-q", "-a", "-m", "signed"]);
    sh(&work, &["push", "-q", bare.to_str().unwrap(), "main"]);
    let s = one(&do_sync(&root, &g)).clone();
    assert_eq!((s.blobs_read, s.updated.len(), s.errors.len()), (1, 1, 0), "{s:?}");
    fsck(&root);
}
