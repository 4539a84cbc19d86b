//! The wiring of the Gardener's stages (see [`crate::stages`]): per source,
//! list -> reconcile -> plan -> curate -> commit, one git commit per batch,
//! with the fetch + convert of batch N+1 overlapping the plan, curate and commit
//! of batch N.
//!
//! In: the loaded config and the sources to run. Out: the run's
//! [`GardenReport`]. Builds each source's read-only [`RunEnv`] and owns
//! its mutable state ([`RunState`]); a stage gets the environment, its
//! input value and exactly the pieces of state it updates, and returns its
//! output value (and its part of the report, folded here).

use crate::env::{converters_of, curate_pool_for, io_pool_for, rss_mib, RunEnv};
use crate::error::GardenError;
use crate::manifest::Manifest;
use crate::options::{Curate, Progress, RunOptions};
use crate::outcomes::RunOutcomes;
use crate::reconcile::{HashPair, ManifestEntry};
use crate::report::{GardenReport, SourceReport, REPORT_VERSION};
use crate::source::Access;
use crate::stages::catchup::{open_manifest, refresh_catalog, Refresh};
use crate::stages::commit::{finish_batch, recover_payloads, HealthRecords};
use crate::stages::convert::{account_conversions, Converted, Converter};
use crate::stages::curate::{curate_drafts, fold_curation};
use crate::stages::plan::{Batch, FolderPlacer, Planned, Planner};
use crate::stages::propose::prepare_curation;
use crate::stages::reconcile::{Reconciled, Reconciler, WorkStream};
use crate::stages::work::Work;
use crate::stages::CATALOG_DIRTY;
use forest_catalog::Catalog;
use forest_derived::catalog::open_catalog_checked;
use forest_derived::config::{GardenerConfig, SourceConfig};
use forest_git::GitForest;
use forest_model::node::today;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

/// Run `sources` one after another (one [`RunEnv`] and [`RunState`] each).
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
        let curate_pool = curate_pool_for(curate);
        let env = RunEnv {
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
            access: &access,
            io_pool: io_pool.as_ref(),
            curate_pool: curate_pool.as_ref(),
        };
        let mut state = RunState {
            report: SourceReport { source: src.name.clone(), ..Default::default() },
            commits: vec![],
            taken: HashSet::new(),
            outcomes: RunOutcomes::new(manifest.outcomes(&src.name)?, &today()),
            folders: Default::default(),
            health: HealthRecords::default(),
        };
        run_source(&env, &mut state, path, &mut manifest, catalog.as_mut())?;
        report.commits.extend(state.commits);
        report.sources.push(state.report);
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
        forest_catalog::verified::mark_verified(&forest.join(forest_derived::catalog::CATALOG_PATH));
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
                tracing::warn!(event = "catalog.topk_suspend_failed", error = %crate::error::chain(&e));
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
        Err(e) => tracing::warn!(event = "catalog.topk_rebuild_failed", error = %crate::error::chain(&e)),
    }
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
                tracing::warn!(event = "git.index_catch_up_failed", error = %crate::error::chain(&e));
            }
        }
    }
}

/// The mutable state of one source's run, owned here; stages get the
/// pieces they update.
pub(crate) struct RunState {
    pub(crate) report: SourceReport,
    pub(crate) commits: Vec<String>,
    /// Ids planted during this run and not committed yet (dry runs never
    /// touch the disk).
    pub(crate) taken: HashSet<String>,
    /// Remembered outcomes of files that were not planted (known problems
    /// are neither read nor reported again), written at the source's end.
    pub(crate) outcomes: RunOutcomes,
    /// Where source folders' branches live (sub-folder buckets).
    pub(crate) folders: FolderPlacer,
    /// The previous batch's health-cache records, written while the next
    /// batch plans.
    pub(crate) health: HealthRecords,
}

impl RunState {
    /// The plan stage over this state (with a fresh report part).
    fn planner<'r>(&'r mut self, env: &'r RunEnv<'r>) -> Planner<'r> {
        Planner {
            env,
            report: SourceReport::default(),
            taken: &mut self.taken,
            outcomes: &mut self.outcomes,
            folders: &mut self.folders,
        }
    }
}

