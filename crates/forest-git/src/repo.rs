//! The forest's own git repository and its one-commit-or-nothing batch.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use git2::build::TreeUpdateBuilder;
use git2::{ErrorCode, FileMode, ObjectType, Oid, Repository, RepositoryInitOptions, Signature};

use crate::objects::{blob_in_tree, Objects};
use serde::Serialize;

use crate::index;
use crate::worktree::{self, Content, Journal, Target};
use crate::GitError;

/// Default committer name when git config sets none (DESIGN §4).
pub const DEFAULT_NAME: &str = "forest";
/// Default committer email when git config sets none.
pub const DEFAULT_EMAIL: &str = "forest@localhost";
/// Environment variable overriding the committer name.
pub const ENV_NAME: &str = "FOREST_GIT_NAME";
/// Environment variable overriding the committer email.
pub const ENV_EMAIL: &str = "FOREST_GIT_EMAIL";

/// Batches with at least this many paths are written as one pack file.
/// Disabled (None): measured on 30k-100k file adopts, the in-memory
/// pack path grew anonymous memory by ~20 MiB and commit time by ~1 s per
/// batch as packs accumulated, while loose objects stayed flat (~5.5 s per
/// 9k-file batch); `git gc --auto` (run by the Ranger) packs them later.
const PACK_THRESHOLD: Option<usize> = None;

/// One change of a batch, by forest-relative POSIX path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Create or replace the file with these bytes.
    Write {
        /// Forest-relative POSIX path (e.g. `branch/leaf.md`).
        path: String,
        /// Full new content.
        bytes: Vec<u8>,
    },
    /// Create or replace the file with a blob already in the object
    /// database ([`GitForest::write_blob`]). The commit reads it back a
    /// chunk of paths at a time for the work tree, so a writer that
    /// stores each rewrite as it makes it (the Ranger after a long gap:
    /// 10^5 rewritten passports) holds ids, not texts.
    Stored {
        /// Forest-relative POSIX path.
        path: String,
        /// The blob's id.
        blob: Oid,
    },
    /// Remove the file (a path absent from HEAD is ignored).
    Delete {
        /// Forest-relative POSIX path.
        path: String,
    },
}

impl Change {
    fn path(&self) -> &str {
        match self {
            Change::Write { path, .. } | Change::Stored { path, .. } | Change::Delete { path } => path,
        }
    }
}

/// What a batch wants at one path.
#[derive(Clone, Copy)]
enum Wanted<'a> {
    Bytes(&'a [u8]),
    Blob(Oid),
    Gone,
}

/// Progress points of a batch commit, reported to the observer of
/// [`GitForest::commit_batch_observed`] (progress bars, crash tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitStage {
    /// Blobs, trees and the commit object are in the object database; the
    /// branch ref has not moved.
    ObjectsWritten {
        /// The new, still unreferenced commit.
        commit: Oid,
    },
    /// The branch ref points at the new commit; the work tree is not updated.
    RefUpdated {
        /// The new HEAD.
        commit: Oid,
    },
    /// `done` of `total` changed paths are in the work tree (reported per
    /// chunk of paths, not per file).
    WorkTree {
        /// Paths brought up to HEAD so far.
        done: usize,
        /// Paths the commit changed.
        total: usize,
    },
}

/// Result of [`GitForest::gc_auto`] (dialect §5.6: failure is never an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GcOutcome {
    /// `git gc --auto --quiet` exited 0.
    Ran,
    /// git is missing or exited non-zero.
    Unavailable,
}

/// Largest tree libgit2 keeps in its object cache (its default: 4 KiB,
/// about 100 entries).
const TREE_CACHE_LIMIT: usize = 4 << 20;

