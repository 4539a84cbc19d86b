//! Convert stage: read (S3: download through [`crate::stages::fetch`]),
//! hash and convert one batch's files on the CPU pool.
//!
//! In: the batch's [`Work`] items and the listing. Out: one [`Converted`]
//! per file to plant or update (its `ConvertOutcome`). Files no
//! converter claims, empty ones and oversized ones are never read. Both
//! hashes come from one read pass (sha256 for the passport, blake3 for the
//! manifest). Touches the source (reads) and S3 download slots; never the
//! forest.

use crate::env::RunEnv;
use crate::options::{Progress, RunOptions};
use crate::outcomes::converter_key;
use crate::reconcile::HashPair;
use crate::report::SourceReport;
use crate::source::Access;
use crate::stages::fetch::Window;
use crate::stages::transient::{transient_bytes, Gate};
use crate::stages::work::Work;
use crate::walk::Listed;
use forest_convert::{Conversion, ConvertError, ConvertOutcome, Limits, Registry};
use forest_derived::config::{GardenerConfig, SourceConfig};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One file after read + hash + convert.
pub(crate) struct Converted {
    pub(crate) rel: String,
    pub(crate) abs: PathBuf,
    /// `file://` or `s3://` URI of the original.
    pub(crate) origin: String,
    /// Object ETag (S3 sources).
    pub(crate) etag: Option<String>,
    pub(crate) size: u64,
    pub(crate) mtime_ms: i64,
    pub(crate) hash: HashPair,
    /// The registry's outcome (status, warnings, fidelity mark), or one
    /// made here for a file no converter saw: left out with a reason (empty,
    /// too large), unreadable, an LFS pointer, a prepared conversion.
    pub(crate) outcome: ConvertOutcome,
    /// Served from the prepared store (distributed ingest): no converter ran.
    pub(crate) from_store: bool,
    /// A converter ran in this process.
    pub(crate) converted_locally: bool,
    /// Not in the prepared store and the run takes prepared files only:
    /// left for the next run (neither planted nor remembered).
    pub(crate) deferred: bool,
    /// The leaf scent derived from a Markdown conversion (issue 26), on the
    /// convert stage's threads.
    pub(crate) scent: Option<crate::stages::scent::LeafScent>,
    /// The blob is a Git LFS pointer (git sources): planted as a BONE
    /// reference to the LFS object, not converted.
    pub(crate) lfs: Option<crate::gitsrc::lfs::Pointer>,
}

/// What the convert stage reads: copies of the run's shared references,
/// so the next batch converts on its own thread while the run (`&mut`)
/// commits the current one.
#[derive(Clone, Copy)]
pub(crate) struct Converter<'a> {
    pub(crate) config: &'a GardenerConfig,
    pub(crate) src: &'a SourceConfig,
    pub(crate) registry: &'a Registry,
    pub(crate) limits: &'a Limits,
    pub(crate) opts: &'a RunOptions,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) access: &'a Access,
    pub(crate) io_pool: Option<&'a rayon::ThreadPool>,
}

impl<'a> Converter<'a> {
    /// The convert stage's view of a run's environment.
    pub(crate) fn of(env: &RunEnv<'a>) -> Converter<'a> {
        Converter {
            config: env.config,
            src: env.src,
            registry: env.registry,
            limits: env.limits,
            opts: env.opts,
            progress: env.progress,
            access: env.access,
            io_pool: env.io_pool,
        }
    }
}

/// [`Converter::convert_all`] in `env`.
pub(crate) fn convert_all(
    env: &RunEnv,
    slice: &[Work],
    hashes: &HashMap<String, HashPair>,
) -> HashMap<String, Converted> {
    Converter::of(env).convert_all(slice, hashes)
}

/// The convert stage's part of the report: where a slice's conversions
/// came from.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ConvertCounts {
    /// A converter ran in this process.
    pub(crate) local_conversions: usize,
    /// Left for the next run (prepared-only committer, not in the store).
    pub(crate) deferred: usize,
}

impl ConvertCounts {
    /// Add these counts to the source's report.
    pub(crate) fn fold(self, report: &mut SourceReport) {
        report.local_conversions += self.local_conversions;
        report.deferred += self.deferred;
    }
}