/// List + reconcile (streaming), then plan/curate/commit batch after
/// batch, pulling each batch's work from the stream.
fn run_source(
    env: &RunEnv,
    state: &mut RunState,
    path: Option<&str>,
    manifest: &mut Manifest,
    mut catalog: Option<&mut Catalog>,
) -> Result<(), GardenError> {
    let mut reconciler = Reconciler { env, outcomes: &mut state.outcomes, report: SourceReport::default() };
    let reconciled = reconciler.reconcile(manifest, path);
    state.report.absorb(reconciler.report);
    let Some(Reconciled { mut work, to_convert, hashes, touched_up, git_record, .. }) = reconciled? else {
        return Ok(());
    };
    let mut touched_up = Some(touched_up);
    env.progress.start(&env.src.name, to_convert as u64);
    if let Some(cat) = catalog.as_deref_mut() {
        suspend_topk_for_bulk(cat, to_convert);
    }
    let chunk = env.opts.commit_every.max(1);
    let t = Instant::now();
    let budget = env.opts.batch_bytes.max(1);
    let mut slice = work.take(chunk, budget)?;
    let (converted, cut) = Converter::of(env).convert_upto(&slice, &hashes, budget);
    give_back_from(&mut slice, cut, &mut work);
    let mut next_converted = Some(converted);
    tracing::info!(event = "gardener.stage", stage = "convert", ms = t.elapsed().as_millis() as u64);
    while !slice.is_empty() || touched_up.is_some() {
        let batch_started = Instant::now();
        let (converted, counts) = account_conversions(next_converted.take().unwrap_or_default());
        counts.fold(&mut state.report);
        let touched = touched_up.take().unwrap_or_default();
        let mut next_slice = work.take(chunk, budget)?;
        let this = ThisBatch { slice: &slice, converted, touched };
        let converting = Convert { next: &next_slice, hashes: &hashes, budget };
        let upcoming = plan_curate_commit(env, state, this, converting, manifest, catalog.as_deref_mut())?;
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
        slice = next_slice;
    }
    finish_source(env, state, manifest)?;
    if let (Some((key, value)), false) = (git_record, env.opts.dry_run) {
        // Every batch landed: the next sync diffs from this commit.
        manifest.set_meta(&key, &value)?;
    }
    Ok(())
}

/// The plan stage over one slice; the slice's download slots are released.
fn plan_batch(env: &RunEnv, state: &mut RunState, this: ThisBatch<'_>, catalog: Option<&Catalog>) -> Batch {
    let ThisBatch { slice, converted, touched } = this;
    let t = Instant::now();
    let (Planned { batch, renamed }, part) = {
        let mut planner = state.planner(env);
        (planner.plan(slice, converted, touched, catalog), planner.report)
    };
    // Earlier batches' report lines follow the ids this batch re-homed.
    state.report.rename_ids(&renamed);
    state.report.absorb(part);
    tracing::info!(
        event = "gardener.stage",
        stage = "plan",
        files = slice.len(),
        ms = t.elapsed().as_millis() as u64,
        rss_mib = rss_mib()
    );
    for f in slice.iter().filter_map(Work::listed) {
        env.access.release(f);
    }
    batch
}

/// A slice's conversions and the first file left out for the byte budget.
type ConvertedUpto = (HashMap<String, Converted>, Option<String>);

/// The next slice to convert while a batch is curated and committed.
struct Convert<'w> {
    next: &'w [Work],
    hashes: &'w HashMap<String, HashPair>,
    /// Its conversions stop at this many bytes held ([`Converter::convert_upto`]).
    budget: u64,
}

/// Cut `slice` before the file `cut` (the first its conversion left out
/// for the byte budget) and give that tail back to `work`.
fn give_back_from(slice: &mut Vec<Work>, cut: Option<String>, work: &mut WorkStream) {
    let Some(cut) = cut else { return };
    let at = slice.iter().position(|w| matches!(w, Work::Plant(f) | Work::Update(f, _) if f.rel == cut));
    if let Some(at) = at {
        let rest = slice.split_off(at);
        tracing::debug!(event = "gardener.batch_cut", kept = slice.len(), given_back = rest.len());
        work.put_back(rest);
    }
}

