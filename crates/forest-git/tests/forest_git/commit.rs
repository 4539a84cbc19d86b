//! Batch commit semantics.

use std::fs;
use std::process::Command;

use forest_git::{Change, CommitStage, GitError, GitForest, JOURNAL_FILE};

use crate::util::{assert_fsck_clean, git, ls_tree, status, GITIGNORE};

fn write(path: &str, bytes: &str) -> Change {
    Change::Write { path: path.into(), bytes: bytes.as_bytes().to_vec() }
}

fn skeleton() -> Vec<(String, Vec<u8>)> {
    vec![
        (".gitignore".into(), GITIGNORE.as_bytes().to_vec()),
        ("_index.md".into(), b"---\nid: _index\n---\n\n# T\n".to_vec()),
        ("_meta/schema.md".into(), b"---\nid: _meta/schema\n---\n\n# S\n".to_vec()),
        ("_meta/gardener.yaml".into(), b"sources: []\n".to_vec()),
        ("_meta/notes.yaml".into(), b"x: 1\n".to_vec()),
    ]
}

#[test]
fn first_second_and_noop_commits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = GitForest::init(root, "init: forest 'T' (empty A.5 skeleton)", &skeleton()).unwrap();
    let first = f.head_oid().unwrap().expect("init commits");
    // Non-.md files other than the root .gitignore and the forest's own
    // config are never versioned.
    assert_eq!(ls_tree(root), [".gitignore", "_index.md", "_meta/gardener.yaml", "_meta/schema.md"]);
    assert!(!root.join("_meta/notes.yaml").exists());
    assert_eq!(status(root), "");

    let msg = "gardener(sync): 1 planted, 1 updated\n\na/b\n_index";
    let second = f
        .commit_batch(&[write("a/b.md", "leaf\n"), write("_index.md", "master v2\n")], msg)
        .unwrap()
        .expect("a real change commits");
    assert_eq!(f.head_oid().unwrap(), Some(second));
    let (_, parent, _) = git(root, &["rev-parse", "HEAD^"]);
    assert_eq!(parent.trim(), first.to_string());
    let (_, body, _) = git(root, &["log", "-1", "--format=%B"]);
    assert_eq!(body.trim_end(), msg, "message is passed verbatim");
    assert_eq!(fs::read_to_string(root.join("a/b.md")).unwrap(), "leaf\n");
    assert_eq!(f.read_head_file("_index.md").unwrap().unwrap(), b"master v2\n");
    assert_eq!(status(root), "", "work tree and index follow HEAD");
    assert!(f.is_clean_for(&["a/b.md", "_index.md"]).unwrap());

    // Same content again: same tree, no commit, HEAD unchanged.
    let again = f.commit_batch(&[write("a/b.md", "leaf\n")], "should not exist").unwrap();
    assert_eq!(again, None);
    assert_eq!(f.head_oid().unwrap(), Some(second));
    // Deleting a path absent from HEAD changes nothing either.
    let ghost = f.commit_batch(&[Change::Delete { path: "nope.md".into() }], "ghost").unwrap();
    assert_eq!(ghost, None);

    // Delete removes the file and its now-empty directory.
    f.commit_batch(&[Change::Delete { path: "a/b.md".into() }], "prune(a/b)").unwrap().expect("delete commits");
    assert!(!root.join("a").exists());
    assert_eq!(f.read_head_file("a/b.md").unwrap(), None);
    assert_eq!(status(root), "");
    assert!(!root.join(".git").join(JOURNAL_FILE).exists());
    assert_fsck_clean(root);
}