/// Count one slice's conversions by where they came from and drop the
/// deferred ones (neither planted nor remembered: the next run sees them
/// as new again).
pub(crate) fn account_conversions(
    mut converted: HashMap<String, Converted>,
) -> (HashMap<String, Converted>, ConvertCounts) {
    let local_conversions = converted.values().filter(|c| c.converted_locally).count();
    let before = converted.len();
    converted.retain(|_, c| !c.deferred);
    let deferred = before - converted.len();
    (converted, ConvertCounts { local_conversions, deferred })
}

impl Converter<'_> {
    /// The converter version tag of `rel` ([`converter_key`]).
    pub(crate) fn converter_key(&self, rel: &str) -> String {
        converter_key(self.registry, &self.config.converters, rel)
    }

    /// Convert the plant/update items of one slice of work.
    pub(crate) fn convert_all(&self, slice: &[Work], hashes: &HashMap<String, HashPair>) -> HashMap<String, Converted> {
        self.convert_upto(slice, hashes, u64::MAX).0
    }

    /// Convert the plant/update items of `slice` in path order, window by
    /// window, until what the conversions hold in memory ([`held_bytes`]:
    /// bodies, decompressed and converted, not source bytes) reaches
    /// `max_bytes`. Returns the conversions and, when it stopped early, the
    /// path of the first file left unconverted (the caller gives that tail
    /// of the batch back to the work stream). At least one window is
    /// always converted.
    pub(crate) fn convert_upto(
        &self,
        slice: &[Work],
        hashes: &HashMap<String, HashPair>,
        max_bytes: u64,
    ) -> (HashMap<String, Converted>, Option<String>) {
        let files: Vec<&Listed> = slice
            .iter()
            .filter_map(|w| match w {
                Work::Plant(f) | Work::Update(f, _) => Some(f),
                _ => None,
            })
            .collect();
        // Thread time of the conversions and of their leaf scent, summed
        // over the pool (the `gardener.convert_time` event): which of the
        // two holds the pipeline back (bench/README.md, session 21).
        let (convert_us, scent_us) = (AtomicU64::new(0), AtomicU64::new(0));
        let gate = Gate::new(self.opts.convert_bytes);
        let convert = |fs: &[&Listed], known: &HashMap<String, HashPair>| -> Vec<(String, Converted)> {
            fs.par_iter()
                .map(|f| {
                    let t = Instant::now();
                    let mut c = self.convert_one(f, known.get(&f.rel).or_else(|| hashes.get(&f.rel)), &gate);
                    let converted = Instant::now();
                    c.scent = c
                        .outcome
                        .result
                        .as_ref()
                        .ok()
                        .and_then(|conv| crate::stages::scent::of_conversion(&c.rel, conv));
                    convert_us.fetch_add((converted - t).as_micros() as u64, Ordering::Relaxed);
                    scent_us.fetch_add(converted.elapsed().as_micros() as u64, Ordering::Relaxed);
                    self.progress.file_done(c.size);
                    (f.rel.clone(), c)
                })
                .collect()
        };
        let log = |files: usize| {
            tracing::info!(
                event = "gardener.convert_time",
                files,
                convert_ms = convert_us.load(Ordering::Relaxed) / 1000,
                scent_ms = scent_us.load(Ordering::Relaxed) / 1000
            );
        };
        let mut out = HashMap::with_capacity(files.len());
        let (mut held, mut at) = (0u64, 0usize);
        while at < files.len() {
            if held >= max_bytes {
                log(at);
                return (out, Some(files[at].rel.clone()));
            }
            let end = window_end(&files, at, max_bytes, self.io_pool.is_some());
            let window = &files[at..end];
            // Object stores: download a window of objects with many threads,
            // then convert it on the CPU pool; disk use stays one window.
            let done = match self.io_pool {
                Some(pool) => {
                    let fetch = Window {
                        access: self.access,
                        registry: self.registry,
                        max_file_bytes: self.config.max_file_bytes,
                    };
                    let fetched = fetch.fetch(pool, window, hashes);
                    convert(window, &fetched)
                }
                None => convert(window, &HashMap::new()),
            };
            held += done.iter().map(|(_, c)| held_bytes(c)).sum::<u64>();
            out.extend(done);
            at = end;
        }
        log(at);
        (out, None)
    }

    /// Read, hash and convert one file; every failure is an `outcome` error.
    /// The converter runs holding its expected transient cost from `gate`.
    pub(crate) fn convert_one(&self, f: &Listed, known: Option<&HashPair>, gate: &Gate) -> Converted {
        let mut c = Converted {
            rel: f.rel.clone(),
            abs: f.abs.clone(),
            origin: self.access.origin(f),
            etag: f.object.as_ref().map(|o| o.etag.clone()),
            size: f.size,
            mtime_ms: f.mtime_ms,
            hash: HashPair { blake3: String::new(), sha256: String::new() },
            outcome: ConvertOutcome::failed(&f.rel, ConvertError::Pending, vec![], None),
            from_store: false,
            converted_locally: false,
            deferred: false,
            scent: None,
            lfs: None,
        };
        let skip = |why: String| ConvertOutcome::failed(&f.rel, ConvertError::Skipped(why), vec![], None);
        if f.size > self.config.max_file_bytes {
            c.outcome =
                skip(format!("file is {} bytes, over the {} byte limit: skipped", f.size, self.config.max_file_bytes));
            return c;
        }
        if f.size == 0 {
            c.outcome = skip("empty file (0 bytes): nothing to adopt, skipped".into());
            return c;
        }
        // An unclaimed extension is still read once: the registry routes by
        // content (extensionless README, a TIFF without its suffix); what no
        // converter takes is remembered in the outcomes and not read again.
        // Both hashes in one pass: sha256 for the passport, blake3 for the manifest.
        let hash = self.access.ensure_local(f, known, true);
        match hash {
            Ok(h) => c.hash = h,
            Err(e) => {
                c.outcome = ConvertOutcome::failed(&f.rel, ConvertError::Read(Box::new(e)), vec![], None);
                return c;
            }
        }
        if let Some(p) = self.lfs_pointer(f) {
            let title = forest_model::slug::title_from_stem(&crate::stages::text::stem_of(&f.rel));
            c.outcome = ConvertOutcome::converted(&f.rel, crate::gitsrc::lfs::stub(title, &p), vec![], None, None);
            c.lfs = Some(p);
            return c;
        }
        // Distributed ingest: what a worker prepared is not converted again.
        if let Some(p) = self.opts.store.as_deref() {
            let key = p.key(&self.src.name, &f.rel, &c.hash.sha256, &self.converter_key(&f.rel));
            match p.lookup(&key) {
                Some(o) if o.conversion.is_some() => {
                    if let Some((conversion, warnings)) = p.fill(o) {
                        c.outcome = ConvertOutcome::converted(&f.rel, conversion, warnings, None, None);
                        c.from_store = true;
                    }
                    return c;
                }
                // A worker already left this file to the committer.
                Some(_) if p.worker.load(std::sync::atomic::Ordering::Relaxed) => {
                    c.from_store = true;
                    return c;
                }
                // A worker saw the file and left its conversion to us.
                Some(_) => {}
                None if p.prepared_only => {
                    c.deferred = true;
                    return c;
                }
                None => {}
            }
        }
        c.converted_locally = true;
        let permit = gate.take(transient_bytes(&f.rel, f.size));
        c.outcome = self.registry.convert(&f.abs, &f.rel, self.limits);
        drop(permit);
        c
    }

    /// The LFS pointer a git source's small file holds (its slot was just
    /// written by the hash pass).
    fn lfs_pointer(&self, f: &Listed) -> Option<crate::gitsrc::lfs::Pointer> {
        if self.access.git().is_none() || f.size >= crate::gitsrc::lfs::POINTER_MAX {
            return None;
        }
        crate::gitsrc::lfs::parse(&std::fs::read(&f.abs).ok()?)
    }
}

