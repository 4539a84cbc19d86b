//! The write side of the top-k index: the rebuild [`Builder`] (memory
//! bounded by spilled runs), the incremental [`Writer`] of catalog
//! transactions (staged postings and counters), and [`compact`], which
//! folds the side tables into the blobs.
//!
//! In: nodes (rebuild) or the rows a catalog transaction inserts and
//! removes. Out: `topk_*` tables consistent with the FTS rows. Touches
//! only the `topk_*` tables (and the transient `topk_runs`).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

use rusqlite::{params, OptionalExtension, Transaction};

use super::{
    add_meta, dead_set, decode, get_varint, merge_into, meta, put_varint, set_meta, BlobBuilder, Posting, Tokenizer,
    DELTA_SHARE, MAX_DEAD, MIN_DELTA, TABLES_SQL, TRIGGERS_SQL,
};
use crate::{NodeRow, Result};

/// Collects postings during a catalog rebuild (docs arrive in rowid
/// order, so each term's blob is appended in place). Memory is bounded:
/// past [`SPILL_BYTES`] of blob bytes the partial blobs go to `topk_runs`
/// as one run and the builder starts again; [`Builder::finish`] joins each
/// term's runs (their docs ascend run after run, so a blob is the runs'
/// bytes in order, each run's first doc re-coded against the previous
/// run's last). At 10^6 nodes the whole index is ~170 MB of blobs.
pub(crate) struct Builder {
    tok: Tokenizer,
    /// Seeded per process (file text chooses the keys), and cheaper than
    /// SipHash: hashing a node's terms was ~5% of a rebuild's inserts.
    terms: HashMap<String, BlobBuilder, foldhash::fast::RandomState>,
    docs: i64,
    /// Bytes held now (blob capacity plus [`TERM_OVERHEAD`] per term).
    held: usize,
    /// Runs spilled so far.
    runs: i64,
    /// Held bytes that trigger a spill ([`SPILL_BYTES`]; small in tests).
    spill_at: usize,
}

/// The FTS rows a [`Builder`] reads back in [`crate::Catalog::rebuild_topk`].
pub(crate) const FTS_ROWS_SQL: &str = "SELECT rowid, id, title, aliases, tags, summary FROM nodes_fts ORDER BY rowid";

/// One row of [`FTS_ROWS_SQL`] as `(rowid, node)`: the row's text is what
/// the index tokenizes, and one alias and one tag string give back the
/// same joined columns.
pub(crate) fn fts_row_node(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, NodeRow)> {
    let mut node = NodeRow::new(r.get::<_, String>(1)?, "note", r.get::<_, String>(2)?, r.get::<_, String>(5)?);
    node.aliases = vec![r.get(3)?];
    node.tags = vec![r.get(4)?];
    Ok((r.get(0)?, node))
}

/// Bytes a [`Builder`] holds (blob capacity and per-term overhead) before
/// it spills a run.
const SPILL_BYTES: usize = 32 << 20;

/// Heap a held term costs besides its blob: the map slot (key `String`,
/// [`BlobBuilder`]) at hashbrown's load factor and the key's allocation.
/// Most terms of a 10^6-node forest (numbers, names) have one posting, so
/// counting blob bytes alone let a run hold ~100 MB of map over its 32 MiB.
const TERM_OVERHEAD: usize = 112;

const RUNS_SQL: &str = "CREATE TABLE IF NOT EXISTS topk_runs (term TEXT NOT NULL, run INTEGER NOT NULL, \
    last INTEGER NOT NULL, df INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (term, run)) WITHOUT ROWID";

impl Builder {
    pub(crate) fn new() -> Builder {
        Builder { tok: Tokenizer::new(), terms: HashMap::default(), docs: 0, held: 0, runs: 0, spill_at: SPILL_BYTES }
    }

    /// Docs added so far.
    pub(crate) fn docs(&self) -> i64 {
        self.docs
    }

