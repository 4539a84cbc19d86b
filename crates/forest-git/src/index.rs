//! Deferred git-index catch-up for long runs.
//!
//! git's index file lists every tracked path: libgit2 reads, edits and
//! rewrites the whole file, so updating it after each batch costs O(forest)
//! per batch (at 10^6 nodes ~100 MB read and written and ~200 MB of entries
//! in memory, every batch). A run of many batches instead marks the index
//! as behind HEAD once ([`INDEX_BASE_FILE`] names the commit the index last
//! matched), skips the per-batch edit, and catches up once at the end by a
//! tree-to-tree walk from that commit to HEAD: unchanged subtrees are
//! skipped by id, so the walk costs what the run changed, and its changes,
//! which come in git's path order, are merged into the index file as it
//! is streamed (`crate::index_file`): once per run instead of once per
//! batch, and in memory independent of the forest's size.
//!
//! In: the repository, the marker, HEAD. Out: index entries (with stat data,
//! so `git status` stays clean without re-hashing) for exactly the paths
//! that differ between the marker's commit and HEAD. Touches `.git/index`
//! and the marker only; the work tree is the batch commit's business.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use std::cmp::Ordering;

use git2::{ObjectType, Oid, Repository, Tree, TreeEntry};

use crate::index_file;
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
    // A catch-up killed while writing left git's lock file: the marker says
    // a deferred run died, and the forest's writer lock (held by whoever
    // opens or commits) keeps other forest writers out, so it is stale.
    crate::lock::remove_stale_git_lock(&repo.path().join("index.lock"), "interrupted index catch-up")?;
    let old_tree = base.as_ref().map(|c| c.tree()).transpose()?;
    let new_tree = head.map(|o| repo.find_commit(o).and_then(|c| c.tree())).transpose()?;
    // From nothing (`clear`): entries of paths no longer in HEAD cannot
    // survive (e.g. an unreadable marker).
    let changed = index_file::update_or_fallback(repo, root, old_tree.is_none(), &mut |sink| {
        diff_trees(repo, old_tree.as_ref(), new_tree.as_ref(), "", &mut |rel, target| {
            sink.set(rel, target.map(|oid| (oid, 0)))
        })
    })?;
    fs::remove_file(&path).map_err(|e| GitError::io(format!("remove {}", path.display()), e))?;
    Ok(changed)
}

/// Receives each changed path: `Some(blob)` set, `None` removed.
type OnChange<'a> = dyn FnMut(&str, Option<Oid>) -> Result<(), GitError> + 'a;

/// A tree entry's name as git orders it within a tree (a subtree sorts as
/// if its name ended in `/`).
fn order_key(e: &TreeEntry<'_>) -> Vec<u8> {
    let mut k = e.name_bytes().to_vec();
    if e.kind() == Some(ObjectType::Tree) {
        k.push(b'/');
    }
    k
}

/// Call `f(path, Some(blob))` for every blob added or changed from `old` to
/// `new` and `f(path, None)` for every blob removed, merge-joining the two
/// trees level by level and skipping equal subtrees by id: cost follows the
/// changes, memory the depth (libgit2's diff would hold every delta of an
/// adopt, ~250 B each, at once).
fn diff_trees(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
    prefix: &str,
    f: &mut OnChange<'_>,
) -> Result<(), GitError> {
    let olds: Vec<TreeEntry<'_>> = old.map(|t| t.iter().collect()).unwrap_or_default();
    let news: Vec<TreeEntry<'_>> = new.map(|t| t.iter().collect()).unwrap_or_default();
    let (mut i, mut j) = (0, 0);
    while i < olds.len() || j < news.len() {
        let ord = match (olds.get(i), news.get(j)) {
            (Some(a), Some(b)) => order_key(a).cmp(&order_key(b)),
            (Some(_), None) => Ordering::Less,
            (None, _) => Ordering::Greater,
        };
        match ord {
            Ordering::Less => {
                side(repo, &olds[i], prefix, false, f)?;
                i += 1;
            }
            Ordering::Greater => {
                side(repo, &news[j], prefix, true, f)?;
                j += 1;
            }
            Ordering::Equal => {
                let (a, b) = (&olds[i], &news[j]);
                if a.id() != b.id() || a.filemode() != b.filemode() {
                    let rel = join(prefix, b);
                    if b.kind() == Some(ObjectType::Tree) {
                        let (ta, tb) = (repo.find_tree(a.id())?, repo.find_tree(b.id())?);
                        diff_trees(repo, Some(&ta), Some(&tb), &rel, f)?;
                    } else if b.kind() == Some(ObjectType::Blob) {
                        f(&rel, Some(b.id()))?;
                    }
                }
                i += 1;
                j += 1;
            }
        }
    }
    Ok(())
}

/// An entry present on one side only: all its blobs are added (`added`) or
/// removed.
fn side(repo: &Repository, e: &TreeEntry<'_>, prefix: &str, added: bool, f: &mut OnChange<'_>) -> Result<(), GitError> {
    let rel = join(prefix, e);
    match e.kind() {
        Some(ObjectType::Tree) => {
            let t = repo.find_tree(e.id())?;
            if added {
                diff_trees(repo, None, Some(&t), &rel, f)
            } else {
                diff_trees(repo, Some(&t), None, &rel, f)
            }
        }
        Some(ObjectType::Blob) => f(&rel, added.then(|| e.id())),
        _ => Ok(()),
    }
}

fn join(prefix: &str, e: &TreeEntry<'_>) -> String {
    let name = String::from_utf8_lossy(e.name_bytes());
    if prefix.is_empty() {
        name.into_owned()
    } else {
        format!("{prefix}/{name}")
    }
}
