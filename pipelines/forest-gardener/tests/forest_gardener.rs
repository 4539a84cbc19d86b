//! Integration tests of the Gardener against real git repositories, real
//! SQLite and temp source trees.

use forest_derived::catalog::{read_all_rows, reindex, CATALOG_PATH, TRAILS_PATH};
use forest_derived::init::init_forest;
use forest_gardener::{adopt, sync, AdoptSpec, GardenReport, NoProgress, RunOptions, SourceReport};
use forest_git::GitForest;
use forest_model::lint::lint_forest;
use forest_model::node::Node;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    if let Ok(p) = std::env::var("FOREST_FIXTURES") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures")
}

fn setup() -> (tempfile::TempDir, PathBuf, GitForest) {
    std::env::set_var("FOREST_TODAY", "2026-11-29");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("forest");
    let git = init_forest(&root, "Test").unwrap();
    (dir, root, git)
}

fn opts() -> RunOptions {
    RunOptions::default()
}

fn do_adopt(root: &Path, git: &GitForest, src: &Path) -> GardenReport {
    adopt(root, git, &spec(src, None), &opts(), &NoProgress, None).unwrap()
}

fn spec(src: &Path, name: Option<&str>) -> AdoptSpec {
    AdoptSpec {
        source: src.to_str().unwrap().to_string(),
        name: name.map(String::from),
        dest: name.map(String::from),
        ..Default::default()
    }
}

fn do_sync(root: &Path, git: &GitForest) -> GardenReport {
    sync(root, git, None, None, &opts(), &NoProgress, None).unwrap()
}

fn one(r: &GardenReport) -> &SourceReport {
    assert_eq!(r.sources.len(), 1);
    &r.sources[0]
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(root).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fsck(root: &Path) {
    let out = Command::new("git").args(["fsck", "--strict", "--no-dangling"]).current_dir(root).output().unwrap();
    assert!(
        out.status.success(),
        "fsck: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn commit_count(root: &Path) -> usize {
    git(root, &["rev-list", "--count", "HEAD"]).trim().parse().unwrap()
}

fn read_node(root: &Path, id: &str) -> Node {
    Node::parse(&fs::read_to_string(root.join(format!("{id}.md"))).unwrap()).unwrap()
}

fn write(p: &Path, text: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn set_mtime(p: &Path, secs: i64) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs as u64);
    let f = fs::File::options().write(true).open(p).unwrap();
    f.set_modified(t).unwrap();
}

#[test]
fn adopt_dump_ingest_then_noop_sync() {
    let (_d, root, g) = setup();
    let src = fixtures().join("dump-ingest");
    let r = do_adopt(&root, &g, &src);
    let s = one(&r);
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let n_files =
        walkdir::WalkDir::new(&src).into_iter().filter_map(|e| e.ok()).filter(|e| e.file_type().is_file()).count();
    assert_eq!(s.planted.len(), n_files, "one node per supported file");
    assert_eq!(r.commits.len(), 1, "one commit for the batch");
    // Mirrored branches: every source folder has a branch.
    for e in
        walkdir::WalkDir::new(&src).min_depth(1).into_iter().filter_map(|e| e.ok()).filter(|e| e.file_type().is_dir())
    {
        let rel = e.path().strip_prefix(&src).unwrap().to_str().unwrap().to_string();
        assert!(root.join(&rel).join("_index.md").is_file(), "branch for {rel}");
    }
    let lint = lint_forest(&root);
    assert_eq!(lint.errors, 0, "{:#?}", lint.issues);
    fsck(&root);
    let files = git(&root, &["ls-files"]);
    assert!(files.lines().all(|l| l.ends_with(".md") || l == ".gitignore" || l == "_meta/gardener.yaml"), "{files}");
    assert!(git(&root, &["status", "--porcelain", "--untracked-files=no"]).is_empty());
    // Datasets carry a queryable payload with the hash recorded.
    let ds = read_node(&root, "sales/orders-batch-00");
    assert_eq!(ds.get_str("type").unwrap(), "dataset");
    let conn = rusqlite::Connection::open(root.join("sales/orders-batch-00.db")).unwrap();
    let n: i64 = conn.query_row("SELECT COUNT(*) FROM orders_batch_00", [], |r| r.get(0)).unwrap();
    assert!(n > 0);
    let commits = commit_count(&root);
    let r2 = do_sync(&root, &g);
    let s2 = one(&r2);
    assert_eq!(s2.unchanged, n_files);
    assert!(s2.planted.is_empty() && s2.updated.is_empty() && s2.stale.is_empty() && s2.errors.is_empty());
    assert_eq!(s2.bytes_read, 0, "no-change sync reads no file");
    assert_eq!(commit_count(&root), commits, "no-change sync makes no commit");
}

#[test]
fn readopt_is_a_sync_and_plants_no_duplicates() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    write(&src.path().join("a/one.md"), "# One\n\nFirst note.\n");
    do_adopt(&root, &g, src.path());
    let r = do_adopt(&root, &g, src.path());
    let s = one(&r);
    assert!(s.planted.is_empty());
    assert_eq!(s.unchanged, 1);
    let cfg = forest_derived::config::GardenerConfig::load(&root).unwrap();
    assert_eq!(cfg.sources.len(), 1);
}

