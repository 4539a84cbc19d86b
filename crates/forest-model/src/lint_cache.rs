//! Whole-forest lint with a stamp-keyed cache of the per-node work, for
//! reports that run again and again on a forest that barely changed (the
//! Ranger's health), and a way for writers to fill it as they write.
//!
//! In: the forest's node files, the cache database, the caller's per-node
//! facts function. Out: the same [`LintReport`] as
//! [`crate::lint::lint_forest`], the caller's fold over the facts, and the
//! updated cache. Touches: reads node (and local payload) files only when
//! their stamp changed; writes the cache (a derived SQLite file).
//!
//! A node's lint splits into what depends on the node alone
//! ([`NodeCheck`]: frontmatter, summary, payload, aliases, tags) and the
//! link targets checked against the id set each run, so a cached node is
//! still re-checked against deleted or new targets. The stamp is (size,
//! mtime ns, ctime ns, inode) of the node file and of its local payload;
//! a different dialect (`_meta/schema.md`), rules or facts version drops
//! the whole cache. Records are keyed by forest-relative path; the sorted
//! walk reads them one slice (a path range) at a time, so memory holds
//! one slice of records, not the forest's. [`record_written`] lets the
//! Gardener add the records of the nodes it just wrote, so the first
//! health run after an adopt of 10^6 files reads no passport.
//!
//! SQLite rather than a sorted file: writers upsert a batch's records in
//! one transaction without rewriting the rest, and a torn or foreign file
//! is detected on open (and replaced).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rayon::prelude::*;
use rusqlite::{params, Connection, OptionalExtension};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::ids;
use crate::lint::{check_node, finish, forest_dialect, read_node, Issue, LintReport, NodeCheck};
use crate::node::Node;
use crate::schema::Dialect;
use crate::walk::node_paths_and_links;

/// Cache format version (bump when [`NodeCheck`], the stamp or the
/// tables change).
const FORMAT: u32 = 2;
/// Version of the per-node lint rules: bump it with any change to
/// `lint::check_node`, or caches written by the older rules would be
/// trusted. The crate version is part of the header too.
const RULES: u32 = 1;
/// Nodes handled per slice.
const SLICE: usize = 4096;

/// A file's identity for the cache: size, mtime ns, ctime ns, inode.
type Stamp = [u64; 4];

/// How much of the forest the cache answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Nodes whose cached record was used.
    pub hits: usize,
    /// Nodes read and checked.
    pub misses: usize,
}

#[derive(Serialize, Deserialize, PartialEq)]
struct Header {
    format: u32,
    rules: String,
    dialect: String,
    facts: String,
}

impl Header {
    fn new(root: &Path, facts_version: &str) -> Header {
        let schema = std::fs::read(root.join("_meta/schema.md")).unwrap_or_default();
        Header {
            format: FORMAT,
            rules: format!("{RULES}@{}", env!("CARGO_PKG_VERSION")),
            dialect: hex::encode(Sha256::digest(&schema)),
            facts: facts_version.into(),
        }
    }
}

/// One node's cached work (its path is the key).
#[derive(Serialize, Deserialize)]
struct Record<F> {
    s: Stamp,
    c: NodeCheck,
    /// Stamp of `c.payload` (`None`: it was missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    ps: Option<Stamp>,
    /// The caller's facts (`None`: a `_meta` node or a parse failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    f: Option<F>,
}

fn stamp(path: &Path) -> Option<Stamp> {
    std::fs::symlink_metadata(path).ok().and_then(|m| stamp_of(&m))
}

/// The stamp of a file's metadata (the same for `lstat` by path and
/// `fstat` on an open regular file).
fn stamp_of(m: &std::fs::Metadata) -> Option<Stamp> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| (s as u64).wrapping_mul(1_000_000_000).wrapping_add(n as u64);
        Some([m.len(), ns(m.mtime(), m.mtime_nsec()), ns(m.ctime(), m.ctime_nsec()), m.ino()])
    }
    #[cfg(not(unix))]
    {
        let t = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos() as u64;
        Some([m.len(), t, 0, 0])
    }
}

