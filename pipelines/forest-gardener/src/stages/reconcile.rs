//! Reconcile stage (DESIGN §3): the listing against the manifest as a
//! streaming merge join. The list stage walks on its own thread and sends
//! files in path order through a bounded channel; the manifest is read in
//! the same order (`ORDER BY path`). Only what is proportional to the
//! changes is kept: suspects, vanished entries (move candidates), and new
//! files up to one batch (beyond that they spill to a temp file, read back
//! batch by batch). The decisions are the pure functions of
//! [`crate::reconcile`]; this stage does the I/O around them.
//!
//! In: the source's listing and manifest rows. Out: a [`WorkStream`] of
//! plant/update/move/stale items in path order, the hashes computed on the
//! way, and the manifest rows of touched files. Known problems (same stat
//! key and converter as when they failed, [`crate::outcomes`]) are dropped
//! from the new and suspect files during the join, before anything is
//! read; walk problems are reported once, then only counted. Touches the
//! source (reads for hashing), S3 download slots and its spill file under
//! `_derived/tmp/listing/`; never a tracked file.

use crate::env::RunEnv;
use crate::error::GardenError;
use crate::gitsrc::listing as gitlist;
use crate::manifest::Manifest;
use crate::outcomes::{converter_key, report_problem, walk_key, OutcomeKind, RunOutcomes, StatKey};
use crate::reconcile::{self, HashPair, Joined, ManifestEntry, MergeJoin, Move};
use crate::report::{err, SourceReport};
use crate::source::Access;
use crate::stages::fetch::hash_listed;
use crate::stages::list::{list_each, open_listing, ListSource};
use crate::stages::work::Work;
use crate::walk::{Listed, ObjectRef};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

impl reconcile::StatKey for Listed {
    fn rel(&self) -> &str {
        &self.rel
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn mtime_ms(&self) -> i64 {
        self.mtime_ms
    }
    fn etag(&self) -> Option<&str> {
        self.object.as_ref().map(|o| o.etag.as_str())
    }
}

/// Where new files beyond one batch wait between the join and planting.
pub const SPILL_DIR: &str = "_derived/tmp/listing";

/// Files buffered between the walk thread and the join.
const CHANNEL_BOUND: usize = 4096;

/// What the reconcile stage hands to the batch loop.
pub(crate) struct Reconciled {
    /// Plant/update/move/stale items in path order, pulled batch by batch.
    pub(crate) work: WorkStream,
    /// Files the batches will convert (plants and updates).
    pub(crate) to_convert: usize,
    /// Hashes computed while reconciling (reused by conversion).
    pub(crate) hashes: HashMap<String, HashPair>,
    /// Manifest rows of touched files, written with the first batch.
    pub(crate) touched_up: Vec<(String, ManifestEntry)>,
    /// The stale guard refused to mark files stale.
    pub(crate) stale_refused: bool,
    /// A git source's `meta` row (key, commit and rules) to record once
    /// every batch landed: the next sync diffs from there.
    pub(crate) git_record: Option<(String, String)>,
}

/// What the stat join kept.
#[derive(Default)]
pub(crate) struct Scan {
    /// Files listed.
    pub(crate) files_seen: usize,
    /// Manifest rows read.
    pub(crate) entries_seen: usize,
    /// Listed with an equal stat key.
    pub(crate) unchanged: usize,
    /// Listed, stat differs (file, entry), in path order.
    pub(crate) suspects: Vec<(Listed, ManifestEntry)>,
    /// Not listed (path, entry), in path order.
    pub(crate) vanished: Vec<(String, ManifestEntry)>,
}

/// Consume a join, keeping the change-proportional sets; new files go to
/// `new`. Errors on an out-of-order listing (nothing may be decided then).
#[cfg(test)]
pub(crate) fn scan_join(join: impl Iterator<Item = Joined<Listed>>, new: &mut NewFiles) -> Result<Scan, GardenError> {
    scan_join_known(join, new, &mut |_| false)
}

/// [`scan_join`] where `known(file)` drops a known problem (counted as
/// seen, neither new nor suspect: it is not read).
pub(crate) fn scan_join_known(
    join: impl Iterator<Item = Joined<Listed>>,
    new: &mut NewFiles,
    known: &mut dyn FnMut(&Listed) -> bool,
) -> Result<Scan, GardenError> {
    let mut s = Scan::default();
    for j in join {
        match j {
            Joined::New(f) if known(&f) => s.files_seen += 1,
            Joined::Suspect(f, _) if known(&f) => {
                s.files_seen += 1;
                s.entries_seen += 1;
            }
            Joined::New(f) => {
                s.files_seen += 1;
                new.push(f)?;
            }
            Joined::Unchanged(_) => {
                s.files_seen += 1;
                s.entries_seen += 1;
                s.unchanged += 1;
            }
            Joined::Suspect(f, e) => {
                s.files_seen += 1;
                s.entries_seen += 1;
                s.suspects.push((f, e));
            }
            Joined::Vanished(p, e) => {
                s.entries_seen += 1;
                s.vanished.push((p, e));
            }
            Joined::OutOfOrder(p) => {
                return Err(GardenError::Listing(format!("listing is not in path order at '{p}': nothing decided")));
            }
        }
    }
    Ok(s)
}

/// The reconcile stage of one source's run: reads the [`RunEnv`] (through
/// `Deref`), updates the remembered outcomes (known problems are skipped,
/// new listing problems recorded) and writes its part of the report into
/// `report` (a fresh one, folded by the pipeline).
pub(crate) struct Reconciler<'r> {
    pub(crate) env: &'r RunEnv<'r>,
    pub(crate) outcomes: &'r mut RunOutcomes,
    /// This stage's part of the source's report.
    pub(crate) report: SourceReport,
}

