//! The streamed index rewrite, checked against the git CLI: whatever index
//! format git left (v2, v3 with extended flags, v4 prefix-compressed, with
//! optional extensions, or a split index), after our commits git's index
//! equals HEAD's tree, carries the files' stat data and keeps the flags
//! of entries it did not change.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use forest_git::{Change, GitForest};

use crate::util::{assert_fsck_clean, git, status, GITIGNORE};

fn write(path: &str, bytes: &str) -> Change {
    Change::Write { path: path.into(), bytes: bytes.as_bytes().to_vec() }
}

/// Paths chosen around git's ordering pitfalls: `a.md` < `a/...` < `a0.md`
/// ('.' < '/' < '0'), a directory named like a file's prefix, non-ASCII.
const TRICKY: [&str; 9] =
    ["a.md", "a-b/x.md", "a/b.md", "a/c/d.md", "a0.md", "ab/c.md", "z/é.md", "z/e.md", "m/very/deep/down/leaf.md"];

fn git_ok(root: &Path, args: &[&str]) -> String {
    let (ok, out, err) = git(root, args);
    assert!(ok, "git {args:?} failed: {err}");
    out
}

/// `git ls-files -s` must list exactly HEAD's blobs (mode, id, stage 0).
fn assert_index_is_head(root: &Path) {
    let tree = git_ok(root, &["-c", "core.quotepath=off", "ls-tree", "-r", "HEAD"]);
    let want: Vec<String> = tree
        .lines()
        .map(|l| {
            let (meta, path) = l.split_once('\t').unwrap();
            let f: Vec<&str> = meta.split(' ').collect();
            format!("{} {} 0\t{path}", f[0], f[2])
        })
        .collect();
    let index = git_ok(root, &["-c", "core.quotepath=off", "ls-files", "-s"]);
    let got: Vec<&str> = index.lines().collect();
    assert_eq!(got, want, "index != HEAD");
    assert_eq!(git_ok(root, &["diff-index", "--cached", "HEAD"]), "", "nothing staged");
    assert_eq!(status(root), "", "work tree, index and HEAD agree");
}

fn forest(root: &Path) -> GitForest {
    let skeleton = vec![
        (".gitignore".to_string(), GITIGNORE.as_bytes().to_vec()),
        ("_index.md".to_string(), b"# master\n".to_vec()),
    ];
    let f = GitForest::init(root, "init", &skeleton).unwrap();
    let base: Vec<Change> = TRICKY.iter().map(|p| write(p, &format!("{p}\n"))).collect();
    f.commit_batch(&base, "base").unwrap().unwrap();
    f
}

/// Changes that touch the first, a middle and the last path, add paths
/// between existing ones and delete one.
fn next_batch() -> Vec<Change> {
    vec![
        write("a.md", "a v2\n"),
        write("a/bb.md", "new between a/b.md and a/c/\n"),
        Change::Delete { path: "ab/c.md".into() },
        write("z/é.md", "é v2\n"),
        write("zz.md", "after everything\n"),
        write("0.md", "before everything\n"),
    ]
}

#[test]
fn commits_keep_every_index_format_git_writes_in_step_with_head() {
    // (name, git commands that put the index into that format)
    let formats: [(&str, &[&[&str]]); 5] = [
        ("v2", &[]),
        ("v4", &[&["update-index", "--index-version", "4"]]),
        ("v3 skip-worktree", &[&["update-index", "--skip-worktree", "m/very/deep/down/leaf.md"]]),
        (
            "optional extensions",
            &[
                &["config", "core.untrackedCache", "true"],
                &["update-index", "--untracked-cache"],
                &["status"],
                &["write-tree"],
            ],
        ),
        ("split index", &[&["update-index", "--split-index"]]),
    ];
    for (name, setup) in formats {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let f = forest(root);
        assert_index_is_head(root);
        for args in setup {
            git_ok(root, args);
        }
        f.commit_batch(&next_batch(), "next").unwrap().unwrap();
        assert_index_is_head(root);
        // Deferred commits and one catch-up go through the same rewrite.
        f.defer_index();
        f.commit_batch(&[write("a/c/e.md", "e\n"), Change::Delete { path: "a0.md".into() }], "d1").unwrap().unwrap();
        f.commit_batch(&[write("a-b/x.md", "x v2\n")], "d2").unwrap().unwrap();
        assert_eq!(f.catch_up_index().unwrap(), 3, "{name}");
        assert_index_is_head(root);
        if name == "v3 skip-worktree" {
            let v = git_ok(root, &["ls-files", "-v", "m/very/deep/down/leaf.md"]);
            assert!(v.starts_with("S "), "{name}: the untouched entry keeps its skip-worktree flag: {v:?}");
        }
        assert_fsck_clean(root);
    }
}

#[test]
fn new_entries_carry_the_files_stat_data() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = forest(root);
    f.commit_batch(&next_batch(), "next").unwrap().unwrap();
    // ls-files --debug prints ctime:s:ns, mtime:s:ns, dev, ino, uid, gid, size.
    let debug = git_ok(root, &["ls-files", "--debug", "zz.md"]);
    let m = std::fs::metadata(root.join("zz.md")).unwrap();
    let want_m = format!("mtime: {}:{}", m.mtime(), m.mtime_nsec());
    let want_c = format!("ctime: {}:{}", m.ctime(), m.ctime_nsec());
    assert!(debug.contains(&want_m) && debug.contains(&want_c), "{debug}\nwant {want_c} / {want_m}");
    assert!(debug.contains(&format!("ino: {}", m.ino() as u32)), "{debug}");
    assert!(debug.contains(&format!("size: {}", m.size())), "{debug}");
    // Clean without re-hashing: `update-index --refresh` finds nothing to fix.
    let (ok, out, err) = git(root, &["update-index", "--refresh"]);
    assert!(ok && out.is_empty(), "{out}{err}");
}

#[test]
fn a_stale_index_lock_of_a_killed_catch_up_is_cleared_by_open() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    {
        let f = forest(root);
        f.defer_index();
        f.commit_batch(&next_batch(), "deferred").unwrap().unwrap();
        // Killed while the catch-up was writing git's lock file.
        std::fs::write(root.join(".git/index.lock"), b"DIRC partial").unwrap();
    }
    let _f = GitForest::open(root).unwrap();
    assert!(!root.join(".git/index.lock").exists());
    assert_index_is_head(root);
}

#[test]
fn a_live_index_lock_without_a_lag_is_not_stolen() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = forest(root);
    // Someone else's git command holds the index (no deferred run of ours).
    std::fs::write(root.join(".git/index.lock"), b"").unwrap();
    let err = f.commit_batch(&next_batch(), "blocked").unwrap_err();
    assert!(err.to_string().contains("index.lock"), "{err}");
    assert!(root.join(".git/index.lock").exists(), "the other writer's lock stays");
    // HEAD moved before the index step: once the other writer is done, the
    // next open brings work tree and index up to HEAD from the journal.
    std::fs::remove_file(root.join(".git/index.lock")).unwrap();
    drop(f);
    let _f = GitForest::open(root).unwrap();
    assert_index_is_head(root);
}