/// One batch's input: its slice of work, the slice's conversions and (the
/// first batch only) the manifest rows of touched files.
struct ThisBatch<'s> {
    slice: &'s [Work],
    converted: HashMap<String, Converted>,
    touched: Vec<(String, ManifestEntry)>,
}

/// Plan, curate and commit one batch while the next slice converts on its
/// own thread (the CPU pool): conversion (and its leaf scent) never waits
/// for the serial plan or the commit, nor they for it. Returns the next
/// slice's conversions and where they stopped for the byte budget (None
/// when it is empty). Memory stays at two batches: the plan lets go of
/// each conversion as it plants it ([`Planner::plan`]).
fn plan_curate_commit(
    env: &RunEnv,
    state: &mut RunState,
    this: ThisBatch<'_>,
    converting: Convert<'_>,
    manifest: &mut Manifest,
    catalog: Option<&mut Catalog>,
) -> Result<Option<ConvertedUpto>, GardenError> {
    let cx = Converter::of(env);
    let Convert { next, hashes, budget } = converting;
    let (upcoming, finished) = std::thread::scope(|sc| {
        let converting = (!next.is_empty()).then(|| sc.spawn(move || cx.convert_upto(next, hashes, budget)));
        let finished = plan_curate_commit_here(env, state, this, manifest, catalog);
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
    Ok(upcoming)
}

/// [`plan_curate_commit`]'s own thread: plan, curate, commit.
fn plan_curate_commit_here(
    env: &RunEnv,
    state: &mut RunState,
    this: ThisBatch<'_>,
    manifest: &mut Manifest,
    mut catalog: Option<&mut Catalog>,
) -> Result<(), GardenError> {
    let mut batch = plan_batch(env, state, this, catalog.as_deref());
    let drafts = prepare_curation(env, &mut batch, catalog.as_deref_mut())?;
    let t = Instant::now();
    // A panicking hook costs this batch its curation (the
    // deterministic scent stays), never the run.
    let (curated, failed) =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| curate_drafts(env.curate, env.curate_pool, drafts)))
            .unwrap_or_else(|_| (vec![], vec![]));
    tracing::info!(
        event = "gardener.stage",
        stage = "curate",
        drafts = curated.len(),
        ms = t.elapsed().as_millis() as u64
    );
    fold_curation(env, curated, failed, &mut batch).fold(&mut state.report);
    let t = Instant::now();
    let finished = commit(env, state, &mut batch, manifest, catalog);
    tracing::info!(
        event = "gardener.stage",
        stage = "commit+derived",
        ms = t.elapsed().as_millis() as u64,
        rss_mib = rss_mib()
    );
    finished
}

/// The commit stage: branch scent of every touched branch (from its
/// children's), one commit, then the run state follows.
fn commit(
    env: &RunEnv,
    state: &mut RunState,
    batch: &mut Batch,
    manifest: &mut Manifest,
    catalog: Option<&mut Catalog>,
) -> Result<(), GardenError> {
    let part = {
        let mut planner = state.planner(env);
        planner.derive_branch_scents(batch);
        planner.report
    };
    state.report.absorb(part);
    let done = finish_batch(env, batch, manifest, catalog, &mut state.health)?;
    if done.written {
        // Committed ids are on disk now: `taken` only has to cover the
        // run's uncommitted ids, so it stays O(batch), not O(corpus).
        state.taken.clear();
    }
    done.fold(&mut state.report, &mut state.commits);
    Ok(())
}

/// After the last batch: health records joined, store counters and known
/// problems into the report, remembered outcomes written.
fn finish_source(env: &RunEnv, state: &mut RunState, manifest: &mut Manifest) -> Result<(), GardenError> {
    state.health.wait();
    env.progress.finish();
    if let Some(p) = env.opts.store.as_deref() {
        let (hits, corrupt, curations) = p.take_counts();
        state.report.store_hits += hits;
        state.report.store_corrupt += corrupt;
        state.report.store_curations += curations;
    }
    state.report.known_problems = state.outcomes.known_count;
    state.report.blobs_read = env.access.git().map_or(0, |g| g.blobs_read());
    if !env.opts.dry_run {
        state.outcomes.flush(manifest, &env.src.name)?;
    }
    Ok(())
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