/// Cap libgit2's process-wide caches so memory does not grow with the
/// repository (defaults: 8 GiB of mapped pack windows, 256 MiB object
/// cache), and drop its redundant object check when building trees.
fn bound_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: set once, before this process opens any repository handle here.
        unsafe {
            let _ = git2::opts::set_mwindow_mapped_limit(256 << 20);
            let _ = git2::opts::set_mwindow_size(32 << 20);
            // The trees batch commits read are cached: a large forest fills
            // any cap over an adopt (memory a small one never reaches), and
            // a re-read tree costs one inflate.
            let _ = git2::opts::set_cache_max_size(16 << 20);
            // libgit2 caches no tree over 4 KiB: a folder of a few hundred
            // nodes was inflated and hash-checked again for every path
            // looked up in it (a Ranger run rewriting 82,456 passports of a
            // 10^6-node forest spent 129 s committing, most of it there).
            let _ = git2::opts::set_cache_object_limit(ObjectType::Tree, TREE_CACHE_LIMIT);
        }
        // Trees are built from blobs this crate wrote or checked itself
        // (`tree_update` asks the object database for every stored blob it
        // is given); libgit2's own check read each entry's object header
        // again (an open and an inflate per path: ~11% of a 10^6-node
        // Ranger run's commit).
        git2::opts::strict_object_creation(false);
    });
}

/// Lower libgit2's process-wide cap on mapped pack windows (set to
/// 256 MiB of 32 MiB windows when the first repository opens) to `mapped`
/// bytes of `mapped / 16` windows. Mapped pack pages are resident file
/// pages of the process: a Ranger pass that reads 10^5 passports scattered
/// over a 10^6-node forest's packs kept ~160 MiB of them.
pub fn limit_pack_windows(mapped: usize) {
    bound_memory();
    // SAFETY: plain setters of libgit2 globals, read when a window is mapped.
    unsafe {
        let _ = git2::opts::set_mwindow_size((mapped / 16).max(1 << 20));
        let _ = git2::opts::set_mwindow_mapped_limit(mapped);
    }
}

/// The non-Markdown files that are versioned: the forest's own config, so a
/// clone syncs with the sources and knobs its operators recorded.
pub const VERSIONED_CONFIG: [&str; 2] = ["_meta/gardener.yaml", "_meta/ranger.yaml"];

/// Id of git's empty tree.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// A forest's git repository. Commits are serialized by an internal mutex;
/// across processes, hold a [`crate::WriterLock`] while committing or opening.
pub struct GitForest {
    root: PathBuf,
    repo: Mutex<Repository>,
    repaired: usize,
    /// Batch commits leave the git index behind HEAD until
    /// [`GitForest::catch_up_index`] (see [`GitForest::defer_index`]).
    defer_index: AtomicBool,
}

impl std::fmt::Debug for GitForest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitForest").field("root", &self.root).finish_non_exhaustive()
    }
}

impl GitForest {
    /// Create the forest's own repository at `root` (even inside an outer
    /// repository), write `files` and make the first commit with `message`.
    ///
    /// Only `.md` files, [`VERSIONED_CONFIG`] and the root `.gitignore` are
    /// committed (the dialect's init skeleton tracks `.gitignore`); other
    /// files are filtered out.
    pub fn init(root: &Path, message: &str, files: &[(String, Vec<u8>)]) -> Result<GitForest, GitError> {
        if root.join(".git").exists() {
            return Err(GitError::AlreadyInitialized(root.to_path_buf()));
        }
        fs::create_dir_all(root).map_err(|e| GitError::io(format!("mkdir {}", root.display()), e))?;
        let mut opts = RepositoryInitOptions::new();
        opts.no_reinit(true).mkpath(true);
        let repo = Repository::init_opts(root, &opts)?;
        let forest = GitForest {
            root: workdir(&repo, root)?,
            repo: Mutex::new(repo),
            repaired: 0,
            defer_index: AtomicBool::new(false),
        };
        let changes: Vec<Change> =
            files.iter().map(|(path, bytes)| Change::Write { path: path.clone(), bytes: bytes.clone() }).collect();
        forest.commit_inner(&changes, message, true, &mut |_| {})?;
        Ok(forest)
    }

    /// Open the forest repository at `root` (which must be its top level).
    ///
    /// If a previous commit crashed after moving HEAD, the paths it was
    /// bringing into the work tree are restored from HEAD (work tree and
    /// index) and orphaned temp files in their directories are removed.
    pub fn open(root: &Path) -> Result<GitForest, GitError> {
        bound_memory();
        let repo = Repository::open(root).map_err(|e| match e.code() {
            ErrorCode::NotFound => GitError::NotAForest(root.to_path_buf()),
            _ => GitError::Git(e),
        })?;
        let wd = workdir(&repo, root)?;
        let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if canon(&wd) != canon(root) {
            return Err(GitError::NotAForest(root.to_path_buf()));
        }
        let mut forest =
            GitForest { root: wd, repo: Mutex::new(repo), repaired: 0, defer_index: AtomicBool::new(false) };
        let repaired = forest.repair_if_needed(&forest.lock_repo())?;
        forest.repaired = repaired;
        // A deferred run that died before its catch-up left the index behind.
        forest.catch_up_index()?;
        Ok(forest)
    }

