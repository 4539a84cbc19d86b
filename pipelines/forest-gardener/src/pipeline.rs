//! The wiring of the Gardener's stages (see [`crate::stages`]): per source,
//! list -> reconcile -> plan -> curate -> commit, one git commit per batch,
//! with the fetch + convert of batch N+1 overlapping the curate and commit
//! of batch N.
//!
//! In: the loaded config and the sources to run. Out: the run's
//! [`GardenReport`]. Owns the per-source state ([`SourceRun`]) the stages
//! read and write; the stages themselves say what they may touch.

use crate::config::{GardenerConfig, SourceConfig};
use crate::derived::open_catalog_checked;
use crate::entry::{Curate, Progress, RunOptions};
use crate::manifest::Manifest;
use crate::outcomes::{converter_key, RunOutcomes, StatKey};
use crate::report::{FileError, GardenReport, SourceReport, REPORT_VERSION};
use crate::source::Access;
use crate::stages::catchup::{open_manifest, refresh_catalog, Refresh};
use crate::stages::commit::recover_payloads;
use crate::stages::curate::curate_drafts;
use crate::stages::plan::{Batch, Work};
use crate::stages::reconcile::Reconciled;
use crate::stages::CATALOG_DIRTY;
use crate::GardenError;
use forest_catalog::Catalog;
use forest_convert::{Limits, Registry};
use forest_git::GitForest;
use forest_model::node::today;
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// Run `sources` one after another (one [`SourceRun`] each).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_sources(
    command: &'static str,
    forest: &Path,
    git: &GitForest,
    config: &GardenerConfig,
    sources: &[SourceConfig],
    path: Option<&str>,
    opts: &RunOptions,
    progress: &dyn Progress,
    curate: Option<&dyn Curate>,
) -> Result<GardenReport, GardenError> {
    let started = Instant::now();
    if !opts.dry_run {
        recover_payloads(forest);
    }
    // Batch commits skip git's index (an O(forest) rewrite each); it
    // catches up once at the end, or on drop if the run fails.
    let index = DeferredIndex::start(git);
    let (registry, limits) = converters_of(config);
    let (mut manifest, refresh) = open_manifest(forest, git, config, opts.dry_run)?;
    // Full integrity check here (a nightly run can afford it); locate uses the cheap open.
    let mut catalog = None;
    if !opts.dry_run {
        let (mut cat, rebuilt) = open_catalog_checked(forest)?;
        // A fresh rebuild already reflects HEAD; otherwise catch up. A crash
        // mid curation batch may have left uncommitted rows: rebuild then.
        if !rebuilt {
            let refresh = if forest.join(CATALOG_DIRTY).exists() { Refresh::Full } else { refresh };
            refresh_catalog(forest, &mut cat, &refresh)?;
        }
        let _ = std::fs::remove_file(forest.join(CATALOG_DIRTY));
        catalog = Some(cat);
    }
    let mut report = GardenReport { version: REPORT_VERSION, dry_run: opts.dry_run, ..Default::default() };
    let multi = config.sources.len() > 1;
    Access::sweep_slots(forest);
    // Spill files of a killed run are only stale copies of a listing.
    let _ = std::fs::remove_dir_all(forest.join(crate::stages::reconcile::SPILL_DIR));
    for src in sources {
        let access = Access::open(forest, src)?;
        let io_pool = io_pool_for(&access);
        let mut ctx = SourceRun {
            command,
            forest,
            git,
            config,
            src,
            multi,
            registry: &registry,
            limits: &limits,
            opts,
            progress,
            curate,
            today: today(),
            report: SourceReport { source: src.name.clone(), ..Default::default() },
            commits: vec![],
            taken: HashSet::new(),
            access: &access,
            io_pool: io_pool.as_ref(),
            curate_pool: curate
                .and_then(|h| rayon::ThreadPoolBuilder::new().num_threads(h.concurrency().clamp(1, 64)).build().ok()),
            outcomes: RunOutcomes::new(manifest.outcomes(&src.name)?, &today()),
            folders: Default::default(),
            health: None,
        };
        ctx.run(path, &mut manifest, catalog.as_mut())?;
        report.commits.extend(ctx.commits);
        report.sources.push(ctx.report);
    }
    Access::sweep_slots(forest);
    index.finish()?;
    if let Some(cat) = catalog.as_mut() {
        rebuild_topk_if_needed(cat);
    }
    // Every connection closed: the run vouches for the catalog it leaves
    // (it started from a full check or from a verified catalog).
    drop(catalog);
    if !opts.dry_run {
        forest_catalog::verified::mark_verified(&forest.join(crate::derived::CATALOG_PATH));
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Files to convert from which a run suspends the top-k index and rebuilds
/// it at its end (also only when they are at least 1/8 of the catalog).
const BULK_FILES: usize = 20_000;

/// Whether a run converting `to_convert` files into a catalog of `nodes`
/// is a bulk run (see [`suspend_topk_for_bulk`]).
fn is_bulk(to_convert: usize, nodes: i64) -> bool {
    to_convert >= BULK_FILES && to_convert as i64 >= nodes / 8
}

/// A run that will add a large share of the forest stops maintaining the
/// catalog's top-k index: per node it costs ~30 delta rows, and the index
/// compacts (rewrites every blob) at each 1/16 of growth. One rebuild at
/// the end costs a read of the FTS rows instead (~20 s at 10^6 nodes).
fn suspend_topk_for_bulk(cat: &mut Catalog, to_convert: usize) {
    if to_convert < BULK_FILES {
        return;
    }
    match cat.count_nodes() {
        Ok(n) if is_bulk(to_convert, n) => {
            if let Err(e) = cat.suspend_topk() {
                tracing::warn!(event = "catalog.topk_suspend_failed", error = %e);
            } else {
                tracing::info!(event = "catalog.topk_suspended", files = to_convert, nodes = n);
            }
        }
        _ => {}
    }
}

/// At the end of a run: rebuild the top-k index when it is not usable (this
/// run suspended it, or another writer left it stale). Derived data: a
/// failure is logged and `locate` keeps answering through FTS5.
fn rebuild_topk_if_needed(cat: &mut Catalog) {
    let t = Instant::now();
    match cat.rebuild_topk() {
        Ok(Some(docs)) => {
            tracing::info!(
                event = "catalog.topk_rebuilt",
                docs,
                ms = t.elapsed().as_millis() as u64,
                rss_mib = rss_mib()
            )
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(event = "catalog.topk_rebuild_failed", error = %e),
    }
}

/// Download threads for an object-store source (`FOREST_S3_CONCURRENCY`,
/// default 16: latency-bound, so many more than cores); none for local.
pub(crate) fn io_pool_for(access: &Access) -> Option<rayon::ThreadPool> {
    if !access.is_remote() {
        return None;
    }
    let n = std::env::var("FOREST_S3_CONCURRENCY").ok().and_then(|v| v.parse().ok()).unwrap_or(16usize);
    rayon::ThreadPoolBuilder::new().num_threads(n.clamp(1, 256)).build().ok()
}

/// The converter registry (with the config's command hooks) and limits a
/// run converts with.
pub(crate) fn converters_of(config: &GardenerConfig) -> (Registry, Limits) {
    let registry =
        Registry::builtin().with_command_hooks(&config.converters, Duration::from_secs(config.convert_timeout_secs));
    let limits = Limits {
        max_input_bytes: config.max_file_bytes,
        timeout: Duration::from_secs(config.convert_timeout_secs),
        ..Limits::default()
    };
    (registry, limits)
}

/// Defers git-index updates for the length of a run (see
/// `forest_git::GitForest::defer_index`).
struct DeferredIndex<'a>(Option<&'a GitForest>);

impl<'a> DeferredIndex<'a> {
    fn start(git: &'a GitForest) -> DeferredIndex<'a> {
        git.defer_index();
        DeferredIndex(Some(git))
    }

    /// Catch the index up, reporting a failure.
    fn finish(mut self) -> Result<(), GardenError> {
        match self.0.take() {
            Some(git) => git.catch_up_index().map(|_| ()).map_err(GardenError::from),
            None => Ok(()),
        }
    }
}

impl Drop for DeferredIndex<'_> {
    fn drop(&mut self) {
        if let Some(git) = self.0.take() {
            if let Err(e) = git.catch_up_index() {
                // The next GitForest::open retries from the marker.
                tracing::warn!(event = "git.index_catch_up_failed", error = %e);
            }
        }
    }
}

/// The state of one source's run, shared by its stages.
pub(crate) struct SourceRun<'a> {
    /// `adopt` or `sync` (commit subjects).
    pub(crate) command: &'static str,
    pub(crate) forest: &'a Path,
    pub(crate) git: &'a GitForest,
    pub(crate) config: &'a GardenerConfig,
    pub(crate) src: &'a SourceConfig,
    pub(crate) multi: bool,
    pub(crate) registry: &'a Registry,
    pub(crate) limits: &'a Limits,
    pub(crate) opts: &'a RunOptions,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) curate: Option<&'a dyn Curate>,
    pub(crate) today: String,
    pub(crate) report: SourceReport,
    pub(crate) commits: Vec<String>,
    /// Ids planted during this run (dry runs never touch the disk).
    pub(crate) taken: HashSet<String>,
    /// How the source's bytes are reached.
    pub(crate) access: &'a Access,
    /// Download threads for object-store sources (latency-bound, so many
    /// more than cores; conversion stays on the global pool).
    pub(crate) io_pool: Option<&'a rayon::ThreadPool>,
    /// Threads of the curate stage (network-bound: sized by the endpoint's
    /// concurrency, not by cores), so it overlaps the next conversion.
    pub(crate) curate_pool: Option<rayon::ThreadPool>,
    /// Remembered outcomes of files that were not planted (known problems
    /// are neither read nor reported again), written at the source's end.
    pub(crate) outcomes: RunOutcomes,
    /// Where source folders' branches live (sub-folder buckets).
    pub(crate) folders: crate::stages::plan::folders::FolderPlacer,
    /// The previous batch's health-cache records, written while the next
    /// batch plans (see [`SourceRun::await_health`]).
    pub(crate) health: Option<std::thread::JoinHandle<()>>,
}

/// A per-file report line.
pub(crate) fn err(path: &str, message: impl Into<String>) -> FileError {
    FileError { path: path.to_string(), message: message.into() }
}

impl SourceRun<'_> {
    /// List + reconcile (streaming), then plan/curate/commit batch after
    /// batch, pulling each batch's work from the stream.
    fn run(
        &mut self,
        path: Option<&str>,
        manifest: &mut Manifest,
        mut catalog: Option<&mut Catalog>,
    ) -> Result<(), GardenError> {
        let Some(Reconciled { mut work, to_convert, hashes, mut touched_up }) = self.reconcile(manifest, path)? else {
            return Ok(());
        };
        self.progress.start(&self.src.name, to_convert as u64);
        if let Some(cat) = catalog.as_deref_mut() {
            suspend_topk_for_bulk(cat, to_convert);
        }
        let chunk = self.opts.commit_every.max(1);
        let mut first = true;
        let t = Instant::now();
        let budget = self.opts.batch_bytes.max(1);
        let mut slice = work.take(chunk, budget)?;
        let (converted, cut) = self.converter().convert_upto(&slice, &hashes, budget);
        give_back_from(&mut slice, cut, &mut work);
        let mut next_converted = Some(converted);
        tracing::info!(event = "gardener.stage", stage = "convert", ms = t.elapsed().as_millis() as u64);
        while !slice.is_empty() || first {
            let batch_started = Instant::now();
            let converted = self.account_conversions(next_converted.take().unwrap_or_default());
            let t = Instant::now();
            let mut batch = Batch::default();
            if first {
                batch.manifest_up.append(&mut touched_up);
            }
            for w in &slice {
                self.apply(w, &converted, &mut batch, catalog.as_deref());
            }
            // Branch scent first (a derived summary is longer than the
            // placeholder, and the split measures entry lines), then
            // navigable branches: split what this batch made overflow.
            self.derive_branch_scents(&mut batch);
            self.rebalance(&mut batch, catalog.as_deref());
            drop(converted);
            tracing::info!(
                event = "gardener.stage",
                stage = "plan",
                files = slice.len(),
                ms = t.elapsed().as_millis() as u64,
                rss_mib = rss_mib()
            );
            for f in slice.iter().filter_map(Work::listed) {
                self.access.release(f);
            }
            // The next slice converts on the CPU pool while this batch is
            // curated (its own threads, network-bound) and committed (git,
            // SQLite, the fsync barrier): the model never waits for
            // conversion, and conversion never waits for the commit.
            let drafts = self.prepare_curation(&mut batch, catalog.as_deref_mut())?;
            let mut next_slice = work.take(chunk, budget)?;
            let cx = self.converter();
            let (hook, hashes_ref) = (self.curate, &hashes);
            let (upcoming, finished) = std::thread::scope(|sc| {
                let next = &next_slice;
                let converting =
                    (!next.is_empty()).then(|| sc.spawn(move || cx.convert_upto(next, hashes_ref, budget)));
                let t = Instant::now();
                // A panicking hook costs this batch its curation (the
                // deterministic scent stays), never the run.
                let pool = self.curate_pool.as_ref();
                let (curated, failed) =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| curate_drafts(hook, pool, drafts)))
                        .unwrap_or_else(|_| (vec![], vec![]));
                tracing::info!(
                    event = "gardener.stage",
                    stage = "curate",
                    drafts = curated.len(),
                    ms = t.elapsed().as_millis() as u64
                );
                self.fold_curation(curated, failed, &mut batch);
                let t = Instant::now();
                let finished = self.finish_batch(&mut batch, manifest, catalog.as_deref_mut());
                tracing::info!(
                    event = "gardener.stage",
                    stage = "commit+derived",
                    ms = t.elapsed().as_millis() as u64,
                    rss_mib = rss_mib()
                );
                let t = Instant::now();
                // A panic in a converter thread is a bug: surface it as one.
                let upcoming = converting.map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
                tracing::info!(
                    event = "gardener.stage",
                    stage = "convert-next-wait",
                    next_files = next.len(),
                    ms = t.elapsed().as_millis() as u64
                );
                (upcoming, finished)
            });
            finished?;
            next_converted = upcoming.map(|(converted, cut)| {
                give_back_from(&mut next_slice, cut, &mut work);
                converted
            });
            // Wall time of the whole batch (its plan, curate, commit and the
            // next batch's conversion): bench/gardener.sh compares these.
            tracing::info!(
                event = "gardener.batch",
                files = slice.len(),
                ms = batch_started.elapsed().as_millis() as u64,
                rss_mib = rss_mib()
            );
            first = false;
            slice = next_slice;
        }
        self.await_health();
        self.progress.finish();
        self.account_store();
        self.report.known_problems = self.outcomes.known_count;
        if !self.opts.dry_run {
            self.outcomes.flush(manifest, &self.src.name)?;
        }
        Ok(())
    }

    /// A listed file's stat key (what its remembered outcome is keyed by).
    pub(crate) fn stat_key(&self, f: &crate::walk::Listed) -> StatKey {
        StatKey { size: f.size, mtime_ms: f.mtime_ms, etag: f.object.as_ref().map(|o| o.etag.clone()) }
    }

    /// The converter version tag of `rel` ([`converter_key`]).
    pub(crate) fn converter_key(&self, rel: &str) -> String {
        converter_key(self.registry, &self.config.converters, rel)
    }
}