impl<'r> std::ops::Deref for Reconciler<'r> {
    type Target = RunEnv<'r>;

    fn deref(&self) -> &RunEnv<'r> {
        self.env
    }
}

impl Reconciler<'_> {
    /// A git source whose manifest recorded the commit it mirrored, under
    /// the same rules, lists only what changed since (a whole-source sync
    /// only). A history rewrite is said once; a delta that cannot stand
    /// for the listing (the commit is gone) falls back to the whole tree.
    fn git_delta(
        &mut self,
        manifest: &Manifest,
        path: Option<&str>,
        ignore: &[String],
    ) -> Result<Option<gitlist::Delta>, GardenError> {
        let env = self.env;
        let (Some(git), Access::Git { slots, .. }, None) = (env.access.git(), env.access, path) else {
            return Ok(None);
        };
        let Some(rec) = manifest.meta(&gitlist::state_key(&env.src.name))? else { return Ok(None) };
        let Some(since) = gitlist::recorded_since(&rec, &env.src.uri, ignore) else { return Ok(None) };
        match gitlist::delta(git, since, slots, ignore) {
            Ok(d) => {
                self.report.warnings.extend(d.note.iter().map(|n| format!("{}: {n}", env.src.uri)));
                Ok(Some(d))
            }
            Err(why) => {
                self.report.warnings.push(format!("{}: {}", env.src.uri, crate::error::chain(&why)));
                Ok(None)
            }
        }
    }

    /// Reconcile the source with the manifest (see the module doc). None
    /// when the source could not be listed at all (reported, skipped).
    pub(crate) fn reconcile(
        &mut self,
        manifest: &Manifest,
        path: Option<&str>,
    ) -> Result<Option<Reconciled>, GardenError> {
        let ignore = self.ignore_rules();
        let delta = self.git_delta(manifest, path, &ignore)?;
        let (source, only, delta_paths) = match delta {
            Some(d) => (ListSource::GitDelta(d.files, d.problems), None, Some(d.paths)),
            None => {
                let (source, only) = open_listing(self.env, path)?;
                (source, only, None)
            }
        };
        let t = Instant::now();
        let mut new = NewFiles::new(self.forest.join(SPILL_DIR), self.opts.commit_every);
        // A targeted sync of one PATH is an operator asking: it always retries.
        let retry_all = path.is_some();
        let (registry, hooks, src_name) = (self.registry, &self.config.converters, self.src.name.as_str());
        let outcomes: &mut RunOutcomes = self.outcomes;
        let mut known = |f: &Listed| {
            let key = StatKey { size: f.size, mtime_ms: f.mtime_ms, etag: f.object.as_ref().map(|o| o.etag.clone()) };
            let hit = outcomes.skip_known(&f.rel, Some(&key), &converter_key(registry, hooks, &f.rel));
            hit && !retry_all
        };
        let (scan, end) = std::thread::scope(|sc| -> Result<_, GardenError> {
            let (tx, rx) = crossbeam_channel::bounded::<Listed>(CHANNEL_BOUND);
            let (ignore, only_ref) = (&ignore, only.as_deref());
            let lister = sc.spawn(move || {
                list_each(source, ignore, only_ref, &mut |f| {
                    let _ = tx.send(f);
                })
            });
            let join = |rows: &mut dyn Iterator<Item = (String, ManifestEntry)>| {
                scan_join_known(MergeJoin::new(rx.iter(), rows), &mut new, &mut known)
            };
            let scanned = match &delta_paths {
                Some(paths) => manifest.scan_paths(src_name, paths, join),
                None => manifest.scan_sorted(src_name, only_ref, join),
            };
            // Let the walk finish even when the join stopped early.
            for _ in rx.iter() {}
            let end = lister.join().map_err(|_| GardenError::Listing("the listing thread panicked".into()))?;
            Ok((scanned??, end))
        })?;
        let mut scan = scan;
        tracing::info!(
            event = "gardener.stage",
            stage = "list+join",
            files = scan.files_seen,
            new = new.count,
            suspects = scan.suspects.len(),
            vanished = scan.vanished.len(),
            ms = t.elapsed().as_millis() as u64,
            rss_mib = crate::env::rss_mib()
        );
        let wk = walk_key();
        for q in &end.problems {
            if !self.outcomes.skip_known(&q.rel, q.key.as_ref(), &wk) {
                report_problem(&mut self.report, q.kind, &q.rel, &q.message);
                self.outcomes.record(&q.rel, q.kind, &q.message, q.key.clone(), &wk);
            }
        }
        if end.listing_error.is_none() && path.is_none() && delta_paths.is_none() {
            self.outcomes.forget_unseen();
        }
        self.report.files_seen = scan.files_seen;
        if let Some(e) = &end.listing_error {
            // Nothing may be marked stale from a partial listing.
            if scan.files_seen == 0 && path.is_none() {
                self.report
                    .errors
                    .push(err(&self.src.uri, format!("listing failed, source skipped (nothing marked stale): {e}")));
                self.report.unreachable = true;
                return Ok(None);
            }
            self.report
                .errors
                .push(err(&self.src.uri, format!("listing incomplete, nothing marked stale this run: {e}")));
            scan.vanished.clear();
        }
        let partial = only.is_some() || delta_paths.is_some();
        let total_entries = if partial { manifest.count(&self.src.name)? } else { scan.entries_seen };
        let new = new.finish()?;
        let mut reconciled = self.decide(scan, new, total_entries)?;
        if end.listing_error.is_none() && path.is_none() && !reconciled.stale_refused {
            reconciled.git_record = self
                .access
                .git()
                .map(|g| (gitlist::state_key(&self.src.name), gitlist::state(g, &self.src.uri, &ignore)));
        }
        Ok(Some(reconciled))
    }

    /// Hash suspects and move candidates, classify, apply the stale guard.
    fn decide(&mut self, scan: Scan, new: NewFiles, total_entries: usize) -> Result<Reconciled, GardenError> {
        // Only new files whose size equals a vanished entry's can be moves.
        let vanished_sizes: HashSet<u64> = scan.vanished.iter().map(|(_, e)| e.size).collect();
        let mut candidates: Vec<Listed> = vec![];
        if !vanished_sizes.is_empty() {
            for f in new.iter()? {
                let f = f?;
                if vanished_sizes.contains(&f.size) {
                    candidates.push(f);
                }
            }
        }
        let want_sha_moves = scan.vanished.iter().any(|(_, e)| !e.hash.starts_with("blake3:"));
        let mut to_hash: Vec<(&Listed, bool)> =
            scan.suspects.iter().map(|(f, e)| (f, !e.hash.starts_with("blake3:"))).collect();
        to_hash.extend(candidates.iter().map(|f| (f, want_sha_moves)));
        let hashed = hash_listed(self.access, &to_hash);
        let mut hashes = HashMap::new();
        let sizes: HashMap<&str, u64> = to_hash.iter().map(|(f, _)| (f.rel.as_str(), f.size)).collect();
        for (rel, r) in hashed {
            match r {
                Ok(h) => {
                    self.report.bytes_read += sizes.get(rel.as_str()).copied().unwrap_or(0);
                    hashes.insert(rel, h);
                }
                Err(e) => {
                    let e = crate::error::chain(&e);
                    let key = to_hash.iter().find(|(f, _)| f.rel == rel).map(|(f, _)| self.stat_key(f));
                    let ck = self.converter_key(&rel);
                    self.outcomes.record(&rel, OutcomeKind::Failed, &e, key, &ck);
                    self.report.errors.push(err(&rel, e));
                }
            }
        }
        let candidate_rels: Vec<String> = candidates.iter().map(|f| f.rel.clone()).collect();
        let mut listed: HashMap<String, Listed> = HashMap::new();
        let mut suspect_rows = Vec::with_capacity(scan.suspects.len());
        for (f, e) in scan.suspects {
            suspect_rows.push((f.rel.clone(), e));
            listed.insert(f.rel.clone(), f);
        }
        let entries: HashMap<String, ManifestEntry> = suspect_rows.iter().cloned().collect();
        let plan = reconcile::decide(suspect_rows, scan.vanished, &candidate_rels, &hashes);
        self.report.unchanged = scan.unchanged;
        self.report.touched = plan.touched.len();
        // Stale guard (DESIGN §3).
        let newly_stale = plan.vanished.iter().filter(|(_, e)| !e.vanished).count();
        let mut vanished = plan.vanished;
        let mut stale_refused = false;
        if reconcile::exceeds_stale_guard(newly_stale, total_entries, self.config.max_stale_fraction)
            && !self.opts.allow_mass_stale
        {
            self.report.errors.push(err(
                &self.src.uri,
                format!(
                    "refusing to mark {newly_stale} of {total_entries} files stale (max_stale_fraction {}); rerun with --allow-mass-stale if the source really lost them",
                    self.config.max_stale_fraction
                ),
            ));
            vanished.retain(|(_, e)| e.vanished);
            stale_refused = true;
        }
        for (_, e) in &vanished {
            self.report.stale.push(e.id.clone());
        }
        // Touched files only refresh the manifest.
        let mut touched_up = vec![];
        for rel in &plan.touched {
            if let (Some(f), Some(e)) = (listed.get(rel), entries.get(rel)) {
                // Our own hash from now on: the next suspect needs blake3 only.
                let hash = hashes.get(rel).map(|h| h.blake3.clone()).unwrap_or_else(|| e.hash.clone());
                touched_up.push((
                    rel.clone(),
                    ManifestEntry {
                        size: f.size,
                        mtime_ms: f.mtime_ms,
                        etag: f.object.as_ref().map(|o| o.etag.clone()),
                        hash,
                        ..e.clone()
                    },
                ));
                // Hashed (downloaded) but unchanged: its slot is not needed.
                self.access.release(f);
            }
        }
        let mut others: Vec<Work> = vec![];
        for (rel, id) in &plan.changed {
            if let Some(f) = listed.remove(rel) {
                others.push(Work::Update(f, id.clone()));
            }
        }
        others.extend(vanished.into_iter().filter(|(_, e)| !e.vanished).map(|(r, e)| Work::MarkStale(r, e)));
        others.sort_by(|a, b| a.rel().cmp(b.rel()));
        let to_convert = new.count.saturating_sub(plan.moves.len()) + plan.changed.len();
        let moves = plan.moves.into_iter().map(|m| (m.to_rel.clone(), m)).collect();
        let work = WorkStream::new(new, others, moves)?;
        Ok(Reconciled { work, to_convert, hashes, touched_up, stale_refused, git_record: None })
    }
}

