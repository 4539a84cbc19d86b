//! Deferred git-index catch-up for long runs.
//!
//! git's index file lists every tracked path: libgit2 reads, edits and
//! rewrites the whole file, so updating it after each batch costs O(forest)
//! per batch (at 10^6 nodes ~100 MB read and written and ~200 MB of entries
//! in memory, every batch). A run of many batches instead marks the index
//! as behind HEAD once ([`INDEX_BASE_FILE`] names the commit the index last
//! matched), skips the per-batch edit, and catches up once at the end by a
//! tree-to-tree diff from that commit to HEAD: unchanged subtrees are
//! skipped by id, so the diff costs what the run changed, and the index
//! file is rewritten once per run instead of once per batch.
//!
//! In: the repository, the marker, HEAD. Out: index entries (with stat data,
//! so `git status` stays clean without re-hashing) for exactly the paths
//! that differ between the marker's commit and HEAD. Touches `.git/index`
//! and the marker only; the work tree is the batch commit's business.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use git2::{Delta, DiffOptions, Oid, Repository};

use crate::worktree;
use crate::GitError;

/// Marker inside `.git/`: present while the index lags HEAD; holds the
/// commit id (or `unborn`) the index matched when the lag began.
pub const INDEX_BASE_FILE: &str = "forest-index-base";

const UNBORN: &str = "unborn";

fn marker(repo: &Repository) -> PathBuf {
    repo.path().join(INDEX_BASE_FILE)
}

/// Record that the index matches `base` (HEAD before the first deferred
/// commit) unless a lag is already recorded: the oldest base wins, so a
/// crash between two deferred commits still catches up from the right one.
pub(crate) fn mark_behind(repo: &Repository, base: Option<Oid>) -> Result<(), GitError> {
    let path = marker(repo);
    if path.exists() {
        return Ok(());
    }
    let text = base.map_or_else(|| UNBORN.to_string(), |o| o.to_string());
    forest_fs::atomic_write(&path, text.as_bytes()).map_err(|e| GitError::io(format!("write {}", path.display()), e))
}

/// True while the index lags HEAD.
pub(crate) fn is_behind(repo: &Repository) -> bool {
    marker(repo).exists()
}

/// Bring the index up to `head` from the recorded base, then drop the
/// marker. Returns how many index entries changed (0 when not behind).
pub(crate) fn catch_up(repo: &Repository, root: &Path, head: Option<Oid>) -> Result<usize, GitError> {
    let path = marker(repo);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(GitError::io(format!("read {}", path.display()), e)),
    };
    let base = match text.trim() {
        UNBORN => None,
        // An unreadable marker: rebuild from nothing (correct, just slower).
        s => Oid::from_str(s).ok().and_then(|o| repo.find_commit(o).ok()),
    };
    let old_tree = base.as_ref().map(|c| c.tree()).transpose()?;
    let new_tree = head.map(|o| repo.find_commit(o).and_then(|c| c.tree())).transpose()?;
    let mut opts = DiffOptions::new();
    opts.skip_binary_check(true);
    let diff = repo.diff_tree_to_tree(old_tree.as_ref(), new_tree.as_ref(), Some(&mut opts))?;
    let mut targets: Vec<(String, Option<(Oid, u64)>)> = Vec::with_capacity(diff.deltas().len());
    for d in diff.deltas() {
        let rel = |f: git2::DiffFile<'_>| f.path().and_then(Path::to_str).map(str::to_string);
        match d.status() {
            Delta::Deleted => {
                if let Some(p) = rel(d.old_file()) {
                    targets.push((p, None));
                }
            }
            _ => {
                if let Some(p) = rel(d.new_file()) {
                    targets.push((p, Some((d.new_file().id(), d.new_file().size()))));
                }
            }
        }
    }
    let changed = targets.len();
    if base.is_none() && old_tree.is_none() {
        // From nothing: start from an empty index so entries of paths no
        // longer in HEAD cannot survive (e.g. an unreadable marker).
        let mut index = repo.index()?;
        index.clear()?;
        index.write()?;
    }
    worktree::update_index_sized(repo, root, &targets)?;
    fs::remove_file(&path).map_err(|e| GitError::io(format!("remove {}", path.display()), e))?;
    Ok(changed)
}
