//! Worker mode of distributed ingest: `forest sync --shard I/N --store URI`
//! in a clone of the forest.
//!
//! In: the recorded sources, the clone's manifest (rebuilt in memory from
//! its passports when the clone has none), the shard. Out: one store object
//! per new or changed file of the shard that converted to Markdown, with
//! its curated summary when a curate hook is given; a [`PrepareReport`].
//! Touches the store and the clone's `_derived/` (download slots, the
//! manifest cache); never the clone's git repository or its writer lock:
//! nothing here commits, and the run options are a dry run.

use super::{
    draft_key, PreparedConversion, PreparedCuration, PreparedObject, PreparedRun, Provenance, Shard, StoreWriteError,
};
use crate::env::{converters_of, curate_pool_for, io_pool_for, RunEnv};
use crate::error::{chain, GardenError};
use crate::options::{Curate, Draft, DraftLink, Progress, RunOptions};
use crate::reconcile::ManifestEntry;
use crate::report::FileError;
use crate::source::Access;
use crate::stages::catchup::open_manifest;
use crate::stages::convert::{convert_all, Converted};
use crate::stages::curate::curate_drafts;
use crate::stages::list::{list_each, open_listing};
use crate::stages::plan::draft::{changed_leaf_draft, new_leaf_draft, LeafDraft};
use crate::stages::work::Work;
use crate::walk::Listed;
use forest_convert::Conversion;
use forest_derived::config::{GardenerConfig, SourceConfig};
use forest_git::GitForest;
use forest_model::ids;
use forest_model::node::{today, Node};
use forest_prepared::Put;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Files converted (then curated, then written) per round: bounds memory
/// and what a killed worker loses (`FOREST_PREPARE_ROUND` overrides it).
const ROUND: usize = 256;

/// What one worker did for one source.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct PrepareSourceReport {
    /// Source name.
    pub source: String,
    /// Files listed in the source.
    pub files_seen: usize,
    /// Files whose key falls in this shard.
    pub in_shard: usize,
    /// Files of the shard the forest already has unchanged (not read).
    pub unchanged: usize,
    /// Files already in the store (a retried shard skips them).
    pub already_prepared: usize,
    /// Objects this worker wrote.
    pub prepared: usize,
    /// Of those, with a model-written summary.
    pub curated: usize,
    /// Objects another writer stored first (same key, kept).
    pub raced: usize,
    /// Files not stored (unsupported, empty or failing files): the
    /// committer handles and reports them.
    pub left_to_committer: usize,
    /// Store objects that failed verification and were redone.
    pub redone_corrupt: usize,
    /// Per-file problems (store writes, listing).
    pub errors: Vec<FileError>,
}

/// The `forest sync --shard --json` report.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct PrepareReport {
    /// Report shape version.
    pub version: u32,
    /// Always `prepare`.
    pub command: String,
    /// `I/N`.
    pub shard: String,
    /// Store URI.
    pub store: String,
    /// Model of the stored summaries (empty without `--curate`).
    pub model: String,
    /// One entry per source.
    pub sources: Vec<PrepareSourceReport>,
    /// Curator counters when `--curate` ran.
    pub curation: Option<serde_json::Value>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

impl PrepareReport {
    /// True when any file could not be stored (exit 3).
    pub fn partial(&self) -> bool {
        self.sources.iter().any(|s| !s.errors.is_empty())
    }
}

