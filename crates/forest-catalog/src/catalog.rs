//! `_derived/catalog.db` (dialect §7.1): one row per node, typed edges,
//! the FTS5 index over title/aliases/tags/summary, and transplant waymarks.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};
use schemars::JsonSchema;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::node::NodeRow;
use crate::{open_tuned, topk, CatalogError, Result};

mod rows;
use rows::{
    delete_node, fill_fts_from_nodes, insert_node, replace_row, same_search_row, FtsStage, Inserted, FTS_STAGE_MAX,
};

/// A row for [`Catalog::rebuild`], with its top-k terms when the producer
/// computed them ([`crate::index_terms`], on a reader thread beside the
/// parse: the inserts are a rebuild's serial critical path). A plain
/// [`NodeRow`] converts into one without terms; the rebuild computes them.
#[derive(Debug)]
pub struct RebuildRow {
    /// The row.
    pub row: NodeRow,
    /// Its terms, or `None` to compute them while inserting.
    pub terms: Option<crate::IndexTerms>,
}

impl RebuildRow {
    /// `row` with its terms computed here (a tokenizer failure leaves them
    /// to the rebuild, which reports it).
    pub fn indexed(row: NodeRow) -> RebuildRow {
        let terms = crate::index_terms(&row).ok();
        RebuildRow { row, terms }
    }
}

impl From<NodeRow> for RebuildRow {
    fn from(row: NodeRow) -> RebuildRow {
        RebuildRow { row, terms: None }
    }
}

/// Tables, in the dialect's exact shape. Secondary indexes are separate so
/// a rebuild can create them after the bulk insert.
const TABLES_SQL: &str = r#"
CREATE TABLE IF NOT EXISTS nodes (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    aliases TEXT NOT NULL DEFAULT '[]',
    created TEXT,
    updated TEXT,
    confidence REAL NOT NULL DEFAULT 1.0,
    source TEXT,
    entity_kind TEXT,
    payload TEXT,
    payload_type TEXT,
    payload_hash TEXT,
    parent TEXT,
    trail TEXT NOT NULL DEFAULT '[]',
    coverage TEXT,
    body_tokens INTEGER NOT NULL DEFAULT 0,
    outline TEXT NOT NULL DEFAULT '[]',
    stale INTEGER NOT NULL DEFAULT 0,
    body_hash TEXT NOT NULL DEFAULT '',
    origin TEXT
);
CREATE TABLE IF NOT EXISTS edges (
    src TEXT NOT NULL,
    rel TEXT NOT NULL,
    dst TEXT NOT NULL,
    confidence REAL NOT NULL DEFAULT 1.0,
    PRIMARY KEY (src, rel, dst)
);
CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(
    id UNINDEXED, title, aliases, tags, summary,
    tokenize = "unicode61 remove_diacritics 2"
);
CREATE TABLE IF NOT EXISTS node_leads (
    id TEXT PRIMARY KEY,
    lead TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS moves (
    old_id TEXT PRIMARY KEY,
    new_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sniff_memo (
    term TEXT NOT NULL,
    node_id TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    lines TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (term, node_id)
);
CREATE TABLE IF NOT EXISTS embed_memo (
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    vector BLOB NOT NULL,
    used TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (model, text)
);
"#;

const INDEXES_SQL: &str = r#"
CREATE INDEX IF NOT EXISTS idx_nodes_parent ON nodes(parent);
CREATE INDEX IF NOT EXISTS idx_nodes_type ON nodes(type);
CREATE INDEX IF NOT EXISTS idx_nodes_created ON nodes(created);
CREATE INDEX IF NOT EXISTS idx_nodes_updated ON nodes(updated);
CREATE INDEX IF NOT EXISTS idx_edges_dst ON edges(dst);
CREATE INDEX IF NOT EXISTS idx_moves_new ON moves(new_id);
CREATE INDEX IF NOT EXISTS idx_sniff_memo_node ON sniff_memo(node_id);
"#;

const INSERT_NODE_SQL: &str = "INSERT INTO nodes (rowid, id, kind, type, title, summary, tags, \
     aliases, created, updated, confidence, source, entity_kind, payload, payload_type, \
     payload_hash, parent, trail, coverage, body_tokens, outline, stale, body_hash, origin) \
     VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,0,?22,?23) \
     ON CONFLICT(id) DO NOTHING";

const INSERT_FTS_SQL: &str =
    "INSERT INTO nodes_fts (rowid, id, title, aliases, tags, summary) VALUES (?1,?2,?3,?4,?5,?6)";

const INSERT_EDGE_SQL: &str = "INSERT OR IGNORE INTO edges (src, rel, dst, confidence) VALUES (?1,?2,?3,?4)";

const INSERT_MOVE_SQL: &str = "INSERT OR REPLACE INTO moves (old_id, new_id) VALUES (?1, ?2)";

/// sha256 hex of a raw `.md` body, the catalog's `body_hash`.
pub fn body_hash_of(body: &str) -> String {
    hex::encode(Sha256::digest(body.as_bytes()))
}

/// One typed edge (frontmatter link) as stored.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EdgeRow {
    /// Source node id.
    pub src: String,
    /// Relation.
    pub rel: String,
    /// Target id.
    pub dst: String,
    /// Link confidence.
    pub confidence: f64,
}

/// One FTS row as stored.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FtsRow {
    /// Node id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Space-joined aliases.
    pub aliases: String,
    /// Space-joined tags.
    pub tags: String,
    /// Summary.
    pub summary: String,
}

