//! The kill test: a child process commits a 10,000-file batch and dies by
//! SIGKILL at named stages or at timed points; afterwards HEAD is the old or
//! the new commit, fsck is clean, and `GitForest::open` leaves the work tree
//! (and index) equal to HEAD for every path of the batch.

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use forest_git::{Change, GitForest, Oid, JOURNAL_FILE};

use crate::util::{assert_fsck_clean, git, status, GITIGNORE};

const BATCH: usize = 10_000;
const OLD_FILES: usize = 2_000;

/// A forest whose HEAD has 2,000 of the batch's paths (old content) and the
/// 50 `gone/` files the batch deletes.
fn setup(root: &Path) -> Oid {
    let skeleton = vec![
        (".gitignore".to_string(), GITIGNORE.as_bytes().to_vec()),
        ("_index.md".to_string(), b"# master\n".to_vec()),
    ];
    let f = GitForest::init(root, "init", &skeleton).unwrap();
    let mut changes: Vec<Change> = (0..OLD_FILES)
        .map(|i| Change::Write { path: format!("d{}/n{i}.md", i % 40), bytes: format!("old {i}\n").into_bytes() })
        .collect();
    changes.extend(
        (0..50).map(|j| Change::Write { path: format!("gone/g{j}.md"), bytes: format!("gone {j}\n").into_bytes() }),
    );
    f.commit_batch(&changes, "old state").unwrap().unwrap()
}

fn spawn(root: &Path, list: &Path, crash_at: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_forest-git-crashtest"))
        .arg(root)
        .arg(list)
        .arg(crash_at)
        .arg(BATCH.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Check every post-crash promise; returns whether HEAD is the new commit.
fn verify_after_crash(root: &Path, old: Oid, list: &Path) -> bool {
    let paths: Vec<String> = fs::read_to_string(list).unwrap().lines().map(str::to_string).collect();
    assert_eq!(paths.len(), BATCH + 50);
    assert_fsck_clean(root);
    let f = GitForest::open(root).unwrap();
    let head = f.head_oid().unwrap().unwrap();
    let is_new = head != old;
    if is_new {
        let (_, parent, _) = git(root, &["rev-parse", "HEAD^"]);
        assert_eq!(parent.trim(), old.to_string(), "new HEAD is the batch commit");
        let (_, subject, _) = git(root, &["log", "-1", "--format=%s"]);
        assert_eq!(subject.trim(), "crash batch");
    }
    for p in &paths {
        let on_disk = fs::read(root.join(p)).ok();
        let at_head = f.read_head_file(p).unwrap();
        assert_eq!(on_disk, at_head, "{p} differs from HEAD after repair");
    }
    assert!(!root.join(".git").join(JOURNAL_FILE).exists());
    assert_eq!(status(root), "", "git status clean after repair");
    assert_eq!(root.join("gone").exists(), !is_new);
    assert_fsck_clean(root);
    is_new
}

fn killed(child: &mut Child) -> bool {
    let st = child.wait().unwrap();
    st.signal() == Some(libc::SIGKILL)
}

/// A forest whose committing child was killed at `crash_at`: the temp dir
/// (keep it alive), the forest root, HEAD before the commit, the path list.
fn killed_at(crash_at: &str) -> (tempfile::TempDir, PathBuf, Oid, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("forest");
    let old = setup(&root);
    let list = dir.path().join("paths.txt");
    let mut child = spawn(&root, &list, crash_at);
    assert!(killed(&mut child), "{crash_at}: child was not killed");
    (dir, root, old, list)
}

#[test]
fn kill_at_named_stages() {
    for (crash_at, expect_new) in [
        ("objects", false),
        ("ref", true),
        ("worktree:5000", true),
        // Every write and delete done, index not yet updated.
        ("worktree:10050", true),
    ] {
        let (_dir, root, old, list) = killed_at(crash_at);
        let is_new = verify_after_crash(&root, old, &list);
        assert_eq!(is_new, expect_new, "HEAD after crash at {crash_at}");
    }
}

#[test]
fn kill_while_the_index_is_written_leaves_a_lock_that_open_clears() {
    let (_dir, root, old, list) = killed_at("worktree:10050");
    // What a SIGKILL inside libgit2's index write leaves behind.
    fs::write(root.join(".git/index.lock"), b"partial index").unwrap();
    assert!(verify_after_crash(&root, old, &list));
    assert!(!root.join(".git/index.lock").exists());
}

#[test]
fn a_branch_lock_left_by_a_killed_commit_is_cleared_by_open() {
    let (_dir, root, old, list) = killed_at("ref");
    // What a SIGKILL inside libgit2's ref update leaves behind (the journal
    // is down before the ref moves). Before, every later commit failed with
    // "branch moved during the commit".
    let (_, branch, _) = git(&root, &["symbolic-ref", "HEAD"]);
    let lock = root.join(".git").join(format!("{}.lock", branch.trim()));
    fs::write(&lock, format!("{old}\n")).unwrap();
    assert!(verify_after_crash(&root, old, &list));
    assert!(!lock.exists(), "open removed the stale branch lock");
    let f = GitForest::open(&root).unwrap();
    let next = f.commit_batch(&[Change::Write { path: "after.md".into(), bytes: b"after\n".to_vec() }], "after");
    assert!(next.unwrap().is_some(), "the next commit moves the branch");
}

#[test]
fn kill_at_timed_points() {
    let mut outcomes = Vec::new();
    for delay_ms in [20u64, 500, 1200, 2500] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("forest");
        let old = setup(&root);
        let list = dir.path().join("paths.txt");
        let mut child = spawn(&root, &list, "none");
        // Time from the moment the batch is built (list written).
        let t0 = Instant::now();
        while !list.exists() && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL; may race with a finished child
        let was_killed = killed(&mut child);
        let is_new = verify_after_crash(&root, old, &list);
        outcomes.push((delay_ms, was_killed, is_new));
    }
    eprintln!("timed kills (delay_ms, killed, head_is_new): {outcomes:?}");
}

#[test]
fn uninterrupted_child_commits_everything() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("forest");
    let old = setup(&root);
    let list = dir.path().join("paths.txt");
    let out = spawn(&root, &list, "none").wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(verify_after_crash(&root, old, &list));
    let f = GitForest::open(&root).unwrap();
    assert_eq!(f.repaired(), 0, "no journal after a clean commit");
}
