//! The writer lock `.vine.lock` (dialect §1.11 "Concurrency (C.9)").
//!
//! The kernel `flock` is the lock; the JSON card inside the file only says
//! who holds it. A card left by a dead process has no `flock` behind it, so
//! the next acquirer simply takes the lock and rewrites the card.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::GitError;

/// File name of the lock at the forest root (gitignored by the dialect).
pub const LOCK_FILE: &str = ".vine.lock";

/// How many times `acquire` re-opens when the file is swapped under it.
const MAX_ATTEMPTS: usize = 4;

/// The card written into `.vine.lock` by its holder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LockCard {
    /// Process id of the holder.
    pub pid: u32,
    /// Host name of the holder.
    pub host: String,
    /// When the lock was taken (RFC 3339, UTC).
    pub since: String,
}

/// What [`probe`] sees at a forest root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum LockState {
    /// No lock file.
    Free,
    /// A lock file nobody holds (its writer died or never cleaned up).
    Orphan {
        /// The card left behind, if readable.
        card: Option<LockCard>,
    },
    /// A live process holds the lock.
    Held {
        /// The holder's card, if readable yet.
        card: Option<LockCard>,
    },
}

#[derive(Debug)]
enum Mode {
    /// Kernel flock on `file`.
    Flock,
    /// Filesystem without flock: the file's existence is the lock.
    Exclusive,
}

/// The held writer lock; dropping it releases (unlink while holding, then unlock).
#[derive(Debug)]
pub struct WriterLock {
    file: File,
    path: PathBuf,
    mode: Mode,
    card: LockCard,
}

impl WriterLock {
    /// Take the forest's writer lock without blocking.
    ///
    /// Fails with [`GitError::Locked`] naming the live holder. An orphan card
    /// (holder dead) is reclaimed silently and rewritten with our card.
    pub fn acquire(root: &Path) -> Result<WriterLock, GitError> {
        let path = root.join(LOCK_FILE);
        for _ in 0..MAX_ATTEMPTS {
            let file = open_lock_file(&path)?;
            // SAFETY: flock on a valid fd owned by `file`.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let err = io::Error::last_os_error();
                return match err.raw_os_error() {
                    Some(libc::EWOULDBLOCK) => Err(locked_error(read_card(&path))),
                    Some(libc::ENOLCK | libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL) => {
                        drop(file);
                        acquire_exclusive(&path)
                    }
                    _ => Err(GitError::io(format!("flock {}", path.display()), err)),
                };
            }
            // A releasing holder unlinks the file while holding it: if we
            // locked that unlinked inode, our lock guards nothing. Re-check.
            if !same_inode(&file, &path) {
                continue;
            }
            let card = our_card();
            write_card(&file, &path, &card)?;
            return Ok(WriterLock { file, path, mode: Mode::Flock, card });
        }
        Err(GitError::LockUnstable(path))
    }

    /// The card this lock wrote.
    pub fn card(&self) -> &LockCard {
        &self.card
    }

    /// Path of the lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        match self.mode {
            Mode::Flock => {
                // Unlink while still holding, so no one can lock this inode
                // after us and believe it is the live lock file.
                if same_inode(&self.file, &self.path) {
                    let _ = fs::remove_file(&self.path);
                }
                // SAFETY: flock on a valid fd owned by `self.file`.
                unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
            }
            Mode::Exclusive => {
                if read_card(&self.path).as_ref() == Some(&self.card) {
                    let _ = fs::remove_file(&self.path);
                }
            }
        }
    }
}

/// Inspect the lock at `root` without taking it (diagnostics only).
///
/// Briefly takes a shared `flock` to tell a live holder from an orphan, so an
/// acquirer racing with the probe may see `Locked` for that instant.
pub fn probe(root: &Path) -> Result<LockState, GitError> {
    let path = root.join(LOCK_FILE);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(LockState::Free),
        Err(e) => return Err(GitError::io(format!("open {}", path.display()), e)),
    };
    let card = read_card(&path);
    // SAFETY: flock on a valid fd owned by `file`.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Ok(LockState::Held { card });
        }
        // No flock on this filesystem: judge by the card's pid.
        return Ok(match &card {
            Some(c) if card_is_live(c) => LockState::Held { card },
            _ => LockState::Orphan { card },
        });
    }
    // SAFETY: as above; we only peeked.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
    Ok(LockState::Orphan { card })
}

