//! Bringing the work tree and the index up to HEAD for a known set of paths,
//! and the crash journal that makes that step repairable.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use crate::GitError;

/// Journal file name inside `.git/`: present only while a commit's work-tree
/// catch-up is in flight (or was interrupted).
pub const JOURNAL_FILE: &str = "forest-worktree.json";

/// The journal: which paths may differ from HEAD after a crash.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Journal {
    /// The commit being brought into the work tree (informational: repair
    /// always restores from whatever HEAD is).
    pub commit: String,
    /// Forest-relative POSIX paths.
    pub paths: Vec<String>,
}

pub(crate) fn journal_path(repo: &Repository) -> PathBuf {
    repo.path().join(JOURNAL_FILE)
}

pub(crate) fn write_journal(repo: &Repository, journal: &Journal) -> Result<(), GitError> {
    let path = journal_path(repo);
    let bytes =
        serde_json::to_vec(journal).map_err(|e| GitError::Journal { path: path.clone(), reason: e.to_string() })?;
    forest_fs::atomic_write(&path, &bytes).map_err(|e| GitError::io(format!("write {}", path.display()), e))
}

pub(crate) fn read_journal(repo: &Repository) -> Result<Option<Journal>, GitError> {
    let path = journal_path(repo);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(GitError::io(format!("read {}", path.display()), e)),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| GitError::Journal { path, reason: e.to_string() })
}

pub(crate) fn remove_journal(repo: &Repository) -> Result<(), GitError> {
    let path = journal_path(repo);
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(GitError::io(format!("remove {}", path.display()), e)),
    }
}

