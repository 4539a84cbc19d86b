//! Operator-facing behaviour: versioned config, symlink policy, what the
//! passports record for the reference engine (rounded mtime, sha256).

use super::*;
use sha2::{Digest, Sha256};

fn head_files(root: &Path) -> Vec<String> {
    git(root, &["show", "--name-only", "--format=", "HEAD"]).lines().map(String::from).collect()
}

#[test]
fn config_is_committed_with_the_first_batch_and_validated() {
    let (d, root, g) = setup();
    let src = d.path().join("src");
    write(&src.join("a.md"), "# A\n\nText.\n");
    let r = do_adopt(&root, &g, &src);
    assert_eq!(r.commits.len(), 1);
    let files = head_files(&root);
    assert!(files.contains(&"_meta/gardener.yaml".to_string()) && files.contains(&"a.md".to_string()), "{files:?}");
    // A hand edit of the config (a new key is kept) lands with the next
    // batch that commits anything.
    let cfg = fs::read_to_string(root.join("_meta/gardener.yaml")).unwrap();
    fs::write(root.join("_meta/gardener.yaml"), format!("{cfg}operator_note: nightly\n")).unwrap();
    // A sync with nothing else to commit makes no config-only commit.
    assert!(do_sync(&root, &g).commits.is_empty());
    write(&src.join("b.md"), "# B\n\nMore.\n");
    let r = do_sync(&root, &g);
    assert_eq!(r.commits.len(), 1);
    let files = head_files(&root);
    assert!(files.contains(&"_meta/gardener.yaml".to_string()) && files.contains(&"b.md".to_string()), "{files:?}");
    assert!(git(&root, &["show", "HEAD:_meta/gardener.yaml"]).contains("operator_note: nightly"));
    // An invalid config is refused before anything is committed.
    let head = git(&root, &["rev-parse", "HEAD"]);
    fs::write(root.join("_meta/gardener.yaml"), "sources:\n- {name: a, uri: /x}\n- {name: a, uri: /y}\n").unwrap();
    let e = sync(&root, &g, None, None, &opts(), &NoProgress, None).unwrap_err();
    assert!(e.to_string().contains("E_CONFIG"), "{e}");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
}

#[test]
fn empty_source_adopt_still_records_the_source() {
    let (d, root, g) = setup();
    let src = d.path().join("empty-src");
    fs::create_dir_all(&src).unwrap();
    let r = do_adopt(&root, &g, &src);
    assert_eq!(r.commits.len(), 1, "the config alone is the batch");
    assert_eq!(head_files(&root), ["_meta/gardener.yaml"]);
    assert!(do_sync(&root, &g).commits.is_empty(), "recorded once");
}

#[test]
fn passports_record_mtime_and_hash_as_the_reference_does() {
    let (d, root, g) = setup();
    let src = d.path().join("src");
    write(&src.join("n.md"), "# N\n\nBody.\n");
    // 1700000000.1875 s: Python's round(st_mtime, 3) gives .188 (truncation .187).
    let t = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 187_500_000);
    fs::File::options().write(true).open(src.join("n.md")).unwrap().set_modified(t).unwrap();
    do_adopt(&root, &g, &src);
    let text = fs::read_to_string(root.join("n.md")).unwrap();
    assert!(text.contains("source_mtime: 1700000000.188\n"), "{text}");
    let sha = hex::encode(Sha256::digest(fs::read(src.join("n.md")).unwrap()));
    assert_eq!(read_node(&root, "n").get_str("source_hash").as_deref(), Some(sha.as_str()));
    // Our own change detection still works from the passports alone.
    fs::remove_dir_all(root.join("_derived")).unwrap();
    let r = do_sync(&root, &g);
    assert_eq!((one(&r).unchanged, one(&r).bytes_read), (1, 0), "fast path from the passports");
    fs::File::options()
        .write(true)
        .open(src.join("n.md"))
        .unwrap()
        .set_modified(t + std::time::Duration::from_secs(5))
        .unwrap();
    let r = do_sync(&root, &g);
    assert_eq!(one(&r).touched, 1, "same bytes: touched, not updated");
    assert!(r.commits.is_empty());
}

