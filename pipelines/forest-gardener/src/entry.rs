//! Entry points (`forest adopt`, `forest sync`). The types a caller
//! passes in (run options, the progress sink, the curate hook) live in
//! [`crate::options`].
//!
//! In: a forest, its git handle, a source spec or name. Out: a
//! [`GardenReport`]. Touches `_meta/gardener.yaml` (adopt records the
//! source before its first batch) and hands everything else to
//! [`crate::pipeline`].

use crate::env::check_containment;
use crate::error::{chain, GardenError};
use crate::options::{Curate, Progress, RunOptions};
use crate::pipeline::run_sources;
use crate::report::GardenReport;
use forest_derived::config::{local_path, GardenerConfig, SourceConfig};
use forest_git::GitForest;
use forest_model::slug::slugify;
use std::path::Path;

/// What `forest adopt` records about a new source.
#[derive(Debug, Clone, Default)]
pub struct AdoptSpec {
    /// Local folder, `file://` URI or `s3://bucket/prefix`.
    pub source: String,
    /// Source name (default: `default` for the first, else the folder slug).
    pub name: Option<String>,
    /// Branch prefix.
    pub dest: Option<String>,
    /// FLESH policy (`inline` when None).
    pub content: Option<String>,
    /// Archive policy (`never` when None).
    pub archive: Option<String>,
    /// S3-compatible endpoint.
    pub endpoint_url: Option<String>,
    /// Path-style S3 addressing.
    pub path_style: Option<bool>,
    /// Walk into directory symlinks of a local source.
    pub follow_symlinks: bool,
    /// rclone config file of an `rclone:` source (recorded; may name `${VAR}`).
    pub rclone_config: Option<String>,
    /// Only record the source in `_meta/gardener.yaml` and commit that file
    /// (workers and the committer of a distributed run agree on it); no sync.
    pub record_only: bool,
}

/// `forest adopt SOURCE`: record the source, then sync it.
pub fn adopt(
    forest: &Path,
    git: &GitForest,
    spec: &AdoptSpec,
    opts: &RunOptions,
    progress: &dyn Progress,
    curate: Option<&dyn Curate>,
) -> Result<GardenReport, GardenError> {
    let mut config = GardenerConfig::load(forest)?;
    let (name, dest) = (spec.name.as_deref(), spec.dest.as_deref());
    let uri = resolve_source_uri(forest, &spec.source)?;
    // Re-adopting a recorded source behaves as a sync (no duplicates).
    let existing = config
        .sources
        .iter()
        .find(|s| {
            s.uri == uri || s.resolved_uri().ok().and_then(|r| resolve_source_uri(forest, &r).ok()) == Some(uri.clone())
        })
        .cloned();
    let src = match existing {
        Some(s) => s,
        None => {
            let base = name.map(|n| n.to_string()).unwrap_or_else(|| {
                if config.sources.is_empty() {
                    "default".to_string()
                } else {
                    slugify(
                        Path::new(uri.trim_end_matches('/'))
                            .file_name()
                            .map(|f| f.to_string_lossy().into_owned())
                            .as_deref()
                            .unwrap_or("source"),
                    )
                }
            });
            if config.source(&base).is_some() {
                return Err(GardenError::Schema(format!("a source named '{base}' already exists with another uri")));
            }
            if let Some(d) = dest {
                validate_dest(d)?;
            }
            let src = SourceConfig {
                name: base,
                uri: uri.clone(),
                dest: dest.map(|d| d.trim_matches('/').to_string()).filter(|d| !d.is_empty()),
                content: spec.content.clone().unwrap_or_else(|| "inline".into()),
                archive: spec.archive.clone().unwrap_or_else(|| "never".into()),
                ignore: vec![],
                endpoint_url: spec.endpoint_url.clone(),
                path_style: spec.path_style,
                rclone_config: spec.rclone_config.clone(),
                follow_symlinks: spec.follow_symlinks,
            };
            forest_derived::config::check_policies(&src)?;
            src
        }
    };
    if !opts.dry_run {
        // Recorded before the first step so an interrupted adopt can be finished by sync.
        config.add_source(src.clone());
        config.save(forest)?;
    }
    if spec.record_only {
        return record_only(forest, git, &src, opts);
    }
    let mut report = run_sources("adopt", forest, git, &config, &[src], None, opts, progress, curate)?;
    report.command = "adopt".into();
    let t = std::time::Instant::now();
    refresh_canopy(forest, opts, progress);
    // the run's time includes the canopy's step
    report.elapsed_ms += t.elapsed().as_millis() as u64;
    Ok(report)
}

/// `forest adopt SOURCE --record-only`: commit the (already saved) config
/// alone, nothing is listed or planted. A dry run commits nothing.
fn record_only(
    forest: &Path,
    git: &GitForest,
    src: &SourceConfig,
    opts: &RunOptions,
) -> Result<GardenReport, GardenError> {
    let mut report = GardenReport {
        version: crate::report::REPORT_VERSION,
        command: "adopt".into(),
        dry_run: opts.dry_run,
        sources: vec![crate::report::SourceReport { source: src.name.clone(), ..Default::default() }],
        ..Default::default()
    };
    if opts.dry_run {
        return Ok(report);
    }
    if let Some(change) = forest_derived::config::versioned_change(forest, git)? {
        let msg = format!("gardener(adopt): record {} [source={}]\n", forest_derived::config::CONFIG_PATH, src.name);
        if let Some(oid) = git.commit_batch(&[change], &msg)? {
            report.commits.push(oid.to_string());
        }
    }
    Ok(report)
}