/// Prepare this shard's new and changed files of `source` (all sources
/// when None) into `run`'s store, curating with `curate` when given (a
/// hook without a candidate set: proposals are the committer's).
pub fn prepare(
    forest: &Path,
    git: &GitForest,
    source: Option<&str>,
    shard: Shard,
    run: &Arc<PreparedRun>,
    curate: Option<&dyn Curate>,
    progress: &dyn Progress,
) -> Result<PrepareReport, GardenError> {
    let started = Instant::now();
    let config = GardenerConfig::load(forest)?;
    let sources: Vec<SourceConfig> = match source {
        Some(n) => {
            vec![config.source(n).cloned().ok_or_else(|| GardenError::Schema(format!("no source named '{n}'")))?]
        }
        None => config.sources.clone(),
    };
    if sources.is_empty() {
        return Err(GardenError::Schema(
            "this forest has no recorded source (forest adopt SOURCE --record-only)".into(),
        ));
    }
    let (registry, limits) = converters_of(&config);
    // Dry-run options: nothing below may commit; the store is consulted so
    // a retried shard skips what it already wrote.
    let opts = RunOptions { dry_run: true, store: Some(run.clone()), ..Default::default() };
    run.worker.store(true, std::sync::atomic::Ordering::Relaxed);
    let (manifest, _) = open_manifest(forest, git, &config, true)?;
    let curate_pool = curate_pool_for(curate);
    let mut report = PrepareReport {
        version: 1,
        command: "prepare".into(),
        shard: format!("{}/{}", shard.index, shard.count),
        store: run.store.uri(),
        model: run.model().to_string(),
        ..Default::default()
    };
    Access::sweep_slots(forest);
    for src in &sources {
        let access = Access::open(forest, src)?;
        let io_pool = io_pool_for(&access);
        let env = RunEnv {
            command: "sync",
            forest,
            git,
            config: &config,
            src,
            multi: config.sources.len() > 1,
            registry: &registry,
            limits: &limits,
            opts: &opts,
            progress,
            curate: None,
            today: today(),
            access: &access,
            io_pool: io_pool.as_ref(),
            curate_pool: None,
        };
        let entries = manifest.entries(&src.name)?;
        let worker = Worker { shard, run, curate, curate_pool: curate_pool.as_ref(), entries: &entries };
        report.sources.push(prepare_source(&env, &worker)?);
    }
    Access::sweep_slots(forest);
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// What a worker's rounds over one source share.
struct Worker<'w> {
    shard: Shard,
    run: &'w PreparedRun,
    curate: Option<&'w dyn Curate>,
    curate_pool: Option<&'w rayon::ThreadPool>,
    /// The clone's manifest rows of the source.
    entries: &'w HashMap<String, ManifestEntry>,
}

/// List the source, keep this shard's new and changed files, and prepare
/// them round by round.
fn prepare_source(env: &RunEnv, w: &Worker) -> Result<PrepareSourceReport, GardenError> {
    let src = env.src;
    let mut out = PrepareSourceReport { source: src.name.clone(), ..Default::default() };
    let (listing, _) = open_listing(env, None)?;
    let mut mine = vec![];
    let end = list_each(listing, &env.ignore_rules(), None, &mut |f| {
        out.files_seen += 1;
        if !w.shard.owns(&src.name, &f.rel) {
            return;
        }
        out.in_shard += 1;
        let same = w.entries.get(&f.rel).is_some_and(|e| {
            !e.vanished
                && e.size == f.size
                && e.mtime_ms == f.mtime_ms
                && f.object.as_ref().is_none_or(|o| e.etag.as_deref() == Some(o.etag.as_str()))
        });
        if same {
            out.unchanged += 1;
        } else {
            mine.push(f);
        }
    });
    if let Some(e) = end.listing_error {
        out.errors.push(FileError { path: String::new(), message: format!("listing failed: {e}") });
    }
    env.progress.start(&src.name, mine.len() as u64);
    let round_len = std::env::var("FOREST_PREPARE_ROUND").ok().and_then(|v| v.parse().ok()).unwrap_or(ROUND).max(1);
    for round in mine.chunks(round_len) {
        prepare_round(env, w, round, &mut out);
    }
    env.progress.finish();
    let (_, corrupt, _) = w.run.take_counts();
    out.redone_corrupt = corrupt;
    Ok(out)
}