/// Check node `id` (forest-relative `rel`) from its parse result: the
/// record to cache, with the payload's stamp taken after the payload read.
fn fresh_record<T, G>(
    root: &Path,
    id: &str,
    s: Stamp,
    node: &Result<Node, crate::lint::NodeFileError>,
    dialect: &Dialect,
    facts: &G,
) -> Record<T>
where
    G: Fn(&str, &Node) -> T,
{
    let c = check_node(root, id, node, dialect);
    let ps = c.payload.as_ref().and_then(|p| stamp(&root.join(p)));
    let f = match node {
        Ok(n) if !ids::is_meta(id) => Some(facts(id, n)),
        _ => None,
    };
    Record { s, c, ps, f }
}

/// The cache database. Every failure disables it for the rest of the run:
/// a cache that cannot be read or written costs time, never the report.
struct Store(Option<Connection>);

impl Store {
    /// Open (or create) the cache at `path` for `header`; records written
    /// under another header are dropped. A file that is not a usable
    /// database is replaced.
    fn open(path: &Path, header: &Header) -> Store {
        let try_open = || -> rusqlite::Result<Connection> {
            let conn = Connection::open(path)?;
            conn.busy_timeout(std::time::Duration::from_secs(30))?;
            // Derived data: a crash may lose the newest records, never the forest.
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "OFF")?;
            conn.execute_batch(
                "CREATE TABLE IF NOT EXISTS header(k INTEGER PRIMARY KEY CHECK (k = 0), v TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS rec(p TEXT PRIMARY KEY, r TEXT NOT NULL) WITHOUT ROWID;",
            )?;
            let want = serde_json::to_string(header).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
            let have: Option<String> =
                conn.query_row("SELECT v FROM header WHERE k = 0", [], |r| r.get(0)).optional()?;
            if have.as_deref() != Some(want.as_str()) {
                let tx = conn.unchecked_transaction()?;
                tx.execute("DELETE FROM rec", [])?;
                tx.execute("INSERT OR REPLACE INTO header(k, v) VALUES (0, ?1)", params![want])?;
                tx.commit()?;
            }
            Ok(conn)
        };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        match try_open() {
            Ok(c) => Store(Some(c)),
            Err(_) => {
                // Not a database (or torn): start over once.
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.as_os_str().to_owned();
                    p.push(suffix);
                    let _ = std::fs::remove_file(&p);
                }
                Store(try_open().ok())
            }
        }
    }

    /// Raw records with `after < p <= upto` (`upto: None`: no upper bound).
    fn range(&mut self, after: &str, upto: Option<&str>) -> Vec<(String, String)> {
        let Some(conn) = &self.0 else { return vec![] };
        let rows = (|| -> rusqlite::Result<Vec<(String, String)>> {
            let mut st = conn.prepare_cached(match upto {
                Some(_) => "SELECT p, r FROM rec WHERE p > ?1 AND p <= ?2 ORDER BY p",
                None => "SELECT p, r FROM rec WHERE p > ?1 ORDER BY p",
            })?;
            let map = |r: &rusqlite::Row| Ok((r.get(0)?, r.get(1)?));
            match upto {
                Some(u) => st.query_map(params![after, u], map)?.collect(),
                None => st.query_map(params![after], map)?.collect(),
            }
        })();
        rows.unwrap_or_else(|_| {
            self.0 = None;
            vec![]
        })
    }

    /// Upsert `put` and drop `gone`, in one transaction.
    fn apply(&mut self, put: &[(&str, String)], gone: &[&str]) {
        if put.is_empty() && gone.is_empty() {
            return;
        }
        let Some(conn) = &self.0 else { return };
        let ok = (|| -> rusqlite::Result<()> {
            let tx = conn.unchecked_transaction()?;
            {
                let mut ins = tx.prepare_cached("INSERT OR REPLACE INTO rec(p, r) VALUES (?1, ?2)")?;
                for (p, r) in put {
                    ins.execute(params![p, r])?;
                }
                let mut del = tx.prepare_cached("DELETE FROM rec WHERE p = ?1")?;
                for p in gone {
                    del.execute(params![p])?;
                }
            }
            tx.commit()
        })();
        if ok.is_err() {
            self.0 = None;
        }
    }
}

