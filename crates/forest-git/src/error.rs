//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong in the lock or the commit layer.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// Another live process holds the writer lock.
    #[error(
        "E_LOCKED: forest is locked by pid {pid} on host {host} since {since}; \
         the lock is reclaimed automatically when that process exits"
    )]
    Locked {
        /// Pid written in the holder's card (0 when the card is unreadable).
        pid: u32,
        /// Host written in the holder's card.
        host: String,
        /// RFC 3339 instant written in the holder's card.
        since: String,
    },
    /// The lock file kept being replaced between `open` and `flock`.
    #[error("E_LOCKED: lock file {0} was replaced repeatedly while locking; try again")]
    LockUnstable(PathBuf),
    /// Only `.md` files are versioned and the batch had nothing else.
    #[error("nothing to commit: only .md files and _meta/gardener.yaml, _meta/ranger.yaml are versioned")]
    NothingToCommit,
    /// A change names a path that cannot live in the forest.
    #[error("bad path {path:?}: {reason}")]
    BadPath {
        /// The offending forest-relative path.
        path: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// `init` on a directory that already has a `.git`.
    #[error("{0} already has a git repository")]
    AlreadyInitialized(PathBuf),
    /// `open` on a directory that is not the top level of its own repository.
    #[error("{0} is not the top level of a forest git repository")]
    NotAForest(PathBuf),
    /// HEAD is detached: there is no branch ref to move.
    #[error("HEAD is detached; a forest commits on a branch")]
    DetachedHead,
    /// The branch ref changed under us; nothing was committed.
    #[error("branch {0} moved during the commit (concurrent writer?); nothing was committed")]
    Concurrent(String),
    /// The crash journal exists but cannot be read.
    #[error("unreadable work-tree journal {path}: {reason}")]
    Journal {
        /// Journal path.
        path: PathBuf,
        /// Parse or read error.
        reason: String,
    },
    /// A filesystem operation failed.
    #[error("{context}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// libgit2 failed.
    #[error("git")]
    Git(#[from] git2::Error),
}

impl GitError {
    /// Dialect error code for the envelope (`E_LOCKED`, `E_SCHEMA`, `E_INTERNAL`).
    pub fn code(&self) -> forest_model::ErrorCode {
        match self {
            GitError::Locked { .. } | GitError::LockUnstable(_) => forest_model::ErrorCode::Locked,
            GitError::NothingToCommit
            | GitError::BadPath { .. }
            | GitError::AlreadyInitialized(_)
            | GitError::NotAForest(_) => forest_model::ErrorCode::Schema,
            _ => forest_model::ErrorCode::Internal,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        GitError::Io { context: context.into(), source }
    }
}
