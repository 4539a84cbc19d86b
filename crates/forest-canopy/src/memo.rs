//! The query-embedding memo (navigator spec K.6): key (model identity,
//! whitespace-collapsed query text), value the unit vector as a float32
//! little-endian blob, least recently used entries evicted past
//! [`MEMO_CAP`]. Agents repeat their queries; a hit skips the encoder (and,
//! in a fresh `forest locate` process, loading the model at all).
//!
//! Two levels: one in process (a served forest's workers share it) and one
//! persisted in `<forest>/_derived/embed-memo.db`, a disposable SQLite file
//! of its own with the reference's `embed_memo(model, text, vector, used)`
//! table. Not in `catalog.db`: a write there would void the catalog's
//! verified stamp (`forest_catalog::verified`) and cost the next sync a
//! full integrity check. A `--readonly` server keeps its memo in process
//! only and never opens the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

/// Entries kept, per level (K.6: LRU ≤ 2000).
pub const MEMO_CAP: usize = 2000;

/// `<forest>/_derived/embed-memo.db`.
pub fn memo_path(forest: &Path) -> PathBuf {
    forest.join("_derived").join("embed-memo.db")
}

/// The memo key's text: runs of whitespace collapsed to one space, ends
/// trimmed (the BERT tokenizer splits on whitespace, so the vector is the
/// same as the raw text's).
pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How a caller may use the persisted memo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoMode {
    /// Read and write `_derived/embed-memo.db` (the CLI, a writable server).
    Persist,
    /// In process only: the file is never opened (`--readonly` servers).
    ProcessOnly,
}

/// A bounded LRU map from (model, text) to vector.
#[derive(Default)]
struct Lru {
    tick: u64,
    map: HashMap<(String, String), (Vec<f32>, u64)>,
}

impl Lru {
    fn get(&mut self, model: &str, text: &str) -> Option<Vec<f32>> {
        self.tick += 1;
        let tick = self.tick;
        // (a borrowed two-string key would need a custom Borrow; 2 small
        // allocations per lookup are nothing beside an embedding)
        let e = self.map.get_mut(&(model.to_string(), text.to_string()))?;
        e.1 = tick;
        Some(e.0.clone())
    }

    fn put(&mut self, model: &str, text: &str, v: &[f32]) {
        self.tick += 1;
        self.map.insert((model.to_string(), text.to_string()), (v.to_vec(), self.tick));
        if self.map.len() > MEMO_CAP {
            if let Some(k) = self.map.iter().min_by_key(|(_, (_, t))| *t).map(|(k, _)| k.clone()) {
                self.map.remove(&k);
            }
        }
    }
}

static PROCESS: Mutex<Option<Lru>> = Mutex::new(None);