    /// Add `node` as `doc`, with its terms when the caller computed them
    /// ([`super::index_terms`]).
    pub(crate) fn add(
        &mut self,
        tx: &Transaction<'_>,
        doc: i64,
        node: &NodeRow,
        terms: Option<super::IndexTerms>,
    ) -> Result<()> {
        let dt = match terms {
            Some(t) => t.0,
            None => self.tok.doc_terms(node)?,
        };
        for (term, wf) in dt.terms {
            let b = match self.terms.entry(term) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    self.held += TERM_OVERHEAD + e.key().len();
                    e.insert(BlobBuilder::default())
                }
            };
            let before = b.bytes.capacity();
            b.push(Posting { doc, wf, dl: dt.len });
            self.held += b.bytes.capacity() - before;
        }
        self.docs += 1;
        if self.held >= self.spill_at {
            self.spill(tx)?;
        }
        Ok(())
    }

    /// Write the held blobs as run `self.runs` and start again.
    fn spill(&mut self, tx: &Transaction<'_>) -> Result<()> {
        if self.runs == 0 {
            tx.execute_batch(&format!("DROP TABLE IF EXISTS topk_runs; {RUNS_SQL};"))?;
        }
        let mut ins =
            tx.prepare_cached("INSERT INTO topk_runs (term, run, last, df, bytes) VALUES (?1, ?2, ?3, ?4, ?5)")?;
        // Taken, not drained: a drained map keeps its table allocated.
        for (term, b) in std::mem::take(&mut self.terms) {
            ins.execute(params![term, self.runs, b.last, b.df, b.bytes])?;
        }
        self.runs += 1;
        self.held = 0;
        Ok(())
    }

    /// Write the blobs (replacing any index) and mark it fresh.
    pub(crate) fn finish(mut self, tx: &Transaction<'_>) -> Result<()> {
        let spilled = self.runs > 0;
        if spilled && !self.terms.is_empty() {
            self.spill(tx)?;
        }
        tx.execute_batch(
            "DROP TABLE IF EXISTS topk_terms; DROP TABLE IF EXISTS topk_delta; \
             DROP TABLE IF EXISTS topk_dead; DROP TABLE IF EXISTS topk_meta;",
        )?;
        tx.execute_batch(TABLES_SQL)?;
        let mut postings = 0;
        {
            let mut ins = tx.prepare_cached("INSERT INTO topk_terms (term, df, postings) VALUES (?1, ?2, ?3)")?;
            if spilled {
                let mut st = tx.prepare("SELECT term, last, df, bytes FROM topk_runs ORDER BY term, run")?;
                let mut rows = st.query([])?;
                let mut cur: Option<(String, BlobBuilder)> = None;
                while let Some(r) = rows.next()? {
                    let (term, last, df, bytes): (String, i64, i64, Vec<u8>) =
                        (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
                    if cur.as_ref().is_some_and(|(t, _)| *t != term) {
                        if let Some((t, b)) = cur.take() {
                            postings += b.df;
                            ins.execute(params![t, b.df, b.bytes])?;
                        }
                    }
                    match &mut cur {
                        None => cur = Some((term, BlobBuilder { bytes, last, df })),
                        Some((_, b)) => {
                            // Re-code the run's first doc against the blob so far.
                            let mut pos = 0;
                            let first = get_varint(&bytes, &mut pos)
                                .ok_or_else(|| crate::CatalogError::Schema("topk: corrupt run".into()))?;
                            put_varint(&mut b.bytes, first - b.last as u64);
                            b.bytes.extend_from_slice(&bytes[pos..]);
                            b.last = last;
                            b.df += df;
                        }
                    }
                }
                if let Some((t, b)) = cur.take() {
                    postings += b.df;
                    ins.execute(params![t, b.df, b.bytes])?;
                }
            } else {
                let mut terms: Vec<(String, BlobBuilder)> = std::mem::take(&mut self.terms).into_iter().collect();
                terms.sort_by(|a, b| a.0.cmp(&b.0));
                for (term, b) in terms {
                    postings += b.df;
                    ins.execute(params![term, b.df, b.bytes])?;
                }
            }
        }
        tx.execute_batch("DROP TABLE IF EXISTS topk_runs;")?;
        for (k, v) in [("docs", self.docs), ("postings", postings), ("delta", 0), ("dead", 0), ("fresh", 1)] {
            set_meta(tx, k, v)?;
        }
        tx.execute_batch(TRIGGERS_SQL)?;
        Ok(())
    }
}

