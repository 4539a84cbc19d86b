//! The error of a `git:` source. A variant that wraps a cause keeps it as
//! its `source` and does not repeat it, so a chain (`crate::error::chain`)
//! prints each cause once; the report's line for a source is that chain.

use std::path::PathBuf;

/// Why a git source could not be opened, listed or read.
#[derive(Debug, thiserror::Error)]
pub enum GitSourceError {
    /// The `git:` uri does not parse.
    #[error("{uri}: {reason}")]
    Spec {
        /// The uri as written.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A local path that is not a git repository.
    #[error("{path} is not a git repository")]
    NotARepository {
        /// The path as given.
        path: String,
        /// libgit2's reason.
        #[source]
        source: git2::Error,
    },
    /// `git fetch` of a URL failed (unreachable host, refused, no such
    /// repository, credentials); `reason` is git's last line.
    #[error("cannot fetch {url}: {reason}")]
    Fetch {
        /// The URL.
        url: String,
        /// The last line git printed.
        reason: String,
    },
    /// The ref names nothing in the repository.
    #[error("ref '{reference}' not found in {location}")]
    RefNotFound {
        /// The ref as written (`HEAD` when none).
        reference: String,
        /// The repository.
        location: String,
    },
    /// The ref names an object that is not a commit.
    #[error("ref '{reference}' of {location} is not a commit")]
    NotACommit {
        /// The ref as written.
        reference: String,
        /// The repository.
        location: String,
    },
    /// SUBDIR is not a folder at the mirrored commit.
    #[error("folder '{subdir}' does not exist at commit {commit} of {location}")]
    NoFolder {
        /// The folder.
        subdir: String,
        /// The commit.
        commit: git2::Oid,
        /// The repository.
        location: String,
    },
    /// A read of the repository failed (a corrupt or truncated object).
    #[error("{what}")]
    Read {
        /// What was being read.
        what: String,
        /// libgit2's reason.
        #[source]
        source: git2::Error,
    },
    /// The `git` binary could not be run.
    #[error("cannot run {binary}")]
    Spawn {
        /// The binary.
        binary: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `git cat-file` did not stream a blob.
    #[error("git cat-file blob {oid} failed ({status})")]
    CatFile {
        /// The blob.
        oid: String,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
    /// A local file (a download slot, the mirror) could not be written.
    #[error("cannot write {}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl GitSourceError {
    /// Stable error code, for callers that branch on the kind of failure.
    pub fn code(&self) -> &'static str {
        match self {
            GitSourceError::Spec { .. } => "E_SCHEMA",
            GitSourceError::NotARepository { .. }
            | GitSourceError::RefNotFound { .. }
            | GitSourceError::NoFolder { .. } => "E_NOT_FOUND",
            GitSourceError::NotACommit { .. } => "E_SCHEMA",
            GitSourceError::Fetch { .. } => "E_UNREACHABLE",
            GitSourceError::Read { .. } | GitSourceError::CatFile { .. } => "E_GIT",
            GitSourceError::Spawn { .. } | GitSourceError::Io { .. } => "E_IO",
        }
    }

    /// A failed read of `what`.
    pub(crate) fn read(what: impl Into<String>) -> impl FnOnce(git2::Error) -> GitSourceError {
        let what = what.into();
        move |source| GitSourceError::Read { what, source }
    }

    /// A failed write of `path`.
    pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> GitSourceError + '_ {
        move |source| GitSourceError::Io { path: path.to_path_buf(), source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_one_line_messages() {
        let e = GitSourceError::RefNotFound { reference: "nope".into(), location: "/r".into() };
        assert_eq!((e.code(), e.to_string().as_str()), ("E_NOT_FOUND", "ref 'nope' not found in /r"));
        let e = GitSourceError::Fetch { url: "git://127.0.0.1:1/r".into(), reason: "refused".into() };
        assert_eq!(e.code(), "E_UNREACHABLE");
        let e = GitSourceError::read("cannot read the commit")(git2::Error::from_str("corrupt"));
        assert_eq!(e.to_string(), "cannot read the commit");
        assert_eq!(std::error::Error::source(&e).map(|s| s.to_string()).as_deref(), Some("corrupt"));
    }
}