#[test]
fn source_frontmatter_is_parsed_not_leaked() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    write(
        &src.path().join("docs/spec.md"),
        "---\ntitle: The Real Title\ntags: [Robotics, arm]\naliases: [SPEC-1]\n---\n\nGripper torque is 12 Nm at rest. Tested in March 2026.\n",
    );
    do_adopt(&root, &g, src.path());
    let n = read_node(&root, "docs/spec");
    assert_eq!(n.get_str("title").unwrap(), "The Real Title");
    // The document's own tags first, then keyphrases of its body (issue 26).
    assert_eq!(n.get_list("tags")[..2], ["robotics", "arm"]);
    assert!(n.get_list("tags").len() <= 5);
    assert!(n.get_list("aliases").contains(&"SPEC-1".to_string()));
    assert!(!n.body.contains("tags:"), "{}", n.body);
    let summary = n.get_str("summary").unwrap();
    assert!(summary.starts_with("Gripper torque"), "{summary}");
}

#[test]
fn touched_file_is_hashed_once_then_fast_path() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    let f = src.path().join("n/a.txt");
    write(&f, "plain text without heading");
    do_adopt(&root, &g, src.path());
    let h1 = read_node(&root, "n/a").body;
    assert!(h1.starts_with("# a\n"), "{h1}");
    set_mtime(&f, 2_000_000_000);
    let s = do_sync(&root, &g);
    assert_eq!(one(&s).touched, 1);
    assert!(one(&s).updated.is_empty());
    let s = do_sync(&root, &g);
    assert_eq!(one(&s).touched, 0);
    assert_eq!(one(&s).unchanged, 1);
    assert_eq!(one(&s).bytes_read, 0);
    // Headingless text keeps the same H1 after an edit.
    write(&f, "edited plain text, still without heading");
    do_sync(&root, &g);
    let h2 = read_node(&root, "n/a").body;
    assert!(h2.starts_with("# a\n\nedited"), "{h2}");
}