/// Incremental maintenance inside a catalog write transaction. New
/// postings and the meta counters are staged and written once by
/// [`Writer::finish`]: one `INSERT ... SELECT` over `json_each` instead of a
/// statement per (term, doc) (~30 per node) and three counter updates per
/// node.
pub(crate) struct Writer {
    tok: Tokenizer,
    /// Whether the index was fresh when the transaction began.
    fresh: bool,
    /// doc -> (doc length, (term, weighted frequency)...), not yet written.
    staged: BTreeMap<i64, (u32, Vec<(String, u32)>)>,
    /// Counter changes not yet written.
    delta: i64,
    dead: i64,
    docs: i64,
}

/// Staged postings written per statement (bounds the JSON text).
const STAGE_ROWS: usize = 50_000;

impl Writer {
    pub(crate) fn begin(tx: &Transaction<'_>) -> Result<Writer> {
        let fresh = meta(tx, "fresh")? == Some(1);
        Ok(Writer { tok: Tokenizer::new(), fresh, staged: BTreeMap::new(), delta: 0, dead: 0, docs: 0 })
    }

    /// Whether this transaction maintains the index (it was fresh when it
    /// began and no foreign row layout invalidated it since).
    pub(crate) fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// `doc` (a nodes rowid) was deleted: its blob postings are void and
    /// its delta postings go.
    pub(crate) fn removed(&mut self, tx: &Transaction<'_>, doc: i64) -> Result<()> {
        if !self.fresh {
            return Ok(());
        }
        // Staged by this transaction: never written.
        let staged = self.staged.remove(&doc).map_or(0, |(_, t)| t.len());
        let gone = tx.prepare_cached("DELETE FROM topk_delta WHERE doc = ?1")?.execute([doc])?;
        let dead = tx.prepare_cached("INSERT OR IGNORE INTO topk_dead (doc) VALUES (?1)")?.execute([doc])?;
        self.delta -= (gone + staged) as i64;
        self.dead += dead as i64;
        self.docs -= 1;
        Ok(())
    }

    /// `node` was inserted with rowid `doc`.
    pub(crate) fn inserted(&mut self, _tx: &Transaction<'_>, doc: i64, node: &NodeRow) -> Result<()> {
        if !self.fresh {
            return Ok(());
        }
        let dt = self.tok.doc_terms(node)?;
        self.delta += dt.terms.len() as i64;
        self.docs += 1;
        // A doc is inserted at most once between removals (the caller
        // removes an existing row first), so this never replaces postings.
        self.staged.insert(doc, (dt.len, dt.terms));
        Ok(())
    }

    /// Write the staged postings, in (term, doc) order per statement.
    fn write_staged(&mut self, tx: &Transaction<'_>) -> Result<()> {
        let mut rows: Vec<(&str, i64, u32, u32)> = Vec::new();
        for (doc, (dl, terms)) in &self.staged {
            for (term, wf) in terms {
                rows.push((term.as_str(), *doc, *wf, *dl));
            }
        }
        rows.sort_unstable();
        let mut st = tx.prepare_cached(
            "INSERT OR REPLACE INTO topk_delta (term, doc, wf, dl) \
             SELECT value->>'$[0]', value->>'$[1]', value->>'$[2]', value->>'$[3]' FROM json_each(?1)",
        )?;
        for chunk in rows.chunks(STAGE_ROWS) {
            let json = serde_json::to_string(chunk).map_err(|e| crate::CatalogError::Schema(e.to_string()))?;
            st.execute([json])?;
        }
        drop(st);
        self.staged.clear();
        Ok(())
    }

    /// The index was lost for this catalog (a foreign FTS rowid layout).
    pub(crate) fn invalidate(&mut self) {
        self.fresh = false;
    }

    /// End of the transaction: compact when the side tables grew, and
    /// restore `fresh` (the triggers cleared it).
    /// Returns whether it compacted.
    pub(crate) fn finish(mut self, tx: &Transaction<'_>) -> Result<bool> {
        if !self.fresh {
            set_meta(tx, "fresh", 0)?;
            return Ok(false);
        }
        self.write_staged(tx)?;
        add_meta(tx, "delta", self.delta)?;
        add_meta(tx, "dead", self.dead)?;
        add_meta(tx, "docs", self.docs)?;
        let delta = meta(tx, "delta")?.unwrap_or(0);
        let dead = meta(tx, "dead")?.unwrap_or(0);
        let postings = meta(tx, "postings")?.unwrap_or(0);
        let compacting = dead > MAX_DEAD || delta > MIN_DELTA.max(postings / DELTA_SHARE);
        if compacting {
            compact(tx)?;
        }
        set_meta(tx, "fresh", 1)?;
        Ok(compacting)
    }
}