/// Cut `slice` before the file `cut` (the first its conversion left out
/// for the byte budget) and give that tail back to `work`.
fn give_back_from(slice: &mut Vec<Work>, cut: Option<String>, work: &mut crate::stages::reconcile::WorkStream) {
    let Some(cut) = cut else { return };
    let at = slice.iter().position(|w| matches!(w, Work::Plant(f) | Work::Update(f, _) if f.rel == cut));
    if let Some(at) = at {
        let rest = slice.split_off(at);
        tracing::debug!(event = "gardener.batch_cut", kept = slice.len(), given_back = rest.len());
        work.put_back(rest);
    }
}

/// Anonymous resident memory of this process in MiB (file-backed pack
/// mappings excluded: the kernel can drop those), for stage logs.
pub(crate) fn rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("RssAnon:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kb| kb / 1024)
        .unwrap_or(0)
}

/// A real forest (git, manifest) and a temp source folder, for driving one
/// stage at a time with in-memory input.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::entry::NoProgress;
    use std::path::PathBuf;

    /// Owns everything a [`SourceRun`] borrows.
    pub(crate) struct Fixture {
        _dir: tempfile::TempDir,
        pub(crate) forest: PathBuf,
        pub(crate) source: PathBuf,
        pub(crate) git: GitForest,
        pub(crate) config: GardenerConfig,
        pub(crate) src: SourceConfig,
        registry: Registry,
        limits: Limits,
        access: Access,
        pub(crate) opts: RunOptions,
    }

    impl Fixture {
        /// A fresh forest and an empty source folder named `docs`.
        pub(crate) fn new() -> Fixture {
            std::env::set_var("FOREST_TODAY", "2026-11-29");
            let dir = tempfile::tempdir().expect("tempdir");
            let forest = dir.path().join("forest");
            let source = dir.path().join("docs");
            std::fs::create_dir_all(&source).expect("source dir");
            let git = crate::init::init_forest(&forest, "Test").expect("init");
            let config = GardenerConfig::load(&forest).expect("config");
            let src = SourceConfig {
                name: "default".into(),
                uri: source.to_string_lossy().into_owned(),
                dest: None,
                content: "inline".into(),
                archive: "never".into(),
                ignore: vec![],
                endpoint_url: None,
                path_style: None,
                rclone_config: None,
                follow_symlinks: false,
            };
            let registry = Registry::builtin();
            let limits = Limits::default();
            let access = Access::Local { root: std::fs::canonicalize(&source).expect("canon"), follow_symlinks: false };
            Fixture {
                _dir: dir,
                forest,
                source,
                git,
                config,
                src,
                registry,
                limits,
                access,
                opts: RunOptions::default(),
            }
        }

        /// Write a source file.
        pub(crate) fn write(&self, rel: &str, text: &str) -> crate::walk::Listed {
            let p = self.source.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, text).expect("write");
            let md = std::fs::metadata(&p).expect("stat");
            use std::os::unix::fs::MetadataExt;
            crate::walk::Listed {
                rel: rel.into(),
                abs: p,
                size: md.len(),
                mtime_ms: md.mtime() * 1000 + md.mtime_nsec() / 1_000_000,
                object: None,
            }
        }

        /// A run over the fixture's source.
        pub(crate) fn run(&self) -> SourceRun<'_> {
            SourceRun {
                command: "adopt",
                forest: &self.forest,
                git: &self.git,
                config: &self.config,
                src: &self.src,
                multi: false,
                registry: &self.registry,
                limits: &self.limits,
                opts: &self.opts,
                progress: &NoProgress,
                curate: None,
                today: "2026-11-29".into(),
                report: SourceReport::default(),
                commits: vec![],
                taken: HashSet::new(),
                access: &self.access,
                io_pool: None,
                curate_pool: None,
                outcomes: RunOutcomes::default(),
                folders: Default::default(),
                health: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_large_share_of_new_files_is_a_bulk_run() {
        assert!(is_bulk(1_000_000, 0), "an adopt into an empty forest");
        assert!(is_bulk(150_000, 1_000_000), "a sync adding 15%");
        assert!(!is_bulk(100_000, 1_000_000), "10% growth stays incremental");
        assert!(!is_bulk(19_999, 0), "small runs never suspend the index");
    }
}
