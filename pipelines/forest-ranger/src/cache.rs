//! LRU eviction of the remote-payload cache `_derived/payloads/` (dialect
//! §8, H.6). Everything there is re-fetchable and hash-validated on fetch,
//! so deleting is always safe.

use std::path::Path;
use std::time::UNIX_EPOCH;

use schemars::JsonSchema;
use serde::Serialize;

use crate::{RangerError, Result};

/// Cache directory inside a forest.
pub const PAYLOADS_DIR: &str = "_derived/payloads";

/// `{evicted, kept_bytes}` of one eviction pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PayloadCacheReport {
    /// Files deleted.
    pub evicted: usize,
    /// Bytes left in the cache.
    pub kept_bytes: u64,
}

/// One cached file as seen by the planner.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheFile {
    /// File name inside the cache dir.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time (unix seconds; the LRU clock: cache hits touch it).
    pub mtime: f64,
}

/// Budget in bytes for `gb` decimal gigabytes (at least 1 byte, as the dialect).
fn budget_bytes(gb: f64) -> u64 {
    ((gb * 1e9) as u64).max(1)
}

/// Names to delete, oldest mtime first (ties by name), until the total is
/// within `max_gb` decimal GB. Pure.
pub fn plan_eviction(files: &[CacheFile], max_gb: f64) -> Vec<String> {
    let budget = budget_bytes(max_gb);
    let mut sorted: Vec<&CacheFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.mtime.total_cmp(&b.mtime).then_with(|| a.name.cmp(&b.name)));
    let mut total: u64 = files.iter().map(|f| f.size).sum();
    let mut out = vec![];
    for f in sorted {
        if total <= budget {
            break;
        }
        total -= f.size;
        out.push(f.name.clone());
    }
    out
}

/// Evict `_derived/payloads/` down to `max_gb`. An absent dir is `{0, 0}`.
/// In-flight downloads (`*.part`) are neither counted nor touched: a reader
/// may be writing them right now.
pub fn evict_payloads(forest: &Path, max_gb: f64) -> Result<PayloadCacheReport> {
    let dir = forest.join(PAYLOADS_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(PayloadCacheReport::default()),
        Err(e) => return Err(RangerError::io(format!("read {}", dir.display()), e)),
    };
    let mut files = vec![];
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        let Some(name) = entry.file_name().to_str().map(String::from) else {
            continue;
        };
        if !meta.is_file() || name.ends_with(".part") {
            continue;
        }
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        files.push(CacheFile { name, size: meta.len(), mtime });
    }
    let doomed = plan_eviction(&files, max_gb);
    let mut report = PayloadCacheReport::default();
    let mut kept: u64 = files.iter().map(|f| f.size).sum();
    for name in &doomed {
        let p = dir.join(name);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            // A concurrent reader's re-fetch cleanup got there first.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(RangerError::io(format!("remove {}", p.display()), e)),
        }
        report.evicted += 1;
        kept -= files.iter().find(|f| &f.name == name).map_or(0, |f| f.size);
    }
    report.kept_bytes = kept;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, size: u64, mtime: f64) -> CacheFile {
        CacheFile { name: name.into(), size, mtime }
    }

    #[test]
    fn oldest_first_until_within_budget() {
        let files = [f("b", 10, 2.0), f("a", 10, 1.0), f("c", 10, 3.0)];
        assert_eq!(plan_eviction(&files, 20e-9), vec!["a"]);
        assert_eq!(plan_eviction(&files, 10e-9), vec!["a", "b"]);
        assert!(plan_eviction(&files, 5.0).is_empty());
        // A zero budget still means one byte: everything non-empty goes.
        assert_eq!(plan_eviction(&files, 0.0).len(), 3);
    }

    #[test]
    fn evicts_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join(PAYLOADS_DIR);
        std::fs::create_dir_all(&cache).unwrap();
        for (i, name) in ["old", "mid", "new"].iter().enumerate() {
            let p = cache.join(name);
            std::fs::write(&p, [b'x'; 10]).unwrap();
            let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i as u64 * 100);
            std::fs::File::options().write(true).open(&p).unwrap().set_modified(t).unwrap();
        }
        std::fs::write(cache.join("dl.part"), [0u8; 50]).unwrap();
        let r = evict_payloads(dir.path(), 20e-9).unwrap();
        assert_eq!(r, PayloadCacheReport { evicted: 1, kept_bytes: 20 });
        assert!(!cache.join("old").exists() && cache.join("new").exists());
        assert!(cache.join("dl.part").exists());
        let none = evict_payloads(&dir.path().join("nowhere"), 1.0).unwrap();
        assert_eq!(none, PayloadCacheReport::default());
    }
}
