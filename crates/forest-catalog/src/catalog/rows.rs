//! Row-level writes shared by upsert, remove and rebuild: one node's row,
//! FTS row and edges in, the rowid it used (and whether FTS5 kept it) out.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{params, OptionalExtension, Transaction};

use super::{NodeRow, INSERT_EDGE_SQL, INSERT_FTS_SQL, INSERT_NODE_SQL};
use crate::pyjson::dumps_strings;
use crate::Result;

/// FTS rows written by one transaction, applied by two statements.
///
/// FTS5 flushes its pending terms to a new segment at every statement
/// savepoint, and SQLite opens one for each statement that may abort
/// half-way (trigger-bearing writes such as the `nodes` inserts, `INSERT
/// OR REPLACE`, every FTS write): per-row FTS writes among the other row
/// writes made one segment per node (~50 us each, then merged again). So
/// FTS deletes and inserts collect here, by rowid, and [`FtsStage::flush`]
/// applies them as one `DELETE` and one `INSERT ... SELECT` over
/// `json_each` before the transaction commits (or when the stage is full).
///
/// A fresh rebuild stages nothing ([`FtsStage::from_nodes`]): its FTS rows
/// are written after the load by one statement over the `nodes` table.
#[derive(Default)]
pub(super) struct FtsStage {
    /// Rowids whose committed FTS row goes.
    deletes: BTreeSet<i64>,
    /// Rows to insert: rowid -> (id, title, aliases, tags, summary).
    inserts: BTreeMap<i64, [String; 5]>,
    /// Aligned rows are left to [`fill_fts_from_nodes`].
    from_nodes: bool,
}

/// Rows a stage holds before it is flushed (bounds a rebuild's memory).
pub(super) const FTS_STAGE_MAX: usize = 20_000;

impl FtsStage {
    /// A stage whose aligned inserts are not held: the caller writes them
    /// with [`fill_fts_from_nodes`] once every `nodes` row is in.
    pub(super) fn from_nodes() -> FtsStage {
        FtsStage { from_nodes: true, ..FtsStage::default() }
    }

    /// Rows staged.
    pub(super) fn len(&self) -> usize {
        self.deletes.len() + self.inserts.len()
    }

    /// Apply the staged deletes, then the inserts (ascending rowid).
    pub(super) fn flush(&mut self, tx: &Transaction<'_>) -> Result<()> {
        if !self.deletes.is_empty() {
            let ids = serde_json::to_string(&self.deletes).map_err(|e| crate::CatalogError::Schema(e.to_string()))?;
            tx.prepare_cached("DELETE FROM nodes_fts WHERE rowid IN (SELECT value FROM json_each(?1))")?
                .execute([ids])?;
            self.deletes.clear();
        }
        if !self.inserts.is_empty() {
            let rows: Vec<(i64, &[String; 5])> = self.inserts.iter().map(|(r, c)| (*r, c)).collect();
            let json = serde_json::to_string(&rows).map_err(|e| crate::CatalogError::Schema(e.to_string()))?;
            tx.prepare_cached(
                "INSERT INTO nodes_fts (rowid, id, title, aliases, tags, summary) \
                 SELECT value->>'$[0]', value->>'$[1][0]', value->>'$[1][1]', value->>'$[1][2]', \
                 value->>'$[1][3]', value->>'$[1][4]' FROM json_each(?1)",
            )?
            .execute([json])?;
            self.inserts.clear();
        }
        Ok(())
    }

    /// The id of the FTS row at `rowid` as this transaction sees it.
    fn fts_id(&self, tx: &Transaction<'_>, rowid: i64) -> Result<Option<String>> {
        if let Some(row) = self.inserts.get(&rowid) {
            return Ok(Some(row[0].clone()));
        }
        if self.deletes.contains(&rowid) {
            return Ok(None);
        }
        Ok(tx
            .prepare_cached("SELECT id FROM nodes_fts WHERE rowid = ?1")?
            .query_row([rowid], |row| row.get(0))
            .optional()?)
    }

    fn delete(&mut self, rowid: i64) {
        // A row staged by this transaction never reached FTS5.
        if self.inserts.remove(&rowid).is_none() {
            self.deletes.insert(rowid);
        }
    }
}

