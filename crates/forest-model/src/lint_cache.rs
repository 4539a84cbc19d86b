//! Whole-forest lint with a stamp-keyed cache of the per-node work, for
//! reports that run again and again on a forest that barely changed (the
//! Ranger's health).
//!
//! In: the forest's node files, the previous cache file, the caller's
//! per-node facts function. Out: the same [`LintReport`] as
//! [`crate::lint::lint_forest`], the caller's fold over the facts, and a
//! new cache file. Touches: reads node (and local payload) files only when
//! their stamp changed; writes the cache file (temp + rename).
//!
//! A node's lint splits into what depends on the node alone
//! ([`NodeCheck`]: frontmatter, summary, payload, aliases, tags) and the
//! link targets checked against the id set each run, so a cached node is
//! still re-checked against deleted or new targets. The stamp is (size,
//! mtime ns, ctime ns, inode) of the node file and of its local payload;
//! a different dialect (`_meta/schema.md`) or facts version drops the
//! whole cache. The file is JSON lines sorted by path, merge-joined with
//! the sorted walk one slice at a time: memory holds one slice of
//! records, not the forest's.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::ids;
use crate::lint::{check_node, finish, forest_dialect, read_node, Issue, LintReport, NodeCheck};
use crate::walk::node_paths;

/// Cache format version (bump when [`NodeCheck`] or the stamp changes).
const FORMAT: u32 = 1;
/// Version of the per-node lint rules: bump it with any change to
/// `lint::check_node`, or caches written by the older rules would be
/// trusted. The crate version is part of the header too.
const RULES: u32 = 1;
/// Nodes handled per merge-join slice.
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

#[derive(Serialize, Deserialize)]
struct Record<F> {
    /// Forest-relative node path.
    p: String,
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
    let m = std::fs::symlink_metadata(path).ok()?;
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

/// The old cache's records in path order (`None` records end the stream:
/// an unreadable or foreign line drops the rest of the cache, never the run).
struct Reader<F> {
    lines: Option<std::io::Lines<BufReader<File>>>,
    next: Option<Record<F>>,
    /// The file had a matching header.
    valid: bool,
    /// Records passed over (their node is gone).
    skipped: usize,
}

impl<F: DeserializeOwned> Reader<F> {
    fn open(path: &Path, header: &Header) -> Reader<F> {
        let mut lines = File::open(path).ok().map(|f| BufReader::new(f).lines());
        let ok = lines
            .as_mut()
            .and_then(|l| l.next())
            .and_then(|l| l.ok())
            .and_then(|l| serde_json::from_str::<Header>(&l).ok())
            .is_some_and(|h| &h == header);
        let mut r = Reader { lines: if ok { lines } else { None }, next: None, valid: ok, skipped: 0 };
        r.advance();
        r
    }

    fn advance(&mut self) {
        self.next =
            self.lines.as_mut().and_then(|l| l.next()).and_then(|l| l.ok()).and_then(|l| serde_json::from_str(&l).ok());
        if self.next.is_none() {
            self.lines = None;
        }
    }

    /// The record for `path` if the cache has one (paths ascend).
    fn take(&mut self, path: &str) -> Option<Record<F>> {
        while self.next.as_ref().is_some_and(|r| r.p.as_str() < path) {
            self.skipped += 1;
            self.advance();
        }
        if self.next.as_ref().is_some_and(|r| r.p == path) {
            let r = self.next.take();
            self.advance();
            return r;
        }
        None
    }