/// New files of the join: in memory while they fit one batch, then all
/// of them in a spill file (one JSON line each), read back in order.
pub(crate) struct NewFiles {
    dir: PathBuf,
    cap: usize,
    mem: Vec<Listed>,
    spill: Option<PathBuf>,
    writer: Option<BufWriter<std::fs::File>>,
    /// New files seen.
    pub(crate) count: usize,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SpillRow {
    rel: String,
    abs: PathBuf,
    size: u64,
    mtime_ms: i64,
    key: Option<String>,
    etag: Option<String>,
}

fn to_row(f: &Listed) -> SpillRow {
    SpillRow {
        rel: f.rel.clone(),
        abs: f.abs.clone(),
        size: f.size,
        mtime_ms: f.mtime_ms,
        key: f.object.as_ref().map(|o| o.key.clone()),
        etag: f.object.as_ref().map(|o| o.etag.clone()),
    }
}

fn from_row(r: SpillRow) -> Listed {
    let object = match (r.key, r.etag) {
        (Some(key), Some(etag)) => Some(ObjectRef { key, etag }),
        _ => None,
    };
    Listed { rel: r.rel, abs: r.abs, size: r.size, mtime_ms: r.mtime_ms, object }
}

/// A failed read or write of the spill file.
fn spill_err(e: std::io::Error) -> GardenError {
    GardenError::io("spill", e)
}

impl NewFiles {
    /// Keep up to `cap` files in memory; beyond that spill under `dir`.
    pub(crate) fn new(dir: PathBuf, cap: usize) -> NewFiles {
        NewFiles { dir, cap: cap.max(1), mem: vec![], spill: None, writer: None, count: 0 }
    }

