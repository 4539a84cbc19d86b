//! Deferred index: batch commits leave git's index behind HEAD and one
//! catch-up (or the next open, after a crash) brings it back.

use forest_git::{Change, GitForest, INDEX_BASE_FILE};

use crate::util::{assert_fsck_clean, git, status, GITIGNORE};

fn write(path: &str, bytes: &str) -> Change {
    Change::Write { path: path.into(), bytes: bytes.as_bytes().to_vec() }
}

fn forest(root: &std::path::Path) -> GitForest {
    let skeleton = vec![
        (".gitignore".to_string(), GITIGNORE.as_bytes().to_vec()),
        ("_index.md".to_string(), b"# master\n".to_vec()),
    ];
    let f = GitForest::init(root, "init", &skeleton).unwrap();
    f.commit_batch(&[write("a/old.md", "old\n"), write("a/keep.md", "keep\n")], "base").unwrap().unwrap();
    f
}

/// Paths git's index lists, sorted.
fn indexed(root: &std::path::Path) -> Vec<String> {
    let (_, out, _) = git(root, &["ls-files"]);
    out.lines().map(str::to_string).collect()
}

#[test]
fn deferred_commits_catch_up_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = forest(root);
    f.defer_index();
    f.commit_batch(&[write("a/new.md", "new\n"), write("b/x.md", "x\n")], "one").unwrap().unwrap();
    f.commit_batch(&[Change::Delete { path: "a/old.md".into() }, write("a/keep.md", "kept v2\n")], "two")
        .unwrap()
        .unwrap();
    let marker = root.join(".git").join(INDEX_BASE_FILE);
    assert!(marker.exists(), "the lag is recorded");
    // The index still lists the pre-run state: the deleted path, not the new ones.
    assert_eq!(indexed(root), [".gitignore", "_index.md", "a/keep.md", "a/old.md"]);
    assert_eq!(f.catch_up_index().unwrap(), 4, "two added, one modified, one deleted");
    assert!(!marker.exists());
    assert_eq!(indexed(root), [".gitignore", "_index.md", "a/keep.md", "a/new.md", "b/x.md"]);
    assert_eq!(status(root), "", "index carries stat data: git status is clean without re-hashing");
    assert_eq!(f.catch_up_index().unwrap(), 0, "nothing left to catch up");
    assert_fsck_clean(root);
}

#[test]
fn a_run_that_dies_before_its_catch_up_is_caught_up_by_open() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    {
        let f = forest(root);
        f.defer_index();
        f.commit_batch(&[write("c/a.md", "a\n")], "one").unwrap().unwrap();
        f.commit_batch(&[write("c/b.md", "b\n")], "two").unwrap().unwrap();
        // Dropped without catch_up_index, as a killed process would.
    }
    assert!(root.join(".git").join(INDEX_BASE_FILE).exists());
    let f = GitForest::open(root).unwrap();
    assert!(!root.join(".git").join(INDEX_BASE_FILE).exists());
    assert_eq!(status(root), "");
    assert!(indexed(root).contains(&"c/b.md".to_string()));
    // A normal (not deferred) commit afterwards updates the index as before.
    f.commit_batch(&[write("c/c.md", "c\n")], "three").unwrap().unwrap();
    assert_eq!(status(root), "");
    assert_fsck_clean(root);
}

#[test]
fn an_unreadable_marker_rebuilds_the_index_from_head() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    {
        let f = forest(root);
        f.defer_index();
        f.commit_batch(&[Change::Delete { path: "a/old.md".into() }], "drop").unwrap().unwrap();
    }
    std::fs::write(root.join(".git").join(INDEX_BASE_FILE), "garbage").unwrap();
    let _f = GitForest::open(root).unwrap();
    assert_eq!(indexed(root), [".gitignore", "_index.md", "a/keep.md"]);
    assert_eq!(status(root), "");
}
