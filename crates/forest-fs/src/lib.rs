//! The one atomic-write helper every crate uses.
//!
//! Invariant: a reader of `path` sees either the old bytes or the new bytes,
//! never a torn file; the temp file lives in the same directory (same
//! filesystem) and is fsynced before the rename, the directory after it.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Temp name used for `path`: `.<name>.<pid>.<n>.tmp` in the same directory.
/// Names starting with `.` and ending `.tmp` are ignored by every walker.
pub fn temp_path_for(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "file".into());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

/// Write `bytes` to `path` atomically (temp in same dir, fsync, rename, fsync dir).
/// Parent directories are created.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_via_temp(path, bytes, true)
}

/// Write `bytes` to `path` via temp + rename but WITHOUT fsync: readers never
/// see a torn file, but the data may sit in the page cache. Only for callers
/// that keep their own crash journal and call [`sync_filesystem`] before
/// dropping it (the git work tree: a crash is repaired from HEAD).
pub fn write_replace_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_via_temp(path, bytes, false)
}

fn write_via_temp(path: &Path, bytes: &[u8], durable: bool) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() {
            fs::create_dir_all(parent)?;
        }
    }
    let tmp = temp_path_for(path);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        drop(f);
        fs::rename(&tmp, path)?;
        if durable {
            sync_dir(path.parent())?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Flush the whole filesystem holding `path` (Linux `syncfs`; `sync` elsewhere).
pub fn sync_filesystem(path: &Path) -> io::Result<()> {
    let f = File::open(path)?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        extern "C" {
            fn syncfs(fd: i32) -> i32;
        }
        // SAFETY: syncfs on a valid fd owned by `f` for the whole call.
        if unsafe { syncfs(f.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        f.sync_all()?;
    }
    Ok(())
}

/// Move an already-written temp file into place atomically and fsync its directory.
pub fn atomic_rename(tmp: &Path, path: &Path) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() {
            fs::create_dir_all(parent)?;
        }
    }
    fs::rename(tmp, path)?;
    sync_dir(path.parent())
}

/// Move a file into place (parents created) WITHOUT fsync: readers see the
/// old or the new file, but the rename may not survive a power cut. Only for
/// callers that keep their own crash journal and call [`sync_filesystem`]
/// before dropping it (the gardener's staged payloads).
pub fn rename_unsynced(tmp: &Path, path: &Path) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() {
            fs::create_dir_all(parent)?;
        }
    }
    fs::rename(tmp, path)
}

fn sync_dir(dir: Option<&Path>) -> io::Result<()> {
    match dir {
        Some(d) if !d.as_os_str().is_empty() => match File::open(d) {
            Ok(f) => f.sync_all().or(Ok(())),
            Err(_) => Ok(()),
        },
        _ => Ok(()),
    }
}

/// True for temp files written by [`atomic_write`] (for orphan cleanup).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// The process id in a temp name of [`temp_path_for`].
fn temp_pid(name: &str) -> Option<u32> {
    let mut parts = name.strip_suffix(".tmp")?.rsplitn(3, '.');
    parts.next()?.parse::<u64>().ok()?;
    parts.next()?.parse().ok()
}

/// Remove the temp files of [`temp_path_for`] directly in `dir` whose
/// writing process is gone (killed mid-write: a large streamed file would
/// otherwise stay forever), and temp-named directories (a staging tree)
/// with them; a live process's are kept. Only where
/// `/proc` tells which processes live (Linux); elsewhere nothing is
/// removed. Returns how many were removed.
pub fn sweep_orphan_temps(dir: &Path) -> usize {
    if !Path::new("/proc/self").exists() {
        return 0;
    }
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = temp_pid(&name).filter(|_| is_temp_name(&name)) else { continue };
        let gone = pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists();
        let dir = e.file_type().is_ok_and(|t| t.is_dir());
        if gone && if dir { fs::remove_dir_all(e.path()) } else { fs::remove_file(e.path()) }.is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_removes_only_temps_of_processes_that_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mine = temp_path_for(&d.join("vectors.f32"));
        // pid_max on Linux is at most 2^22: this process cannot exist
        let dead = d.join(".vectors.f32.99999999.3.tmp");
        for p in [&mine, &dead, &d.join("vectors.f32"), &d.join(".notes.tmp")] {
            fs::write(p, b"x").unwrap();
        }
        let staged = d.join(".canopy-full.99999999.4.tmp");
        fs::create_dir_all(staged.join("inner")).unwrap();
        assert_eq!(temp_pid(".vectors.f32.99999999.3.tmp"), Some(99_999_999));
        assert_eq!(sweep_orphan_temps(d), 2);
        assert!(!dead.exists() && !staged.exists());
        assert!(mine.exists() && d.join("vectors.f32").exists() && d.join(".notes.tmp").exists());
    }

    #[test]
    fn writes_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.md");
        atomic_write(&p, b"one").unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let leftovers: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| is_temp_name(&e.file_name().to_string_lossy()))
            .collect();
        assert!(leftovers.is_empty());
    }
}