    /// The forest root (the repository's work tree).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How many paths `open` restored from HEAD after a crash (0 normally).
    pub fn repaired(&self) -> usize {
        self.repaired
    }

    /// Commit a batch as ONE commit, or nothing.
    ///
    /// Only `.md` paths and [`VERSIONED_CONFIG`] are versioned: others are dropped, and a non-empty
    /// batch with nothing left fails with [`GitError::NothingToCommit`]. The
    /// last change of a path wins. Returns `Ok(None)` when the resulting tree
    /// equals HEAD's (no commit is made) or `changes` is empty.
    pub fn commit_batch(&self, changes: &[Change], message: &str) -> Result<Option<Oid>, GitError> {
        self.commit_inner(changes, message, false, &mut |_| {})
    }

    /// [`Self::commit_batch`] with an observer called at each [`CommitStage`].
    pub fn commit_batch_observed(
        &self,
        changes: &[Change],
        message: &str,
        observer: &mut dyn FnMut(CommitStage),
    ) -> Result<Option<Oid>, GitError> {
        self.commit_inner(changes, message, false, observer)
    }

    /// From now on, batch commits do not edit git's index (whose rewrite
    /// costs O(forest) per commit); the index is brought up to HEAD once by
    /// [`Self::catch_up_index`], or by the next [`Self::open`] if this
    /// process dies first. For runs of many batches (adopt, sync).
    pub fn defer_index(&self) {
        self.defer_index.store(true, Ordering::SeqCst);
    }

    /// Bring git's index up to HEAD after deferred commits and stop
    /// deferring. Costs what changed since the index last matched HEAD (a
    /// tree-to-tree diff) plus one index rewrite; returns the entries set
    /// or removed (0 when the index was current).
    pub fn catch_up_index(&self) -> Result<usize, GitError> {
        self.defer_index.store(false, Ordering::SeqCst);
        let repo = self.lock_repo();
        if !index::is_behind(&repo) {
            return Ok(0);
        }
        let branch = branch_ref(&repo)?;
        let head = branch_tip(&repo, &branch)?;
        let n = index::catch_up(&repo, &self.root, head)?;
        tracing::info!(event = "git.index_catch_up", entries = n);
        Ok(n)
    }