/// The end of the window that starts at `at`: up to 64 files for an
/// object store (one download window), 256 for a local folder, and no more
/// estimated bytes than a quarter of the budget (one large file may be a
/// window of its own), so a batch overshoots its budget by one window.
fn window_end(files: &[&Listed], at: usize, max_bytes: u64, remote: bool) -> usize {
    let cap = if remote { 64 } else { 256 };
    let quarter = max_bytes / 4;
    let mut est = 0u64;
    let mut end = at;
    while end < files.len() && end - at < cap {
        est = est.saturating_add(crate::stages::reconcile::in_flight_bytes(files[end]));
        end += 1;
        if est >= quarter {
            break;
        }
    }
    end
}

/// What one conversion holds in memory until its batch is committed: the
/// converted body (or a dataset's cells), its title and its leaf scent.
pub(crate) fn held_bytes(c: &Converted) -> u64 {
    let body = match &c.outcome.result {
        Ok(Conversion::Markdown { title, body, .. }) => title.len() + body.len(),
        Ok(Conversion::Dataset { title, tables }) => {
            title.len()
                + tables
                    .iter()
                    .map(|t| t.rows.len() * t.columns.len() * std::mem::size_of::<forest_convert::Cell>() * 2)
                    .sum::<usize>()
        }
        Ok(Conversion::Payload { title, .. }) => title.len() + 4096,
        Err(_) => 0,
    };
    (body + c.rel.len() + 512) as u64
}