/// One transplant waymark.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MoveRow {
    /// Former id.
    pub old_id: String,
    /// Current id.
    pub new_id: String,
}

/// Deterministic (id-sorted) picture of the catalog, comparable with `==`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CatalogDump {
    /// Node rows by id.
    pub nodes: Vec<NodeRow>,
    /// Edges by (src, rel, dst).
    pub edges: Vec<EdgeRow>,
    /// FTS rows by id.
    pub fts: Vec<FtsRow>,
    /// Waymarks by old id.
    pub moves: Vec<MoveRow>,
}

/// A closed-catalog edge candidate for the Curator.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Candidate {
    /// Node id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Summary.
    pub summary: String,
}

/// Why [`Catalog::open_checked`] wants a rebuild.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "reason", content = "detail", rename_all = "snake_case")]
pub enum RebuildReason {
    /// No catalog file.
    Missing,
    /// The file is not a sound SQLite/FTS5 database.
    Corrupt(String),
    /// The catalog holds no node.
    Empty,
    /// `nodes` and `nodes_fts` disagree on their row count.
    Inconsistent(String),
    /// Written before a table of ours existed (or by the other engine):
    /// what that table holds can only come from the node files.
    Outdated(String),
}

/// Outcome of [`Catalog::open_checked`].
#[derive(Debug)]
pub enum CatalogState {
    /// Sound and non-empty: ready to serve.
    Ready(Catalog),
    /// The caller must rebuild (see [`Catalog::recreate`]).
    NeedsRebuild(RebuildReason),
}

/// FTS5's pending-terms buffer while a rebuild loads (its default, 1 MiB,
/// flushes a new segment every few thousand nodes, then merges them
/// again), and after it.
const BULK_FTS_HASH: usize = 64 << 20;
const FTS_HASH: usize = 1 << 20;

/// Remove a SQLite file and its journals (absent ones are fine).
fn remove_with_sidecars(path: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A file's identity (device, inode), `None` when absent.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    return Some((std::os::unix::fs::MetadataExt::dev(&m), std::os::unix::fs::MetadataExt::ino(&m)));
    #[cfg(not(unix))]
    return m.modified().ok().map(|t| (0, t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)));
}

/// Handle on `_derived/catalog.db`.
#[derive(Debug)]
pub struct Catalog {
    conn: Connection,
}

impl Catalog {
    /// Open (creating if needed) a catalog with the dialect schema. Columns
    /// missing from an older catalog are added in place.
    pub fn open(path: &Path) -> Result<Catalog> {
        let conn = open_tuned(path)?;
        conn.execute_batch(TABLES_SQL)?;
        conn.execute_batch(INDEXES_SQL)?;
        add_missing_columns(&conn)?;
        conn.execute_batch(topk::TABLES_SQL)?;
        conn.execute_batch(topk::TRIGGERS_SQL)?;
        Ok(Catalog { conn })
    }