    /// True when the cache holds exactly what was taken from it.
    fn finish(mut self) -> bool {
        while self.next.is_some() {
            self.skipped += 1;
            self.advance();
        }
        self.valid && self.skipped == 0
    }
}

/// [`crate::lint::lint_forest_fold`] with a cache at `cache_file`: `facts`
/// computes the caller's per-node facts when a node is (re)read; `fold`
/// sees the facts of every non-`_meta` node that parsed, cached or fresh.
/// `facts_version` names the facts' shape: a different one drops the
/// cache. A cache that cannot be written costs the next run, not this one.
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
    G: Fn(&str, &crate::node::Node) -> T + Sync + Send,
    I: Fn() -> A + Sync + Send,
    F: Fn(A, &str, &T) -> A + Sync + Send,
    M: Fn(A, A) -> A + Sync + Send,
{
    let paths = node_paths(root);
    let all_ids: Vec<&str> = paths.iter().map(|rel| rel.strip_suffix(".md").unwrap_or(rel)).collect();
    let ids: HashSet<&str> = all_ids.iter().copied().collect();
    let dialect = forest_dialect(root);
    let schema = std::fs::read(root.join("_meta/schema.md")).unwrap_or_default();
    let header = Header {
        format: FORMAT,
        rules: format!("{RULES}@{}", env!("CARGO_PKG_VERSION")),
        dialect: hex::encode(Sha256::digest(&schema)),
        facts: facts_version.into(),
    };
    let mut old: Reader<T> = Reader::open(cache_file, &header);

    // The new file is started at the first slice that differs from the
    // old one (slices before it were all hits: their lines are copied), so
    // a run that changed nothing writes nothing.
    let tmp = forest_fs::temp_path_for(cache_file);
    let mut out: Option<NewCache> = None;
    let mut done = 0usize;

    let mut stats = CacheStats::default();
    let mut issues: Vec<Issue> = Vec::new();
    let mut acc = identity();
    for (slice_paths, slice_ids) in paths.chunks(SLICE).zip(all_ids.chunks(SLICE)) {
        let skipped_before = old.skipped;
        let cached: Vec<Option<Record<T>>> = slice_paths.iter().map(|p| old.take(p)).collect();
        let records: Vec<(Record<T>, bool)> = slice_paths
            .par_iter()
            .zip(slice_ids.par_iter())
            .zip(cached.into_par_iter())
            .map(|((rel, id), prev)| {
                let path = root.join(rel);
                let s = stamp(&path).unwrap_or_default();
                if let Some(r) = prev {
                    let payload_same = r.c.payload.as_ref().is_none_or(|p| stamp(&root.join(p)) == r.ps);
                    if r.s == s && payload_same {
                        return (r, true);
                    }
                }
                let node = read_node(&path);
                let c = check_node(root, id, &node, &dialect);
                let ps = c.payload.as_ref().and_then(|p| stamp(&root.join(p)));
                let f = match &node {
                    Ok(n) if !ids::is_meta(id) => Some(facts(id, n)),
                    _ => None,
                };
                (Record { p: rel.clone(), s, c, ps, f }, false)
            })
            .collect();
        let changed = old.skipped != skipped_before || records.iter().any(|(_, hit)| !hit);
        if changed && out.is_none() {
            out = Some(NewCache::start(cache_file, &tmp, &header, done));
        }
        for (r, hit) in &records {
            if *hit {
                stats.hits += 1;
            } else {
                stats.misses += 1;
            }
            if let Some(w) = out.as_mut() {
                w.record(r);
            }
        }
        done += records.len();
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
    }
    // Records dropped at the end, or an old file that was not usable.
    if !old.finish() && out.is_none() {
        out = Some(NewCache::start(cache_file, &tmp, &header, done));
    }
    if let Some(w) = out {
        w.commit(&tmp, cache_file);
    }
    (finish(issues, &all_ids, &ids), acc, stats)
}

/// The cache file being rewritten (temp + rename); an I/O error abandons
/// it, which costs the next run, never this one.
struct NewCache(Option<BufWriter<File>>);

impl NewCache {
    /// A temp file with `header` and the first `prior` records of the old
    /// cache file (which matched this run up to there).
    fn start(cache_file: &Path, tmp: &Path, header: &Header, prior: usize) -> NewCache {
        let open = || -> std::io::Result<BufWriter<File>> {
            if let Some(dir) = cache_file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let mut w = BufWriter::new(File::create(tmp)?);
            writeln!(w, "{}", serde_json::to_string(header)?)?;
            if prior > 0 {
                let mut lines = BufReader::new(File::open(cache_file)?).lines().skip(1);
                for _ in 0..prior {
                    let line = lines.next().ok_or(std::io::ErrorKind::UnexpectedEof)??;
                    writeln!(w, "{line}")?;
                }
            }
            Ok(w)
        };
        NewCache(open().ok())
    }

    fn record<F: Serialize>(&mut self, r: &Record<F>) {
        let ok = self.0.as_mut().is_some_and(|w| {
            serde_json::to_string(r).map_err(std::io::Error::from).and_then(|l| writeln!(w, "{l}")).is_ok()
        });
        if !ok {
            self.0 = None;
        }
    }

    fn commit(self, tmp: &Path, cache_file: &Path) {
        let written = self.0.is_some_and(|w| w.into_inner().is_ok());
        // A derived cache: a torn file after a crash reads as empty.
        if !written || forest_fs::rename_unsynced(tmp, cache_file).is_err() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}