/// One round: convert, draft, curate, then write one store object per
/// file (a marker for what is left to the committer).
fn prepare_round(env: &RunEnv, w: &Worker, round: &[Listed], out: &mut PrepareSourceReport) {
    let work: Vec<Work> = round.iter().cloned().map(Work::Plant).collect();
    let converted = convert_all(env, &work, &HashMap::new());
    for f in round {
        env.access.release(f);
    }
    let mut items: Vec<(Converted, Option<PreparedConversion>, Draft)> = vec![];
    for c in converted.into_values() {
        if c.from_store {
            out.already_prepared += 1;
            continue;
        }
        let storable = c.outcome.result.as_ref().ok().map(PreparedConversion::of);
        let Some(pc) = storable else {
            // A marker: seen, left to the committer (never deferred).
            items.push((c, None, empty_draft()));
            continue;
        };
        let existing = w.entries.get(&c.rel).and_then(|e| {
            let text = std::fs::read_to_string(env.forest.join(ids::id_to_path(&e.id))).ok()?;
            Node::parse(&text).ok()
        });
        let draft = draft_for(env, &c, &pc, existing.as_ref());
        items.push((c, Some(pc), draft));
    }
    let inputs: Vec<String> =
        items.iter().map(|(_, _, d)| draft_key(&d.title, &d.body, &d.tags, &env.config.directives)).collect();
    let derived: Vec<(String, String)> = items.iter().map(|(_, _, d)| (d.title.clone(), d.summary.clone())).collect();
    // Markers have no draft: only conversions go to the model.
    let (with, markers): (Vec<usize>, Vec<usize>) = (0..items.len()).partition(|&i| items[i].1.is_some());
    let drafts: Vec<Draft> = with.iter().map(|&i| std::mem::replace(&mut items[i].2, empty_draft())).collect();
    let (curated, _) = curate_drafts(w.curate, w.curate_pool, drafts);
    let mut drafts: Vec<Draft> = (0..items.len()).map(|_| empty_draft()).collect();
    for (i, d) in with.into_iter().zip(curated) {
        drafts[i] = d;
    }
    out.left_to_committer += markers.len();
    let (src, run, shard) = (env.src, w.run, w.shard);
    let writes: Vec<(String, Result<Put, StoreWriteError>, bool, bool)> = items
        .par_iter()
        .zip(drafts.par_iter())
        .zip(inputs.par_iter().zip(derived.par_iter()))
        .map(|(((c, pc, _), d), (input, (title, summary)))| {
            let curation = (w.curate.is_some() && pc.is_some() && d.scent == "llm").then(|| PreparedCuration {
                input: input.clone(),
                summary: d.summary.clone(),
                tags: d.tags.clone(),
                scent: d.scent.clone(),
            });
            let curated = curation.is_some();
            let object = PreparedObject {
                version: super::OBJECT_VERSION,
                provenance: Provenance {
                    source: src.name.clone(),
                    path: c.rel.clone(),
                    sha256: c.hash.sha256.clone(),
                    blake3: c.hash.blake3.clone(),
                    size: c.size,
                    converter: env.converter_key(&c.rel),
                    prompt_version: forest_curator::PROMPT_VERSION.to_string(),
                    model: run.model().to_string(),
                    shard: format!("{}/{}", shard.index, shard.count),
                },
                conversion: pc.clone(),
                warnings: c.outcome.warnings.clone(),
                draft_title: title.clone(),
                draft_summary: summary.clone(),
                curation,
            };
            let key = run.key(&src.name, &c.rel, &c.hash.sha256, &object.provenance.converter);
            (c.rel.clone(), run.write(&key, &object), curated, pc.is_some())
        })
        .collect();
    for (rel, r, curated, converted) in writes {
        match r {
            Ok(Put::Written) if converted => {
                out.prepared += 1;
                out.curated += usize::from(curated);
            }
            Ok(Put::Written) => {}
            Ok(Put::Exists) => out.raced += 1,
            Err(e) => out.errors.push(FileError { path: rel, message: format!("store write: {}", chain(&e)) }),
        }
    }
}

fn empty_draft() -> Draft {
    Draft {
        id: String::new(),
        parent: String::new(),
        title: String::new(),
        body: String::new(),
        summary: String::new(),
        tags: vec![],
        links: vec![],
        scent: String::new(),
    }
}

