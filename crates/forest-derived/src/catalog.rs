//! The derived layer glue: Node -> catalog row, full reindex, and opening
//! the catalog with automatic rebuild when missing or corrupt.

use crate::{DerivedError, Result};
use forest_catalog::{Catalog, CatalogLink, CatalogState, NodeRow, RebuildRow};
use forest_model::health_facts::{FACTS_VERSION, HEALTH_CACHE_PATH};
use forest_model::ids;
use forest_model::lint_cache::{CacheFill, RecordMaker};
use forest_model::node::{body_lead, outline, Node};
use forest_model::tokens::estimate_tokens;
use forest_model::walk::node_paths;
use rayon::prelude::*;
use std::path::Path;

pub use crate::paths::{CATALOG_PATH, TRAILS_PATH};

/// Build the catalog row of a parsed node (dialect §7.1 row values).
pub fn catalog_row(id: &str, node: &Node) -> NodeRow {
    let title = node.title().unwrap_or_else(|| id.to_string());
    let summary = node.summary().unwrap_or_default();
    let node_type =
        node.get_str("type").unwrap_or_else(|| if ids::is_branch_id(id) { "branch".into() } else { "note".into() });
    let mut row = NodeRow::new(id, node_type, title, summary);
    row.tags = node.get_list("tags");
    row.aliases = node.get_list("aliases");
    row.created = node.get_str("created").map(|s| s.chars().take(10).collect());
    row.updated = node.get_str("updated").map(|s| s.chars().take(10).collect());
    row.confidence = node.get_f64("confidence").unwrap_or(1.0);
    row.source = node.get_str("source");
    row.entity_kind = node.get_str("entity_kind");
    row.payload = node.get_str("payload");
    row.payload_type = node.get_str("payload_type");
    row.payload_hash = node.get_str("payload_hash");
    row.coverage = node.get_str("coverage");
    row.body_tokens = estimate_tokens(&node.body) as i64;
    row.outline = outline(&node.body);
    // a leaf's lead only: a branch's body lists what is under it, and
    // embedding it lifted branches above the leaf asked for (the
    // reference's bench forest, v2 R@1 0.833 to 0.722)
    if row.kind != forest_model::Kind::Branch {
        row.lead = body_lead(&node.body);
    }
    let inline = node.get_str("content").is_none_or(|c| c == "inline");
    row.body_hash = if inline { forest_catalog::body_hash_of(&node.body) } else { String::new() };
    row.origin = node.get_str("origin");
    row.links = node
        .links()
        .into_iter()
        .map(|l| CatalogLink { rel: l.rel, target: l.target, confidence: l.confidence.unwrap_or(1.0) })
        .collect();
    row.moved_from = node.get_list("moved_from");
    row
}

/// Read and parse every node of a forest in parallel; broken files skipped.
pub fn read_all_rows(forest: &Path) -> Vec<NodeRow> {
    read_slice(forest, &node_paths(forest), None).0
}

/// The health facts' function, as the health cache stores them.
type FactsFn = fn(&str, &Node) -> forest_model::health_facts::NodeFacts;
/// A health cache filled from a rebuild's reads.
type HealthFill = CacheFill<FactsFn>;