    /// Add the next new file (in path order).
    pub(crate) fn push(&mut self, f: Listed) -> Result<(), GardenError> {
        self.count += 1;
        if self.writer.is_none() && self.mem.len() < self.cap {
            self.mem.push(f);
            return Ok(());
        }
        if self.writer.is_none() {
            static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::fs::create_dir_all(&self.dir).map_err(|e| GardenError::io(self.dir.display().to_string(), e))?;
            let p = self.dir.join(format!("new-{}-{n}.jsonl", std::process::id()));
            let file = std::fs::File::create(&p).map_err(|e| GardenError::io(p.display().to_string(), e))?;
            self.spill = Some(p);
            self.writer = Some(BufWriter::with_capacity(1 << 20, file));
            for m in std::mem::take(&mut self.mem) {
                self.write(&m)?;
            }
        }
        self.write(&f)
    }

    fn write(&mut self, f: &Listed) -> Result<(), GardenError> {
        let Some(w) = self.writer.as_mut() else { return Ok(()) };
        let line = serde_json::to_string(&to_row(f)).map_err(|e| spill_err(e.into()))?;
        w.write_all(line.as_bytes()).and_then(|_| w.write_all(b"\n")).map_err(spill_err)
    }

    /// Flush the spill file; the set is complete.
    pub(crate) fn finish(mut self) -> Result<NewFiles, GardenError> {
        if let Some(w) = self.writer.take() {
            w.into_inner().map_err(|e| spill_err(e.into_error()))?;
        }
        Ok(self)
    }

