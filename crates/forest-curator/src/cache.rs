//! `CurationCache`: validated model outputs in SQLite, keyed by
//! blake3(content) + prompt version + model id (DESIGN §6): a re-run never
//! pays for a document twice.

use crate::error::CuratorError;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Mutex;

/// One cached, validated curation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CachedCuration {
    /// The validated summary.
    pub summary: String,
    /// Cleaned tags (empty for branches).
    pub tags: Vec<String>,
    /// Whether `fit_summary` repaired it.
    pub repaired: bool,
}

/// SQLite-backed cache; safe to share between threads.
pub struct CurationCache {
    conn: Mutex<Connection>,
    path: String,
}

impl std::fmt::Debug for CurationCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurationCache").field("path", &self.path).finish()
    }
}

impl CurationCache {
    /// Open (creating file, parent directory and table as needed).
    pub fn open(path: &Path) -> Result<Self, CuratorError> {
        let shown = path.display().to_string();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|source| CuratorError::CacheDir { path: dir.display().to_string(), source })?;
        }
        let conn = Connection::open(path).map_err(|source| CuratorError::Cache { path: shown.clone(), source })?;
        Self::init(conn, shown)
    }

    /// A private in-memory cache (tests, dry runs).
    pub fn in_memory() -> Result<Self, CuratorError> {
        let conn =
            Connection::open_in_memory().map_err(|source| CuratorError::Cache { path: ":memory:".into(), source })?;
        Self::init(conn, ":memory:".into())
    }

    fn init(conn: Connection, path: String) -> Result<Self, CuratorError> {
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             PRAGMA busy_timeout=5000;
             CREATE TABLE IF NOT EXISTS curation (
                 content_hash   TEXT NOT NULL,
                 prompt_version TEXT NOT NULL,
                 model          TEXT NOT NULL,
                 value          TEXT NOT NULL,
                 created_at     INTEGER NOT NULL,
                 PRIMARY KEY (content_hash, prompt_version, model)
             ) WITHOUT ROWID;",
        )
        .map_err(|source| CuratorError::Cache { path: path.clone(), source })?;
        Ok(CurationCache { conn: Mutex::new(conn), path })
    }

    /// blake3 of the parts, length-framed so `("ab","c")` ≠ `("a","bc")`.
    pub fn content_hash(parts: &[&str]) -> String {
        let mut h = blake3::Hasher::new();
        for p in parts {
            h.update(&(p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
        }
        h.finalize().to_hex().to_string()
    }

    fn err(&self, source: rusqlite::Error) -> CuratorError {
        CuratorError::Cache { path: self.path.clone(), source }
    }

    /// Look up an entry.
    pub fn get(
        &self,
        content_hash: &str,
        prompt_version: &str,
        model: &str,
    ) -> Result<Option<CachedCuration>, CuratorError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let raw: Option<String> = conn
            .query_row(
                "SELECT value FROM curation WHERE content_hash=?1 AND prompt_version=?2 AND model=?3",
                params![content_hash, prompt_version, model],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        // An undecodable row is a miss, not an error: it only costs a call.
        Ok(raw.and_then(|s| serde_json::from_str(&s).ok()))
    }

    /// Insert or replace an entry.
    pub fn put(
        &self,
        content_hash: &str,
        prompt_version: &str,
        model: &str,
        value: &CachedCuration,
    ) -> Result<(), CuratorError> {
        let json = serde_json::to_string(value).unwrap_or_default();
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.execute(
            "INSERT OR REPLACE INTO curation (content_hash, prompt_version, model, value, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![content_hash, prompt_version, model, json, now],
        )
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Number of entries.
    pub fn len(&self) -> Result<usize, CuratorError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let n: i64 = conn.query_row("SELECT COUNT(*) FROM curation", [], |r| r.get(0)).map_err(|e| self.err(e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> Result<bool, CuratorError> {
        Ok(self.len()? == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_key_parts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("_derived/curation.db");
        let c = CurationCache::open(&path).unwrap();
        let k = CurationCache::content_hash(&["summary", "T", "body"]);
        assert_ne!(k, CurationCache::content_hash(&["summary", "Tb", "ody"]));
        let v = CachedCuration { summary: "Cats, 2026.".into(), tags: vec!["cats".into()], repaired: false };
        c.put(&k, "v1", "m", &v).unwrap();
        assert_eq!(c.get(&k, "v1", "m").unwrap(), Some(v.clone()));
        assert_eq!(c.get(&k, "v2", "m").unwrap(), None, "prompt version is part of the key");
        assert_eq!(c.get(&k, "v1", "other").unwrap(), None, "model is part of the key");
        drop(c);
        let c = CurationCache::open(&path).unwrap();
        assert_eq!(c.len().unwrap(), 1, "persists across opens");
        assert_eq!(c.get(&k, "v1", "m").unwrap(), Some(v));
    }
}