#[test]
fn non_md_paths_are_filtered() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = GitForest::init(root, "init", &skeleton()).unwrap();
    let err =
        f.commit_batch(&[Change::Write { path: "b/x.db".into(), bytes: vec![0, 1, 2] }], "binary only").unwrap_err();
    assert!(matches!(err, GitError::NothingToCommit));
    assert_eq!(
        err.to_string(),
        "nothing to commit: only .md files and _meta/gardener.yaml, _meta/ranger.yaml are versioned"
    );
    // The forest's config is versioned by any batch.
    let cfg = f.commit_batch(&[write("_meta/ranger.yaml", "half_life_days: 7\n")], "config").unwrap();
    assert!(cfg.is_some());
    assert!(ls_tree(root).contains(&"_meta/ranger.yaml".to_string()));
    // .gitignore is only accepted by init.
    let err = f.commit_batch(&[write(".gitignore", "x\n")], "gi").unwrap_err();
    assert!(matches!(err, GitError::NothingToCommit));

    let mixed = f.commit_batch(&[write("b/x.csv", "a,b\n"), write("b/x.md", "passport\n")], "mixed").unwrap();
    assert!(mixed.is_some());
    let tracked = ls_tree(root);
    assert!(tracked.contains(&"b/x.md".to_string()));
    assert!(!tracked.iter().any(|p| p.ends_with(".csv")));
    assert!(!root.join("b/x.csv").exists());

    let err = f.commit_batch(&[write("../escape.md", "x")], "bad").unwrap_err();
    assert!(matches!(err, GitError::BadPath { .. }), "{err}");
    assert_eq!(f.commit_batch(&[], "empty").unwrap(), None);
}

#[test]
fn forest_inside_outer_repo_gets_its_own_git() {
    let dir = tempfile::tempdir().unwrap();
    let outer = dir.path();
    let (ok, _, err) = git(outer, &["init", "-q"]);
    assert!(ok, "{err}");
    let root = outer.join("forests/f1");
    let f = GitForest::init(&root, "init", &skeleton()).unwrap();
    assert!(root.join(".git").is_dir());
    let (_, top, _) = git(&root, &["rev-parse", "--show-toplevel"]);
    assert_eq!(fs::canonicalize(top.trim()).unwrap(), fs::canonicalize(&root).unwrap());
    drop(f);
    assert!(GitForest::open(&root).is_ok());
    let err = GitForest::open(&root.join("_meta")).unwrap_err();
    assert!(matches!(err, GitError::NotAForest(_)), "{err}");
    let err = GitForest::init(&root, "again", &skeleton()).unwrap_err();
    assert!(matches!(err, GitError::AlreadyInitialized(_)));
}

#[test]
fn ref_moved_by_someone_else_aborts_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let a = GitForest::init(root, "init", &skeleton()).unwrap();
    let b = GitForest::open(root).unwrap();
    let mut raced = None;
    let err = b
        .commit_batch_observed(&[write("late.md", "late\n")], "late", &mut |stage| {
            // Another writer moves the branch after our objects are written.
            if let CommitStage::ObjectsWritten { .. } = stage {
                raced = a.commit_batch(&[write("early.md", "early\n")], "early").unwrap();
            }
        })
        .unwrap_err();
    assert!(matches!(err, GitError::Concurrent(_)), "{err}");
    assert_eq!(a.head_oid().unwrap(), raced);
    assert!(!root.join("late.md").exists(), "work tree untouched");
    assert!(!root.join(".git").join(JOURNAL_FILE).exists());
    assert_eq!(status(root), "");
    assert_fsck_clean(root);
}

#[test]
fn identity_default_and_env_override() {
    // The crash-test helper commits through the library in a child process,
    // so HOME and the FOREST_GIT_* variables can be set without races.
    for (env_name, expect) in [(None, "forest <forest@localhost>"), (Some("Tester"), "Tester <forest@localhost>")] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("f");
        GitForest::init(&root, "init", &skeleton()).unwrap();
        let home = dir.path().join("home");
        fs::create_dir_all(&home).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_forest-git-crashtest"));
        cmd.arg(&root)
            .arg(dir.path().join("paths.txt"))
            .arg("none")
            .arg("3")
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("FOREST_GIT_EMAIL");
        match env_name {
            Some(n) => cmd.env("FOREST_GIT_NAME", n),
            None => cmd.env_remove("FOREST_GIT_NAME"),
        };
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let (_, who, _) = git(&root, &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]);
        assert_eq!(who.trim(), format!("{expect}|{expect}"));
    }
}

#[test]
fn gc_auto_never_fails() {
    let dir = tempfile::tempdir().unwrap();
    let f = GitForest::init(dir.path(), "init", &skeleton()).unwrap();
    let head = f.head_oid().unwrap();
    let outcome = f.gc_auto();
    assert_eq!(outcome, forest_git::GcOutcome::Ran);
    assert_eq!(f.head_oid().unwrap(), head, "gc never commits");
    assert_eq!(serde_json::to_string(&outcome).unwrap(), "\"ran\"", "report spelling");
}

