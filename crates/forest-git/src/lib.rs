//! Invariant: HEAD moves only by one compare-and-swap update of the branch ref,
//! made after every object of the batch (blobs, trees, commit) is written; the
//! work tree and the git index follow HEAD, only for the paths a batch changed,
//! and a crash between the ref update and the end of that catch-up is repaired
//! from HEAD by the next [`GitForest::open`].
//!
//! Two parts:
//! - [`WriterLock`]: the dialect's one-writer-per-forest `.vine.lock`
//!   (kernel `flock`, JSON card `{pid, host, since}`), plus [`probe`] and
//!   [`break_orphan`] for diagnostics.
//! - [`GitForest`]: the forest's own repository and its batch commit
//!   ([`GitForest::commit_batch`]): one commit or nothing, built from HEAD's
//!   tree and the changed paths only (never a work-tree rescan).

mod error;
mod index;
mod index_file;
mod lock;
mod objects;
mod repo;
mod worktree;

pub use error::GitError;
pub use git2::Oid;
pub use index::INDEX_BASE_FILE;
pub use lock::{break_orphan, probe, LockCard, LockState, WriterLock, LOCK_FILE};
pub use objects::{blob_id, Objects};
pub use repo::{
    limit_pack_windows, Change, CommitStage, GcOutcome, GitForest, DEFAULT_EMAIL, DEFAULT_NAME, ENV_EMAIL, ENV_NAME,
    VERSIONED_CONFIG,
};
pub use worktree::JOURNAL_FILE;