fn with_process<T>(f: impl FnOnce(&mut Lru) -> T) -> T {
    let mut g = PROCESS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    f(g.get_or_insert_with(Lru::default))
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Option<Vec<f32>> {
    (b.len().is_multiple_of(4) && !b.is_empty())
        .then(|| b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Fixed-width unix seconds, so the text column sorts by time.
fn used_now() -> String {
    format!("{:020.6}", crate::store::now())
}

const MEMO_SQL: &str = "CREATE TABLE IF NOT EXISTS embed_memo (
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    vector BLOB NOT NULL,
    used TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (model, text)
);";

fn open(forest: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(memo_path(forest))?;
    conn.busy_timeout(std::time::Duration::from_millis(200))?;
    let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
    conn.execute_batch(MEMO_SQL)?;
    Ok(conn)
}

fn file_get(forest: &Path, model: &str, text: &str) -> rusqlite::Result<Option<Vec<f32>>> {
    if !memo_path(forest).is_file() {
        return Ok(None);
    }
    let conn = open(forest)?;
    let sql = "SELECT vector FROM embed_memo WHERE model = ?1 AND text = ?2";
    let blob: Option<Vec<u8>> = conn.query_row(sql, params![model, text], |r| r.get(0)).optional()?;
    let Some(v) = blob.as_deref().and_then(from_blob) else { return Ok(None) };
    conn.execute("UPDATE embed_memo SET used = ?3 WHERE model = ?1 AND text = ?2", params![model, text, used_now()])?;
    Ok(Some(v))
}

fn file_put(forest: &Path, model: &str, text: &str, v: &[f32]) -> rusqlite::Result<()> {
    if !forest.join("_derived").is_dir() {
        return Ok(());
    }
    let mut conn = open(forest)?;
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT OR REPLACE INTO embed_memo (model, text, vector, used) VALUES (?1, ?2, ?3, ?4)",
        params![model, text, to_blob(v), used_now()],
    )?;
    let n: i64 = tx.query_row("SELECT COUNT(*) FROM embed_memo", [], |r| r.get(0))?;
    if n > MEMO_CAP as i64 {
        tx.execute(
            "DELETE FROM embed_memo WHERE rowid IN \
             (SELECT rowid FROM embed_memo ORDER BY used DESC LIMIT -1 OFFSET ?1)",
            params![MEMO_CAP as i64],
        )?;
    }
    tx.commit()
}

/// The memoised vector of (`model`, `text`), `text` already collapsed:
/// from the process first, then (under [`MemoMode::Persist`]) the file. A
/// file that cannot be read is a miss, never an error (the memo is a
/// cache).
pub fn recall(forest: &Path, mode: MemoMode, model: &str, text: &str) -> Option<Vec<f32>> {
    if let Some(v) = with_process(|m| m.get(model, text)) {
        return Some(v);
    }
    if mode != MemoMode::Persist {
        return None;
    }
    match file_get(forest, model, text) {
        Ok(Some(v)) => {
            with_process(|m| m.put(model, text, &v));
            Some(v)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::debug!(event = "canopy.memo.read_failed", error = %e);
            None
        }
    }
}

/// Remember `v` for (`model`, `text`) in the process and, under
/// [`MemoMode::Persist`], in the file (a write that fails is logged and
/// dropped).
pub fn remember(forest: &Path, mode: MemoMode, model: &str, text: &str, v: &[f32]) {
    with_process(|m| m.put(model, text, v));
    if mode == MemoMode::Persist {
        if let Err(e) = file_put(forest, model, text, v) {
            tracing::debug!(event = "canopy.memo.write_failed", error = %e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapse_is_the_key_text() {
        assert_eq!(collapse("  tape\t archives \n kept "), "tape archives kept");
        assert_eq!(collapse(""), "");
    }

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut m = Lru::default();
        for i in 0..MEMO_CAP {
            m.put("m", &format!("q{i}"), &[i as f32]);
        }
        assert_eq!(m.get("m", "q0"), Some(vec![0.0]), "q0 is used again");
        m.put("m", "new", &[1.0]);
        assert_eq!(m.map.len(), MEMO_CAP);
        assert!(m.get("m", "q1").is_none(), "q1 was the least recently used");
        assert!(m.get("m", "q0").is_some());
        assert!(m.get("other-model", "q0").is_none(), "the model is part of the key");
    }

    #[test]
    fn the_file_round_trips_blobs_and_keeps_at_most_the_cap() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path();
        std::fs::create_dir(f.join("_derived")).unwrap();
        let v = vec![0.25f32, -1.0, 3.5e-8];
        file_put(f, "m@1", "a query", &v).unwrap();
        assert_eq!(file_get(f, "m@1", "a query").unwrap(), Some(v.clone()), "bit for bit");
        assert_eq!(file_get(f, "m@2", "a query").unwrap(), None);
        let conn = open(f).unwrap();
        let tx = conn.unchecked_transaction().unwrap();
        for i in 0..MEMO_CAP + 5 {
            let used = format!("{:020.6}", i as f64);
            tx.execute(
                "INSERT INTO embed_memo VALUES ('m@1', ?1, ?2, ?3)",
                params![format!("q{i}"), to_blob(&v), used],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        file_put(f, "m@1", "newest", &v).unwrap();
        let n: i64 = conn.query_row("SELECT COUNT(*) FROM embed_memo", [], |r| r.get(0)).unwrap();
        assert_eq!(n, MEMO_CAP as i64);
        assert_eq!(file_get(f, "m@1", "q0").unwrap(), None, "the oldest went first");
        assert!(file_get(f, "m@1", "newest").unwrap().is_some());
    }

    #[test]
    fn process_only_never_creates_the_file() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("_derived")).unwrap();
        remember(t.path(), MemoMode::ProcessOnly, "m@ro", "only here", &[1.0]);
        assert_eq!(recall(t.path(), MemoMode::ProcessOnly, "m@ro", "only here"), Some(vec![1.0]));
        assert!(!memo_path(t.path()).exists());
    }
}
