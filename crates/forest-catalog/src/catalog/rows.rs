//! Row-level writes shared by upsert, remove and rebuild: one node's row,
//! FTS row and edges in, the rowid it used (and whether FTS5 kept it) out.

use rusqlite::{params, OptionalExtension, Transaction};

use super::{CatalogNode, INSERT_EDGE_SQL, INSERT_FTS_SQL, INSERT_NODE_SQL};
use crate::pyjson::dumps_strings;
use crate::Result;

/// Delete a node's row, FTS row and outgoing edges; returns the node's old
/// rowid when a row existed.
pub(super) fn delete_node(tx: &Transaction<'_>, id: &str) -> Result<Option<i64>> {
    let rowid: Option<i64> =
        tx.prepare_cached("SELECT rowid FROM nodes WHERE id = ?1")?.query_row([id], |r| r.get(0)).optional()?;
    if let Some(r) = rowid {
        let fts_id: Option<String> = tx
            .prepare_cached("SELECT id FROM nodes_fts WHERE rowid = ?1")?
            .query_row([r], |row| row.get(0))
            .optional()?;
        if fts_id.as_deref() == Some(id) {
            tx.prepare_cached("DELETE FROM nodes_fts WHERE rowid = ?1")?.execute([r])?;
        } else {
            // Catalog written by another engine: rowids are not aligned, so
            // fall back to the (full-scan) delete by id.
            tx.prepare_cached("DELETE FROM nodes_fts WHERE id = ?1")?.execute([id])?;
        }
        tx.prepare_cached("DELETE FROM nodes WHERE rowid = ?1")?.execute([r])?;
    }
    tx.prepare_cached("DELETE FROM edges WHERE src = ?1")?.execute([id])?;
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

/// Insert node row, FTS row and edges with the given rowid.
pub(super) fn insert_node(tx: &Transaction<'_>, rowid: i64, node: &CatalogNode, check_fts: bool) -> Result<Inserted> {
    let trail = forest_model::ids::trail(&node.id);
    let parent = forest_model::ids::parent_index(&node.id);
    let changed = tx.prepare_cached(INSERT_NODE_SQL)?.execute(params![
        rowid,
        node.id,
        node.kind(),
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
    if changed == 0 {
        return Ok(Inserted::Duplicate);
    }
    // A foreign-written FTS table may already use this rowid for another
    // node; then let FTS5 pick one (deletes fall back to the id scan).
    let fts_rowid = if check_fts {
        let taken: Option<i64> = tx
            .prepare_cached("SELECT rowid FROM nodes_fts WHERE rowid = ?1")?
            .query_row([rowid], |r| r.get(0))
            .optional()?;
        if taken.is_some() {
            None
        } else {
            Some(rowid)
        }
    } else {
        Some(rowid)
    };
    tx.prepare_cached(INSERT_FTS_SQL)?.execute(params![
        fts_rowid,
        node.id,
        node.title,
        node.aliases.join(" "),
        node.tags.join(" "),
        node.summary,
    ])?;
    let mut ins_edge = tx.prepare_cached(INSERT_EDGE_SQL)?;
    for link in &node.links {
        if link.rel.is_empty() || link.target.is_empty() {
            continue;
        }
        ins_edge.execute(params![node.id, link.rel, link.target, link.confidence])?;
    }
    Ok(if fts_rowid.is_some() { Inserted::Aligned } else { Inserted::ForeignRowid })
}