#[cfg(test)]
mod tests {
    use crate::env::testing::Fixture;
    use crate::stages::work::Work;
    use forest_convert::Conversion;
    use std::collections::HashMap;

    #[test]
    fn converts_plants_and_updates_and_reports_empty_files() {
        let fx = Fixture::new();
        let a = fx.write("a.md", "# Alpha\n\nSome text.\n");
        let empty = fx.write("e.md", "");
        let env = fx.env();
        let work = vec![Work::Plant(a), Work::Update(empty, "e".into()), Work::MarkStale("x.md".into(), entry())];
        let out = super::convert_all(&env, &work, &HashMap::new());
        assert_eq!(out.len(), 2, "stale marks convert nothing");
        let c = &out["a.md"];
        assert!(c.hash.blake3.starts_with("blake3:"));
        assert_eq!(c.hash.sha256.len(), 64, "sha256 for the passport, same read pass");
        assert!(matches!(&c.outcome.result, Ok(Conversion::Markdown { body, .. }) if body.contains("Some text")));
        assert_eq!(out["e.md"].outcome.message().as_deref(), Some("empty file (0 bytes): nothing to adopt, skipped"));
        assert!(out["e.md"].outcome.is_skipped());
    }

    #[test]
    fn a_batch_stops_converting_once_its_bodies_reach_the_budget() {
        let fx = Fixture::new();
        let text = format!("# Doc\n\n{}\n", "word ".repeat(400));
        let work: Vec<Work> = ["a.md", "b.md", "c.md"].iter().map(|p| Work::Plant(fx.write(p, &text))).collect();
        let env = fx.env();
        let cx = super::Converter::of(&env);
        let (all, cut) = cx.convert_upto(&work, &HashMap::new(), u64::MAX);
        assert_eq!((all.len(), cut), (3, None));
        let one = super::held_bytes(&all["a.md"]);
        assert!(one >= 2000, "the converted body is counted: {one}");
        // A budget of one body: the first window (one file, as its estimate
        // fills a quarter of the budget) is converted, the rest is left.
        let (some, cut) = cx.convert_upto(&work, &HashMap::new(), one);
        assert_eq!(some.len(), 1);
        assert_eq!(cut.as_deref(), Some("b.md"));
    }

    fn entry() -> crate::reconcile::ManifestEntry {
        crate::reconcile::ManifestEntry {
            id: "x".into(),
            size: 1,
            mtime_ms: 1,
            hash: "blake3:x".into(),
            vanished: false,
            etag: None,
        }
    }

    fn converted(rel: &str, local: bool, deferred: bool) -> super::Converted {
        super::Converted {
            rel: rel.into(),
            abs: rel.into(),
            origin: format!("file:///{rel}"),
            etag: None,
            size: 1,
            mtime_ms: 1,
            hash: crate::reconcile::HashPair { blake3: String::new(), sha256: String::new() },
            outcome: forest_convert::ConvertOutcome::failed(rel, forest_convert::ConvertError::Pending, vec![], None),
            from_store: !local && !deferred,
            converted_locally: local,
            deferred,
            scent: None,
            lfs: None,
        }
    }

    #[test]
    fn deferred_files_are_dropped_and_counted_apart_from_local_conversions() {
        let slice: HashMap<String, super::Converted> =
            [converted("a.md", true, false), converted("b.md", false, false), converted("c.md", false, true)]
                .into_iter()
                .map(|c| (c.rel.clone(), c))
                .collect();
        let (kept, counts) = super::account_conversions(slice);
        let mut names: Vec<&str> = kept.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["a.md", "b.md"], "a deferred file is neither planted nor remembered");
        assert_eq!(counts, super::ConvertCounts { local_conversions: 1, deferred: 1 });
        let mut report = crate::report::SourceReport::default();
        counts.fold(&mut report);
        super::ConvertCounts { local_conversions: 2, deferred: 0 }.fold(&mut report);
        assert_eq!((report.local_conversions, report.deferred), (3, 1));
    }
}