    /// The new files in path order (from memory or the spill file).
    pub(crate) fn iter(&self) -> Result<NewIter, GardenError> {
        match &self.spill {
            None => Ok(NewIter::Mem(self.mem.clone().into_iter())),
            Some(p) => {
                let file = std::fs::File::open(p).map_err(|e| GardenError::io(p.display().to_string(), e))?;
                Ok(NewIter::Spill(BufReader::with_capacity(1 << 20, file).lines()))
            }
        }
    }

    #[cfg(test)]
    fn spill_path(&self) -> Option<&std::path::Path> {
        self.spill.as_deref()
    }
}

impl Drop for NewFiles {
    fn drop(&mut self) {
        if let Some(p) = &self.spill {
            self.writer = None;
            let _ = std::fs::remove_file(p);
        }
    }
}

/// New files read back in path order.
pub(crate) enum NewIter {
    /// Held in memory.
    Mem(std::vec::IntoIter<Listed>),
    /// Read from the spill file.
    Spill(std::io::Lines<BufReader<std::fs::File>>),
}

impl Iterator for NewIter {
    type Item = Result<Listed, GardenError>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            NewIter::Mem(it) => it.next().map(Ok),
            NewIter::Spill(lines) => {
                let line = lines.next()?;
                Some(
                    line.map_err(spill_err)
                        .and_then(|l| serde_json::from_str::<SpillRow>(&l).map_err(|e| spill_err(e.into())))
                        .map(from_row),
                )
            }
        }
    }
}