    /// Open an existing catalog for reading only (a reader beside the
    /// server's engines: never creates, migrates or writes the file).
    pub fn open_read_only(path: &Path) -> Result<Catalog> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        Ok(Catalog { conn })
    }

    /// Open an existing catalog and verify it: SQLite `quick_check`, the
    /// FTS5 `integrity-check`, row-count agreement, non-emptiness. Never
    /// creates the file.
    pub fn open_checked(path: &Path) -> Result<CatalogState> {
        if !path.is_file() {
            return Ok(CatalogState::NeedsRebuild(RebuildReason::Missing));
        }
        match Self::check(path) {
            Ok(state) => Ok(state),
            Err(CatalogError::Sqlite(e)) if !is_transient(&e) => {
                Ok(CatalogState::NeedsRebuild(RebuildReason::Corrupt(e.to_string())))
            }
            Err(e) => Err(e),
        }
    }

    fn check(path: &Path) -> Result<CatalogState> {
        let had_leads = has_table(path, "node_leads")?;
        let cat = Catalog::open(path)?;
        let quick: String = cat.conn.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if quick != "ok" {
            return Ok(CatalogState::NeedsRebuild(RebuildReason::Corrupt(quick)));
        }
        cat.conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES('integrity-check')", [])?;
        let nodes = cat.count_nodes()?;
        let fts: i64 = cat.conn.query_row("SELECT COUNT(*) FROM nodes_fts", [], |r| r.get(0))?;
        if nodes == 0 {
            return Ok(CatalogState::NeedsRebuild(RebuildReason::Empty));
        }
        if nodes != fts {
            return Ok(CatalogState::NeedsRebuild(RebuildReason::Inconsistent(format!(
                "{nodes} nodes vs {fts} fts rows"
            ))));
        }
        if !had_leads {
            return Ok(CatalogState::NeedsRebuild(RebuildReason::Outdated("no node_leads table".into())));
        }
        Ok(CatalogState::Ready(cat))
    }

    /// Delete the catalog file (and its WAL/SHM siblings) and open a fresh,
    /// empty one. Only for the forest's writer: it is a cache, so nothing
    /// is lost that a rebuild cannot restore.
    pub fn recreate(path: &Path) -> Result<Catalog> {
        remove_with_sidecars(path)?;
        Catalog::open(path)
    }

    /// The underlying connection, for read queries this API does not cover.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Insert or replace nodes (row, FTS row, outgoing edges, waymarks) in
    /// ONE transaction. Returns the number of nodes written.
    pub fn upsert(&mut self, nodes: &[NodeRow]) -> Result<usize> {
        self.upsert_with(nodes, false)
    }

    /// [`Catalog::upsert`], the rows marked stale (due for re-embedding,
    /// as [`Catalog::mark_stale`] marks them) in the same transaction.
    pub fn upsert_stale(&mut self, nodes: &[NodeRow]) -> Result<usize> {
        self.upsert_with(nodes, true)
    }

    /// The page cache, in KiB, for a run of bulk writes scattered over a
    /// large catalog (the default, 2 MiB, re-reads each page it evicted).
    pub fn set_page_cache_kib(&self, kib: u32) -> Result<()> {
        Ok(self.conn.execute_batch(&format!("PRAGMA cache_size = -{kib};"))?)
    }

    fn upsert_with(&mut self, nodes: &[NodeRow], stale: bool) -> Result<usize> {
        let t0 = std::time::Instant::now();
        let tx = self.conn.transaction()?;
        let mut index = topk::Writer::begin(&tx)?;
        let mut fts = FtsStage::default();
        for node in nodes {
            if fts.len() >= FTS_STAGE_MAX {
                fts.flush(&tx)?;
            }
            // Search columns unchanged (links, dates, coverage): the row
            // alone. Only while the index is ours (fresh): a foreign
            // writer's FTS rows are not known to match.
            let unchanged = if index.is_fresh() { same_search_row(&tx, node, &fts)? } else { None };
            if let Some(rowid) = unchanged {
                replace_row(&tx, rowid, node)?;
            } else {
                let old_rowid = delete_node(&tx, &node.id, &mut fts)?;
                if let Some(r) = old_rowid {
                    index.removed(&tx, r)?;
                }
                // Reusing the old rowid keeps FTS and node rowids aligned, which
                // is what makes later deletes an O(log n) lookup.
                let rowid = match old_rowid {
                    Some(r) => r,
                    None => tx
                        .prepare_cached("SELECT COALESCE(MAX(rowid), 0) + 1 FROM nodes")?
                        .query_row([], |r| r.get(0))?,
                };
                match insert_node(&tx, rowid, node, true, &mut fts)? {
                    Inserted::Aligned => index.inserted(&tx, rowid, node)?,
                    Inserted::ForeignRowid => index.invalidate(),
                    Inserted::Duplicate => {}
                }
            }
            tx.prepare_cached("DELETE FROM sniff_memo WHERE node_id = ?1 AND body_hash != ?2")?
                .execute(params![node.id, node.body_hash])?;
            tx.prepare_cached("DELETE FROM moves WHERE new_id = ?1")?.execute(params![node.id])?;
            let mut ins_move = tx.prepare_cached(INSERT_MOVE_SQL)?;
            for old in &node.moved_from {
                ins_move.execute(params![old, node.id])?;
            }
            if stale {
                tx.prepare_cached("UPDATE nodes SET stale = 1 WHERE id = ?1")?.execute([&node.id])?;
            }
        }
        let rows_ms = t0.elapsed().as_millis() as u64;
        fts.flush(&tx)?;
        let fts_ms = t0.elapsed().as_millis() as u64 - rows_ms;
        let compacted = index.finish(&tx)?;
        let index_ms = t0.elapsed().as_millis() as u64 - rows_ms - fts_ms;
        tx.commit()?;
        tracing::debug!(
            event = "catalog.upsert",
            nodes = nodes.len(),
            rows_ms,
            fts_ms,
            index_ms,
            compacted,
            commit_ms = t0.elapsed().as_millis() as u64 - rows_ms - fts_ms - index_ms
        );
        Ok(nodes.len())
    }

    /// Set `stale = 1` (due for re-embedding) on the rows of `ids`, in one
    /// transaction (one autocommit per row writes a WAL frame each).
    /// Returns the rows changed.
    pub fn mark_stale<S: AsRef<str>>(&mut self, ids: &[S]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut st = tx.prepare_cached("UPDATE nodes SET stale = 1 WHERE id = ?1")?;
            for id in ids {
                n += st.execute([id.as_ref()])?;
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// Remove nodes (row, FTS row, outgoing edges, waymarks pointing at
    /// them, memo entries) in one transaction. Returns rows removed.
    pub fn remove(&mut self, ids: &[String]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut index = topk::Writer::begin(&tx)?;
        let mut n = 0;
        let mut fts = FtsStage::default();
        for id in ids {
            if fts.len() >= FTS_STAGE_MAX {
                fts.flush(&tx)?;
            }
            if let Some(r) = delete_node(&tx, id, &mut fts)? {
                index.removed(&tx, r)?;
                n += 1;
            }
            tx.prepare_cached("DELETE FROM moves WHERE new_id = ?1")?.execute(params![id])?;
            tx.prepare_cached("DELETE FROM sniff_memo WHERE node_id = ?1")?.execute(params![id])?;
        }
        fts.flush(&tx)?;
        index.finish(&tx)?;
        tx.commit()?;
        Ok(n)
    }

    /// A new catalog at `path` holding `nodes`, built beside it and renamed
    /// into place: a crash leaves the old file (or none), never half a
    /// catalog. The bulk load writes every page once, with no journal (the
    /// WAL would write each twice: the log, then the checkpoint); the file
    /// is switched to WAL before the rename. For callers that would
    /// otherwise [`Catalog::recreate`] the file (missing or unusable).
    ///
    /// One fresh build at a time per catalog (a lock file beside it): a
    /// process that waited for another's finds the catalog replaced and
    /// opens it instead of building it again.
    pub fn rebuild_fresh<I, R>(path: &Path, nodes: I) -> Result<(Catalog, usize)>
    where
        I: IntoIterator<Item = R>,
        R: Into<RebuildRow>,
    {
        let sibling = |suffix: &str| {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            std::path::PathBuf::from(p)
        };
        let before = file_id(path);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(sibling(".lock"))?;
        lock.lock()?;
        let now = file_id(path);
        if now.is_some() && now != before {
            let cat = Catalog::open(path)?;
            let n = cat.count_nodes()? as usize;
            return Ok((cat, n));
        }
        let building = sibling(".building");
        remove_with_sidecars(&building)?;
        let written = match Self::bulk_load(&building, nodes) {
            Ok(n) => n,
            Err(e) => {
                let _ = remove_with_sidecars(&building);
                return Err(e);
            }
        };
        remove_with_sidecars(path)?;
        std::fs::rename(&building, path)?;
        Ok((Catalog::open(path)?, written))
    }

    fn bulk_load<I, R>(building: &Path, nodes: I) -> Result<usize>
    where
        I: IntoIterator<Item = R>,
        R: Into<RebuildRow>,
    {
        let conn = Connection::open(building)?;
        let _mode: String = conn.query_row("PRAGMA journal_mode=OFF", [], |r| r.get(0))?;
        conn.execute_batch("PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;")?;
        for sql in [TABLES_SQL, INDEXES_SQL, topk::TABLES_SQL, topk::TRIGGERS_SQL] {
            conn.execute_batch(sql)?;
        }
        let mut cat = Catalog { conn };
        let written = cat.rebuild(nodes)?;
        // Durable before the rename makes it the catalog.
        let _mode: String = cat.conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        cat.conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
        cat.conn.cache_flush()?;
        std::fs::File::open(building)?.sync_all()?;
        Ok(written)
    }

    /// Wipe nodes/edges/FTS/waymarks and bulk-insert `nodes` in one
    /// transaction (tables recreated, secondary indexes built after the
    /// load). A duplicate id keeps its first occurrence. Returns rows written.
    pub fn rebuild<I, R>(&mut self, nodes: I) -> Result<usize>
    where
        I: IntoIterator<Item = R>,
        R: Into<RebuildRow>,
    {
        // Bigger page cache for the bulk load only (32 MiB: the top-k
        // index's blobs are in memory beside it); restored below.
        self.conn.execute_batch("PRAGMA cache_size = -32768;")?;
        let tx = self.conn.transaction()?;
        // DROP is O(pages) where DELETE on FTS5 is row by row.
        tx.execute_batch(
            "DROP TABLE IF EXISTS nodes; DROP TABLE IF EXISTS edges; \
             DROP TABLE IF EXISTS nodes_fts; DROP TABLE IF EXISTS moves;",
        )?;
        tx.execute_batch(TABLES_SQL)?;
        tx.execute_batch(&format!("INSERT INTO nodes_fts(nodes_fts, rank) VALUES('hashsize', {BULK_FTS_HASH});"))?;
        let mut written = 0usize;
        let mut index = topk::Builder::new();
        let mut fts = FtsStage::from_nodes();
        {
            let mut ins_move = tx.prepare_cached(INSERT_MOVE_SQL)?;
            for row in nodes {
                let RebuildRow { row: node, terms } = row.into();
                let rowid = written as i64 + 1;
                if insert_node(&tx, rowid, &node, false, &mut fts)? == Inserted::Duplicate {
                    tracing::warn!(id = %node.id, "duplicate id in catalog rebuild; first kept");
                    continue;
                }
                index.add(&tx, rowid, &node, terms)?;
                for old in &node.moved_from {
                    ins_move.execute(params![old, node.id])?;
                }
                written += 1;
            }
        }
        // The tables are new, so every rowid was aligned and the stage
        // held nothing: every node's FTS row goes in at once.
        fill_fts_from_nodes(&tx)?;
        tx.execute_batch(&format!("INSERT INTO nodes_fts(nodes_fts, rank) VALUES('hashsize', {FTS_HASH});"))?;
        tx.execute_batch(INDEXES_SQL)?;
        index.finish(&tx)?;
        // A memo generation whose node is gone or changed is dead weight.
        tx.execute(
            "DELETE FROM sniff_memo WHERE NOT EXISTS (SELECT 1 FROM nodes n \
             WHERE n.id = sniff_memo.node_id AND n.body_hash = sniff_memo.body_hash)",
            [],
        )?;
        tx.commit()?;
        self.conn.execute_batch("PRAGMA cache_size = -2000;")?;
        Ok(written)
    }

    /// True when the catalog holds no node row (O(1), unlike
    /// [`Catalog::count_nodes`]).
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM nodes)", [], |r| r.get(0))?)
    }

    /// Number of node rows.
    pub fn count_nodes(&self) -> Result<i64> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM nodes", [], |r| r.get(0))?)
    }

    /// One node row.
    pub fn get(&self, id: &str) -> Result<Option<NodeRow>> {
        let mut st = self.conn.prepare_cached(&format!("SELECT {NODE_COLUMNS} FROM nodes WHERE id = ?1"))?;
        let row = st.query_row([id], node_row).optional()?;
        row.transpose()
    }

    /// Outgoing edges of a node, by (rel, dst).
    pub fn edges_out(&self, id: &str) -> Result<Vec<EdgeRow>> {
        self.edge_query("SELECT src, rel, dst, confidence FROM edges WHERE src = ?1 ORDER BY rel, dst", id)
    }

    /// Incoming edges of a node, by (src, rel).
    pub fn edges_in(&self, id: &str) -> Result<Vec<EdgeRow>> {
        self.edge_query("SELECT src, rel, dst, confidence FROM edges WHERE dst = ?1 ORDER BY src, rel", id)
    }

    fn edge_query(&self, sql: &str, id: &str) -> Result<Vec<EdgeRow>> {
        let mut st = self.conn.prepare_cached(sql)?;
        let rows = st.query_map([id], edge_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Catalog degree: typed edges out + in.
    pub fn degree(&self, id: &str) -> Result<i64> {
        Ok(self.conn.query_row(
            "SELECT (SELECT COUNT(*) FROM edges WHERE src = ?1) + \
             (SELECT COUNT(*) FROM edges WHERE dst = ?1)",
            [id],
            |r| r.get(0),
        )?)
    }

    /// Current id of a transplanted node, if a waymark exists.
    pub fn moved_to(&self, old_id: &str) -> Result<Option<String>> {
        Ok(self.conn.query_row("SELECT new_id FROM moves WHERE old_id = ?1", [old_id], |r| r.get(0)).optional()?)
    }

    /// The ids a node was transplanted from (its waymarks), oldest first
    /// by id: one index lookup (`idx_moves_new`).
    pub fn moved_from(&self, id: &str) -> Result<Vec<String>> {
        let mut st = self.conn.prepare_cached("SELECT old_id FROM moves WHERE new_id = ?1 ORDER BY old_id")?;
        let rows = st.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(rows)
    }

    /// Deterministic dump of nodes, edges, FTS rows and waymarks.
    pub fn dump(&self) -> Result<CatalogDump> {
        let mut st = self.conn.prepare(&format!("SELECT {NODE_COLUMNS} FROM nodes ORDER BY id"))?;
        let nodes = st
            .query_map([], node_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .collect::<Result<Vec<_>>>()?;
        let mut st = self.conn.prepare("SELECT src, rel, dst, confidence FROM edges ORDER BY src, rel, dst")?;
        let edges = st.query_map([], edge_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        let mut st =
            self.conn.prepare("SELECT id, title, aliases, tags, summary FROM nodes_fts ORDER BY id, title, summary")?;
        let fts = st
            .query_map([], |r| {
                Ok(FtsRow { id: r.get(0)?, title: r.get(1)?, aliases: r.get(2)?, tags: r.get(3)?, summary: r.get(4)? })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut st = self.conn.prepare("SELECT old_id, new_id FROM moves ORDER BY old_id")?;
        let moves = st
            .query_map([], |r| Ok(MoveRow { old_id: r.get(0)?, new_id: r.get(1)? }))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(CatalogDump { nodes, edges, fts, moves })
    }

    /// Closed-catalog candidates for edge proposals: BM25 over the FTS
    /// (same sanitization and weights as `locate`), never branches, never
    /// an id in `exclude`, best first, at most `limit`.
    pub fn candidates(&self, query: &str, limit: usize, exclude: &[String]) -> Result<Vec<Candidate>> {
        let Some(expr) = crate::query::sanitize_query(query) else {
            return Ok(vec![]);
        };
        let excluded: HashSet<&str> = exclude.iter().map(String::as_str).collect();
        let fetch = (limit + excluded.len()) as i64;
        let mut st = self.conn.prepare_cached(
            "SELECT n.id, n.title, n.summary FROM (\
               SELECT f.id AS id, bm25(nodes_fts, 0.0, 4.0, 3.0, 2.0, 1.0) AS rank \
               FROM nodes_fts f WHERE nodes_fts MATCH ?1) h \
             JOIN nodes n ON n.id = h.id WHERE n.kind != 'branch' \
             ORDER BY h.rank LIMIT ?2",
        )?;
        let rows = st.query_map(params![expr, fetch], |r| {
            Ok(Candidate { id: r.get(0)?, title: r.get(1)?, summary: r.get(2)? })
        })?;
        let mut out = Vec::new();
        for c in rows {
            let c = c?;
            if excluded.contains(c.id.as_str()) {
                continue;
            }
            out.push(c);
            if out.len() == limit {
                break;
            }
        }
        Ok(out)
    }
}

const NODE_COLUMNS: &str = "id, kind, type, title, summary, tags, aliases, created, updated, \
     confidence, source, entity_kind, payload, payload_type, payload_hash, parent, trail, \
     coverage, body_tokens, outline, stale, body_hash, origin";

fn json_list(s: Option<String>) -> Result<Vec<String>> {
    match s {
        Some(s) if !s.is_empty() => Ok(serde_json::from_str(&s)?),
        _ => Ok(vec![]),
    }
}

/// Row mapper; JSON decoding errors surface as the inner `Result`.
fn node_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<NodeRow>> {
    let tags: Option<String> = r.get(5)?;
    let aliases: Option<String> = r.get(6)?;
    let trail: Option<String> = r.get(16)?;
    let outline: Option<String> = r.get(19)?;
    let base = NodeRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        node_type: r.get(2)?,
        title: r.get(3)?,
        summary: r.get(4)?,
        tags: vec![],
        aliases: vec![],
        created: r.get(7)?,
        updated: r.get(8)?,
        confidence: r.get(9)?,
        source: r.get(10)?,
        entity_kind: r.get(11)?,
        payload: r.get(12)?,
        payload_type: r.get(13)?,
        payload_hash: r.get(14)?,
        parent: r.get(15)?,
        trail: vec![],
        coverage: r.get(17)?,
        body_tokens: r.get::<_, Option<i64>>(18)?.unwrap_or(0),
        outline: vec![],
        stale: r.get::<_, Option<i64>>(20)?.unwrap_or(0),
        body_hash: r.get::<_, Option<String>>(21)?.unwrap_or_default(),
        origin: r.get(22)?,
        links: vec![],
        moved_from: vec![],
        lead: String::new(),
    };
    Ok((|| {
        Ok(NodeRow {
            tags: json_list(tags)?,
            aliases: json_list(aliases)?,
            trail: json_list(trail)?,
            outline: json_list(outline)?,
            ..base
        })
    })())
}

fn edge_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EdgeRow> {
    Ok(EdgeRow { src: r.get(0)?, rel: r.get(1)?, dst: r.get(2)?, confidence: r.get(3)? })
}

/// Busy/locked/permission errors are not corruption: report, don't rebuild.
fn is_transient(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e.sqlite_error_code(),
        Some(C::DatabaseBusy | C::DatabaseLocked | C::CannotOpen | C::PermissionDenied | C::ReadOnly)
    )
}

/// Whether the catalog at `path` has `table` (read without writing).
fn has_table(path: &Path, table: &str) -> Result<bool> {
    let conn = Catalog::open_read_only(path)?.conn;
    let sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1";
    Ok(conn.query_row(sql, [table], |_| Ok(())).optional()?.is_some())
}

fn add_missing_columns(conn: &Connection) -> Result<()> {
    let cols = |table: &str| -> Result<HashSet<String>> {
        let mut st = conn.prepare(&format!("PRAGMA table_info({table})"))?;
        let names = st.query_map([], |r| r.get::<_, String>(1))?.collect::<rusqlite::Result<HashSet<_>>>()?;
        Ok(names)
    };
    let node_cols = cols("nodes")?;
    if !node_cols.contains("body_hash") {
        conn.execute_batch("ALTER TABLE nodes ADD COLUMN body_hash TEXT NOT NULL DEFAULT ''")?;
    }
    if !node_cols.contains("origin") {
        conn.execute_batch("ALTER TABLE nodes ADD COLUMN origin TEXT")?;
    }
    if !cols("edges")?.contains("confidence") {
        conn.execute_batch("ALTER TABLE edges ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0")?;
    }
    Ok(())
}