    /// Store `bytes` as a blob (no ref or work tree changes) for a later
    /// [`Change::Stored`]. An object no commit names is dropped by git's
    /// next gc after its grace period.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<Oid, GitError> {
        let repo = self.lock_repo();
        let odb = repo.odb()?;
        let id = odb.write(ObjectType::Blob, bytes)?;
        Ok(id)
    }

    /// Content of a stored blob (one written by [`Self::write_blob`]).
    pub fn read_blob(&self, id: Oid) -> Result<Vec<u8>, GitError> {
        let repo = self.lock_repo();
        let blob = repo.find_blob(id)?;
        Ok(blob.content().to_vec())
    }

    /// The commit HEAD points at (`None` before the first commit).
    pub fn head_oid(&self) -> Result<Option<Oid>, GitError> {
        let repo = self.lock_repo();
        let branch = branch_ref(&repo)?;
        branch_tip(&repo, &branch)
    }

    /// Content of `path` in HEAD's tree (`None` if absent or no commit yet).
    /// To read many files, resolve [`Self::head_tree_id`] once and use
    /// [`Self::read_tree_file`].
    pub fn read_head_file(&self, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        match self.head_tree_id()? {
            Some(tree) => self.read_tree_file(tree, path),
            None => Ok(None),
        }
    }

    /// HEAD's tree (`None` before the first commit). Each call reads and
    /// hash-checks the HEAD commit object, whose message can be megabytes
    /// (a Ranger run that pruned 10^5 links lists each): a Ranger pass
    /// that called `read_head_file` per rewritten passport spent 63% of
    /// its time here.
    pub fn head_tree_id(&self) -> Result<Option<Oid>, GitError> {
        let repo = self.lock_repo();
        let head = match repo.head() {
            Ok(h) => h,
            Err(e) if e.code() == ErrorCode::UnbornBranch => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let tree = head.peel_to_tree()?.id();
        Ok(Some(tree))
    }

    /// Content of `path` in tree `tree` (`None` if absent or not a file).
    pub fn read_tree_file(&self, tree: Oid, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        let repo = self.lock_repo();
        let Some(id) = blob_in_tree(&repo, tree, path)? else { return Ok(None) };
        let blob = repo.find_blob(id)?;
        Ok(Some(blob.content().to_vec()))
    }

    /// The blob id of `path` in tree `tree` (`None` if absent or not a
    /// file): one tree lookup, no blob read (compare with [`crate::blob_id`]).
    pub fn tree_blob_id(&self, tree: Oid, path: &str) -> Result<Option<Oid>, GitError> {
        blob_in_tree(&self.lock_repo(), tree, path)
    }

    /// A private handle on the forest's objects for one thread: it reads
    /// trees and stores blobs without waiting on this handle's lock (a
    /// Ranger pass rewriting 10^5 passports on every core).
    pub fn objects(&self) -> Result<Objects, GitError> {
        let path = self.lock_repo().path().to_path_buf();
        Objects::open(&path)
    }

    /// True when none of `paths` differs between HEAD, the index and the
    /// work tree (ignored and absent-everywhere paths count as clean).
    /// A deferred index is caught up first.
    pub fn is_clean_for(&self, paths: &[&str]) -> Result<bool, GitError> {
        if self.defer_index.load(Ordering::SeqCst) {
            self.catch_up_index()?;
            self.defer_index();
        }
        let repo = self.lock_repo();
        for p in paths {
            match repo.status_file(Path::new(p)) {
                Ok(s) if s.is_empty() || s == git2::Status::IGNORED => {}
                Ok(_) => return Ok(false),
                Err(e) if e.code() == ErrorCode::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(true)
    }

    /// Run `git gc --auto --quiet` (git's own thresholds; touches only `.git/`).
    pub fn gc_auto(&self) -> GcOutcome {
        let status = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(["gc", "--auto", "--quiet"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => GcOutcome::Ran,
            _ => GcOutcome::Unavailable,
        }
    }

    fn lock_repo(&self) -> MutexGuard<'_, Repository> {
        // A panic mid-commit leaves git state on disk that the journal covers;
        // the in-memory Repository stays usable.
        self.repo.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn repair_if_needed(&self, repo: &Repository) -> Result<usize, GitError> {
        let Some(journal) = worktree::read_journal(repo)? else {
            return Ok(0);
        };
        tracing::warn!(
            paths = journal.paths.len(),
            commit = %journal.commit,
            "repairing work tree left behind by an interrupted commit"
        );
        // The crash may have hit while git's index was being written: the
        // journal proves the writer died, and the forest's writer lock keeps
        // every other forest writer out, so its index.lock is stale.
        // So is the branch's lock file: the journal goes down before the
        // ref moves, and a writer killed while libgit2 held
        // `refs/heads/<branch>.lock` left it behind (every later commit
        // would fail as "branch moved").
        const WHY: &str = "interrupted commit";
        crate::lock::remove_stale_git_lock(&repo.path().join("index.lock"), WHY)?;
        if let Ok(branch) = branch_ref(repo) {
            crate::lock::remove_stale_git_lock(&repo.path().join(format!("{branch}.lock")), WHY)?;
        }
        worktree::repair(repo, &self.root, &journal.paths)?;
        worktree::remove_journal(repo)?;
        Ok(journal.paths.len())
    }

    fn commit_inner(
        &self,
        changes: &[Change],
        message: &str,
        allow_gitignore: bool,
        observer: &mut dyn FnMut(CommitStage),
    ) -> Result<Option<Oid>, GitError> {
        if changes.is_empty() {
            return Ok(None);
        }
        let latest = latest_changes(changes, allow_gitignore)?;

        let repo = self.lock_repo();
        // An earlier commit of this process may have failed mid work tree.
        self.repair_if_needed(&repo)?;
        let branch = branch_ref(&repo)?;
        let old = branch_tip(&repo, &branch)?;

        // Big batches collect their objects in an in-memory backend on a
        // private handle and land as ONE pack file: a loose object costs
        // several syscalls and an inode each (about 0.4 ms here).
        let pack_repo =
            if PACK_THRESHOLD.is_some_and(|t| latest.len() >= t) { Some(Repository::open(repo.path())?) } else { None };
        let w: &Repository = pack_repo.as_ref().unwrap_or(&repo);
        let w_odb = w.odb()?;
        let mempack = match pack_repo {
            Some(_) => Some(w_odb.add_new_mempack_backend(1000)?),
            None => None,
        };
        let parent = old.map(|id| w.find_commit(id)).transpose()?;
        let base_tree = base_tree_of(w, parent.as_ref())?;

        // Blobs first, on several threads when there are many (a loose
        // object is a zlib pass plus a file create each).
        let contents: Vec<&[u8]> = latest
            .values()
            .filter_map(|c| match c {
                Wanted::Bytes(b) => Some(*b),
                _ => None,
            })
            .collect();
        let blob_ids = match &mempack {
            Some(_) => contents.iter().map(|b| w_odb.write(ObjectType::Blob, b)).collect::<Result<Vec<_>, _>>()?,
            None => write_blobs(&repo, &w_odb, &contents)?,
        };
        let (mut update, targets) = tree_update(&base_tree, &w_odb, &latest, blob_ids)?;
        if targets.is_empty() {
            return Ok(None);
        }
        let tree_id = update.create_updated(w, &base_tree)?;
        if tree_id == base_tree.id() {
            return Ok(None);
        }
        let tree = w.find_tree(tree_id)?;
        let sig = signature(w)?;
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        // No ref is updated here: the commit stays unreachable until the CAS.
        let commit = w.commit(None, &sig, &sig, message, &tree, &parents)?;
        if let Some(mp) = &mempack {
            land_pack(&repo, w, mp)?;
        }
        observer(CommitStage::ObjectsWritten { commit });

        // The journal goes down before the ref moves, so a crash anywhere
        // after this point is repaired by the next open().
        let journal =
            Journal { commit: commit.to_string(), paths: targets.iter().map(|(p, _)| (*p).to_string()).collect() };
        worktree::write_journal(&repo, &journal)?;
        let deferred = self.defer_index.load(Ordering::SeqCst);
        if deferred {
            index::mark_behind(&repo, old)?;
        }
        // Durability barrier: objects must be on disk before a ref names them.
        sync_fs(repo.path());

        move_branch(&repo, &branch, old, commit, message)?;
        observer(CommitStage::RefUpdated { commit });

        let total = targets.len();
        worktree::apply(
            &repo,
            &self.root,
            &targets,
            &mut |done| observer(CommitStage::WorkTree { done, total }),
            !deferred,
        )?;
        if !deferred && index::is_behind(&repo) {
            // A lag left by someone else's deferred run: close it now.
            index::catch_up(&repo, &self.root, Some(commit))?;
        }
        // Work-tree files were written without per-file fsync; make them
        // durable once before the journal that could repair them goes.
        let _ = forest_fs::sync_filesystem(&self.root);
        worktree::remove_journal(&repo)?;
        Ok(Some(commit))
    }
}

/// The versioned changes of a batch, the last change of a path winning
/// (a `BTreeMap`, so the order is stable); an error when none is left.
fn latest_changes(changes: &[Change], allow_gitignore: bool) -> Result<BTreeMap<&str, Wanted<'_>>, GitError> {
    let mut latest: BTreeMap<&str, Wanted<'_>> = BTreeMap::new();
    for change in changes {
        let path = change.path();
        if !(path.ends_with(".md") || VERSIONED_CONFIG.contains(&path) || (allow_gitignore && path == ".gitignore")) {
            continue;
        }
        check_path(path)?;
        let content = match change {
            Change::Write { bytes, .. } => Wanted::Bytes(bytes),
            Change::Stored { blob, .. } => Wanted::Blob(*blob),
            Change::Delete { .. } => Wanted::Gone,
        };
        latest.insert(path, content);
    }
    if latest.is_empty() {
        return Err(GitError::NothingToCommit);
    }
    Ok(latest)
}

/// The tree a commit starts from: its parent's, or the empty tree.
fn base_tree_of<'r>(w: &'r Repository, parent: Option<&git2::Commit<'r>>) -> Result<git2::Tree<'r>, GitError> {
    Ok(match parent {
        Some(c) => c.tree()?,
        None => {
            // libgit2 knows the empty tree without it being stored: no
            // dangling object is left behind (fall back to writing it).
            match Oid::from_str(EMPTY_TREE).ok().and_then(|id| w.find_tree(id).ok()) {
                Some(t) => t,
                None => {
                    let empty = w.treebuilder(None)?.write()?;
                    w.find_tree(empty)?
                }
            }
        }
    })
}

/// The tree edits of a batch over `base_tree` and the work-tree targets
/// they imply; `blob_ids` are the ids of the `Wanted::Bytes` contents, in
/// `latest`'s order. Paths whose blob does not change are left out.
fn tree_update<'p>(
    base_tree: &git2::Tree<'_>,
    w_odb: &git2::Odb<'_>,
    latest: &BTreeMap<&'p str, Wanted<'p>>,
    blob_ids: Vec<Oid>,
) -> Result<(TreeUpdateBuilder, Vec<Target<'p>>), GitError> {
    let mut blob_ids = blob_ids.into_iter();
    let mut update = TreeUpdateBuilder::new();
    let mut targets: Vec<Target<'p>> = Vec::new();
    for (&path, content) in latest {
        let existing = match base_tree.get_path(Path::new(path)) {
            Ok(e) => Some(e.id()),
            Err(e) if e.code() == ErrorCode::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        match *content {
            Wanted::Bytes(bytes) => {
                let id =
                    blob_ids.next().ok_or_else(|| GitError::io("write blobs", std::io::ErrorKind::Other.into()))?;
                if existing != Some(id) {
                    update.upsert(path, id, FileMode::Blob);
                    targets.push((path, Some((id, Content::Bytes(bytes)))));
                }
            }
            Wanted::Blob(id) => {
                if !w_odb.exists(id) {
                    return Err(GitError::Git(git2::Error::from_str(&format!("blob {id} for {path} is not stored"))));
                }
                if existing != Some(id) {
                    update.upsert(path, id, FileMode::Blob);
                    targets.push((path, Some((id, Content::Stored))));
                }
            }
            Wanted::Gone => {
                if existing.is_some() {
                    update.remove(path);
                    targets.push((path, None));
                }
            }
        }
    }
    Ok((update, targets))
}

/// The compare-and-swap that publishes a batch: `branch` moves from `old`
/// (or is born) to `commit`, or nothing moves and the journal goes
/// (`E_CONCURRENT` when another writer moved it first).
fn move_branch(repo: &Repository, branch: &str, old: Option<Oid>, commit: Oid, message: &str) -> Result<(), GitError> {
    let subject = message.lines().next().unwrap_or("");
    let reflog = match old {
        Some(_) => format!("commit: {subject}"),
        None => format!("commit (initial): {subject}"),
    };
    // Zero oid = "the ref must not exist yet" (unborn branch).
    let expected = old.unwrap_or(Oid::ZERO_SHA1);
    if let Err(e) = repo.reference_matching(branch, commit, true, expected, &reflog) {
        worktree::remove_journal(repo)?;
        return Err(match e.code() {
            ErrorCode::Modified | ErrorCode::Exists | ErrorCode::Locked => GitError::Concurrent(branch.to_string()),
            _ => GitError::Git(e),
        });
    }
    sync_file(&repo.path().join(branch));
    Ok(())
}

/// Write the in-memory objects of a big batch as one pack file, then free them.
fn land_pack(repo: &Repository, w: &Repository, mp: &git2::Mempack<'_>) -> Result<(), GitError> {
    let mut pack = git2::Buf::new();
    mp.dump(w, &mut pack)?;
    let odb = repo.odb()?;
    let mut writer = odb.packwriter()?;
    writer.write_all(&pack).map_err(|e| GitError::io("write pack", e))?;
    writer.commit()?;
    // Free the in-memory objects now (they are in the pack file).
    mp.reset()?;
    Ok(())
}

/// Blobs written per thread before another one is worth starting.
const BLOBS_PER_WRITER: usize = 256;
/// Most blob-writer threads (each opens its own handle on the repository).
const BLOB_WRITERS: usize = 4;

/// Write `contents` as blobs, in order; big batches on several threads.
fn write_blobs(repo: &Repository, odb: &git2::Odb<'_>, contents: &[&[u8]]) -> Result<Vec<Oid>, GitError> {
    let writers = (contents.len() / BLOBS_PER_WRITER).min(BLOB_WRITERS);
    if writers < 2 {
        return contents.iter().map(|b| Ok(odb.write(ObjectType::Blob, b)?)).collect();
    }
    let per = contents.len().div_ceil(writers);
    let path = repo.path();
    std::thread::scope(|s| {
        let handles: Vec<_> = contents
            .chunks(per)
            .map(|part| {
                s.spawn(move || -> Result<Vec<Oid>, GitError> {
                    let own = Repository::open(path)?;
                    let odb = own.odb()?;
                    part.iter().map(|b| Ok(odb.write(ObjectType::Blob, b)?)).collect()
                })
            })
            .collect();
        let mut out = Vec::with_capacity(contents.len());
        for h in handles {
            match h.join() {
                Ok(ids) => out.extend(ids?),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(out)
    })
}

fn workdir(repo: &Repository, root: &Path) -> Result<PathBuf, GitError> {
    repo.workdir().map(Path::to_path_buf).ok_or_else(|| GitError::NotAForest(root.to_path_buf()))
}

/// The branch HEAD names (e.g. `refs/heads/master`), born or not.
fn branch_ref(repo: &Repository) -> Result<String, GitError> {
    let head = repo.find_reference("HEAD")?;
    head.symbolic_target()?.map(str::to_string).ok_or(GitError::DetachedHead)
}

fn branch_tip(repo: &Repository, branch: &str) -> Result<Option<Oid>, GitError> {
    match repo.find_reference(branch) {
        Ok(r) => Ok(Some(r.peel_to_commit()?.id())),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn check_path(path: &str) -> Result<(), GitError> {
    let bad = |reason| GitError::BadPath { path: path.to_string(), reason };
    if path.is_empty() {
        return Err(bad("empty path"));
    }
    if path.contains('\0') {
        return Err(bad("NUL byte"));
    }
    if path.contains('\\') {
        return Err(bad("backslash (paths are POSIX)"));
    }
    if path.starts_with('/') {
        return Err(bad("absolute path"));
    }
    for comp in path.split('/') {
        if comp.is_empty() || comp == "." || comp == ".." {
            return Err(bad("empty, '.' or '..' component"));
        }
        if comp.eq_ignore_ascii_case(".git") {
            return Err(bad("inside .git"));
        }
    }
    Ok(())
}

/// Committer identity: env override, else git config, else `forest <forest@localhost>`.
fn signature(repo: &Repository) -> Result<Signature<'static>, GitError> {
    let cfg = repo.config().ok();
    let pick = |env: &str, key: &str, default: &str| {
        std::env::var(env)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .or_else(|| cfg.as_ref().and_then(|c| c.get_string(key).ok()))
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| default.to_string())
    };
    let name = pick(ENV_NAME, "user.name", DEFAULT_NAME);
    let email = pick(ENV_EMAIL, "user.email", DEFAULT_EMAIL);
    Ok(Signature::now(&name, &email)?)
}

/// Flush the filesystem holding `dir` (one syscall instead of one fsync per
/// loose object). Best effort: a failure only weakens power-loss durability.
fn sync_fs(dir: &Path) {
    if let Ok(f) = File::open(dir) {
        // SAFETY: syncfs on a valid fd owned by `f`.
        unsafe { libc::syncfs(f.as_raw_fd()) };
    }
}

/// fsync a file and its directory, best effort (the updated loose ref).
fn sync_file(path: &Path) {
    if let Ok(f) = File::open(path) {
        let _ = f.sync_all();
    }
    if let Some(dir) = path.parent().and_then(|d| File::open(d).ok()) {
        let _ = dir.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_checks() {
        assert!(check_path("a/b.md").is_ok());
        for bad in ["", "/a.md", "a//b.md", "../a.md", "a/./b.md", ".git/x.md", "a\\b.md"] {
            assert!(check_path(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn last_change_of_a_path_wins() {
        let dir = tempfile::tempdir().unwrap();
        let f = GitForest::init(dir.path(), "init", &[("a.md".into(), b"1".to_vec())]).unwrap();
        let changes =
            vec![Change::Write { path: "b.md".into(), bytes: b"x".to_vec() }, Change::Delete { path: "b.md".into() }];
        // Write then delete of a path absent from HEAD nets to nothing.
        assert_eq!(f.commit_batch(&changes, "noop").unwrap(), None);
        assert!(!dir.path().join("b.md").exists());
    }
}