/// `forest sync [--source N] [PATH]`.
pub fn sync(
    forest: &Path,
    git: &GitForest,
    source: Option<&str>,
    path: Option<&str>,
    opts: &RunOptions,
    progress: &dyn Progress,
    curate: Option<&dyn Curate>,
) -> Result<GardenReport, GardenError> {
    let config = GardenerConfig::load(forest)?;
    if config.sources.is_empty() {
        return Err(GardenError::Schema(
            "this forest has no adopted source to sync (run forest adopt SOURCE first)".into(),
        ));
    }
    let sources: Vec<SourceConfig> = match source {
        Some(n) => {
            vec![config.source(n).cloned().ok_or_else(|| GardenError::Schema(format!("no source named '{n}'")))?]
        }
        None => config.sources.clone(),
    };
    if path.is_some() && sources.len() != 1 {
        return Err(GardenError::Schema(
            "a targeted sync PATH needs --source when the forest has several sources".into(),
        ));
    }
    let mut report = run_sources("sync", forest, git, &config, &sources, path, opts, progress, curate)?;
    report.command = "sync".into();
    let t = std::time::Instant::now();
    refresh_canopy(forest, opts, progress);
    // the run's time includes the canopy's step
    report.elapsed_ms += t.elapsed().as_millis() as u64;
    Ok(report)
}

/// After a run's commits: the canopy (when the forest has one) embeds the
/// changed scents again, or is marked stale when the model is not there; a
/// forest without one gets one when a model is installed
/// ([`forest_canopy::ensure_forest`]); a fast one of a forest within the
/// in-run limit is then brought to the full model
/// ([`forest_canopy::upgrade_in_run`]). A canopy problem never fails the
/// run (it is disposable).
fn refresh_canopy(forest: &Path, opts: &RunOptions, progress: &dyn Progress) {
    if opts.dry_run {
        return;
    }
    let catalog = match forest_derived::catalog::open_catalog(forest) {
        Ok(c) => c,
        Err(e) => return tracing::warn!(event = "canopy.stale", error = %chain(&e)),
    };
    let rows = |done: usize, total: usize| progress.rows("canopy", done as u64, total as u64);
    let built = forest_canopy::ensure_forest(forest, &catalog, &rows);
    progress.finish();
    if let Err(e) = built {
        return tracing::warn!(event = "canopy.stale", error = %chain(&e));
    }
    let rows = |done: usize, total: usize| progress.rows("canopy, full model", done as u64, total as u64);
    if let Err(e) = forest_canopy::upgrade_in_run(forest, &catalog, &rows) {
        tracing::warn!(event = "canopy.upgrade_failed", code = e.code(), error = %chain(&e));
    }
    progress.finish();
}

fn validate_dest(d: &str) -> Result<(), GardenError> {
    let t = d.trim_matches('/');
    if t.split('/').any(|c| c.is_empty() || c == "." || c == ".." || c.starts_with('_') || c.starts_with('.')) {
        return Err(GardenError::Schema(format!("invalid dest branch path '{d}'")));
    }
    Ok(())
}

/// Canonical `git:` uri: a local repository's path made absolute and
/// checked to exist (a URL is reached by the run, which reports it
/// unreachable); a repository inside the forest is refused.
fn resolve_git_uri(forest: &Path, source: &str) -> Result<String, GardenError> {
    let spec = crate::gitsrc::GitSpec::parse(source).map_err(|e| GardenError::Schema(e.to_string()))?;
    let crate::gitsrc::Locator::Path(p) = &spec.locator else {
        return Ok(spec.to_string());
    };
    let canon = std::fs::canonicalize(p).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => GardenError::SourceMissing { path: p.clone(), source: e },
        _ => GardenError::io(format!("source {p}"), e),
    })?;
    check_containment(forest, &canon)?;
    let s = canon.to_str().ok_or_else(|| GardenError::Schema("source path is not valid UTF-8".into()))?;
    Ok(spec.with_location(s.to_string()).to_string())
}

/// Canonical uri of a source argument, with the containment rules of dialect §3.2.
/// A uri naming `${VAR}`s is checked resolved and recorded as written.
fn resolve_source_uri(forest: &Path, source: &str) -> Result<String, GardenError> {
    if forest_derived::config::names_env(source) {
        let resolved = forest_derived::config::expand_env(source, |k| std::env::var(k).ok())
            .map_err(|e| GardenError::Config(format!("source uri {source}: {e}")))?;
        resolve_source_uri(forest, &resolved)?;
        return Ok(source.to_string());
    }
    if source.starts_with("s3://") {
        let loc = forest_storage::S3Location::parse(source).map_err(|e| GardenError::Schema(e.to_string()))?;
        return Ok(format!("s3://{}/{}", loc.bucket, loc.prefix));
    }
    if source.starts_with("rclone:") {
        let loc = forest_storage::RcloneLocation::parse(source).map_err(|e| GardenError::Schema(e.to_string()))?;
        return Ok(loc.to_string());
    }
    if crate::gitsrc::is_git(source) {
        return resolve_git_uri(forest, source);
    }
    let p = local_path(source).ok_or_else(|| GardenError::Schema(format!("unsupported source uri: {source}")))?;
    let canon = std::fs::canonicalize(&p).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => GardenError::SourceMissing { path: source.to_string(), source: e },
        _ => GardenError::io(format!("source {source}"), e),
    })?;
    if !canon.is_dir() {
        return Err(GardenError::Schema(format!("source is not a directory: {source}")));
    }
    check_containment(forest, &canon)?;
    canon.to_str().map(|s| s.to_string()).ok_or_else(|| GardenError::Schema("source path is not valid UTF-8".into()))
}