#[test]
fn sync_matrix_edit_delete_add_move_touch() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    let s = src.path();
    for i in 0..8 {
        write(
            &s.join(format!("alpha/doc-{i}.md")),
            &format!("# Alpha {i}\n\nAlpha document number {i} about widgets.\n"),
        );
    }
    for i in 0..4 {
        write(&s.join(format!("beta/item-{i}.txt")), &format!("Beta item {i} covers gadgets in depth.\n"));
    }
    do_adopt(&root, &g, s);
    // A person links to a file that will move, edits one summary and adds notes.
    let mut linker = read_node(&root, "alpha/doc-7");
    linker.set(
        "links",
        forest_model::yaml::parse_mapping("l:\n- rel: related-to\n  target: alpha/doc-0\n  confidence: 0.3\n").unwrap()
            ["l"]
            .clone(),
    );
    fs::write(root.join("alpha/doc-7.md"), linker.to_text()).unwrap();
    let mut edited = read_node(&root, "alpha/doc-1");
    edited.set_str("summary", "Hand-written scent about widgets.");
    edited.body.push_str("\n## Notes\n\nKeep me.\n");
    fs::write(root.join("alpha/doc-1.md"), edited.to_text()).unwrap();
    git(&root, &["add", "-A", "alpha"]);
    git(&root, &["-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qm", "hand edits"]);
    let mut trails = forest_catalog::Trails::open(&root.join(TRAILS_PATH)).unwrap();
    trails.deposit(&["alpha/doc-0".to_string()], 0.6, "").unwrap();
    drop(trails);
    let before = commit_count(&root);

    // edit 5, delete 2, add 3, move 2 (one across folders), touch 1
    for i in 1..=5 {
        write(
            &s.join(format!("alpha/doc-{i}.md")),
            &format!("# Alpha {i}\n\nRevised alpha document {i}, now about sprockets.\n"),
        );
    }
    fs::remove_file(s.join("beta/item-0.txt")).unwrap();
    fs::remove_file(s.join("beta/item-1.txt")).unwrap();
    for i in 0..3 {
        write(&s.join(format!("gamma/new-{i}.md")), &format!("# New {i}\n\nFresh material {i}.\n"));
    }
    fs::rename(s.join("alpha/doc-0.md"), s.join("gamma/doc-0-moved.md")).unwrap();
    fs::rename(s.join("beta/item-2.txt"), s.join("beta/item-2-renamed.txt")).unwrap();
    set_mtime(&s.join("alpha/doc-6.md"), 2_000_000_000);

    let r = do_sync(&root, &g);
    let x = one(&r);
    assert!(x.errors.is_empty(), "{:?}", x.errors);
    let mut updated = x.updated.to_vec();
    updated.sort();
    assert_eq!(updated, (1..=5).map(|i| format!("alpha/doc-{i}")).collect::<Vec<_>>());
    assert_eq!(x.planted, vec!["gamma/new-0", "gamma/new-1", "gamma/new-2"]);
    let mut stale = x.stale.clone();
    stale.sort();
    assert_eq!(stale, vec!["beta/item-0", "beta/item-1"]);
    assert_eq!(x.moved.len(), 2);
    assert_eq!(x.touched, 1);
    assert_eq!(commit_count(&root), before + 1, "one commit for the whole batch");
    // The move across folders is a transplant: aliases, moved_from, backlinks, heat.
    let m = x.moved.iter().find(|m| m.from == "alpha/doc-0").unwrap();
    assert_eq!(m.to, "gamma/doc-0-moved");
    assert!(!root.join("alpha/doc-0.md").exists());
    let moved = read_node(&root, "gamma/doc-0-moved");
    assert!(moved.get_list("aliases").contains(&"alpha/doc-0".to_string()));
    assert_eq!(moved.get_list("moved_from"), vec!["alpha/doc-0"]);
    let linker = read_node(&root, "alpha/doc-7");
    assert_eq!(linker.links()[0].target, "gamma/doc-0-moved");
    assert_eq!(linker.links()[0].confidence, Some(0.3));
    let trails = forest_catalog::Trails::open(&root.join(TRAILS_PATH)).unwrap();
    assert!(trails.get_heat("gamma/doc-0-moved", None).unwrap() > 0.5);
    assert!(!read_node(&root, "alpha/_index").body.contains("[[alpha/doc-0]]"));
    assert!(read_node(&root, "gamma/_index").body.contains("[[gamma/doc-0-moved]]"));
    // Hand-edited summary kept and reported; notes survive.
    let e = read_node(&root, "alpha/doc-1");
    assert_eq!(e.get_str("summary").unwrap(), "Hand-written scent about widgets.");
    assert!(e.body.contains("sprockets") && e.body.contains("## Notes\n\nKeep me."));
    assert_eq!(x.summary_stale, vec!["alpha/doc-1"]);
    // Machine-written summaries follow the source.
    assert!(read_node(&root, "alpha/doc-2").get_str("summary").unwrap().contains("sprockets"));
    // Stale passports are kept, marked, never deleted.
    assert_eq!(read_node(&root, "beta/item-0").get_str("source_state").as_deref(), Some("vanished"));
    let lint = lint_forest(&root);
    assert_eq!(lint.errors, 0, "{:#?}", lint.issues);
    fsck(&root);
    // A second sync settles: nothing to do, no commit, stale still reported.
    let r2 = do_sync(&root, &g);
    let y = one(&r2);
    assert!(y.updated.is_empty() && y.planted.is_empty() && y.moved.is_empty());
    assert_eq!(y.stale.len(), 2);
    assert_eq!(commit_count(&root), before + 1);
    // The incrementally maintained catalog equals a fresh reindex.
    let inc = forest_catalog::Catalog::open(&root.join(CATALOG_PATH)).unwrap().dump().unwrap();
    fs::remove_dir_all(root.join("_derived")).unwrap();
    reindex(&root).unwrap();
    let fresh = forest_catalog::Catalog::open(&root.join(CATALOG_PATH)).unwrap().dump().unwrap();
    assert_eq!(inc, fresh);
}

#[test]
fn mass_stale_guard_and_missing_root() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    for i in 0..4 {
        write(&src.path().join(format!("d/f{i}.md")), &format!("# F{i}\n\nText {i}.\n"));
    }
    do_adopt(&root, &g, src.path());
    for i in 0..3 {
        fs::remove_file(src.path().join(format!("d/f{i}.md"))).unwrap();
    }
    let r = do_sync(&root, &g);
    assert!(one(&r).stale.is_empty());
    assert!(one(&r).errors.iter().any(|e| e.message.contains("refusing to mark 3 of 4")));
    let allow = RunOptions { allow_mass_stale: true, ..opts() };
    let r = sync(&root, &g, None, None, &allow, &NoProgress, None).unwrap();
    assert_eq!(one(&r).stale.len(), 3);
    // A source root that cannot be listed marks nothing stale.
    let moved_away = src.path().with_extension("gone");
    fs::rename(src.path(), &moved_away).unwrap();
    let r = do_sync(&root, &g);
    assert!(one(&r).errors.iter().any(|e| e.message.contains("nothing marked stale")));
    assert_eq!(read_node(&root, "d/f3").get_str("source_state"), None);
    fs::rename(&moved_away, src.path()).unwrap();
}