/// [`crate::lint::lint_forest_fold`] with a cache at `cache_file`: `facts`
/// computes the caller's per-node facts when a node is (re)read; `fold`
/// sees the facts of every non-`_meta` node that parsed, cached or fresh.
/// `facts_version` names the facts' shape: a different one drops the
/// cache. A run that changed nothing writes nothing.
pub fn lint_forest_cached<T, A, G, I, F, M>(
    root: &Path,
    cache_file: &Path,
    facts_version: &str,
    facts: G,
    identity: I,
    fold: F,
    merge: M,
) -> (LintReport, A, CacheStats)
where
    T: Serialize + DeserializeOwned + Send + Sync,
    A: Send,
    G: Fn(&str, &Node) -> T + Sync + Send,
    I: Fn() -> A + Sync + Send,
    F: Fn(A, &str, &T) -> A + Sync + Send,
    M: Fn(A, A) -> A + Sync + Send,
{
    let (paths, links) = node_paths_and_links(root);
    let all_ids: Vec<&str> = paths.iter().map(|rel| rel.strip_suffix(".md").unwrap_or(rel)).collect();
    let ids: HashSet<&str> = all_ids.iter().copied().collect();
    let dialect = forest_dialect(root);
    let mut store = Store::open(cache_file, &Header::new(root, facts_version));

    let mut stats = CacheStats::default();
    let mut issues: Vec<Issue> = Vec::new();
    let mut acc = identity();
    let mut after = String::new();
    for (slice_paths, slice_ids) in paths.chunks(SLICE).zip(all_ids.chunks(SLICE)) {
        let last = slice_paths.last().map(String::as_str);
        // The stored records of this slice's path range; those whose node
        // is gone are dropped.
        let mut stored: HashMap<String, String> = store.range(&after, last).into_iter().collect();
        let cached: Vec<Option<String>> = slice_paths.iter().map(|p| stored.remove(p)).collect();
        let gone: Vec<&str> = stored.keys().map(String::as_str).collect();
        let records: Vec<(Record<T>, bool)> = slice_paths
            .par_iter()
            .zip(slice_ids.par_iter())
            .zip(cached.into_par_iter())
            .map(|((rel, id), prev)| {
                let path = root.join(rel);
                let s = stamp(&path).unwrap_or_default();
                if let Some(r) = prev.and_then(|raw| serde_json::from_str::<Record<T>>(&raw).ok()) {
                    let payload_same = r.c.payload.as_ref().is_none_or(|p| stamp(&root.join(p)) == r.ps);
                    if r.s == s && payload_same {
                        return (r, true);
                    }
                }
                (fresh_record(root, id, s, &read_node(&path), &dialect, &facts), false)
            })
            .collect();
        let put: Vec<(&str, String)> = records
            .iter()
            .zip(slice_paths)
            .filter(|((_, hit), _)| !hit)
            .filter_map(|((r, _), p)| Some((p.as_str(), serde_json::to_string(r).ok()?)))
            .collect();
        let hits = records.iter().filter(|(_, hit)| *hit).count();
        stats.hits += hits;
        stats.misses += records.len() - hits;
        store.apply(&put, &gone);
        let (slice_issues, slice_acc) = records
            .par_iter()
            .zip(slice_ids.par_iter())
            .fold(
                || (Vec::new(), identity()),
                |(mut is, a): (Vec<Issue>, A), ((r, _), id)| {
                    is.extend(r.c.resolve(id, &ids));
                    let a = match &r.f {
                        Some(f) => fold(a, id, f),
                        None => a,
                    };
                    (is, a)
                },
            )
            .reduce(
                || (Vec::new(), identity()),
                |(mut a, x), (b, y)| {
                    a.extend(b);
                    (a, merge(x, y))
                },
            );
        issues.extend(slice_issues);
        acc = merge(acc, slice_acc);
        if let Some(l) = last {
            after = l.to_string();
        }
    }
    // Records past the last node.
    let tail: Vec<String> = store.range(&after, None).into_iter().map(|(p, _)| p).collect();
    store.apply(&[], &tail.iter().map(String::as_str).collect::<Vec<_>>());
    issues.extend(links.iter().map(|l| crate::lint::symlink_issue(root, l)));
    (finish(issues, &all_ids, &ids), acc, stats)
}

