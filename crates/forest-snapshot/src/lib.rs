//! Forest snapshots: one `.forest` file holding a whole forest, in the
//! reference engine's container format (monkeyllm 0.83, `snapshot.py`), so
//! either engine restores the other's snapshots.
//!
//! A container is a ZIP with exactly these members:
//! - `forest.bundle`: `git bundle create --all` of the forest's repository
//!   (every commit, clonable by git alone);
//! - `README.txt`: how to open the file without any forest software;
//! - `payloads/<path>`: the bytes git does not hold (dialect A.3.1), at their
//!   forest-relative path: every `*.db` / `*.sqlite` and every file under a
//!   directory named `_assets` at any depth (`_derived/` and `.git/` excluded).
//!
//! Restore decides the format by the file's content (a bare git bundle, the
//! pre-container format, still restores), judges every member before any
//! byte lands, refuses the first member outside those rules with one error,
//! and caps the payloads' declared uncompressed total (2 GiB by default).
//!
//! In: a forest directory (create) or a snapshot file (restore). Out: the
//! snapshot file, written beside its final name and renamed into place; or a
//! restored forest, built in a staging directory beside the target and
//! renamed into place, so a refused or damaged snapshot leaves nothing
//! behind. Both are streamed: no member is ever held in memory. It runs the
//! `git` CLI (libgit2 has no bundle support) and touches nothing else.

mod create;
mod restore;

pub use create::{create_snapshot, payload_files, CreateOptions, CreateReport};
pub use restore::{check_member, restore_snapshot, Member, RestoreOptions, RestoreReport};

use std::path::PathBuf;

/// File suffix of a snapshot container.
pub const CONTAINER_SUFFIX: &str = ".forest";
/// The git bundle member.
pub const BUNDLE_MEMBER: &str = "forest.bundle";
/// The human-readable note member.
pub const README_MEMBER: &str = "README.txt";
/// Prefix of every payload member.
pub const PAYLOAD_PREFIX: &str = "payloads/";
/// Directory name whose files are payloads at any depth.
pub const ASSETS_DIR: &str = "_assets";
/// Default ceiling on the payloads' declared uncompressed total (the reference's).
pub const MAX_UNCOMPRESSED: u64 = 2 * 1024 * 1024 * 1024;

/// Everything that can stop a snapshot. Each variant is one clear line.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The directory is not a git repository.
    #[error(
        "E_NOT_A_FOREST: {0} is not a forest git repository (no .git); snapshots package the forest's own git history"
    )]
    NotARepo(PathBuf),
    /// The snapshot file does not exist.
    #[error("E_NOT_FOUND: snapshot not found: {0}")]
    NotFound(PathBuf),
    /// The restore target exists and is not an empty directory.
    #[error("E_TARGET_NOT_EMPTY: restore target is not an empty directory: {0} (refusing to overwrite; pick a fresh directory)")]
    TargetNotEmpty(PathBuf),
    /// Neither a ZIP container nor a git bundle.
    #[error("E_NOT_A_SNAPSHOT: {0} is neither a .forest container (ZIP) nor a git bundle")]
    NotASnapshot(PathBuf),
    /// Starts like a ZIP but its directory cannot be read (a cut copy, usually).
    #[error("E_DAMAGED: {path} starts like a ZIP but cannot be read as one (truncated or damaged copy?): {detail}")]
    Damaged {
        /// Snapshot file.
        path: PathBuf,
        /// What the ZIP reader said.
        detail: String,
    },
    /// A container without `forest.bundle`.
    #[error("E_NO_BUNDLE: snapshot carries no {BUNDLE_MEMBER}; is this a forest snapshot?")]
    NoBundle,
    /// A member outside the rules; nothing was written.
    #[error("E_REFUSED_MEMBER: refused snapshot member {name:?}: {reason}; a snapshot carries {BUNDLE_MEMBER}, {README_MEMBER} and the forest's payload files under {PAYLOAD_PREFIX}, nothing else")]
    RefusedMember {
        /// Member name as stored.
        name: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// Two members share one name (which one lands would be the reader's choice).
    #[error("E_REFUSED_MEMBER: two snapshot members share one name; a snapshot names each file once")]
    DuplicateMembers,
    /// The payloads declare more uncompressed bytes than the ceiling; nothing was written.
    #[error("E_OVER_CEILING: snapshot payloads expand past the uncompressed ceiling ({declared} > {ceiling} bytes)")]
    OverCeiling {
        /// Declared total so far when the ceiling was crossed.
        declared: u64,
        /// The ceiling.
        ceiling: u64,
    },
    /// A member's bytes do not match its declared size or checksum.
    #[error("E_DAMAGED: snapshot member {name:?} is damaged: {detail}")]
    DamagedMember {
        /// Member name.
        name: String,
        /// What went wrong while reading it.
        detail: String,
    },
    /// A git command failed.
    #[error("E_GIT: git {cmd}: {detail}")]
    Git {
        /// The git subcommand line.
        cmd: String,
        /// stderr of git (or why it could not run).
        detail: String,
    },
    /// File-system error, with what was being done.
    #[error("E_IO: {context}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// ZIP writer/reader error outside a specific member.
    #[error("E_ZIP: {context}")]
    Zip {
        /// What was being done.
        context: String,
        /// The error.
        source: zip::result::ZipError,
    },
}

impl SnapshotError {
    /// The stable code (the text before the first colon).
    pub fn code(&self) -> &'static str {
        match self {
            SnapshotError::NotARepo(_) => "E_NOT_A_FOREST",
            SnapshotError::NotFound(_) => "E_NOT_FOUND",
            SnapshotError::TargetNotEmpty(_) => "E_TARGET_NOT_EMPTY",
            SnapshotError::NotASnapshot(_) => "E_NOT_A_SNAPSHOT",
            SnapshotError::Damaged { .. } | SnapshotError::DamagedMember { .. } => "E_DAMAGED",
            SnapshotError::NoBundle => "E_NO_BUNDLE",
            SnapshotError::RefusedMember { .. } | SnapshotError::DuplicateMembers => "E_REFUSED_MEMBER",
            SnapshotError::OverCeiling { .. } => "E_OVER_CEILING",
            SnapshotError::Git { .. } => "E_GIT",
            SnapshotError::Io { .. } => "E_IO",
            SnapshotError::Zip { .. } => "E_ZIP",
        }
    }
}

pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> SnapshotError {
    let context = context.into();
    move |source| SnapshotError::Io { context, source }
}

/// Run `git -C dir args...`; stdout on success.
pub(crate) fn git(dir: Option<&std::path::Path>, args: &[&std::ffi::OsStr]) -> Result<String, SnapshotError> {
    let mut cmd = std::process::Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    cmd.args(args).env_remove("GIT_DIR").env_remove("GIT_WORK_TREE").env("GIT_TERMINAL_PROMPT", "0");
    let line = args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let out =
        cmd.output().map_err(|e| SnapshotError::Git { cmd: line.clone(), detail: format!("cannot run git: {e}") })?;
    if !out.status.success() {
        return Err(SnapshotError::Git { cmd: line, detail: String::from_utf8_lossy(&out.stderr).trim().to_string() });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