/// The run's work in path order: new files streamed (plants, or
/// transplants when paired with a vanished entry) merged with the
/// change-proportional updates and stale marks.
pub(crate) struct WorkStream {
    /// Keeps the spill file alive (removed on drop).
    _new: NewFiles,
    new_iter: NewIter,
    peeked: Option<Listed>,
    others: VecDeque<Work>,
    moves: HashMap<String, Move>,
    /// Items a batch gave back (its conversion reached the byte budget):
    /// in path order, all before the rest of the stream.
    returned: VecDeque<Work>,
}

impl WorkStream {
    /// Merge `new` (path order) with `others` (sorted by path).
    pub(crate) fn new(
        new: NewFiles,
        others: Vec<Work>,
        moves: HashMap<String, Move>,
    ) -> Result<WorkStream, GardenError> {
        let new_iter = new.iter()?;
        Ok(WorkStream { _new: new, new_iter, peeked: None, others: others.into(), moves, returned: VecDeque::new() })
    }

    /// The next up to `n` items.
    pub(crate) fn take(&mut self, n: usize, max_bytes: u64) -> Result<Vec<Work>, GardenError> {
        let mut out = Vec::with_capacity(n.min(1 << 16));
        let mut bytes = 0u64;
        while out.len() < n && (out.is_empty() || bytes < max_bytes) {
            if let Some(w) = self.returned.pop_front() {
                bytes += w.listed().map_or(0, in_flight_bytes);
                out.push(w);
                continue;
            }
            if self.peeked.is_none() {
                self.peeked = self.new_iter.next().transpose()?;
            }
            let take_new = match (&self.peeked, self.others.front()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(f), Some(o)) => f.rel.as_str() < o.rel(),
            };
            if take_new {
                let Some(f) = self.peeked.take() else { break };
                bytes += in_flight_bytes(&f);
                out.push(match self.moves.remove(&f.rel) {
                    Some(m) => Work::Transplant(m, Some(f)),
                    None => Work::Plant(f),
                });
            } else if let Some(o) = self.others.pop_front() {
                bytes += o.listed().map_or(0, in_flight_bytes);
                out.push(o);
            }
        }
        Ok(out)
    }
}

impl WorkStream {
    /// Give back the tail of a batch that was not converted (the batch's
    /// converted bytes reached the budget): the next [`WorkStream::take`]
    /// starts with it.
    pub(crate) fn put_back(&mut self, items: Vec<Work>) {
        for w in items.into_iter().rev() {
            self.returned.push_front(w);
        }
    }
}

