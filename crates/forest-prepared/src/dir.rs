//! Directory backend: temp file in the object's directory, fsync, then
//! `link(2)` to the final name, which fails when the name exists: write-once
//! without a lock, also across hosts on a shared POSIX volume.

use crate::{PreparedError, PreparedStore, Put};
use std::io::Write;
use std::path::{Path, PathBuf};

fn io(context: String) -> impl FnOnce(std::io::Error) -> PreparedError {
    move |source| PreparedError::Io { context, source }
}

fn path_of(root: &Path, key: &str) -> PathBuf {
    root.join(PreparedStore::object_name(key))
}

pub(crate) fn read(root: &Path, key: &str) -> Result<Option<Vec<u8>>, PreparedError> {
    let p = path_of(root, key);
    match std::fs::read(&p) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(format!("read {}", p.display()))(e)),
    }
}

pub(crate) fn write_once(root: &Path, key: &str, bytes: &[u8]) -> Result<Put, PreparedError> {
    let p = path_of(root, key);
    let dir = p.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
    let tmp = forest_fs::temp_path_for(&p);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp).map_err(io(format!("create {}", tmp.display())))?;
        f.write_all(bytes).map_err(io(format!("write {}", tmp.display())))?;
        f.sync_all().map_err(io(format!("fsync {}", tmp.display())))?;
        drop(f);
        match std::fs::hard_link(&tmp, &p) {
            Ok(()) => {
                // The new name is durable once its directory is.
                if let Ok(d) = std::fs::File::open(dir) {
                    let _ = d.sync_all();
                }
                Ok(Put::Written)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(Put::Exists),
            Err(e) => Err(io(format!("link {}", p.display()))(e)),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

pub(crate) fn remove(root: &Path, key: &str) -> Result<(), PreparedError> {
    let p = path_of(root, key);
    match std::fs::remove_file(&p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(format!("remove {}", p.display()))(e)),
    }
}