/// A file's identity as the cache records it, taken before the file is
/// read (a change after it makes the next pass read the file again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp(Stamp);

/// Makes the records [`lint_forest_cached`] would make, for nodes a caller
/// has already read and parsed (the catalog rebuild): shared by the
/// threads that parse; [`CacheFill::put`] stores what they made.
pub struct RecordMaker<G> {
    root: std::path::PathBuf,
    dialect: Dialect,
    facts: G,
}

impl<G> RecordMaker<G> {
    /// The stamp of a node file the caller opened, from its metadata
    /// (`File::metadata`, taken before the read): no second path lookup.
    /// A symlink's stamp is its target's, which the health pass's `lstat`
    /// never matches: such a node is read again there, not trusted.
    pub fn stamp_of(&self, meta: &std::fs::Metadata) -> Option<FileStamp> {
        stamp_of(meta).map(FileStamp)
    }

    /// The serialized record of the node at `rel` whose file had stamp
    /// `before` when it was read and parsed as `node`.
    pub fn record<T>(&self, rel: &str, before: FileStamp, node: Node) -> Option<String>
    where
        T: Serialize,
        G: Fn(&str, &Node) -> T,
    {
        let id = rel.strip_suffix(".md")?;
        let r = fresh_record(&self.root, id, before.0, &Ok(node), &self.dialect, &self.facts);
        serde_json::to_string(&r).ok()
    }
}

/// A health cache filled from another pass's reads: the records a
/// [`RecordMaker`] made are stored a batch at a time, one transaction
/// each. A cache that cannot be opened or written is skipped (the next
/// health pass reads the nodes instead).
pub struct CacheFill<G> {
    maker: RecordMaker<G>,
    store: Store,
}

impl<G> CacheFill<G> {
    /// Open (or create) the cache at `cache_file` for the forest at `root`
    /// and the caller's `facts` of version `facts_version`.
    pub fn open(root: &Path, cache_file: &Path, facts_version: &str, facts: G) -> CacheFill<G> {
        let store = Store::open(cache_file, &Header::new(root, facts_version));
        let maker = RecordMaker { root: root.to_path_buf(), dialect: forest_dialect(root), facts };
        CacheFill { maker, store }
    }

    /// The record maker, for the threads that read the nodes.
    pub fn maker(&self) -> &RecordMaker<G> {
        &self.maker
    }

    /// Store `(forest-relative path, record)` pairs in one transaction.
    pub fn put(&mut self, records: &[(&str, String)]) {
        self.store.apply(records, &[]);
    }
}

/// Add the records of node files just written (forest-relative path and
/// the exact text written) to the cache at `cache_file`, so the next
/// [`lint_forest_cached`] with the same `facts` and `facts_version` reads
/// none of them. Files whose size no longer matches the text (rewritten
/// since) and non-node paths are left out. Returns the records written; a
/// cache that cannot be opened or written costs the next health run, not
/// the writer (0).
pub fn record_written<T, G>(
    root: &Path,
    cache_file: &Path,
    facts_version: &str,
    facts: G,
    written: &[(&str, &str)],
) -> usize
where
    T: Serialize + Send,
    G: Fn(&str, &Node) -> T + Sync + Send,
{
    let dialect = forest_dialect(root);
    let put: Vec<(&str, String)> = written
        .par_iter()
        .filter_map(|(rel, text)| {
            let id = rel.strip_suffix(".md")?;
            let s = stamp(&root.join(rel))?;
            if s[0] != text.len() as u64 {
                return None;
            }
            let node = Node::parse(text).map_err(crate::lint::NodeFileError::Parse);
            let r = fresh_record(root, id, s, &node, &dialect, &facts);
            Some((*rel, serde_json::to_string(&r).ok()?))
        })
        .collect();
    let mut store = Store::open(cache_file, &Header::new(root, facts_version));
    store.apply(&put, &[]);
    if store.0.is_some() {
        put.len()
    } else {
        0
    }
}