/// A node's row and, with a `maker`, its health-cache record from the same
/// read and parse (the stamp taken before the read).
fn read_row_recording<'p>(
    forest: &Path,
    rel: &'p str,
    maker: Option<&RecordMaker<FactsFn>>,
) -> Option<(NodeRow, Option<(&'p str, String)>)> {
    use std::io::Read;
    let id = rel.strip_suffix(".md")?;
    // One path lookup per node: the stamp comes from the open file's
    // metadata, taken before the read (a path `statx` besides the open
    // was ~5% of a 10^6-node rebuild's parse threads).
    let mut file = std::fs::File::open(forest.join(rel)).ok()?;
    let meta = file.metadata().ok()?;
    let before = maker.and_then(|m| m.stamp_of(&meta));
    let mut text = String::with_capacity(meta.len() as usize + 1);
    file.read_to_string(&mut text).ok()?;
    let node = Node::parse(&text).ok()?;
    let row = catalog_row(id, &node);
    let record = match (maker, before) {
        (Some(m), Some(s)) => m.record(rel, s, node).map(|r| (rel, r)),
        _ => None,
    };
    Some((row, record))
}

/// The rows of the node files at forest-relative `rels`, each read and
/// parsed once, their health-cache records stored from the same read (a
/// writer settling files it just committed). Unreadable or unparseable
/// files are left out (the next rebuild or health pass reports them).
pub fn read_rows_recording_health(forest: &Path, rels: &[String]) -> Vec<NodeRow> {
    let mut fill = health_fill(forest);
    let (rows, records) = read_slice(forest, rels, Some(fill.maker()));
    fill.put(&records);
    rows
}

fn health_fill(forest: &Path) -> HealthFill {
    let facts: FactsFn = forest_model::health_facts::facts;
    CacheFill::open(forest, &forest.join(HEALTH_CACHE_PATH), FACTS_VERSION, facts)
}

/// Rows of the files at `rels`, read and parsed in parallel, and with a
/// `maker` their health-cache records (path, record).
fn read_slice<'p>(
    forest: &Path,
    rels: &'p [String],
    maker: Option<&RecordMaker<FactsFn>>,
) -> (Vec<NodeRow>, Vec<(&'p str, String)>) {
    read_slice_as(forest, rels, maker, |row| row)
}

/// [`read_slice`], each row turned into a `T` on the parsing thread (a
/// rebuild's rows get their top-k terms there: [`RebuildRow::indexed`]).
fn read_slice_as<'p, T: Send>(
    forest: &Path,
    rels: &'p [String],
    maker: Option<&RecordMaker<FactsFn>>,
    into: impl Fn(NodeRow) -> T + Sync + Send,
) -> (Vec<T>, Vec<(&'p str, String)>) {
    let read: Vec<(T, Option<(&str, String)>)> = rels
        .par_iter()
        .filter_map(|rel| read_row_recording(forest, rel, maker))
        .map(|(row, record)| (into(row), record))
        .collect();
    let mut rows = Vec::with_capacity(read.len());
    let mut records = Vec::with_capacity(if maker.is_some() { read.len() } else { 0 });
    for (row, record) in read {
        rows.push(row);
        records.extend(record);
    }
    (rows, records)
}

/// Files parsed in parallel per slice of [`stream_rows`].
const STREAM_SLICE: usize = 4096;

/// Every node's row in path order (as [`read_all_rows`]), parsed in
/// parallel one slice at a time on a reader thread while the caller
/// consumes the slice before (a rebuild's inserts are serial: reading the
/// next slice beside them keeps both cores busy). At most three slices of
/// rows are alive at once (one consumed, one queued, one being read), not
/// the forest's. Dropping the iterator stops the reader after its slice.
pub fn stream_rows(forest: &Path) -> impl Iterator<Item = NodeRow> {
    stream(forest, None, |row| row)
}

/// [`stream_rows`] that also fills the forest's health cache from the same
/// reads (the reader thread stores each slice's records while the caller
/// inserts its rows): a fresh clone's first Ranger run then reads each
/// node once, not once for the catalog and again for its health.
/// Each row comes with its top-k terms, computed by the parsers.
pub fn stream_rows_filling_health(forest: &Path) -> impl Iterator<Item = RebuildRow> {
    stream(forest, Some(health_fill(forest)), RebuildRow::indexed)
}

/// The reader thread behind both streams: `into` runs on its parsers.
fn stream<T: Send + 'static>(
    forest: &Path,
    mut fill: Option<HealthFill>,
    into: fn(NodeRow) -> T,
) -> impl Iterator<Item = T> {
    let forest = forest.to_path_buf();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<T>>(1);
    let below = niceness().map(|n| (n + READER_NICE).min(19));
    let reader = std::thread::spawn(move || {
        set_niceness(below);
        // Parsers of their own, at the reader's priority (the global pool
        // stays as it is for everyone else).
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(std::thread::available_parallelism().map_or(2, usize::from))
            .thread_name(|i| format!("catalog-read-{i}"))
            .start_handler(move |_| set_niceness(below))
            .build();
        let paths = node_paths(&forest);
        for slice in paths.chunks(STREAM_SLICE) {
            let maker = fill.as_ref().map(CacheFill::maker);
            let (rows, records) = match &pool {
                Ok(pool) => pool.install(|| read_slice_as(&forest, slice, maker, into)),
                Err(_) => read_slice_as(&forest, slice, maker, into),
            };
            if tx.send(rows).is_err() {
                return;
            }
            if let Some(f) = fill.as_mut() {
                f.put(&records);
            }
        }
    });
    Slices { rx, reader: Some(reader) }.flatten()
}

/// Nice steps the stream's reader and parsers run below the caller: the
/// consumer's serial inserts are a rebuild's critical path, and with three
/// busy threads on two cores the parsers took a third of its core (a
/// 10^6-node rebuild: 35.8-36.3 s at equal priority, 32.9-33.3 s below).
const READER_NICE: i32 = 5;

/// The calling thread's nice value (Linux schedules, and so prioritises,
/// threads one by one; threads inherit their creator's). `None` elsewhere.
fn niceness() -> Option<i32> {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and getpriority on the calling thread's own id touch
    // no memory of ours.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        *libc::__errno_location() = 0;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        if *libc::__errno_location() == 0 {
            return Some(now);
        }
    }
    None
}

