//! `_derived/curation-attempts.db`: how often a pending leaf was handed to
//! the model and kept its derived scent, per derived summary (its
//! `scent_hash`): a changed document has a new derived summary and starts
//! again at zero. A disposable cache: lost, every leaf is simply tried again.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{params, Connection};

/// Where the attempts live.
pub const ATTEMPTS_PATH: &str = "_derived/curation-attempts.db";

/// Handle on the attempts store.
#[derive(Debug)]
pub struct Attempts {
    conn: Connection,
}

impl Attempts {
    /// Open (creating if needed); `None` when the store cannot be used
    /// (attempts then count as zero and nothing is recorded).
    pub fn open(forest: &Path) -> Option<Attempts> {
        let path = forest.join(ATTEMPTS_PATH);
        std::fs::create_dir_all(path.parent()?).ok()?;
        let conn = Connection::open(&path).ok()?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;
             CREATE TABLE IF NOT EXISTS attempts (
               id TEXT PRIMARY KEY, scent_hash TEXT NOT NULL, attempts INTEGER NOT NULL)",
        )
        .ok()?;
        Some(Attempts { conn })
    }

    /// Attempts of each `(id, scent_hash)`; ids recorded under another hash
    /// (the document changed since) and unknown ids are absent.
    pub fn get(&self, leaves: &[(String, String)]) -> HashMap<String, u32> {
        // Only kept-derived leaves have rows: read them all, then match.
        let mut rows: HashMap<String, (String, u32)> = HashMap::new();
        if let Ok(mut st) = self.conn.prepare("SELECT id, scent_hash, attempts FROM attempts") {
            if let Ok(it) = st.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?)))) {
                rows.extend(it.flatten());
            }
        }
        leaves
            .iter()
            .filter_map(|(id, hash)| rows.get(id).filter(|(h, _)| h == hash).map(|(_, n)| (id.clone(), *n)))
            .collect()
    }

    /// One more attempt of `id` at `scent_hash` that kept the derived scent.
    pub fn kept(&self, id: &str, scent_hash: &str) {
        let r = self.conn.execute(
            "INSERT INTO attempts (id, scent_hash, attempts) VALUES (?1, ?2, 1) \
             ON CONFLICT(id) DO UPDATE SET attempts = CASE WHEN scent_hash = ?2 THEN attempts + 1 ELSE 1 END, \
             scent_hash = ?2",
            params![id, scent_hash],
        );
        if let Err(e) = r {
            tracing::warn!(event = "gardener.demand.attempts_unwritable", error = %e);
        }
    }

    /// `id` was curated: nothing to remember.
    pub fn forget(&self, id: &str) {
        let _ = self.conn.execute("DELETE FROM attempts WHERE id = ?1", [id]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_count_per_derived_summary() {
        let dir = tempfile::tempdir().unwrap();
        let a = Attempts::open(dir.path()).unwrap();
        let leaf = |id: &str, h: &str| (id.to_string(), h.to_string());
        a.kept("x", "h1");
        a.kept("x", "h1");
        a.kept("y", "h1");
        let got = a.get(&[leaf("x", "h1"), leaf("y", "h2"), leaf("z", "h1")]);
        assert_eq!(got.get("x"), Some(&2));
        assert_eq!(got.get("y"), None, "the document changed: a fresh start");
        assert_eq!(got.get("z"), None);
        a.kept("x", "h2");
        assert_eq!(a.get(&[leaf("x", "h2")]).get("x"), Some(&1));
        a.forget("x");
        drop(a);
        let a = Attempts::open(dir.path()).unwrap();
        assert!(a.get(&[leaf("x", "h2")]).is_empty(), "forgotten once curated");
    }
}