#[test]
fn bad_input_costs_one_line_each_and_the_rest_lands() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    let s = src.path();
    write(&s.join("ok/good.md"), "# Good\n\nThis one lands.\n");
    write(&s.join("ok/empty.txt"), "");
    write(&s.join("ok/big.txt"), &"x".repeat(4096));
    // Binary bytes: text under a wrong extension is converted by content since converters v2.
    fs::write(s.join("ok/fake.db"), b"\0\x01not sqlite\xff\xfe\0\x02").unwrap();
    fs::write(s.join("ok/blob.bin"), b"\0\x01\x02binary\xff\0").unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("secret.md"), "# Secret\n");
    std::os::unix::fs::symlink(outside.path().join("secret.md"), s.join("ok/escape.md")).unwrap();
    std::os::unix::fs::symlink(s.join("ok"), s.join("ok/loop")).unwrap();
    use std::os::unix::ffi::OsStrExt;
    let bad_name = std::ffi::OsStr::from_bytes(b"ok/bad-\xff-name.md");
    fs::write(s.join(bad_name), "# Bad name\n").unwrap();
    // An unreadable file only exists for a non-root user (root reads through 0o000).
    let uid = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout).unwrap();
    let as_root = uid.trim() == "0";
    if !as_root {
        use std::os::unix::fs::PermissionsExt;
        write(&s.join("ok/locked.md"), "# Locked\n");
        fs::set_permissions(s.join("ok/locked.md"), fs::Permissions::from_mode(0o000)).unwrap();
    } else {
        println!("NOTE: running as root: the unreadable-file case cannot be produced and is not checked");
    }
    fs::write(root.join("_meta/gardener.yaml"), "max_file_bytes: 1024\n").unwrap();
    let r = do_adopt(&root, &g, s);
    let x = one(&r);
    assert_eq!(x.planted, vec!["ok/good"]);
    assert_eq!(x.unsupported, vec!["ok/blob.bin"]);
    // Skips (a reason, never partial) and failures (partial) are one line each.
    let line_for = |needle: &str| x.errors.iter().chain(x.skipped.iter()).filter(|e| e.path.contains(needle)).count();
    assert_eq!(line_for("empty.txt"), 1);
    assert_eq!(line_for("big.txt"), 1);
    assert_eq!(line_for("fake.db"), 1);
    assert_eq!(line_for("escape.md"), 1);
    assert_eq!(line_for("loop"), 1);
    assert_eq!(line_for("bad-"), 1);
    if !as_root {
        assert_eq!(line_for("locked.md"), 1);
    }
    for skip in ["empty.txt", "big.txt", "escape.md", "loop", "bad-"] {
        assert!(x.skipped.iter().any(|e| e.path.contains(skip)), "{skip}: {:?}", x.skipped);
    }
    assert!(x.errors.iter().any(|e| e.path.contains("fake.db")), "{:?}", x.errors);
    assert!(r.partial(), "exit 3");
    assert_eq!(lint_forest(&root).errors, 0);
    fsck(&root);
}

#[test]
fn two_sources_sync_independently() {
    let (_d, root, g) = setup();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write(&a.path().join("x/readme.md"), "# A readme\n\nFrom source A.\n");
    write(&b.path().join("x/readme.md"), "# B readme\n\nFrom source B.\n");
    adopt(&root, &g, &spec(a.path(), Some("alpha")), &opts(), &NoProgress, None).unwrap();
    adopt(&root, &g, &spec(b.path(), Some("beta")), &opts(), &NoProgress, None).unwrap();
    assert!(root.join("alpha/x/readme.md").is_file() && root.join("beta/x/readme.md").is_file());
    write(&b.path().join("x/readme.md"), "# B readme\n\nChanged in B only.\n");
    let r = sync(&root, &g, Some("alpha"), None, &opts(), &NoProgress, None).unwrap();
    assert!(one(&r).updated.is_empty() && one(&r).stale.is_empty());
    let r = do_sync(&root, &g);
    assert_eq!(r.sources.len(), 2);
    let beta = r.sources.iter().find(|s| s.source == "beta").unwrap();
    assert_eq!(beta.updated, vec!["beta/x/readme"]);
    assert!(r.sources.iter().all(|s| s.stale.is_empty()));
    assert_eq!(lint_forest(&root).errors, 0);
}

#[test]
fn targeted_sync_and_dry_run() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    write(&src.path().join("d/a.md"), "# A\n\nOne.\n");
    write(&src.path().join("d/b.md"), "# B\n\nTwo.\n");
    do_adopt(&root, &g, src.path());
    write(&src.path().join("d/a.md"), "# A\n\nOne changed.\n");
    write(&src.path().join("d/b.md"), "# B\n\nTwo changed.\n");
    let dry = RunOptions { dry_run: true, ..opts() };
    let before = fs::read(root.join("d/a.md")).unwrap();
    let r = sync(&root, &g, None, None, &dry, &NoProgress, None).unwrap();
    assert_eq!(one(&r).updated.len(), 2);
    assert_eq!(fs::read(root.join("d/a.md")).unwrap(), before, "dry run writes nothing");
    let r = sync(&root, &g, None, Some("d/a.md"), &opts(), &NoProgress, None).unwrap();
    assert_eq!(one(&r).updated, vec!["d/a"]);
    assert!(read_node(&root, "d/b").body.contains("Two.\n"));
    assert!(sync(&root, &g, None, Some("../etc/passwd"), &opts(), &NoProgress, None).is_err());
}

