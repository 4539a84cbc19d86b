//! The read-only environment of one source's run ([`RunEnv`]): what every
//! stage may read and none may change. Stages take `&RunEnv` plus their
//! input value; the mutable run state (report, commits, taken ids,
//! outcomes, folder caches, health records) is owned by
//! [`crate::pipeline`], which hands a stage exactly the pieces it updates.
//!
//! Low in the module order: imports the options, the source access and the
//! outcome keys, never a stage, `pipeline.rs` or `entry.rs`.

use crate::error::GardenError;
use crate::options::{Curate, Progress, RunOptions};
use crate::outcomes::{converter_key, StatKey};
use crate::source::Access;
use forest_convert::{Limits, Registry};
use forest_derived::config::{GardenerConfig, SourceConfig};
use forest_git::GitForest;
use std::path::Path;
use std::time::Duration;

/// What one source's run reads: the forest, its git handle, the config,
/// the source and how it is reached, converters, options, hooks, pools.
pub(crate) struct RunEnv<'a> {
    /// `adopt` or `sync` (commit subjects).
    pub(crate) command: &'static str,
    pub(crate) forest: &'a Path,
    pub(crate) git: &'a GitForest,
    pub(crate) config: &'a GardenerConfig,
    pub(crate) src: &'a SourceConfig,
    /// The forest has more than one source (passports name theirs).
    pub(crate) multi: bool,
    pub(crate) registry: &'a Registry,
    pub(crate) limits: &'a Limits,
    pub(crate) opts: &'a RunOptions,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) curate: Option<&'a dyn Curate>,
    /// `created`/`updated` date of this run.
    pub(crate) today: String,
    /// How the source's bytes are reached.
    pub(crate) access: &'a Access,
    /// Download threads for object-store sources (latency-bound, so many
    /// more than cores; conversion stays on the global pool).
    pub(crate) io_pool: Option<&'a rayon::ThreadPool>,
    /// Threads of the curate stage (network-bound: sized by the endpoint's
    /// concurrency, not by cores), so it overlaps the next conversion.
    pub(crate) curate_pool: Option<&'a rayon::ThreadPool>,
}

impl RunEnv<'_> {
    /// A listed file's stat key (what its remembered outcome is keyed by).
    pub(crate) fn stat_key(&self, f: &crate::walk::Listed) -> StatKey {
        StatKey { size: f.size, mtime_ms: f.mtime_ms, etag: f.object.as_ref().map(|o| o.etag.clone()) }
    }

    /// The converter version tag of `rel` ([`converter_key`]).
    pub(crate) fn converter_key(&self, rel: &str) -> String {
        converter_key(self.registry, &self.config.converters, rel)
    }

    /// Forest-wide plus source ignore globs.
    pub(crate) fn ignore_rules(&self) -> Vec<String> {
        let mut ignore = self.config.ignore.clone();
        ignore.extend(self.src.ignore.iter().cloned());
        ignore
    }
}

/// Download threads for an object-store source (`FOREST_S3_CONCURRENCY`,
/// default 16: latency-bound, so many more than cores); none for local.
pub(crate) fn io_pool_for(access: &Access) -> Option<rayon::ThreadPool> {
    // Git blobs are local reads: the conversion pool's threads suffice,
    // and a wide pool would hold that many blobs in memory at once.
    if !access.is_remote() || matches!(access, Access::Git { .. }) {
        return None;
    }
    let n = std::env::var("FOREST_S3_CONCURRENCY").ok().and_then(|v| v.parse().ok()).unwrap_or(16usize);
    rayon::ThreadPoolBuilder::new().num_threads(n.clamp(1, 256)).build().ok()
}

/// Threads of the curate stage for `hook` (its concurrency, 1..=64).
pub(crate) fn curate_pool_for(hook: Option<&dyn Curate>) -> Option<rayon::ThreadPool> {
    hook.and_then(|h| rayon::ThreadPoolBuilder::new().num_threads(h.concurrency().clamp(1, 64)).build().ok())
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

/// Refuse a source that contains the forest or lies inside it.
pub(crate) fn check_containment(forest: &Path, canon_source: &Path) -> Result<(), GardenError> {
    let f = std::fs::canonicalize(forest).map_err(|e| GardenError::io(forest.display().to_string(), e))?;
    if f.starts_with(canon_source) {
        return Err(GardenError::Schema("source contains the forest itself".into()));
    }
    if canon_source.starts_with(&f) && !canon_source.starts_with(f.join("_derived")) {
        return Err(GardenError::Schema("source is inside the forest".into()));
    }
    Ok(())
}

/// A real forest (git, manifest) and a temp source folder, for driving one
/// stage at a time with in-memory input.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::options::NoProgress;
    use std::path::PathBuf;

    /// Owns everything a [`RunEnv`] borrows.
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
            let git = forest_derived::init::init_forest(&forest, "Test").expect("init");
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

        /// The environment of a run over the fixture's source.
        pub(crate) fn env(&self) -> RunEnv<'_> {
            RunEnv {
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
                access: &self.access,
                io_pool: None,
                curate_pool: None,
            }
        }
    }
}