/// Target state of one path: `Some((blob, content))` = that file, `None` = absent.
pub(crate) type Target<'a> = (&'a str, Option<(Oid, Content<'a>)>);

/// A written path's bytes: in hand, or read from the object database when
/// its chunk of paths is written (bounded memory for big commits).
#[derive(Clone, Copy)]
pub(crate) enum Content<'a> {
    Bytes(&'a [u8]),
    Stored,
}

/// Parallel writers for the work-tree step: each `forest_fs::atomic_write`
/// waits on two fsyncs, and concurrent fsyncs share journal commits, so
/// I/O-bound threads (more than cores) cut the wall time about 5x.
const WRITERS: usize = 8;
/// Paths written between two progress reports (each chunk's writers open
/// their own handle on the object database).
const CHUNK: usize = 2048;

/// Write / delete each path in the work tree so it matches its target,
/// calling `progress(done)` after each chunk, then update the index entries
/// of exactly those paths (unless `index` is false: a deferred run
/// catches the index up once at its end, see `crate::index`).
pub(crate) fn apply(
    repo: &Repository,
    root: &Path,
    targets: &[Target<'_>],
    progress: &mut dyn FnMut(usize),
    index: bool,
) -> Result<(), GitError> {
    let writes: Vec<(&str, Oid, Content<'_>)> =
        targets.iter().filter_map(|(p, t)| t.map(|(oid, content)| (*p, oid, content))).collect();
    // Each written path's size, in `writes` order: the index entry's size
    // without reading a stored blob's header again.
    let mut sizes: Vec<u64> = Vec::with_capacity(writes.len());
    let mut done = 0;
    for chunk in writes.chunks(CHUNK) {
        sizes.extend(write_parallel(repo.path(), root, chunk)?);
        done += chunk.len();
        progress(done);
    }
    // Deletes run after all writes: pruning an emptied directory must not
    // race with a write creating a file in it.
    for (rel, _) in targets.iter().filter(|(_, t)| t.is_none()) {
        remove_file_and_empty_dirs(root, &root.join(rel))?;
        done += 1;
        progress(done);
    }
    if index {
        let mut sizes = sizes.into_iter();
        let sized: Vec<(&str, Option<(Oid, u64)>)> =
            targets.iter().map(|(rel, t)| (*rel, t.map(|(oid, _)| (oid, sizes.next().unwrap_or_default())))).collect();
        update_index_sized(repo, root, &sized)?;
    }
    Ok(())
}

/// Write `items` on [`WRITERS`] threads. A stored blob is read where it is
/// written, on the writer's own handle (opened when it first needs one), so
/// reading and inflating the blobs is spread over the threads too and each
/// holds one blob at a time. Returns each item's size in bytes.
fn write_parallel(git_dir: &Path, root: &Path, items: &[(&str, Oid, Content<'_>)]) -> Result<Vec<u64>, GitError> {
    let next = AtomicUsize::new(0);
    let sizes: Vec<AtomicU64> = items.iter().map(|_| AtomicU64::new(0)).collect();
    let first_error: Mutex<Option<GitError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..WRITERS.min(items.len()) {
            s.spawn(|| {
                let mut own: Option<Repository> = None;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((rel, oid, content)) = items.get(i) else {
                        break;
                    };
                    let written = stored_or_given(git_dir, &mut own, *oid, *content).and_then(|bytes| {
                        sizes[i].store(bytes.len() as u64, Ordering::Relaxed);
                        write_one(&root.join(rel), &bytes)
                    });
                    if let Err(e) = written {
                        let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                        slot.get_or_insert(e);
                        break;
                    }
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(sizes.into_iter().map(AtomicU64::into_inner).collect()),
    }
}

/// The bytes of one write: given, or read from the object database on the
/// thread's handle `own`.
fn stored_or_given<'a>(
    git_dir: &Path,
    own: &mut Option<Repository>,
    oid: Oid,
    content: Content<'a>,
) -> Result<Cow<'a, [u8]>, GitError> {
    match content {
        Content::Bytes(b) => Ok(Cow::Borrowed(b)),
        Content::Stored => {
            let repo = match own {
                Some(r) => r,
                None => own.insert(Repository::open(git_dir)?),
            };
            Ok(Cow::Owned(repo.find_blob(oid)?.content().to_vec()))
        }
    }
}

fn write_one(abs: &Path, bytes: &[u8]) -> Result<(), GitError> {
    // Never rewrite an unchanged file (also makes repair cheap).
    if matches!(fs::read(abs), Ok(old) if old == bytes) {
        return Ok(());
    }
    // No per-file fsync: the journal repairs a crash from HEAD, and the
    // caller syncs the filesystem once before dropping the journal.
    forest_fs::write_replace_unsynced(abs, bytes).map_err(|e| GitError::io(format!("write {}", abs.display()), e))
}

fn remove_file_and_empty_dirs(root: &Path, abs: &Path) -> Result<(), GitError> {
    match fs::remove_file(abs) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(GitError::io(format!("remove {}", abs.display()), e)),
    }
    let mut dir = abs.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) {
            break;
        }
        // Fails (and stops the climb) as soon as a directory is not empty.
        if fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Set (blob id, size) or remove the index entry of each path, reading the
/// stat data of written paths from the work tree, and write the index
/// (streamed: the last target of a path wins).
pub(crate) fn update_index_sized<S: AsRef<str>>(
    repo: &Repository,
    root: &Path,
    targets: &[(S, Option<(Oid, u64)>)],
) -> Result<(), GitError> {
    let mut order: Vec<usize> = (0..targets.len()).collect();
    // Stable: equal paths keep their order, so the last one is the winner.
    order.sort_by(|&a, &b| targets[a].0.as_ref().as_bytes().cmp(targets[b].0.as_ref().as_bytes()));
    let mut last: Vec<usize> = Vec::with_capacity(order.len());
    for i in order {
        match last.last_mut() {
            Some(l) if targets[*l].0.as_ref() == targets[i].0.as_ref() => *l = i,
            _ => last.push(i),
        }
    }
    crate::index_file::update_or_fallback(repo, root, false, &mut |sink| {
        for &i in &last {
            sink.set(targets[i].0.as_ref(), targets[i].1)?;
        }
        Ok(())
    })?;
    Ok(())
}

/// Restore `paths` from HEAD (work tree and index), then delete orphaned
/// forest_fs temp files in their directories. Used by `open` after a crash.
pub(crate) fn repair(repo: &Repository, root: &Path, paths: &[String]) -> Result<usize, GitError> {
    let tree = match repo.head() {
        Ok(h) => Some(h.peel_to_tree()?),
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => None,
        Err(e) => return Err(e.into()),
    };
    let mut blobs: Vec<(&str, Option<Oid>)> = Vec::with_capacity(paths.len());
    for p in paths {
        let entry = match &tree {
            Some(t) => match t.get_path(Path::new(p)) {
                Ok(e) => Some(e.id()),
                Err(e) if e.code() == git2::ErrorCode::NotFound => None,
                Err(e) => return Err(e.into()),
            },
            None => None,
        };
        blobs.push((p.as_str(), entry));
    }
    // Read back a chunk at a time by `apply`, not all at once.
    let targets: Vec<Target<'_>> = blobs.iter().map(|(p, id)| (*p, id.map(|id| (id, Content::Stored)))).collect();
    apply(repo, root, &targets, &mut |_| {}, true)?;
    remove_temp_orphans(root, paths)
}

/// Delete `forest_fs` temp files left in the directories of `paths` (and the
/// root). Returns how many were removed.
fn remove_temp_orphans(root: &Path, paths: &[String]) -> Result<usize, GitError> {
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    dirs.insert(root.to_path_buf());
    for p in paths {
        if let Some(parent) = root.join(p).parent() {
            dirs.insert(parent.to_path_buf());
        }
    }
    let mut removed = 0;
    for dir in dirs {
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(_) => continue, // directory gone: nothing to clean
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
            if is_file && forest_fs::is_temp_name(&name.to_string_lossy()) {
                let p = entry.path();
                fs::remove_file(&p).map_err(|e| GitError::io(format!("remove {}", p.display()), e))?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_climbs_only_empty_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("a/b/c")).unwrap();
        fs::write(root.join("a/keep.md"), b"x").unwrap();
        fs::write(root.join("a/b/c/x.md"), b"x").unwrap();
        remove_file_and_empty_dirs(root, &root.join("a/b/c/x.md")).unwrap();
        assert!(!root.join("a/b").exists());
        assert!(root.join("a/keep.md").exists());
    }

    #[test]
    fn temp_orphans_removed_in_listed_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("d")).unwrap();
        fs::write(root.join("d/.n.md.123.0.tmp"), b"x").unwrap();
        fs::write(root.join("d/n.md"), b"x").unwrap();
        let n = remove_temp_orphans(root, &["d/n.md".to_string()]).unwrap();
        assert_eq!(n, 1);
        assert!(root.join("d/n.md").exists());
    }
}