#[test]
fn manifest_is_rebuilt_from_passports() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    write(&src.path().join("d/a.md"), "# A\n\nOne.\n");
    do_adopt(&root, &g, src.path());
    fs::remove_dir_all(root.join("_derived")).unwrap();
    let r = do_sync(&root, &g);
    assert_eq!(one(&r).unchanged, 1);
    assert!(one(&r).planted.is_empty());
    assert_eq!(read_all_rows(&root).len(), 4, "_index, _meta/schema, d/_index, d/a");
    // A corrupt catalog is detected (integrity check) and rebuilt by the next run.
    fs::write(root.join(CATALOG_PATH), vec![0x5a_u8; 8192]).unwrap();
    let _ = fs::remove_file(root.join("_derived/catalog.db-wal"));
    let _ = fs::remove_file(root.join("_derived/catalog.db-shm"));
    do_sync(&root, &g);
    let cat = forest_catalog::Catalog::open(&root.join(CATALOG_PATH)).unwrap();
    assert_eq!(cat.count_nodes().unwrap(), 4);
    assert!(cat.get("d/a").unwrap().is_some());
}

/// A run vouches for the catalog it leaves; a foreign write voids that, and
/// the next run's full check finds and repairs what the write broke.
#[test]
fn catalog_full_check_runs_after_any_foreign_write() {
    use forest_catalog::verified::is_verified;
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    write(&src.path().join("d/a.md"), "# A\n\nOne.\n");
    write(&src.path().join("d/b.md"), "# B\n\nTwo.\n");
    do_adopt(&root, &g, src.path());
    let db = root.join(CATALOG_PATH);
    assert!(is_verified(&db), "an adopt vouches for its catalog");
    do_sync(&root, &g);
    assert!(is_verified(&db), "so does a sync that started from it");
    // Another writer empties the FTS index: rows and FTS disagree.
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute("DELETE FROM nodes_fts", []).unwrap();
    }
    assert!(!is_verified(&db), "a foreign write changes the files");
    do_sync(&root, &g);
    let cat = forest_catalog::Catalog::open(&db).unwrap();
    let fts: i64 = cat.connection().query_row("SELECT COUNT(*) FROM nodes_fts", [], |r| r.get(0)).unwrap();
    assert_eq!(fts, cat.count_nodes().unwrap(), "the full check saw the damage and rebuilt");
    assert!(fts >= 5);
    drop(cat);
    // Opening the catalog outside a run (as Catalog::open just did) may
    // checkpoint it: the next run checks again, and vouches again.
    do_sync(&root, &g);
    assert!(is_verified(&db));
}

#[test]
fn a_run_rebuilds_a_top_k_index_left_unusable() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    for i in 0..12 {
        write(&src.path().join(format!("d/n{i}.md")), &format!("# Note {i}\n\nPallets and cranes, number {i}.\n"));
    }
    do_adopt(&root, &g, src.path());
    let db = root.join(CATALOG_PATH);
    // A bulk run that died, or another writer: the index is not usable.
    forest_catalog::Catalog::open(&db).unwrap().suspend_topk().unwrap();
    write(&src.path().join("d/new.md"), "# New\n\nA new note about cranes.\n");
    do_sync(&root, &g);
    let cat = forest_catalog::Catalog::open(&db).unwrap();
    assert!(cat.topk_usable().unwrap(), "the sync rebuilt it at its end");
    for q in ["cranes", "pallets number 3", "new note"] {
        assert_eq!(cat.ranked(q, 25).unwrap(), cat.ranked_fts(q, 25).unwrap(), "{q}");
    }
    assert!(cat.ranked("new note", 5).unwrap().iter().any(|(id, _)| id == "d/new"));
}

const PNG: &[u8] = include_bytes!("../../../converters/forest-convert/tests/data/team_photo-2026.png");

fn adopt_with(root: &Path, git: &GitForest, src: &Path, content: &str, archive: &str) -> GardenReport {
    let s = AdoptSpec { content: Some(content.into()), archive: Some(archive.into()), ..spec(src, None) };
    adopt(root, git, &s, &opts(), &NoProgress, None).unwrap()
}

#[test]
fn content_cached_moves_flesh_out_of_git_and_sync_regenerates_it() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    write(&src.path().join("ops/runbook.md"), "# Runbook\n\nRestart the conveyor controller before the shift.\n");
    write(
        &src.path().join("ops/page.html"),
        "<html><head><title>Page</title></head><body><p>Crane limits.</p></body></html>",
    );
    let r = adopt_with(&root, &g, src.path(), "cached", "never");
    assert_eq!(one(&r).planted.len(), 2, "{:?}", one(&r).errors);
    let n = read_node(&root, "ops/runbook");
    assert_eq!(n.get_str("content").as_deref(), Some("cached"));
    assert_eq!(n.body.trim(), "# Runbook");
    let cached = root.join("_derived/bodies/ops/runbook.md");
    assert!(fs::read_to_string(&cached).unwrap().contains("conveyor controller"));
    assert!(!git(&root, &["ls-files"]).contains("_derived"), "FLESH cache is never in git");
    // Summary still derived from the full text.
    assert!(n.get_str("summary").unwrap().contains("conveyor"), "{:?}", n.get_str("summary"));
    let body = forest_derived::tiers::read_body(&root, None, "ops/runbook").unwrap();
    assert!(body.contains("Restart the conveyor"));
    // A purged cache is a clear error; the map keeps working.
    fs::remove_dir_all(root.join("_derived/bodies")).unwrap();
    let e = forest_derived::tiers::read_body(&root, None, "ops/runbook").unwrap_err().to_string();
    assert!(e.contains("E_NOT_FOUND") && e.contains("forest sync"), "{e}");
    assert_eq!(lint_forest(&root).errors, 0);
    // An edit at the source rewrites the cached body, never the stub.
    write(&src.path().join("ops/runbook.md"), "# Runbook\n\nRestart the conveyor and log the fault code.\n");
    let r = do_sync(&root, &g);
    assert_eq!(one(&r).updated, vec!["ops/runbook"]);
    assert!(fs::read_to_string(&cached).unwrap().contains("fault code"));
    assert_eq!(read_node(&root, "ops/runbook").body.trim(), "# Runbook");
    fsck(&root);
}