/// A batch big enough for the multi-threaded blob writers: every path gets
/// its own content (and duplicates share one blob), in the order given.
#[test]
fn big_batch_blobs_written_in_parallel_land_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = GitForest::init(root, "init", &skeleton()).unwrap();
    let mut changes: Vec<Change> =
        (0..1500).map(|i| write(&format!("d{}/n{i:05}.md", i % 7), &format!("leaf {i}\n"))).collect();
    // Two paths with equal bytes, and a path changed twice (last wins).
    changes.push(write("same/a.md", "twin\n"));
    changes.push(write("same/b.md", "twin\n"));
    changes.push(write("d0/n00000.md", "leaf 0, second version\n"));
    f.commit_batch(&changes, "big").unwrap().expect("commits");
    for i in [1usize, 749, 1499] {
        let p = format!("d{}/n{i:05}.md", i % 7);
        assert_eq!(f.read_head_file(&p).unwrap().unwrap(), format!("leaf {i}\n").as_bytes(), "{p}");
        assert_eq!(fs::read_to_string(root.join(&p)).unwrap(), format!("leaf {i}\n"));
    }
    assert_eq!(f.read_head_file("d0/n00000.md").unwrap().unwrap(), b"leaf 0, second version\n");
    let (_, a, _) = git(root, &["rev-parse", "HEAD:same/a.md"]);
    let (_, b, _) = git(root, &["rev-parse", "HEAD:same/b.md"]);
    assert_eq!(a, b);
    assert_eq!(ls_tree(root).len(), 4 + 1502, "the skeleton's 4 versioned files and the batch");
    assert_eq!(status(root), "");
    assert_fsck_clean(root);
}

#[test]
fn stored_blobs_commit_like_bytes_and_an_unknown_blob_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let f = GitForest::init(root, "init", &skeleton()).unwrap();
    f.commit_batch(&[write("a/old.md", "old\n"), write("a/keep.md", "keep\n")], "first").unwrap().expect("commits");
    let before = f.head_oid().unwrap();

    // More stored paths than one work-tree chunk (256), beside bytes and a
    // delete in the same batch.
    let mut changes: Vec<Change> = (0..600)
        .map(|i| Change::Stored {
            path: format!("s/n{i:04}.md"),
            blob: f.write_blob(format!("stored {i}\n").as_bytes()).unwrap(),
        })
        .collect();
    changes.push(write("b/bytes.md", "bytes\n"));
    changes.push(Change::Delete { path: "a/old.md".into() });
    let same = f.write_blob(b"keep\n").unwrap();
    changes.push(Change::Stored { path: "a/keep.md".into(), blob: same });
    f.commit_batch(&changes, "stored").unwrap().expect("commits");
    for i in [0usize, 255, 256, 599] {
        let p = format!("s/n{i:04}.md");
        assert_eq!(fs::read_to_string(root.join(&p)).unwrap(), format!("stored {i}\n"), "{p}");
        assert_eq!(f.read_head_file(&p).unwrap().unwrap(), format!("stored {i}\n").as_bytes());
    }
    assert_eq!(f.read_blob(same).unwrap(), b"keep\n");
    assert!(!root.join("a/old.md").exists());
    let (_, log, _) = git(root, &["show", "--name-status", "--format=", "HEAD"]);
    assert!(!log.contains("a/keep.md"), "an unchanged stored path is not in the commit: {log}");
    assert_eq!(status(root), "", "the index knows the stored paths' sizes and stats");
    assert_fsck_clean(root);

    // A blob id that was never stored: nothing moves.
    let head = f.head_oid().unwrap();
    assert_ne!(head, before);
    let ghost = git2::Oid::hash_object(git2::ObjectType::Blob, b"never written\n").unwrap();
    let bad = [write("c/new.md", "new\n"), Change::Stored { path: "c/ghost.md".into(), blob: ghost }];
    assert!(f.commit_batch(&bad, "ghost").is_err());
    assert_eq!(f.head_oid().unwrap(), head);
    assert!(!root.join("c/new.md").exists() && !root.join("c/ghost.md").exists());
    assert_eq!(status(root), "");
}