/// Set the calling thread's nice value (raising it needs no privilege; a
/// refusal changes nothing).
fn set_niceness(nice: Option<i32>) {
    #[cfg(target_os = "linux")]
    if let Some(n) = nice {
        // SAFETY: as in `niceness`.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            let _ = libc::setpriority(libc::PRIO_PROCESS, tid, n);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// The slices [`stream_rows`]' reader thread sends. When they end, the
/// thread is joined and its panic, if any, goes on in the caller: a reader
/// that died must not pass for the end of the forest (a rebuild would
/// commit a partial catalog).
struct Slices<T> {
    rx: std::sync::mpsc::Receiver<Vec<T>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl<T> Iterator for Slices<T> {
    type Item = Vec<T>;
    fn next(&mut self) -> Option<Vec<T>> {
        if let Ok(rows) = self.rx.recv() {
            return Some(rows);
        }
        if let Some(Err(panic)) = self.reader.take().map(std::thread::JoinHandle::join) {
            std::panic::resume_unwind(panic);
        }
        None
    }
}

/// Rebuild `_derived/catalog.db` from the Markdown. Returns the node count.
pub fn reindex(forest: &Path) -> Result<usize> {
    let path = forest.join(CATALOG_PATH);
    // An unusable or missing file is built anew beside it; a catalog that
    // opens is rebuilt in place (a server may hold it open).
    let in_place = if path.is_file() { Catalog::open(&path).ok() } else { None };
    let n = match in_place {
        Some(mut cat) => cat.rebuild(stream_rows_filling_health(forest)),
        None => Catalog::rebuild_fresh(&path, stream_rows_filling_health(forest)).map(|(_, n)| n),
    }
    .map_err(DerivedError::Catalog)?;
    // A fresh rebuild is as trusted as a checked catalog.
    forest_catalog::verified::mark_verified(&path);
    Ok(n)
}

/// Open the catalog, rebuilding it first when missing, empty or unreadable.
/// Cheap (no full-index scan): fit for every `locate`. A corrupt FTS index
/// that still opens is caught by [`open_catalog_checked`].
pub fn open_catalog(forest: &Path) -> Result<Catalog> {
    let path = forest.join(CATALOG_PATH);
    if path.exists() {
        if let Ok(c) = Catalog::open(&path) {
            // One row is enough (COUNT(*) walks an index of every node).
            if c.is_empty().map(|e| !e).unwrap_or(false) {
                return Ok(c);
            }
        }
    }
    rebuild_catalog(forest)
}

/// Open the catalog after a full integrity check (FTS5 `integrity-check`,
/// `quick_check`), rebuilding it when missing, empty or corrupt. The check
/// is skipped when the files are as a verified run left them
/// ([`forest_catalog::verified`]).
pub fn open_catalog_checked(forest: &Path) -> Result<(Catalog, bool)> {
    let path = forest.join(CATALOG_PATH);
    // Bytes that only verified runs of ours wrote since the last check need
    // no new one (~20 s at 10^6 nodes): see forest_catalog::verified.
    if forest_catalog::verified::is_verified(&path) {
        if let Ok(c) = Catalog::open(&path) {
            if c.is_empty().map(|e| !e).unwrap_or(false) {
                return Ok((c, false));
            }
        }
    }
    match Catalog::open_checked(&path) {
        Ok(CatalogState::Ready(c)) => Ok((c, false)),
        _ => Ok((rebuild_catalog(forest)?, true)),
    }
}

fn rebuild_catalog(forest: &Path) -> Result<Catalog> {
    let path = forest.join(CATALOG_PATH);
    tracing::info!(event = "catalog.rebuild", forest = %forest.display());
    let t = std::time::Instant::now();
    let (cat, rows) =
        Catalog::rebuild_fresh(&path, stream_rows_filling_health(forest)).map_err(DerivedError::Catalog)?;
    tracing::info!(event = "catalog.rebuilt", rows, ms = t.elapsed().as_millis() as u64);
    Ok(cat)
}

/// Add the health-cache rows of the node files a commit just wrote
/// (`.md` writes of `changes`; payloads must be in place), so the next
/// health pass reads none of them. Used by every writer of this crate's
/// commits and by the Ranger. Returns the rows written (0 when the cache
/// cannot be opened: the next health pass re-reads instead).
pub fn record_health(forest: &Path, changes: &[forest_git::Change]) -> usize {
    let written: Vec<(&str, &str)> = changes
        .iter()
        .filter_map(|c| match c {
            forest_git::Change::Write { path, bytes } if path.ends_with(".md") => {
                Some((path.as_str(), std::str::from_utf8(bytes).ok()?))
            }
            _ => None,
        })
        .collect();
    record_health_texts(forest, &written)
}

/// [`record_health`] for `(path, committed text)` pairs (a writer that
/// committed [`forest_git::Change::Stored`] blobs reads them back in chunks).
pub fn record_health_texts(forest: &Path, written: &[(&str, &str)]) -> usize {
    use forest_model::health_facts::{facts, FACTS_VERSION, HEALTH_CACHE_PATH};
    if written.is_empty() {
        return 0;
    }
    forest_model::lint_cache::record_written(forest, &forest.join(HEALTH_CACHE_PATH), FACTS_VERSION, facts, written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_row_keeps_its_body_lead_and_a_branch_row_none() {
        let leaf = Node::parse("---\ntitle: Less\nsummary: A pager.\n---\n\n# less\n\nopposite of *more*\n").unwrap();
        assert_eq!(catalog_row("tools/less", &leaf).lead, "less opposite of more");
        let branch =
            Node::parse("---\ntype: branch\ntitle: Tools\nsummary: Tools.\n---\n\n- [[tools/less]]\n").unwrap();
        assert_eq!(catalog_row("tools/_index", &branch).lead, "");
    }
}