#[test]
fn content_reference_reads_live_text_and_detects_drift() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    write(&src.path().join("notes/shift.txt"), "Night shift handover: pallet jack 4 needs a new battery.\n");
    write(
        &src.path().join("notes/page.html"),
        "<html><head><title>Doc</title></head><body><p>Dock rules.</p></body></html>",
    );
    let r = adopt_with(&root, &g, src.path(), "reference", "never");
    assert_eq!(one(&r).planted.len(), 2);
    assert_eq!(read_node(&root, "notes/shift").get_str("content").as_deref(), Some("reference"));
    // Only passthrough text can be read live; the rest falls back to cached.
    assert_eq!(read_node(&root, "notes/page").get_str("content").as_deref(), Some("cached"));
    let body = forest_derived::tiers::read_body(&root, None, "notes/shift").unwrap();
    assert!(body.contains("pallet jack 4"));
    write(&src.path().join("notes/shift.txt"), "Edited after the sync.\n");
    let e = forest_derived::tiers::read_body(&root, None, "notes/shift").unwrap_err().to_string();
    assert!(e.contains("changed since the last sync"), "{e}");
    fs::remove_file(src.path().join("notes/shift.txt")).unwrap();
    assert_eq!(forest_derived::tiers::read_body(&root, None, "notes/shift").unwrap_err().code(), "E_NOT_FOUND");
}

#[test]
fn bone_stays_at_source_and_is_fetched_through_the_verified_cache() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    let mut png = PNG.to_vec();
    png.extend(std::iter::repeat_n(1u8, 10_000));
    fs::create_dir_all(src.path().join("photos")).unwrap();
    fs::write(src.path().join("photos/Dock Cam.png"), &png).unwrap();
    let r = adopt_with(&root, &g, src.path(), "inline", "never");
    assert_eq!(one(&r).planted, vec!["photos/dock-cam"]);
    let n = read_node(&root, "photos/dock-cam");
    let payload = n.get_str("payload").unwrap();
    assert!(payload.starts_with("file://") && payload.ends_with("Dock%20Cam.png"), "{payload}");
    assert_eq!(n.get_str("payload_type").as_deref(), Some("image"));
    assert_eq!(lint_forest(&root).errors, 0);
    let cache = forest_derived::tiers::open_cache(&root).unwrap();
    let item = forest_derived::tiers::fetch_payload(&root, &cache, "photos/dock-cam");
    let path = PathBuf::from(item.path.expect("fetched"));
    assert!(path.starts_with(root.join("_derived/payloads")));
    assert_eq!(fs::read(&path).unwrap(), png);
    // Changed behind the forest's back: refused, not served.
    fs::remove_dir_all(root.join("_derived/payloads")).unwrap();
    fs::write(src.path().join("photos/Dock Cam.png"), b"not the same bytes").unwrap();
    let item = forest_derived::tiers::fetch_payload(&root, &cache, "photos/dock-cam");
    assert!(item.path.is_none());
    let e = item.error.unwrap();
    assert!(e.contains("hash mismatch"), "{e}");
    // A sync follows the new bytes (payload_hash refreshed), and the fetch works again.
    do_sync(&root, &g);
    let item = forest_derived::tiers::fetch_payload(&root, &cache, "photos/dock-cam");
    assert!(item.error.is_none(), "{:?}", item.error);
}

#[test]
fn archive_always_copies_binaries_into_assets_after_the_commit() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    fs::create_dir_all(src.path().join("inbox")).unwrap();
    fs::write(src.path().join("inbox/Scan.png"), PNG).unwrap();
    write(&src.path().join("inbox/memo.md"), "# Memo\n\nText is never archived.\n");
    let r = adopt_with(&root, &g, src.path(), "inline", "always");
    assert_eq!(one(&r).planted.len(), 2);
    let n = read_node(&root, "inbox/scan");
    let payload = n.get_str("payload").unwrap();
    assert!(payload.starts_with("_assets/") && payload.ends_with("-scan.png"), "{payload}");
    assert_eq!(fs::read(root.join("inbox").join(&payload)).unwrap(), PNG);
    assert!(read_node(&root, "inbox/memo").get_str("payload").is_none());
    assert!(!git(&root, &["ls-files"]).contains("_assets"), "originals are never versioned");
    let l = lint_forest(&root);
    assert_eq!((l.errors, l.warnings), (0, 0), "payload present and hash-clean");
    // A new version at the source is re-archived; the old copy goes.
    let mut v2 = PNG.to_vec();
    v2.extend(b"second version");
    fs::write(src.path().join("inbox/Scan.png"), &v2).unwrap();
    let r = do_sync(&root, &g);
    assert_eq!(one(&r).updated, vec!["inbox/scan"]);
    let p2 = read_node(&root, "inbox/scan").get_str("payload").unwrap();
    assert_ne!(p2, payload);
    assert_eq!(fs::read(root.join("inbox").join(&p2)).unwrap(), v2);
    assert!(!root.join("inbox").join(&payload).exists(), "old archived copy removed");
    let l = lint_forest(&root);
    assert_eq!((l.errors, l.warnings), (0, 0));
    fsck(&root);
}

