//! LRU eviction of the remote-payload cache `_derived/payloads/` (dialect
//! §8, H.6). Everything there is re-fetchable and hash-validated on fetch,
//! so deleting is always safe.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use crate::{RangerError, Result};

/// Cache directory inside a forest.
pub use forest_derived::tiers::PAYLOADS_DIR;

/// `{evicted, kept_bytes}` of one eviction pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PayloadCacheReport {
    /// Files deleted.
    pub evicted: usize,
    /// Bytes left in the cache.
    pub kept_bytes: u64,
}

pub use forest_storage::{plan_eviction, CacheFile};

/// Evict `_derived/payloads/` down to `max_gb` through the payload cache of
/// `forest-storage` (the same LRU the fetcher touches; in-flight downloads
/// are never counted or touched). An absent dir is `{0, 0}`.
pub fn evict_payloads(forest: &Path, max_gb: f64) -> Result<PayloadCacheReport> {
    let dir = forest.join(PAYLOADS_DIR);
    if !dir.is_dir() {
        return Ok(PayloadCacheReport::default());
    }
    let cache = forest_storage::PayloadCache::open(&dir, None)
        .map_err(|e| RangerError::io(format!("open {}", dir.display()), std::io::Error::other(e.to_string())))?;
    let r = cache
        .evict(max_gb)
        .map_err(|e| RangerError::io(format!("evict {}", dir.display()), std::io::Error::other(e.to_string())))?;
    Ok(PayloadCacheReport { evicted: r.evicted, kept_bytes: r.kept_bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        std::fs::write(cache.join(".old.42.part"), [0u8; 50]).unwrap();
        let r = evict_payloads(dir.path(), 20e-9).unwrap();
        assert_eq!(r, PayloadCacheReport { evicted: 1, kept_bytes: 20 });
        assert!(!cache.join("old").exists() && cache.join("new").exists());
        // A stale `.part` of a dead process is swept, never counted.
        let none = evict_payloads(&dir.path().join("nowhere"), 1.0).unwrap();
        assert_eq!(none, PayloadCacheReport::default());
    }
}
