//! `forest adopt` and `forest sync`: the Gardener's runs under the writer
//! lock, with curation when asked, their report printed.

use anyhow::Result;
use clap::Args;
use forest_gardener::{AdoptSpec, RunOptions};
use forest_git::{GitForest, WriterLock};

use crate::cli::{forest_root, ForestArg, GardenArgs};
use crate::garden_cmd::{finish_garden, run_options, with_curation, with_curation_from};
use crate::{dist_cmd, progress};

#[derive(Args, Clone)]
pub(crate) struct AdoptArgs {
    #[command(flatten)]
    f: ForestArg,
    #[command(flatten)]
    src: SourceOpts,
    #[command(flatten)]
    g: GardenArgs,
}

/// The source an adopt records: the Gardener's [`AdoptSpec`] as flags.
#[derive(Args, Clone)]
pub(crate) struct SourceOpts {
    /// Source: a folder, file:// URI, s3://bucket/prefix, rclone:REMOTE:path or git:REPO[#REF][:SUBDIR].
    source: String,
    /// Source name (default: `default` for the first source).
    #[arg(long)]
    name: Option<String>,
    /// Branch path the mirror is rooted under.
    #[arg(long)]
    dest: Option<String>,
    /// Where converted text (FLESH) lives: inline | cached | reference.
    #[arg(long, value_parser = ["inline", "cached", "reference"])]
    content: Option<String>,
    /// Copy binary originals into `_assets/` (always) or leave them at the source (never).
    #[arg(long, value_parser = ["never", "always"])]
    archive: Option<String>,
    /// S3-compatible endpoint (else AWS_ENDPOINT_URL / the AWS profile chain); recorded with the source.
    #[arg(long)]
    endpoint_url: Option<String>,
    /// Path-style S3 addressing (default: on with a custom endpoint).
    #[arg(long)]
    path_style: Option<bool>,
    /// Walk into directory symlinks inside the source (loops and targets
    /// outside it are still refused).
    #[arg(long)]
    follow_symlinks: bool,
    /// rclone config file for an `rclone:REMOTE:path` source (else
    /// RCLONE_CONFIG or rclone's default); the path is recorded with the
    /// source, never what the file holds.
    #[arg(long)]
    rclone_config: Option<String>,
    /// Only record the source in `_meta/gardener.yaml` and commit it (no
    /// sync): workers and the committer of a distributed run agree on it.
    #[arg(long)]
    record_only: bool,
}

impl From<SourceOpts> for AdoptSpec {
    // Every flag is read here alone: one left unmapped is dead code.
    fn from(s: SourceOpts) -> AdoptSpec {
        AdoptSpec {
            source: s.source,
            name: s.name,
            dest: s.dest,
            content: s.content,
            archive: s.archive,
            endpoint_url: s.endpoint_url,
            path_style: s.path_style,
            follow_symlinks: s.follow_symlinks,
            rclone_config: s.rclone_config,
            record_only: s.record_only,
        }
    }
}

#[derive(Args, Clone)]
pub(crate) struct SyncArgs {
    #[command(flatten)]
    pub(crate) f: ForestArg,
    /// Only this source.
    #[arg(long)]
    pub(crate) source: Option<String>,
    /// Only this source-relative path (targeted sync).
    pub(crate) path: Option<String>,
    /// Distributed ingest worker: prepare shard I of N (`I/N`, or `N`
    /// with I from JOB_COMPLETION_INDEX) into --store, then exit. No
    /// writer lock, no commit.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<String>,
    /// Prepared store (s3://bucket/prefix or a directory): workers fill
    /// it; a sync without --shard (the committer) looks files up in it
    /// before converting or curating them.
    #[arg(long, value_name = "URI")]
    pub(crate) store: Option<String>,
    /// Committer: leave files the store does not hold yet for the next
    /// run (workers still running) instead of converting them here.
    #[arg(long, requires = "store")]
    pub(crate) prepared_only: bool,
    #[command(flatten)]
    pub(crate) g: GardenArgs,
}

/// `forest adopt SOURCE`: record the source and plant one node per file.
pub(crate) fn adopt(a: AdoptArgs) -> Result<u8> {
    let AdoptArgs { f, src, g } = a;
    let spec = AdoptSpec::from(src);
    let root = forest_root(&f)?;
    let _lock = WriterLock::acquire(&root)?;
    let git = GitForest::open(&root)?;
    let opts = run_options(&g);
    let bar = progress::Bar::new();
    let report = with_curation(&root, &git, &g, |hook| forest_gardener::adopt(&root, &git, &spec, &opts, &bar, hook))?;
    finish_garden(&report, g.json)
}

/// `forest sync`: the committer, or with `--shard` a worker preparing
/// its shard into the store.
pub(crate) fn sync(a: &SyncArgs) -> Result<u8> {
    let root = forest_root(&a.f)?;
    let prepared = match &a.store {
        Some(u) => Some(std::sync::Arc::new(forest_gardener::prepared::PreparedRun::open(u, a.prepared_only)?)),
        None => None,
    };
    if let Some(spec) = &a.shard {
        return dist_cmd::worker(&root, spec, a.source.as_deref(), prepared, &a.g);
    }
    let _lock = WriterLock::acquire(&root)?;
    let git = GitForest::open(&root)?;
    let opts = RunOptions { store: prepared.clone(), ..run_options(&a.g) };
    let bar = progress::Bar::new();
    let report = with_curation_from(&root, &git, &a.g, prepared.as_ref(), |hook| {
        forest_gardener::sync(&root, &git, a.source.as_deref(), a.path.as_deref(), &opts, &bar, hook)
    })?;
    finish_garden(&report, a.g.json)
}