/// A slow model: records when each call ran and how many were in flight.
struct SlowCurator {
    inflight: std::sync::atomic::AtomicUsize,
    peak: std::sync::atomic::AtomicUsize,
    calls: std::sync::Mutex<Vec<(String, std::time::Instant, std::time::Instant)>>,
}

impl forest_gardener::Curate for SlowCurator {
    fn curate(&self, d: &mut forest_gardener::Draft) -> Result<(), forest_gardener::CurateError> {
        use std::sync::atomic::Ordering::SeqCst;
        let t0 = std::time::Instant::now();
        let now = self.inflight.fetch_add(1, SeqCst) + 1;
        self.peak.fetch_max(now, SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(250));
        self.inflight.fetch_sub(1, SeqCst);
        d.summary = format!("Curated scent for {} from the slow model.", d.title);
        d.scent = "llm".into();
        self.calls.lock().unwrap().push((d.id.clone(), t0, std::time::Instant::now()));
        Ok(())
    }
    fn concurrency(&self) -> usize {
        4
    }
}

struct Clock(std::sync::Mutex<Vec<std::time::Instant>>);
impl forest_gardener::Progress for Clock {
    fn file_done(&self, _bytes: u64) {
        self.0.lock().unwrap().push(std::time::Instant::now());
    }
}

#[test]
fn curate_stage_overlaps_the_next_conversion_at_endpoint_concurrency() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    for i in 0..12 {
        write(&src.path().join(format!("n/doc-{i:02}.md")), &format!("# Doc {i}\n\nBody of document {i}.\n"));
    }
    let hook = SlowCurator { inflight: Default::default(), peak: Default::default(), calls: Default::default() };
    let clock = Clock(Default::default());
    let o = RunOptions { commit_every: 4, ..RunOptions::default() };
    let r = adopt(&root, &g, &spec(src.path(), None), &o, &clock, Some(&hook)).unwrap();
    assert_eq!(one(&r).planted.len(), 12);
    assert!(one(&r).curation_fallbacks.is_empty());
    // Four requests in flight although the CPU pool may have fewer threads.
    let peak = hook.peak.load(std::sync::atomic::Ordering::SeqCst);
    assert!((3..=4).contains(&peak), "in flight: {peak}");
    // Batch 2's files converted while batch 1 was still with the model.
    let calls = hook.calls.lock().unwrap().clone();
    let batch1_end = calls.iter().filter(|(id, ..)| id.as_str() < "n/doc-04").map(|c| c.2).max().unwrap();
    let done = clock.0.lock().unwrap().clone();
    assert_eq!(done.len(), 12);
    // Without overlap batch 2 would convert only after batch 1's last model call.
    assert!(done[4..8].iter().all(|t| *t < batch1_end), "conversion of batch 2 waited for the model");
    assert_eq!(read_node(&root, "n/doc-07").get_str("scent").as_deref(), Some("llm"));
    assert_eq!(commit_count(&root), 4, "init + three batch commits");
    fsck(&root);
}

/// Counts calls; proposes one link to a fixed target the first time it sees an id.
struct CountingCurator(std::sync::Mutex<Vec<String>>);

impl forest_gardener::Curate for CountingCurator {
    fn curate(&self, d: &mut forest_gardener::Draft) -> Result<(), forest_gardener::CurateError> {
        self.0.lock().unwrap().push(d.id.clone());
        d.summary = format!("Model scent of {} written on call {}.", d.title, self.0.lock().unwrap().len());
        d.scent = "llm".into();
        if d.id != "docs/a" {
            d.links.push(forest_gardener::DraftLink {
                rel: "related-to".into(),
                target: "docs/a".into(),
                confidence: 0.3,
                note: None,
            });
        }
        Ok(())
    }
}