/// How many bytes a file weighs in a batch's memory budget: what it puts
/// in flight once converted, not what it occupies at the source. A
/// compressed single file (`.gz`, `.bz2`, `.xz`, ...) is decompressed and
/// converted whole, so it counts [`COMPRESSED_WEIGHT`] times its size (text
/// compresses 3-10x; a copy of `/usr/share/doc` is half gzip by bytes).
/// A text file (code, Markdown, plain text) is held as its converted body
/// and again as its node's text: [`TEXT_WEIGHT`]. Office documents and PDFs
/// count their size once (their text is a fraction of their bytes).
pub(crate) fn in_flight_bytes(f: &Listed) -> u64 {
    // Case-insensitive suffix test without allocating: this runs per listed file.
    let name = f.rel.rsplit('/').next().unwrap_or(&f.rel).as_bytes();
    let ends = |e: &str| name.len() >= e.len() && name[name.len() - e.len()..].eq_ignore_ascii_case(e.as_bytes());
    let compressed = [".gz", ".tgz", ".bz2", ".tbz2", ".xz", ".txz", ".lzma", ".zst", ".z"].iter().any(|e| ends(e));
    let markup = [".html", ".htm", ".xhtml"].iter().any(|e| ends(e));
    let packed = [".pdf", ".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp", ".epub", ".doc", ".xls", ".ppt"]
        .iter()
        .any(|e| ends(e));
    if compressed {
        f.size.saturating_mul(COMPRESSED_WEIGHT)
    } else if markup {
        f.size.saturating_mul(MARKUP_WEIGHT)
    } else if packed {
        f.size
    } else {
        f.size.saturating_mul(TEXT_WEIGHT)
    }
}

/// A text file's weight: its converted body plus its node's text (a 5,882-
/// file Python tree peaked at 575 MiB with text counted once).
pub(crate) const TEXT_WEIGHT: u64 = 2;

/// HTML is parsed into a DOM before it becomes Markdown: an 8.4 MB page
/// (Node.js's `all.html`) alone peaks at ~240 MiB while it converts.
pub(crate) const MARKUP_WEIGHT: u64 = 8;