/// SQL function [`fill_fts_from_nodes`] joins a stored string list with.
const FTS_WORDS_FN: &str = "forest_fts_words";

/// Write the FTS row of every `nodes` row (same rowid; aliases and tags
/// joined by spaces, as [`insert_node`] stages them) in ONE statement, so
/// FTS5 writes a segment only when its pending terms fill the hash (a
/// staged flush wrote one per flush, ~40% of a 10^6-node rebuild's
/// inserting thread with the JSON round trip). For a fresh rebuild, whose
/// FTS table is empty.
pub(super) fn fill_fts_from_nodes(tx: &Transaction<'_>) -> Result<usize> {
    use rusqlite::functions::FunctionFlags;
    tx.create_scalar_function(
        FTS_WORDS_FN,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_DIRECTONLY,
        |ctx| {
            let list = ctx.get_raw(0).as_str().map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))?;
            let items: Vec<String> =
                serde_json::from_str(list).map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))?;
            Ok(items.join(" "))
        },
    )?;
    let written = tx.execute(
        &format!(
            "INSERT INTO nodes_fts (rowid, id, title, aliases, tags, summary) \
             SELECT rowid, id, title, {FTS_WORDS_FN}(aliases), {FTS_WORDS_FN}(tags), summary FROM nodes ORDER BY rowid"
        ),
        [],
    );
    tx.remove_function(FTS_WORDS_FN, 1)?;
    Ok(written?)
}

/// Delete a node's row, FTS row and outgoing edges; returns the node's old
/// rowid when a row existed.
pub(super) fn delete_node(tx: &Transaction<'_>, id: &str, fts: &mut FtsStage) -> Result<Option<i64>> {
    let rowid: Option<i64> =
        tx.prepare_cached("SELECT rowid FROM nodes WHERE id = ?1")?.query_row([id], |r| r.get(0)).optional()?;
    if let Some(r) = rowid {
        let fts_id = fts.fts_id(tx, r)?;
        if fts_id.as_deref() == Some(id) {
            fts.delete(r);
        } else {
            // Catalog written by another engine: rowids are not aligned, so
            // fall back to the (full-scan) delete by id, after the staged
            // rows (one of them may carry this id).
            fts.flush(tx)?;
            tx.prepare_cached("DELETE FROM nodes_fts WHERE id = ?1")?.execute([id])?;
        }
        tx.prepare_cached("DELETE FROM nodes WHERE rowid = ?1")?.execute([r])?;
    }
    tx.prepare_cached("DELETE FROM edges WHERE src = ?1")?.execute([id])?;
    tx.prepare_cached("DELETE FROM node_leads WHERE id = ?1")?.execute([id])?;
    Ok(rowid)
}

/// What [`insert_node`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Inserted {
    /// Node and FTS row share the given rowid.
    Aligned,
    /// A foreign FTS row held the rowid; FTS5 picked another.
    ForeignRowid,
    /// The id already had a row; nothing written.
    Duplicate,
}