#[test]
fn a_sync_recurates_only_the_changed_document() {
    let (_d, root, g) = setup();
    let src = tempfile::tempdir().unwrap();
    for n in ["a", "b", "c"] {
        write(&src.path().join(format!("docs/{n}.md")), &format!("# Doc {n}\n\nOriginal text of {n}.\n"));
    }
    let hook = CountingCurator(Default::default());
    adopt(&root, &g, &spec(src.path(), None), &opts(), &NoProgress, Some(&hook)).unwrap();
    assert_eq!(hook.0.lock().unwrap().len(), 3);
    // A person edits c's summary: it must never be re-curated.
    let mut c = read_node(&root, "docs/c");
    c.set_str("summary", "Hand-written summary of document c.");
    fs::write(root.join("docs/c.md"), c.to_text()).unwrap();
    git(&root, &["commit", "-qam", "hand edit"]);
    hook.0.lock().unwrap().clear();
    write(&src.path().join("docs/b.md"), "# Doc b\n\nRevised text of b with new facts.\n");
    write(&src.path().join("docs/c.md"), "# Doc c\n\nRevised text of c.\n");
    let r = sync(&root, &g, None, None, &opts(), &NoProgress, Some(&hook)).unwrap();
    assert_eq!(one(&r).updated, vec!["docs/b", "docs/c"]);
    assert_eq!(*hook.0.lock().unwrap(), vec!["docs/b"], "only the changed, machine-scented document");
    assert_eq!(one(&r).summary_stale, vec!["docs/c"]);
    let b = read_node(&root, "docs/b");
    assert_eq!(b.get_str("scent").as_deref(), Some("llm"));
    assert!(b.get_str("summary").unwrap().contains("call 1"));
    // The link it had is kept once; the re-proposal of the same target is not doubled.
    let targets: Vec<String> = b.links().into_iter().map(|l| l.target).collect();
    assert_eq!(targets.iter().filter(|t| t.as_str() == "docs/a").count(), 1, "{targets:?}");
    assert_eq!(read_node(&root, "docs/c").get_str("summary").as_deref(), Some("Hand-written summary of document c."));
    fsck(&root);
}

#[path = "forest_gardener/ops.rs"]
mod ops;

#[path = "forest_gardener/bombs.rs"]
mod bombs;

/// The Gardener fills the health cache as it writes: the first health pass
/// after an adopt (and after a sync that edits, adds and deletes) re-reads
/// only what init wrote, and its lint and facts equal a pass from scratch.
#[test]
fn the_health_cache_knows_every_node_the_gardener_wrote() {
    use forest_model::health_facts::{facts, NodeFacts, FACTS_VERSION, HEALTH_CACHE_PATH};
    use forest_model::lint_cache::{lint_forest_cached, CacheStats};
    let (_d, root, g) = setup();
    let init_nodes = forest_model::walk::node_paths(&root).len();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    walkdir::WalkDir::new(fixtures().join("dump-ingest")).into_iter().filter_map(|e| e.ok()).for_each(|e| {
        let rel = e.path().strip_prefix(fixtures().join("dump-ingest")).unwrap();
        if e.file_type().is_file() {
            fs::create_dir_all(src.join(rel).parent().unwrap()).unwrap();
            fs::copy(e.path(), src.join(rel)).unwrap();
        }
    });
    let pass = |cache: &Path| -> (forest_model::lint::LintReport, Vec<(String, String)>, CacheStats) {
        let (report, mut all, stats) = lint_forest_cached(
            &root,
            cache,
            FACTS_VERSION,
            facts,
            Vec::new,
            |mut acc: Vec<(String, String)>, id, f: &NodeFacts| {
                acc.push((id.to_string(), serde_json::to_string(f).unwrap()));
                acc
            },
            |mut a, b| {
                a.extend(b);
                a
            },
        );
        all.sort();
        (report, all, stats)
    };
    let scratch = dir.path().join("scratch.db");
    let check = |what: &str| {
        let (cached, cached_facts, stats) = pass(&root.join(HEALTH_CACHE_PATH));
        let _ = fs::remove_file(&scratch);
        let (fresh, fresh_facts, fresh_stats) = pass(&scratch);
        assert_eq!(fresh_stats.hits, 0);
        assert_eq!(
            (cached.errors, cached.warnings, cached.nodes),
            (fresh.errors, fresh.warnings, fresh.nodes),
            "{what}"
        );
        assert_eq!(cached_facts, fresh_facts, "{what}");
        assert!(stats.misses <= init_nodes, "{what}: {stats:?} re-read, init wrote {init_nodes}");
        assert!(stats.hits + stats.misses == fresh.nodes && stats.hits > 0, "{what}: {stats:?}");
    };
    let r = do_adopt(&root, &g, &src);
    assert!(!one(&r).planted.is_empty());
    check("after adopt");
    // A second pass reads nothing.
    assert_eq!(pass(&root.join(HEALTH_CACHE_PATH)).2.misses, 0);
    // Edit one file, delete another, add a third: the sync's records again.
    let files: Vec<PathBuf> = walkdir::WalkDir::new(&src)
        .sort_by_file_name()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md" || x == "txt"))
        .map(|e| e.into_path())
        .collect();
    assert!(files.len() >= 2);
    write(&files[0], "# Edited\n\nThe first file, edited after the adopt.\n");
    fs::remove_file(&files[1]).unwrap();
    write(&src.join("added/new-note.md"), "# New note\n\nA note added after the adopt.\n");
    let r = do_sync(&root, &g);
    assert!(one(&r).errors.is_empty(), "{:?}", one(&r).errors);
    check("after sync");
}

#[path = "forest_gardener/git_source.rs"]
mod git_source;