#[test]
fn directory_symlinks_are_not_followed_by_default() {
    let (d, root, g) = setup();
    let src = d.path().join("src");
    write(&src.join("docs/a.md"), "# A\n\nOnce.\n");
    std::os::unix::fs::symlink(src.join("docs"), src.join("linked")).unwrap();
    std::os::unix::fs::symlink(src.join("docs/a.md"), src.join("alias.md")).unwrap();
    std::os::unix::fs::symlink(src.join("missing.md"), src.join("dangling.md")).unwrap();
    let r = do_adopt(&root, &g, &src);
    let s = one(&r);
    assert_eq!(s.planted, ["docs/a"], "planted once");
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let msg = |p: &str| s.skipped.iter().find(|e| e.path == p).map(|e| e.message.clone()).unwrap_or_default();
    assert!(msg("linked").contains("not followed"), "{:?}", s.skipped);
    assert!(msg("alias.md").contains("file symlink to docs/a.md"), "{:?}", s.skipped);
    assert!(msg("dangling.md").starts_with("dangling symlink"), "{:?}", s.skipped);
    // Known from now on: not reported again.
    let r = do_sync(&root, &g);
    assert!(one(&r).skipped.is_empty() && one(&r).known_problems == 3, "{:?}", one(&r));

    // follow_symlinks on the source: the linked folder is walked too.
    let cfg = fs::read_to_string(root.join("_meta/gardener.yaml")).unwrap();
    let cfg = cfg.replace("  archive: never\n", "  archive: never\n  follow_symlinks: true\n");
    assert!(cfg.contains("follow_symlinks: true"), "{cfg}");
    fs::write(root.join("_meta/gardener.yaml"), cfg).unwrap();
    let r = do_sync(&root, &g);
    assert_eq!(one(&r).planted, ["linked/a"], "{:?}", one(&r));
}

#[test]
fn file_symlink_to_an_ignored_target_is_planted_under_its_own_path() {
    let (d, root, g) = setup();
    let src = d.path().join("src");
    write(&src.join(".drafts/plan.md"), "# Plan\n\nHidden folder.\n");
    std::os::unix::fs::symlink(src.join(".drafts/plan.md"), src.join("plan.md")).unwrap();
    let outside = d.path().join("outside.md");
    write(&outside, "# Out\n");
    std::os::unix::fs::symlink(&outside, src.join("out.md")).unwrap();
    let r = do_adopt(&root, &g, &src);
    let s = one(&r);
    assert_eq!(s.planted, ["plan"]);
    assert!(s.skipped.iter().any(|e| e.path == "out.md" && e.message.contains("outside")), "{:?}", s.skipped);
}

#[test]
fn known_problem_is_skipped_but_a_targeted_sync_retries_it() {
    let (d, root, g) = setup();
    let src = d.path().join("src");
    write(&src.join("ok.md"), "# Ok\n");
    write(&src.join("broken.docx"), "PK\x03\x04trunc"); // zip magic, 9 bytes, no archive
    let r = do_adopt(&root, &g, &src);
    assert_eq!(one(&r).errors.len(), 1, "{:?}", one(&r).errors);
    let r = do_sync(&root, &g);
    assert!(one(&r).errors.is_empty() && one(&r).known_problems == 1 && one(&r).bytes_read == 0);
    let r = sync(&root, &g, None, Some("broken.docx"), &opts(), &NoProgress, None).unwrap();
    assert_eq!(one(&r).errors.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(), ["broken.docx"]);
    assert_eq!(one(&r).bytes_read, 9, "read once, on request");
}

#[test]
fn record_only_commits_the_config_alone_and_a_later_sync_plants() {
    let (d, root, g) = setup();
    let src = d.path().join("src");
    write(&src.join("a.md"), "# A\n\nText.\n");
    let s = AdoptSpec { record_only: true, ..spec(&src, Some("drive")) };
    let r = adopt(&root, &g, &s, &opts(), &NoProgress, None).unwrap();
    assert_eq!(r.commits.len(), 1);
    assert!(one(&r).planted.is_empty() && one(&r).files_seen == 0, "nothing listed or planted");
    let files: Vec<String> = head_files(&root).into_iter().filter(|l| !l.is_empty()).collect();
    assert_eq!(files, vec!["_meta/gardener.yaml".to_string()]);
    assert!(git(&root, &["show", "HEAD:_meta/gardener.yaml"]).contains("name: drive"));
    // Recording again changes nothing: no second commit.
    let r = adopt(&root, &g, &s, &opts(), &NoProgress, None).unwrap();
    assert!(r.commits.is_empty());
    let r = do_sync(&root, &g);
    assert_eq!(one(&r).planted, vec!["drive/a"]);
}