/// The rowid of `node`'s existing row when only that row needs replacing:
/// the stored searchable columns (title, summary, tags, aliases) equal the
/// node's and the FTS row at that rowid is this node's, so its FTS row and
/// top-k postings stay as they are. A Ranger run rewrites passports' links
/// and `updated` only; replacing their search rows made each settled node
/// a dead top-k document, and 10^5 of them a full index compaction per
/// 10,000 (143 s for 100,000 prunes at 10^6 nodes).
pub(super) fn same_search_row(tx: &Transaction<'_>, node: &NodeRow, fts: &FtsStage) -> Result<Option<i64>> {
    let row: Option<(i64, String, String, String, String)> = tx
        .prepare_cached("SELECT rowid, title, summary, tags, aliases FROM nodes WHERE id = ?1")?
        .query_row([&node.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .optional()?;
    let Some((rowid, title, summary, tags, aliases)) = row else {
        return Ok(None);
    };
    let same = title == node.title
        && summary == node.summary
        && tags == dumps_strings(&node.tags)
        && aliases == dumps_strings(&node.aliases);
    if !same || fts.fts_id(tx, rowid)?.as_deref() != Some(node.id.as_str()) {
        return Ok(None);
    }
    Ok(Some(rowid))
}

/// Replace the row (and outgoing edges) of a node whose search columns did
/// not change ([`same_search_row`]), keeping its rowid, FTS row and postings.
pub(super) fn replace_row(tx: &Transaction<'_>, rowid: i64, node: &NodeRow) -> Result<()> {
    tx.prepare_cached("DELETE FROM nodes WHERE rowid = ?1")?.execute([rowid])?;
    tx.prepare_cached("DELETE FROM edges WHERE src = ?1")?.execute([&node.id])?;
    insert_row(tx, rowid, node)?;
    insert_edges(tx, node)
}

/// Insert the node's `nodes` row with the given rowid; false when the id
/// already had a row (nothing written).
fn insert_row(tx: &Transaction<'_>, rowid: i64, node: &NodeRow) -> Result<bool> {
    let trail = forest_model::ids::trail(&node.id);
    let parent = forest_model::ids::parent_index(&node.id);
    let changed = tx.prepare_cached(INSERT_NODE_SQL)?.execute(params![
        rowid,
        node.id,
        forest_model::Kind::of_type(&node.node_type),
        node.node_type,
        node.title,
        node.summary,
        dumps_strings(&node.tags),
        dumps_strings(&node.aliases),
        node.created.clone().unwrap_or_default(),
        node.updated.clone().unwrap_or_default(),
        node.confidence,
        node.source,
        node.entity_kind,
        node.payload,
        node.payload_type,
        node.payload_hash,
        parent,
        dumps_strings(&trail),
        node.coverage,
        node.body_tokens,
        dumps_strings(&node.outline),
        node.body_hash,
        node.origin,
    ])?;
    if changed > 0 {
        write_lead(tx, node)?;
    }
    Ok(changed > 0)
}

/// The node's body lead in `node_leads` (none kept for an empty one).
fn write_lead(tx: &Transaction<'_>, node: &NodeRow) -> Result<()> {
    if node.lead.is_empty() {
        tx.prepare_cached("DELETE FROM node_leads WHERE id = ?1")?.execute([&node.id])?;
    } else {
        tx.prepare_cached("INSERT OR REPLACE INTO node_leads (id, lead) VALUES (?1, ?2)")?
            .execute(params![node.id, node.lead])?;
    }
    Ok(())
}

fn insert_edges(tx: &Transaction<'_>, node: &NodeRow) -> Result<()> {
    let mut ins_edge = tx.prepare_cached(INSERT_EDGE_SQL)?;
    for link in &node.links {
        if link.rel.is_empty() || link.target.is_empty() {
            continue;
        }
        ins_edge.execute(params![node.id, link.rel, link.target, link.confidence])?;
    }
    Ok(())
}

/// Insert node row, FTS row and edges with the given rowid.
pub(super) fn insert_node(
    tx: &Transaction<'_>,
    rowid: i64,
    node: &NodeRow,
    check_fts: bool,
    fts: &mut FtsStage,
) -> Result<Inserted> {
    if !insert_row(tx, rowid, node)? {
        return Ok(Inserted::Duplicate);
    }
    // A foreign-written FTS table may already use this rowid for another
    // node; then let FTS5 pick one (deletes fall back to the id scan).
    let fts_rowid = if check_fts && fts.fts_id(tx, rowid)?.is_some() { None } else { Some(rowid) };
    let cols =
        || [node.id.to_string(), node.title.clone(), node.aliases.join(" "), node.tags.join(" "), node.summary.clone()];
    match fts_rowid {
        Some(_) if fts.from_nodes => {}
        Some(r) => {
            fts.inserts.insert(r, cols());
        }
        // Foreign layout (rare): FTS5 picks the rowid (past the largest
        // written one), so the staged rows go first and this one now.
        None => {
            fts.flush(tx)?;
            let cols = cols();
            tx.prepare_cached(INSERT_FTS_SQL)?.execute(params![
                None::<i64>,
                cols[0],
                cols[1],
                cols[2],
                cols[3],
                cols[4]
            ])?;
        }
    }
    insert_edges(tx, node)?;
    Ok(if fts_rowid.is_some() { Inserted::Aligned } else { Inserted::ForeignRowid })
}