/// The draft the plan stage will hand the curate hook for this
/// conversion: a plant's or, when the clone has the passport, an
/// update's; the plan stage's own draft functions
/// ([`crate::stages::plan::draft`]).
pub(crate) fn draft_for(env: &RunEnv, c: &Converted, pc: &PreparedConversion, existing: Option<&Node>) -> Draft {
    let conv = pc.conversion();
    let d = match existing {
        Some(n) => changed_leaf_draft(n, &conv),
        None => {
            // The same leaf scent as a plant (issue 26).
            let scent = c.scent.clone().or_else(|| crate::stages::scent::of_conversion(&c.rel, &conv));
            new_leaf_draft(&c.rel, &conv, scent, &env.config.default_tags)
        }
    };
    let LeafDraft { title, tags, mut body, mut summary, .. } = d;
    // A new dataset's or payload's passport carries the sample map and the
    // table counts (the plant stage's `leaf_content`).
    let counts: Option<Vec<(String, Option<i64>)>> = match &conv {
        Conversion::Dataset { tables, .. } => {
            Some(tables.iter().map(|t| (t.name.clone(), Some(t.rows.len() as i64))).collect())
        }
        Conversion::Payload { tables, .. } => Some(tables.iter().map(|t| (t.name.clone(), t.count)).collect()),
        Conversion::Markdown { .. } => None,
    };
    if let (None, Some(counts)) = (existing, counts) {
        body = conv.render();
        summary = forest_convert::dataset_summary(&title, &counts);
    }
    let links = existing.map(DraftLink::existing).unwrap_or_default();
    Draft { id: String::new(), parent: String::new(), title, body, summary, tags, links, scent: "derived".into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::testing::Fixture;
    use crate::stages::plan::{Batch, PlanState};

    struct Recorder;
    impl Curate for Recorder {
        fn curate(&self, _d: &mut Draft) -> Result<(), crate::options::CurateError> {
            Ok(())
        }
    }

    /// The worker's draft is the plant stage's draft, field by field, so a
    /// stored summary matches the committer's request.
    #[test]
    fn worker_drafts_match_the_plant_stage() {
        let mut fx = Fixture::new();
        fx.config.default_tags = vec!["Drive".into(), "notes".into()];
        let a = fx.write("team/a.md", "---\ntags: [notes, Budget]\n---\n# Alpha plan\n\nSome text about it.\n");
        let b = fx.write("team/untitled.txt", "plain words without a heading\n");
        let t = fx.write("team/stock.csv", "sku,qty,price\nA-1,4,2.5\nB-2,0,10\n");
        let mut env = fx.env();
        env.curate = Some(&Recorder);
        let work = vec![Work::Plant(a), Work::Plant(b), Work::Plant(t)];
        let converted = convert_all(&env, &work, &HashMap::new());
        let mut batch = Batch::default();
        let mut state = PlanState::default();
        let mut run = state.planner(&env);
        for w in &work {
            run.apply(w, &converted, &mut batch, None);
        }
        assert_eq!(batch.curation.len(), 3);
        for planted in &batch.curation {
            let rel = ["team/a.md", "team/untitled.txt", "team/stock.csv"]
                .into_iter()
                .find(|r| {
                    planted.id.ends_with(&format!("/{}", r.trim_start_matches("team/").split('.').next().unwrap()))
                })
                .unwrap();
            let c = &converted[rel];
            let pc = PreparedConversion::of(c.outcome.result.as_ref().unwrap());
            // Datasets are stored too, and come back as the same conversion.
            assert_eq!(&pc.conversion(), c.outcome.result.as_ref().unwrap(), "{rel}");
            let mine = draft_for(&env, c, &pc, None);
            assert_eq!(
                (&mine.title, &mine.body, &mine.summary, &mine.tags),
                (&planted.title, &planted.body, &planted.summary, &planted.tags),
                "{rel}"
            );
        }
        // Source tags, keyphrase tags, then default tags, deduplicated.
        let a = batch.curation.iter().find(|d| d.id.ends_with("/a")).unwrap();
        assert_eq!(a.tags[..2], ["notes", "budget"], "{:?}", a.tags);
        assert_eq!(a.tags.last().map(String::as_str), Some("drive"), "{:?}", a.tags);
        assert_eq!(a.tags.iter().filter(|t| *t == "notes").count(), 1, "{:?}", a.tags);
    }
}
