//! Which catalog bytes were last verified: a stamp file beside
//! `catalog.db`, so a nightly sync of a 10^6-node forest does not pay
//! `quick_check` + FTS5 `integrity-check` (~20 s) on a catalog nothing but
//! a verified run of ours has written since.
//!
//! Chain of trust: a run that found the stamp matching (or verified the
//! catalog itself) and closed its connection normally records the new
//! stamp; anyone else's write (another engine, a vine write, a crash that
//! left a WAL behind) changes the files and so forces the next full check.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Size and mtime (ns) of the database file and of its WAL, if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    db: (u64, u128),
    wal: Option<(u64, u128)>,
}

fn stamp_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".verified");
    db.with_file_name(name)
}

fn file_stamp(p: &Path) -> Option<(u64, u128)> {
    let m = std::fs::metadata(p).ok()?;
    let t = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    Some((m.len(), t))
}

fn current(db: &Path) -> Option<Stamp> {
    let mut wal = db.as_os_str().to_os_string();
    wal.push("-wal");
    // An empty WAL carries no frames: same bytes as no WAL.
    let wal = file_stamp(Path::new(&wal)).filter(|(len, _)| *len > 0);
    Some(Stamp { db: file_stamp(db)?, wal })
}

/// True when `db`'s files are exactly as the last verified run left them.
pub fn is_verified(db: &Path) -> bool {
    let Some(now) = current(db) else { return false };
    std::fs::read(stamp_path(db)).ok().and_then(|b| serde_json::from_slice::<Stamp>(&b).ok()).is_some_and(|s| s == now)
}

/// Record `db`'s current files as verified. Call only with every
/// connection closed, after a run that started from a verified catalog.
pub fn mark_verified(db: &Path) {
    if let Some(now) = current(db) {
        if let Ok(bytes) = serde_json::to_vec(&now) {
            // A derived marker: losing it costs one full check.
            let _ = forest_fs::atomic_write(&stamp_path(db), &bytes);
        }
    }
}

/// Forget the verification (a writer that cannot vouch for its result).
pub fn clear_verified(db: &Path) {
    let _ = std::fs::remove_file(stamp_path(db));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_write_after_the_mark_undoes_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("catalog.db");
        assert!(!is_verified(&db), "no file");
        std::fs::write(&db, b"one").unwrap();
        assert!(!is_verified(&db), "never marked");
        mark_verified(&db);
        assert!(is_verified(&db));
        std::fs::write(&db, b"two, longer").unwrap();
        assert!(!is_verified(&db), "the database changed");
        mark_verified(&db);
        std::fs::write(dir.path().join("catalog.db-wal"), b"frames").unwrap();
        assert!(!is_verified(&db), "a WAL with frames is a change");
        std::fs::write(dir.path().join("catalog.db-wal"), b"").unwrap();
        assert!(is_verified(&db), "an empty WAL is not");
        clear_verified(&db);
        assert!(!is_verified(&db));
    }
}