/// Fold `topk_delta` and `topk_dead` into the blobs, term by term.
pub(crate) fn compact(tx: &Transaction<'_>) -> Result<()> {
    let dead = dead_set(tx)?;
    // Terms touched: every blob term when docs died, else the delta's. Only
    // the names are held; each term's delta rows are read when it is
    // rewritten (the delta can reach 1/16 of all postings: ~2M rows at
    // 10^6 nodes, which this used to load at once).
    let sql = if dead.is_empty() {
        "SELECT DISTINCT term FROM topk_delta ORDER BY term"
    } else {
        "SELECT term FROM topk_terms UNION SELECT term FROM topk_delta ORDER BY term"
    };
    let terms: Vec<String> = {
        let mut st = tx.prepare(sql)?;
        let t = st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        t
    };
    let mut postings_total = 0i64;
    let mut buf = vec![];
    for term in &terms {
        buf.clear();
        let blob: Option<Vec<u8>> = tx
            .prepare_cached("SELECT postings FROM topk_terms WHERE term = ?1")?
            .query_row([term], |r| r.get(0))
            .optional()?;
        if let Some(b) = &blob {
            decode(b, &dead, &mut buf)?;
        }
        let mut st = tx.prepare_cached("SELECT doc, wf, dl FROM topk_delta WHERE term = ?1 ORDER BY doc")?;
        let d: Vec<Posting> = st
            .query_map([term], |r| Ok(Posting { doc: r.get(0)?, wf: r.get(1)?, dl: r.get(2)? }))?
            .collect::<rusqlite::Result<_>>()?;
        merge_into(&mut buf, &d);
        if buf.is_empty() {
            tx.prepare_cached("DELETE FROM topk_terms WHERE term = ?1")?.execute([term])?;
            continue;
        }
        let mut b = BlobBuilder::default();
        for p in &buf {
            b.push(*p);
        }
        tx.prepare_cached("INSERT OR REPLACE INTO topk_terms (term, df, postings) VALUES (?1, ?2, ?3)")?
            .execute(params![term, b.df, b.bytes])?;
    }
    tx.execute_batch("DELETE FROM topk_delta; DELETE FROM topk_dead;")?;
    {
        let mut st = tx.prepare("SELECT COALESCE(SUM(df), 0) FROM topk_terms")?;
        postings_total += st.query_row([], |r| r.get::<_, i64>(0))?;
    }
    set_meta(tx, "postings", postings_total)?;
    set_meta(tx, "delta", 0)?;
    set_meta(tx, "dead", 0)
}

#[cfg(test)]
mod tests {
    use super::super::logical;
    use super::*;

    #[test]
    fn a_spilled_build_equals_one_held_in_memory() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut cat = crate::Catalog::open(&dir.path().join("c.db")).unwrap();
        let words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "café", "naïve"];
        let nodes: Vec<NodeRow> = (0..300)
            .map(|i| {
                let t: Vec<&str> = (0..1 + i % 5).map(|k| words[(i * 7 + k * 3) % words.len()]).collect();
                let mut n = NodeRow::new(format!("d/n{i}"), "note", t.join(" "), format!("{} {i}", t.join(" ")));
                n.tags = vec![words[i % words.len()].to_string()];
                n
            })
            .collect();
        cat.rebuild(nodes).unwrap();
        let want = logical(cat.connection()).unwrap();
        let tx = cat.connection_mut().transaction().unwrap();
        let mut b = Builder::new();
        b.spill_at = 300;
        {
            let mut st = tx.prepare(FTS_ROWS_SQL).unwrap();
            let mut rows = st.query([]).unwrap();
            while let Some(r) = rows.next().unwrap() {
                let (rowid, n) = fts_row_node(r).unwrap();
                b.add(&tx, rowid, &n, None).unwrap();
            }
        }
        assert!(b.runs >= 3, "the test spills: {} runs", b.runs);
        b.finish(&tx).unwrap();
        assert_eq!(logical(&tx).unwrap(), want);
        assert_eq!(meta(&tx, "postings").unwrap(), Some(want.values().map(|v| v.len() as i64).sum()));
        let runs_left: i64 =
            tx.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'topk_runs'", [], |r| r.get(0)).unwrap();
        assert_eq!(runs_left, 0);
    }
}
