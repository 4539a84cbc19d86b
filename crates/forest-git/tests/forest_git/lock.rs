//! The `.vine.lock` writer lock.

use std::fs;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use forest_git::{break_orphan, probe, GitError, LockCard, LockState, WriterLock, LOCK_FILE};

fn card_on_disk(root: &std::path::Path) -> LockCard {
    serde_json::from_slice(&fs::read(root.join(LOCK_FILE)).unwrap()).unwrap()
}

#[test]
fn second_acquire_is_refused_with_card() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let held = WriterLock::acquire(root).unwrap();
    assert_eq!(card_on_disk(root), *held.card());
    // A second open file description conflicts even in the same process.
    let err = WriterLock::acquire(root).unwrap_err();
    match &err {
        GitError::Locked { pid, host, since } => {
            assert_eq!(*pid, std::process::id());
            assert_eq!(host, &held.card().host);
            assert!(chrono::DateTime::parse_from_rfc3339(since).is_ok(), "{since}");
        }
        other => panic!("expected Locked, got {other}"),
    }
    let msg = err.to_string();
    assert!(msg.starts_with("E_LOCKED: forest is locked by pid "), "{msg}");
    assert!(msg.contains("reclaimed automatically"), "{msg}");
    assert_eq!(err.code(), "E_LOCKED");
    assert!(matches!(probe(root).unwrap(), LockState::Held { card: Some(_) }));
    assert!(matches!(break_orphan(root), Err(GitError::Locked { .. })));
    drop(held);
    assert_eq!(probe(root).unwrap(), LockState::Free);
    assert!(WriterLock::acquire(root).is_ok(), "free again after release");
}

#[test]
fn orphan_card_of_dead_pid_is_reclaimed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A card written without any flock behind it: its writer is gone.
    let dead = LockCard { pid: 4_000_000, host: "ghost-host".into(), since: "2026-01-01T00:00:00Z".into() };
    fs::write(root.join(LOCK_FILE), serde_json::to_vec(&dead).unwrap()).unwrap();
    assert_eq!(probe(root).unwrap(), LockState::Orphan { card: Some(dead.clone()) });
    let lock = WriterLock::acquire(root).unwrap();
    let now = card_on_disk(root);
    assert_eq!(now.pid, std::process::id(), "card rewritten on acquire");
    assert_ne!(now, dead);
    drop(lock);
    assert!(!root.join(LOCK_FILE).exists(), "release unlinks");

    fs::write(root.join(LOCK_FILE), serde_json::to_vec(&dead).unwrap()).unwrap();
    assert!(break_orphan(root).unwrap());
    assert!(!root.join(LOCK_FILE).exists());
    assert!(!break_orphan(root).unwrap(), "nothing left to break");
}

#[test]
fn lock_held_by_another_process_until_it_dies() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let path = root.join(LOCK_FILE);
    // The shell keeps fd 9 (and its flock) open after exec'ing into sleep.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("exec 9>>\"$1\"; flock -n 9 || exit 3; echo ready; exec sleep 60")
        .arg("sh")
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let card = LockCard { pid: child.id(), host: "other-host".into(), since: "2026-11-02T10:00:00Z".into() };
    // In place (same inode), as a holder rewrites its card.
    fs::write(&path, serde_json::to_vec(&card).unwrap()).unwrap();
    match WriterLock::acquire(root).unwrap_err() {
        GitError::Locked { pid, host, since } => {
            assert_eq!((pid, host, since), (card.pid, card.host, card.since));
        }
        other => panic!("expected Locked, got {other}"),
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The holder died: its card is an orphan and is reclaimed silently.
    assert!(matches!(probe(root).unwrap(), LockState::Orphan { .. }));
    let lock = WriterLock::acquire(root).unwrap();
    assert_eq!(card_on_disk(root).pid, std::process::id());
    drop(lock);
}