/// Remove an orphan lock file. Returns whether one was removed; a live holder
/// is refused with [`GitError::Locked`].
pub fn break_orphan(root: &Path) -> Result<bool, GitError> {
    match probe(root)? {
        LockState::Free => Ok(false),
        LockState::Held { card } => Err(locked_error(card)),
        LockState::Orphan { .. } => {
            // Taking and releasing the lock removes the file safely.
            drop(WriterLock::acquire(root)?);
            Ok(true)
        }
    }
}

fn open_lock_file(path: &Path) -> Result<File, GitError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(path)
        .map_err(|e| GitError::io(format!("open {}", path.display()), e))
}

/// O_EXCL fallback for filesystems without `flock`: existence is the lock,
/// a card whose pid is dead on this host is reclaimed.
fn acquire_exclusive(path: &Path) -> Result<WriterLock, GitError> {
    for _ in 0..MAX_ATTEMPTS {
        match OpenOptions::new().read(true).write(true).create_new(true).mode(0o644).open(path) {
            Ok(file) => {
                let card = our_card();
                write_card(&file, path, &card)?;
                return Ok(WriterLock { file, path: path.to_path_buf(), mode: Mode::Exclusive, card });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let card = read_card(path);
                match &card {
                    Some(c) if card_is_live(c) => return Err(locked_error(card)),
                    // A card still being written by a live creator looks empty:
                    // only a readable dead card is reclaimed.
                    None => return Err(locked_error(None)),
                    Some(_) => {
                        let _ = fs::remove_file(path);
                    }
                }
            }
            Err(e) => return Err(GitError::io(format!("create {}", path.display()), e)),
        }
    }
    Err(GitError::LockUnstable(path.to_path_buf()))
}

fn same_inode(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Rewrite the card in place: the lock lives on this inode, so the card can
/// not go through forest_fs::atomic_write (a rename would swap the inode).
fn write_card(file: &File, path: &Path, card: &LockCard) -> Result<(), GitError> {
    let ctx = || format!("write lock card {}", path.display());
    let bytes = serde_json::to_vec(card).map_err(|e| GitError::io(ctx(), io::Error::other(e.to_string())))?;
    file.set_len(0).map_err(|e| GitError::io(ctx(), e))?;
    file.write_all_at(&bytes, 0).map_err(|e| GitError::io(ctx(), e))?;
    file.sync_data().map_err(|e| GitError::io(ctx(), e))
}

fn read_card(path: &Path) -> Option<LockCard> {
    let mut s = String::new();
    File::open(path).ok()?.read_to_string(&mut s).ok()?;
    serde_json::from_str(&s).ok()
}

fn locked_error(card: Option<LockCard>) -> GitError {
    let card = card.unwrap_or(LockCard { pid: 0, host: "unknown".into(), since: "unknown".into() });
    GitError::Locked { pid: card.pid, host: card.host, since: card.since }
}

fn our_card() -> LockCard {
    LockCard {
        pid: std::process::id(),
        host: hostname(),
        since: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }
}

/// Whether the card's process may still be alive. Another host's pid cannot
/// be checked, so it counts as alive.
fn card_is_live(card: &LockCard) -> bool {
    if card.host != hostname() {
        return true;
    }
    let Ok(pid) = libc::pid_t::try_from(card.pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks existence/permission.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// This machine's host name ("unknown" if the call fails).
/// Remove a git lock file (`index.lock`, `refs/heads/<branch>.lock`) that a
/// writer killed mid-write left behind; `why` names the evidence that it
/// died (the caller holds the forest's writer lock, so no live forest
/// writer owns it).
pub(crate) fn remove_stale_git_lock(path: &Path, why: &str) -> Result<(), GitError> {
    if path.exists() {
        tracing::warn!(path = %path.display(), why, "removing a stale git lock file");
        fs::remove_file(path).map_err(|e| GitError::io(format!("remove {}", path.display()), e))?;
    }
    Ok(())
}

pub(crate) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is valid for buf.len() bytes; gethostname NUL-terminates
    // when the name fits.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acquire_release_unlinks() {
        let dir = tempfile::tempdir().unwrap();
        let lock = WriterLock::acquire(dir.path()).unwrap();
        let on_disk = read_card(&dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(&on_disk, lock.card());
        assert_eq!(on_disk.pid, std::process::id());
        drop(lock);
        assert!(!dir.path().join(LOCK_FILE).exists());
        assert_eq!(probe(dir.path()).unwrap(), LockState::Free);
    }

    #[test]
    fn live_card_check() {
        let mut card = our_card();
        assert!(card_is_live(&card));
        card.host = format!("{}-elsewhere", card.host);
        assert!(card_is_live(&card), "foreign host counts as live");
        let mut dead = our_card();
        dead.pid = 0;
        assert!(!card_is_live(&dead));
    }
}