/// Expansion assumed for a compressed file in the batch budget.
pub(crate) const COMPRESSED_WEIGHT: u64 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_files_weigh_what_they_put_in_flight() {
        assert_eq!(in_flight_bytes(&l("doc/changelog.Debian.gz", 1000)), 8000);
        assert_eq!(in_flight_bytes(&l("a/B.TAR.XZ", 10)), 80);
        assert_eq!(in_flight_bytes(&l("a/readme.md", 1000)), 2000);
        assert_eq!(in_flight_bytes(&l("a.gz/readme", 1000)), 2000, "only the file name counts");
        assert_eq!(in_flight_bytes(&l("a/Report.PDF", 1000)), 1000);
        assert_eq!(in_flight_bytes(&l("a/plan.docx", 1000)), 1000);
    }

    fn l(rel: &str, size: u64) -> Listed {
        Listed { rel: rel.into(), abs: PathBuf::from("/src").join(rel), size, mtime_ms: 1, object: None }
    }
    fn e(id: &str) -> ManifestEntry {
        ManifestEntry { id: id.into(), size: 1, mtime_ms: 1, hash: format!("blake3:{id}"), vanished: false, etag: None }
    }

    #[test]
    fn the_join_keeps_only_changes_and_new_files_spill_beyond_a_batch() {
        let d = tempfile::tempdir().expect("tmp");
        let listing = vec![l("a.md", 1), l("b.md", 9), l("c1.md", 2), l("c2.md", 2), l("c3.md", 2), l("d.md", 1)];
        let manifest =
            vec![("a.md".to_string(), e("a")), ("b.md".to_string(), e("b")), ("gone.md".to_string(), e("gone"))];
        let mut new = NewFiles::new(d.path().join("spill"), 2);
        let scan = scan_join(MergeJoin::new(listing.into_iter(), manifest.into_iter()), &mut new).expect("scan");
        assert_eq!((scan.files_seen, scan.entries_seen, scan.unchanged), (6, 3, 1));
        assert_eq!(scan.suspects.iter().map(|(f, _)| f.rel.as_str()).collect::<Vec<_>>(), vec!["b.md"]);
        assert_eq!(scan.vanished.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), vec!["gone.md"]);
        let new = new.finish().expect("flush");
        assert_eq!(new.count, 4);
        let spill = new.spill_path().map(std::path::Path::to_path_buf).expect("4 new files > cap 2: spilled");
        assert!(spill.exists());
        let back: Vec<String> = new.iter().expect("read").map(|f| f.expect("row").rel).collect();
        assert_eq!(back, vec!["c1.md", "c2.md", "c3.md", "d.md"]);

        // The work stream merges plants, moves and the in-memory items in path order.
        let others = vec![Work::Update(l("b.md", 9), "b".into()), Work::MarkStale("gone.md".into(), e("gone"))];
        let mv = Move { from_rel: "gone.md".into(), from_id: "gone".into(), to_rel: "c2.md".into() };
        let mut ws = WorkStream::new(new, others, [("c2.md".to_string(), mv)].into_iter().collect()).expect("stream");
        // A byte budget ends the batch once it is reached: b.md (2 x 9) + c1.md (2 x 2) >= 20.
        let first = ws.take(10, 20).expect("batch");
        assert_eq!(first.len(), 2);
        // A batch whose conversion reached the budget gives its tail back:
        // the next take starts with it, in the same order.
        let mut probe = ws.take(2, u64::MAX).expect("batch");
        assert_eq!(probe.iter().map(|w| w.rel().to_string()).collect::<Vec<_>>(), vec!["c2.md", "c3.md"]);
        ws.put_back(probe.split_off(0));
        let rest = ws.take(10, u64::MAX).expect("batch");
        assert!(ws.take(10, u64::MAX).expect("end").is_empty());
        let kinds: Vec<(char, String)> = first
            .iter()
            .chain(rest.iter())
            .map(|w| {
                let k = match w {
                    Work::Plant(_) => 'P',
                    Work::Update(..) => 'U',
                    Work::Transplant(..) => 'T',
                    Work::MarkStale(..) => 'S',
                };
                (k, w.rel().to_string())
            })
            .collect();
        let want: Vec<(char, String)> =
            [('U', "b.md"), ('P', "c1.md"), ('T', "c2.md"), ('P', "c3.md"), ('P', "d.md"), ('S', "gone.md")]
                .iter()
                .map(|(k, r)| (*k, r.to_string()))
                .collect();
        assert_eq!(kinds, want);
        drop(ws);
        assert!(!spill.exists(), "the spill file goes with the stream");
    }

    #[test]
    fn an_out_of_order_listing_decides_nothing() {
        let d = tempfile::tempdir().expect("tmp");
        let mut new = NewFiles::new(d.path().to_path_buf(), 10);
        let listing = vec![l("b.md", 1), l("a.md", 1)];
        assert!(scan_join(MergeJoin::new(listing.into_iter(), std::iter::empty()), &mut new).is_err());
    }

    #[test]
    fn the_stage_reports_its_part_and_streams_new_files_and_stale_marks() {
        let mut fx = crate::env::testing::Fixture::new();
        // One row of one is every row: past the stale guard unless allowed.
        fx.opts.allow_mass_stale = true;
        fx.write("a.md", "alpha");
        fx.write("b/c.md", "gamma");
        let env = fx.env();
        let mut manifest = Manifest::open(std::path::Path::new(":memory:")).expect("manifest");
        manifest.apply("default", &[("gone.md".into(), e("gone"))], &[], None).expect("rows");
        let mut outcomes = RunOutcomes::default();
        let mut stage = Reconciler { env: &env, outcomes: &mut outcomes, report: SourceReport::default() };
        let Reconciled { mut work, to_convert, .. } = stage.reconcile(&manifest, None).expect("ok").expect("listed");
        assert_eq!(stage.report.files_seen, 2);
        assert_eq!(stage.report.stale, vec!["gone"], "a vanished file is reported stale");
        assert!(stage.report.errors.is_empty(), "{:?}", stage.report.errors);
        assert_eq!(to_convert, 2);
        let rels: Vec<String> = work.take(10, u64::MAX).expect("work").iter().map(|w| w.rel().to_string()).collect();
        assert_eq!(rels, ["a.md", "b/c.md", "gone.md"], "path order: plants and the stale mark");
    }
}
