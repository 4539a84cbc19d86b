//! Orchestration of adopt/sync: I/O around the pure planners.

use crate::config::{local_path, GardenerConfig, SourceConfig};
use crate::derived::{catalog_row, open_catalog_checked, TRAILS_PATH};
use crate::manifest::Manifest;
use crate::reconcile::{self, HashPair, ManifestEntry, Plan, StatFile};
use crate::report::{FileError, GardenReport, MoveRecord, SourceReport, REPORT_VERSION};
use crate::source::Access;
use crate::walk::Listed;
use crate::GardenError;
use forest_catalog::Catalog;
use forest_convert::{Conversion, Limits, Registry};
use forest_git::{Change, GitForest};
use forest_model::aliases::{derive_aliases, union_aliases};
use forest_model::ids;
use forest_model::index::{self, entry_line, DIRECT_BANANAS, SUB_BRANCHES};
use forest_model::node::{today, Node};
use forest_model::scent::{derive_summary, summary_fingerprint, validate_summary};
use forest_model::slug::{slugify, title_from_stem};
use forest_model::yaml::Value;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Marker: the catalog holds rows of a batch that may not have committed.
pub const CATALOG_DIRTY: &str = "_derived/catalog.dirty";
/// FLESH of `content: cached` nodes.
pub const BODIES_DIR: &str = "_derived/bodies";
/// Manifest path inside a forest.
pub const MANIFEST_PATH: &str = "_derived/manifest.db";
const MEDIA_EXTS: [&str; 14] = [
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".mp3", ".wav", ".m4a", ".ogg", ".flac", ".mp4", ".mov", ".mkv", ".webm",
];
const TEXT_EXTS: [&str; 3] = [".md", ".markdown", ".txt"];

/// Knobs of one run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Write nothing; report the plan.
    pub dry_run: bool,
    /// Files per checkpoint commit.
    pub commit_every: usize,
    /// Allow marking more than `max_stale_fraction` of a source stale.
    pub allow_mass_stale: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { dry_run: false, commit_every: 5000, allow_mass_stale: false }
    }
}

/// Progress sink (the CLI draws a bar on a terminal).
pub trait Progress: Sync {
    /// A source is about to be processed with `total` files to convert.
    fn start(&self, _source: &str, _total: u64) {}
    /// One file converted (`bytes` read).
    fn file_done(&self, _bytes: u64) {}
    /// The source is done.
    fn finish(&self) {}
}

/// Progress sink that draws nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// The scent of a new node before it is planted: what the curate hook may change.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Node id.
    pub id: String,
    /// Parent branch id.
    pub parent: String,
    /// Title.
    pub title: String,
    /// Body the summary was derived from.
    pub body: String,
    /// Summary (derived before the hook runs).
    pub summary: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Proposed links.
    pub links: Vec<DraftLink>,
    /// `derived` or `llm` after the hook.
    pub scent: String,
}

/// A link proposed for a draft.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftLink {
    /// Relation.
    pub rel: String,
    /// Target id (always an existing catalog id for Curator proposals).
    pub target: String,
    /// Link-level confidence (0.3 for proposals).
    pub confidence: f64,
    /// Optional note (<= 120 chars).
    pub note: Option<String>,
}

impl DraftLink {
    /// A node's frontmatter links as drafts (notes are not carried: links
    /// the node already has are kept as written, never rewritten).
    pub fn existing(n: &Node) -> Vec<DraftLink> {
        n.links()
            .into_iter()
            .map(|l| DraftLink { rel: l.rel, target: l.target, confidence: l.confidence.unwrap_or(1.0), note: None })
            .collect()
    }
}

/// The curate hook (the Curator plugs in here; deterministic runs pass None).
pub trait Curate: Sync {
    /// Enrich a draft in place; errors are reported per file, never fatal.
    fn curate(&self, draft: &mut Draft) -> Result<(), String>;
    /// Requests worth keeping in flight (the curate stage runs this many
    /// drafts at once on its own threads, independent of the CPU pool).
    fn concurrency(&self) -> usize {
        1
    }
}

/// One file after read + hash + convert.
struct Converted {
    rel: String,
    abs: PathBuf,
    /// `file://` or `s3://` URI of the original.
    origin: String,
    /// Object ETag (S3 sources).
    etag: Option<String>,
    size: u64,
    mtime_ms: i64,
    hash: HashPair,
    outcome: Result<Conversion, String>,
    unsupported: bool,
    warnings: Vec<String>,
}

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
    let existing = config.sources.iter().find(|s| s.uri == uri).cloned();
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
            };
            crate::config::check_policies(&src)?;
            src
        }
    };
    if !opts.dry_run {
        // Recorded before the first step so an interrupted adopt can be finished by sync.
        config.add_source(src.clone());
        config.save(forest)?;
    }
    let mut report = run_sources("adopt", forest, git, &config, &[src], None, opts, progress, curate)?;
    report.command = "adopt".into();
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
    Ok(report)
}

fn validate_dest(d: &str) -> Result<(), GardenError> {
    let t = d.trim_matches('/');
    if t.split('/').any(|c| c.is_empty() || c == "." || c == ".." || c.starts_with('_') || c.starts_with('.')) {
        return Err(GardenError::Schema(format!("invalid dest branch path '{d}'")));
    }
    Ok(())
}

/// Canonical uri of a source argument, with the containment rules of dialect §3.2.
fn resolve_source_uri(forest: &Path, source: &str) -> Result<String, GardenError> {
    if source.starts_with("s3://") {
        let loc = forest_storage::S3Location::parse(source).map_err(|e| GardenError::Schema(e.to_string()))?;
        return Ok(format!("s3://{}/{}", loc.bucket, loc.prefix));
    }
    let p = local_path(source).ok_or_else(|| GardenError::Schema(format!("unsupported source uri: {source}")))?;
    let canon = std::fs::canonicalize(&p)
        .map_err(|e| GardenError::Schema(format!("source is not a directory: {source} ({e})")))?;
    if !canon.is_dir() {
        return Err(GardenError::Schema(format!("source is not a directory: {source}")));
    }
    check_containment(forest, &canon)?;
    canon.to_str().map(|s| s.to_string()).ok_or_else(|| GardenError::Schema("source path is not valid UTF-8".into()))
}

fn check_containment(forest: &Path, canon_source: &Path) -> Result<(), GardenError> {
    let f = std::fs::canonicalize(forest).map_err(|e| GardenError::Io(format!("{}: {e}", forest.display())))?;
    if f.starts_with(canon_source) {
        return Err(GardenError::Schema("source contains the forest itself".into()));
    }
    if canon_source.starts_with(&f) && !canon_source.starts_with(f.join("_derived")) {
        return Err(GardenError::Schema("source is inside the forest".into()));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run_sources(
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
    let registry =
        Registry::builtin().with_command_hooks(&config.converters, Duration::from_secs(config.convert_timeout_secs));
    let limits = Limits {
        max_input_bytes: config.max_file_bytes,
        timeout: Duration::from_secs(config.convert_timeout_secs),
        ..Limits::default()
    };
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
    for src in sources {
        let access = Access::open(forest, src)?;
        let io_pool = if access.is_remote() {
            let n = std::env::var("FOREST_S3_CONCURRENCY").ok().and_then(|v| v.parse().ok()).unwrap_or(16usize);
            rayon::ThreadPoolBuilder::new().num_threads(n.clamp(1, 256)).build().ok()
        } else {
            None
        };
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
            access,
            io_pool,
            curate_pool: curate
                .and_then(|h| rayon::ThreadPoolBuilder::new().num_threads(h.concurrency().clamp(1, 64)).build().ok()),
        };
        ctx.run(path, &mut manifest, catalog.as_mut())?;
        report.commits.extend(ctx.commits);
        report.sources.push(ctx.report);
    }
    Access::sweep_slots(forest);
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Open the manifest, bringing it up to HEAD: rebuilt from passports when
/// missing or recorded at another commit (a crash between commit and
/// manifest update, a hand edit, a Ranger commit).
/// What changed in git since the derived layer was last brought up to date.
enum Refresh {
    /// Nothing: derived state matches HEAD.
    Nothing,
    /// These `.md` paths changed (hand edits, Ranger commits).
    Paths(Vec<String>),
    /// Unknown history: everything was re-read.
    Full,
}

/// Bring the catalog to HEAD after commits made by others.
fn refresh_catalog(forest: &Path, cat: &mut Catalog, refresh: &Refresh) -> Result<(), GardenError> {
    let d = |e: forest_catalog::CatalogError| GardenError::Derived(format!("catalog: {e}"));
    match refresh {
        Refresh::Nothing => Ok(()),
        Refresh::Full => {
            let rows = crate::derived::read_all_rows(forest);
            cat.rebuild(rows).map(|_| ()).map_err(d)
        }
        Refresh::Paths(paths) => {
            let mut rows = vec![];
            let mut gone = vec![];
            for p in paths {
                let id = p.trim_end_matches(".md").to_string();
                match std::fs::read_to_string(forest.join(p)).ok().and_then(|t| Node::parse(&t).ok()) {
                    Some(n) => rows.push(catalog_row(&id, &n)),
                    None => gone.push(id),
                }
            }
            if !gone.is_empty() {
                cat.remove(&gone).map_err(d)?;
            }
            if !rows.is_empty() {
                cat.upsert(&rows).map_err(d)?;
            }
            Ok(())
        }
    }
}

fn open_manifest(
    forest: &Path,
    git: &GitForest,
    config: &GardenerConfig,
    dry_run: bool,
) -> Result<(Manifest, Refresh), GardenError> {
    let path = forest.join(MANIFEST_PATH);
    let head = git.head_oid()?.map(|o| o.to_string());
    let mut m = if dry_run && !path.exists() { Manifest::open(Path::new(":memory:"))? } else { Manifest::open(&path)? };
    let recorded = m.head()?;
    if recorded.is_some() && recorded == head {
        return Ok((m, Refresh::Nothing));
    }
    let changed = match (&recorded, &head) {
        (Some(r), Some(h)) => changed_md_paths(forest, r, h),
        _ => None,
    };
    let default_source = config.sources.first().map(|s| s.name.clone()).unwrap_or_else(|| "default".into());
    let refresh = match changed {
        Some(paths) => {
            // Incremental: re-read only passports changed since the recorded commit.
            let mut by_source: BTreeMap<String, Vec<(String, ManifestEntry)>> = BTreeMap::new();
            let mut removed_ids: Vec<String> = vec![];
            for p in &paths {
                let id = p.trim_end_matches(".md").to_string();
                match std::fs::read_to_string(forest.join(p)).ok().and_then(|t| Node::parse(&t).ok()) {
                    Some(node) => {
                        if let Some((source, rel, e)) = passport_entry(&id, &node, &default_source) {
                            by_source.entry(source).or_default().push((rel, e));
                        }
                    }
                    None => removed_ids.push(id),
                }
            }
            for (source, ups) in &by_source {
                m.apply(source, ups, &[], None)?;
            }
            if !removed_ids.is_empty() {
                for s in &config.sources {
                    let entries = m.entries(&s.name)?;
                    let dels: Vec<String> =
                        entries.iter().filter(|(_, e)| removed_ids.contains(&e.id)).map(|(p, _)| p.clone()).collect();
                    m.apply(&s.name, &[], &dels, None)?;
                }
            }
            if let Some(h) = &head {
                m.set_head(h)?;
            }
            Refresh::Paths(paths)
        }
        None => {
            tracing::info!(event = "manifest.rebuild", forest = %forest.display());
            let rows: Vec<(String, String, ManifestEntry)> = forest_model::walk::node_paths(forest)
                .par_iter()
                .filter_map(|rel| {
                    let id = rel.strip_suffix(".md")?;
                    let node = Node::parse(&std::fs::read_to_string(forest.join(rel)).ok()?).ok()?;
                    let (source, path, e) = passport_entry(id, &node, &default_source)?;
                    Some((source, path, e))
                })
                .collect();
            m.replace_all(&rows, head.as_deref())?;
            Refresh::Full
        }
    };
    Ok((m, refresh))
}

fn passport_entry(id: &str, node: &Node, default_source: &str) -> Option<(String, String, ManifestEntry)> {
    let path = node.get_str("source_path")?;
    let hash = node.get_str("source_hash")?;
    let source = node.get_str("source_name").unwrap_or_else(|| default_source.to_string());
    let size = node.get_f64("source_size").unwrap_or(-1.0);
    let mtime = node.get_f64("source_mtime").unwrap_or(0.0);
    Some((
        source,
        path,
        ManifestEntry {
            id: id.to_string(),
            size: if size < 0.0 { u64::MAX } else { size as u64 },
            mtime_ms: (mtime * 1000.0).round() as i64,
            hash,
            vanished: node.get_str("source_state").as_deref() == Some("vanished"),
            etag: node.get_str("source_etag"),
        },
    ))
}

/// `.md` paths that differ between two commits, or None when unknown.
fn changed_md_paths(forest: &Path, from: &str, to: &str) -> Option<Vec<String>> {
    let repo = git2::Repository::open(forest).ok()?;
    let a = repo.find_commit(git2::Oid::from_str(from).ok()?).ok()?.tree().ok()?;
    let b = repo.find_commit(git2::Oid::from_str(to).ok()?).ok()?.tree().ok()?;
    let diff = repo.diff_tree_to_tree(Some(&a), Some(&b), None).ok()?;
    let mut out = vec![];
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path().and_then(|p| p.to_str()) {
                if p.ends_with(".md") && !out.iter().any(|x: &String| x == p) {
                    out.push(p.to_string());
                }
            }
        }
    }
    Some(out)
}

/// A unit of work inside a source run, in path order.
enum Work {
    Plant(String),
    Update(String, String),
    Transplant(reconcile::Move),
    MarkStale(String, ManifestEntry),
}

impl Work {
    fn rel(&self) -> &str {
        match self {
            Work::Plant(r) | Work::Update(r, _) => r,
            Work::Transplant(m) => &m.to_rel,
            Work::MarkStale(r, _) => r,
        }
    }
}

/// Pending writes of one batch (one commit).
#[derive(Default)]
struct Batch {
    deletes: BTreeSet<String>,
    /// Parsed nodes touched in this batch (branches and leaves), by id.
    nodes: HashMap<String, Node>,
    dirty: BTreeSet<String>,
    removed_ids: Vec<String>,
    /// Staged payload files: (staged, final).
    renames: Vec<(PathBuf, PathBuf)>,
    /// Archived copies replaced by this batch, deleted after the commit.
    retired: Vec<PathBuf>,
    manifest_up: Vec<(String, ManifestEntry)>,
    manifest_del: Vec<String>,
    rekeys: Vec<(String, String)>,
    /// Drafts waiting for the curate stage (new nodes, and changed nodes
    /// whose scent was machine-written).
    curation: Vec<Draft>,
    /// Links a re-curated draft already had (kept as written; only links
    /// after them are proposals), by id.
    curation_existing: HashMap<String, usize>,
    planted: usize,
    updated: usize,
    moved: usize,
    stale: usize,
    ids: Vec<String>,
}

struct SourceRun<'a> {
    /// `adopt` or `sync` (commit subjects).
    command: &'static str,
    forest: &'a Path,
    git: &'a GitForest,
    config: &'a GardenerConfig,
    src: &'a SourceConfig,
    multi: bool,
    registry: &'a Registry,
    limits: &'a Limits,
    opts: &'a RunOptions,
    progress: &'a dyn Progress,
    curate: Option<&'a dyn Curate>,
    today: String,
    report: SourceReport,
    commits: Vec<String>,
    /// Ids planted during this run (dry runs never touch the disk).
    taken: HashSet<String>,
    /// How the source's bytes are reached.
    access: Access,
    /// Download threads for object-store sources (latency-bound, so many
    /// more than cores; conversion stays on the global pool).
    io_pool: Option<rayon::ThreadPool>,
    /// Threads of the curate stage (network-bound: sized by the endpoint's
    /// concurrency, not by cores), so it overlaps the next conversion.
    curate_pool: Option<rayon::ThreadPool>,
}

fn err(path: &str, message: impl Into<String>) -> FileError {
    FileError { path: path.to_string(), message: message.into() }
}

impl SourceRun<'_> {
    fn run(
        &mut self,
        path: Option<&str>,
        manifest: &mut Manifest,
        mut catalog: Option<&mut Catalog>,
    ) -> Result<(), GardenError> {
        if let Access::Local { root } = &self.access {
            if let Ok(canon) = std::fs::canonicalize(root) {
                check_containment(self.forest, &canon)?;
            }
        }
        let mut ignore = self.config.ignore.clone();
        ignore.extend(self.src.ignore.iter().cloned());
        let t = Instant::now();
        let mut listing = self.access.list(&ignore);
        tracing::info!(
            event = "gardener.stage",
            stage = "list",
            files = listing.files.len(),
            ms = t.elapsed().as_millis() as u64
        );
        if let Some(p) = path {
            let p = p.trim_start_matches("./");
            if p.starts_with('/') || p.split('/').any(|c| c == "..") {
                return Err(GardenError::Schema("sync path leaves the source root".into()));
            }
            listing.files.retain(|f| f.rel == p);
            listing.problems.retain(|(r, _)| r == p);
        }
        for (p, m) in &listing.problems {
            self.report.errors.push(err(p, m.clone()));
        }
        self.report.files_seen = listing.files.len();
        let entries = manifest.entries(&self.src.name)?;
        if let Some(e) = &listing.listing_error {
            // Nothing may be marked stale from a partial listing.
            if listing.files.is_empty() && path.is_none() {
                self.report
                    .errors
                    .push(err(&self.src.uri, format!("listing failed, source skipped (nothing marked stale): {e}")));
                return Ok(());
            }
            self.report
                .errors
                .push(err(&self.src.uri, format!("listing incomplete, nothing marked stale this run: {e}")));
        }
        let stat_files: Vec<StatFile> = listing
            .files
            .iter()
            .map(|f| StatFile {
                rel: f.rel.clone(),
                size: f.size,
                mtime_ms: f.mtime_ms,
                etag: f.object.as_ref().map(|o| o.etag.clone()),
            })
            .collect();
        let mut stat = reconcile::stat_pass(&stat_files, &entries, path);
        if listing.listing_error.is_some() {
            stat.vanished.clear();
        }
        let by_rel: HashMap<&str, &Listed> = listing.files.iter().map(|f| (f.rel.as_str(), f)).collect();
        // Hash suspects and possible move targets before deciding.
        let sizes: HashMap<String, u64> = listing.files.iter().map(|f| (f.rel.clone(), f.size)).collect();
        let mut to_hash: Vec<String> = stat.suspect.clone();
        to_hash.extend(reconcile::move_candidates(&stat, &sizes));
        let want_sha_moves = stat.vanished.iter().any(|(_, e)| !e.hash.starts_with("blake3:"));
        let access = &self.access;
        let hashed: Vec<(String, Result<HashPair, String>)> = to_hash
            .par_iter()
            .map(|rel| {
                let need_sha = entries.get(rel).map(|e| !e.hash.starts_with("blake3:")).unwrap_or(want_sha_moves)
                    || payload_type_of(&ext_of(rel)).is_some();
                let res = by_rel
                    .get(rel.as_str())
                    .ok_or_else(|| "vanished".to_string())
                    .and_then(|f| access.hash(f, need_sha));
                (rel.clone(), res)
            })
            .collect();
        let mut hashes = HashMap::new();
        for (rel, r) in hashed {
            match r {
                Ok(h) => {
                    self.report.bytes_read += sizes.get(&rel).copied().unwrap_or(0);
                    hashes.insert(rel, h);
                }
                Err(e) => self.report.errors.push(err(&rel, e)),
            }
        }
        let plan: Plan = reconcile::classify(stat, &entries, &hashes);
        self.report.unchanged = plan.unchanged.len();
        self.report.touched = plan.touched.len();
        // Stale guard (DESIGN §3).
        let newly_stale = plan.vanished.iter().filter(|(_, e)| !e.vanished).count();
        let mut vanished = plan.vanished.clone();
        if reconcile::exceeds_stale_guard(newly_stale, entries.len(), self.config.max_stale_fraction)
            && !self.opts.allow_mass_stale
        {
            self.report.errors.push(err(
                &self.src.uri,
                format!(
                    "refusing to mark {newly_stale} of {} files stale (max_stale_fraction {}); rerun with --allow-mass-stale if the source really lost them",
                    entries.len(),
                    self.config.max_stale_fraction
                ),
            ));
            vanished.retain(|(_, e)| e.vanished);
        }
        for (_, e) in &vanished {
            self.report.stale.push(e.id.clone());
        }
        // Touched files only refresh the manifest.
        let mut touched_up = vec![];
        for rel in &plan.touched {
            if let (Some(f), Some(e)) = (by_rel.get(rel.as_str()), entries.get(rel)) {
                touched_up.push((
                    rel.clone(),
                    ManifestEntry {
                        size: f.size,
                        mtime_ms: f.mtime_ms,
                        etag: f.object.as_ref().map(|o| o.etag.clone()),
                        ..e.clone()
                    },
                ));
                // Hashed (downloaded) but unchanged: its slot is not needed.
                self.access.release(f);
            }
        }
        let mut work: Vec<Work> = vec![];
        work.extend(plan.new.iter().map(|r| Work::Plant(r.clone())));
        work.extend(plan.changed.iter().map(|(r, id)| Work::Update(r.clone(), id.clone())));
        work.extend(plan.moves.iter().cloned().map(Work::Transplant));
        work.extend(vanished.into_iter().filter(|(_, e)| !e.vanished).map(|(r, e)| Work::MarkStale(r, e)));
        work.sort_by(|a, b| a.rel().cmp(b.rel()));
        let to_convert = work.iter().filter(|w| matches!(w, Work::Plant(_) | Work::Update(..))).count();
        self.progress.start(&self.src.name, to_convert as u64);
        let chunk = self.opts.commit_every.max(1);
        let mut first = true;
        let mut start = 0;
        let t = Instant::now();
        let mut next_converted = Some(self.convert_all(&work[..chunk.min(work.len())], &by_rel, &hashes));
        tracing::info!(event = "gardener.stage", stage = "convert", ms = t.elapsed().as_millis() as u64);
        while start < work.len() || first {
            let end = (start + chunk).min(work.len());
            let slice = &work[start..end];
            let converted = next_converted.take().unwrap_or_default();
            let t = Instant::now();
            let mut batch = Batch::default();
            if first {
                batch.manifest_up.append(&mut touched_up);
            }
            for w in slice {
                self.apply(w, &converted, &mut batch, catalog.as_deref());
            }
            tracing::info!(
                event = "gardener.stage",
                stage = "plan",
                ms = t.elapsed().as_millis() as u64,
                rss_mib = rss_mib()
            );
            for w in slice {
                if let Some(f) = by_rel.get(w.rel()) {
                    self.access.release(f);
                }
            }
            // The curate stage of this batch runs on its own threads while
            // the next slice converts on the CPU pool: the model never
            // waits for conversion, and conversion never waits for the model.
            let mut drafts = self.prepare_curation(&mut batch, catalog.as_deref_mut())?;
            let next_slice = &work[end..(end + chunk).min(work.len())];
            let t = Instant::now();
            let (results, upcoming) = {
                let hook = self.curate;
                let pool = self.curate_pool.as_ref();
                let this = &*self;
                std::thread::scope(|sc| {
                    let curating = sc.spawn(move || match (hook, pool) {
                        (Some(h), Some(p)) if !drafts.is_empty() => {
                            let r: Vec<Result<(), String>> =
                                p.install(|| drafts.par_iter_mut().map(|d| h.curate(d)).collect());
                            (drafts, r)
                        }
                        _ => (drafts, vec![]),
                    });
                    let upcoming =
                        if next_slice.is_empty() { None } else { Some(this.convert_all(next_slice, &by_rel, &hashes)) };
                    let res = curating.join().unwrap_or_else(|_| (vec![], vec![]));
                    (res, upcoming)
                })
            };
            tracing::info!(
                event = "gardener.stage",
                stage = "curate+convert-next",
                drafts = results.0.len(),
                next_files = next_slice.len(),
                ms = t.elapsed().as_millis() as u64
            );
            next_converted = upcoming;
            self.fold_curation(results.0, results.1, &mut batch);
            let t = Instant::now();
            self.finish_batch(&mut batch, manifest, catalog.as_deref_mut())?;
            tracing::info!(
                event = "gardener.stage",
                stage = "commit+derived",
                ms = t.elapsed().as_millis() as u64,
                rss_mib = rss_mib()
            );
            first = false;
            start = end;
            if start >= work.len() {
                break;
            }
        }
        self.progress.finish();
        Ok(())
    }

    fn convert_all(
        &self,
        slice: &[Work],
        by_rel: &HashMap<&str, &Listed>,
        hashes: &HashMap<String, HashPair>,
    ) -> HashMap<String, Converted> {
        let files: Vec<&Listed> = slice
            .iter()
            .filter_map(|w| match w {
                Work::Plant(r) | Work::Update(r, _) => by_rel.get(r.as_str()).copied(),
                _ => None,
            })
            .collect();
        let convert = |fs: &[&Listed], known: &HashMap<String, HashPair>| -> Vec<(String, Converted)> {
            fs.par_iter()
                .map(|f| {
                    let c = self.convert_one(f, known.get(&f.rel).or_else(|| hashes.get(&f.rel)));
                    self.progress.file_done(c.size);
                    (f.rel.clone(), c)
                })
                .collect()
        };
        let Some(pool) = &self.io_pool else {
            return convert(&files, &HashMap::new()).into_iter().collect();
        };
        // Object stores: download a window of objects with many threads,
        // then convert it on the CPU pool; disk use stays one window.
        let mut out = HashMap::with_capacity(files.len());
        for window in files.chunks(64) {
            let fetched: HashMap<String, HashPair> = pool.install(|| {
                window
                    .par_iter()
                    .filter(|f| f.size > 0 && f.size <= self.config.max_file_bytes)
                    .filter_map(|f| {
                        let with_sha = payload_type_of(&ext_of(&f.rel)).is_some();
                        let h = self.access.ensure_local(f, hashes.get(&f.rel), with_sha).ok()?;
                        Some((f.rel.clone(), h))
                    })
                    .collect()
            });
            out.extend(convert(window, &fetched));
        }
        out
    }

    fn convert_one(&self, f: &Listed, known: Option<&HashPair>) -> Converted {
        let mut c = Converted {
            rel: f.rel.clone(),
            abs: f.abs.clone(),
            origin: self.access.origin(f),
            etag: f.object.as_ref().map(|o| o.etag.clone()),
            size: f.size,
            mtime_ms: f.mtime_ms,
            hash: HashPair { blake3: String::new(), sha256: String::new() },
            outcome: Err(String::new()),
            unsupported: false,
            warnings: vec![],
        };
        if f.size > self.config.max_file_bytes {
            c.outcome =
                Err(format!("file is {} bytes, over the {} byte limit: skipped", f.size, self.config.max_file_bytes));
            return c;
        }
        if f.size == 0 {
            c.outcome = Err("empty file (0 bytes): nothing to adopt".into());
            return c;
        }
        let hash = self.access.ensure_local(f, known, payload_type_of(&ext_of(&f.rel)).is_some());
        match hash {
            Ok(h) => c.hash = h,
            Err(e) => {
                c.outcome = Err(e);
                return c;
            }
        }
        let out = self.registry.convert(&f.abs, &f.rel, self.limits);
        c.unsupported = out.unsupported;
        c.warnings = out.warnings;
        c.outcome = out.result.map_err(|e| e.strip_prefix(&format!("{}: ", f.rel)).map(String::from).unwrap_or(e));
        c
    }

    /// Id prefix for a source-relative folder path.
    fn folder_prefix(&self, rel_dir: &str) -> String {
        let mut parts: Vec<String> = vec![];
        if let Some(d) = &self.src.dest {
            parts.push(d.clone());
        }
        for comp in rel_dir.split('/').filter(|c| !c.is_empty()) {
            parts.push(slugify(comp));
        }
        parts.join("/")
    }

    fn exists(&self, id: &str, batch: &Batch) -> bool {
        if batch.nodes.contains_key(id) || self.taken.contains(id) {
            return !batch.removed_ids.iter().any(|r| r == id);
        }
        if batch.removed_ids.iter().any(|r| r == id) {
            return false;
        }
        self.forest.join(ids::id_to_path(id)).exists()
    }

    fn load(&self, id: &str, batch: &mut Batch) -> Option<Node> {
        if let Some(n) = batch.nodes.get(id) {
            return Some(n.clone());
        }
        let text = std::fs::read_to_string(self.forest.join(ids::id_to_path(id))).ok()?;
        let node = Node::parse(&text).ok()?;
        batch.nodes.insert(id.to_string(), node.clone());
        Some(node)
    }

    fn put(&self, id: &str, node: Node, batch: &mut Batch) {
        batch.nodes.insert(id.to_string(), node);
        batch.dirty.insert(id.to_string());
    }

    /// Make sure the branch for `folder` (id prefix) exists, creating ancestors.
    fn ensure_branch(&mut self, folder: &str, batch: &mut Batch) {
        let bid = ids::branch_id_for_folder(folder);
        if self.exists(&bid, batch) {
            return;
        }
        if let Some(parent) = ids::parent_index(&bid) {
            self.ensure_branch(ids::folder_of(&parent), batch);
        }
        let name = folder.rsplit('/').next().unwrap_or(folder);
        let title = title_from_stem(name);
        let summary = format!("Documents adopted from source folder '{name}'.");
        let mut n = Node { front: Default::default(), body: index::branch_body(&title, &summary) };
        n.set_str("id", &bid);
        n.set_str("type", "branch");
        n.set_str("title", &title);
        n.set_str("summary", &summary);
        n.set_str("coverage", "0 bananas, 0 sub-branches");
        n.set_str("created", &self.today);
        n.set_str("updated", &self.today);
        n.set_str("source", "ingest");
        self.put(&bid, n, batch);
        self.taken.insert(bid.clone());
        if let Some(parent) = ids::parent_index(&bid) {
            self.add_entry(&parent, SUB_BRANCHES, &bid, &summary, batch);
        }
        self.report.branches.push(bid.clone());
        batch.ids.push(bid);
    }

    fn add_entry(&mut self, branch: &str, section: &str, child: &str, summary: &str, batch: &mut Batch) {
        let Some(mut b) = self.load(branch, batch) else {
            return;
        };
        let line = entry_line(child, summary, None);
        let body = index::upsert_entry(&b.body, section, child, &line);
        if body != b.body {
            b.body = body;
            self.put(branch, b, batch);
        }
    }

    fn remove_entry(&mut self, branch: &str, child: &str, batch: &mut Batch) {
        let Some(mut b) = self.load(branch, batch) else {
            return;
        };
        let (body, removed) = index::remove_entry(&b.body, child);
        if removed {
            b.body = body;
            self.put(branch, b, batch);
        }
    }

    /// Replace a child's entry line text in its parent (summary propagation).
    fn propagate_summary(&mut self, child: &str, summary: &str, batch: &mut Batch) {
        let Some(parent) = ids::parent_index(child) else {
            return;
        };
        let Some(mut b) = self.load(&parent, batch) else {
            return;
        };
        let section = if ids::is_branch_id(child) { SUB_BRANCHES } else { DIRECT_BANANAS };
        let existing = index::section_entries(&b.body, section).into_iter().find(|l| index::entry_id(l) == Some(child));
        // Keep a coverage suffix the line carried (dialect §1.6).
        let suffix = existing.as_deref().and_then(coverage_suffix);
        let line = entry_line(child, summary, suffix.as_deref());
        let body = index::upsert_entry(&b.body, section, child, &line);
        if body != b.body {
            b.body = body;
            self.put(&parent, b, batch);
        }
    }

    /// A fresh id for `rel`; names that collide after slugify get a short
    /// hash suffix and a report line (never a silent overwrite).
    fn new_leaf_id(&mut self, rel: &str, batch: &Batch) -> String {
        let (dir, file) = match rel.rfind('/') {
            Some(i) => (&rel[..i], &rel[i + 1..]),
            None => ("", rel),
        };
        let stem = match file.rfind('.') {
            Some(i) if i > 0 => &file[..i],
            _ => file,
        };
        let prefix = self.folder_prefix(dir);
        let leaf = slugify(stem);
        let leaf = if leaf == "_index" || leaf.starts_with('_') { format!("n{leaf}") } else { leaf };
        let base = if prefix.is_empty() { leaf } else { format!("{prefix}/{leaf}") };
        if !self.exists(&base, batch) {
            return base;
        }
        let h = hex::encode(Sha256::digest(rel.as_bytes()));
        let mut cand = format!("{base}-{}", &h[..6]);
        let mut n = 2;
        while self.exists(&cand, batch) {
            cand = format!("{base}-{}-{n}", &h[..6]);
            n += 1;
        }
        self.report
            .warnings
            .push(format!("{rel}: id '{base}' is already taken (names collide after slugify): planted as '{cand}'"));
        cand
    }

    fn apply(
        &mut self,
        w: &Work,
        converted: &HashMap<String, Converted>,
        batch: &mut Batch,
        catalog: Option<&Catalog>,
    ) {
        match w {
            Work::Plant(rel) => {
                if let Some(c) = converted.get(rel) {
                    self.plant(c, batch);
                }
            }
            Work::Update(rel, id) => {
                if let Some(c) = converted.get(rel) {
                    self.update(c, id, batch);
                }
            }
            Work::Transplant(m) => self.transplant(m, batch, catalog),
            Work::MarkStale(rel, e) => self.mark_stale(rel, e, batch),
        }
    }

    fn conversion_or_report(&mut self, c: &Converted) -> Option<Conversion> {
        self.report.bytes_read += c.size;
        self.report.warnings.extend(c.warnings.iter().cloned());
        if c.unsupported {
            self.report.unsupported.push(c.rel.clone());
            return None;
        }
        match &c.outcome {
            Ok(conv) => Some(conv.clone()),
            Err(e) => {
                self.report.errors.push(err(&c.rel, e.clone()));
                None
            }
        }
    }

    fn plant(&mut self, c: &Converted, batch: &mut Batch) {
        let Some(conv) = self.conversion_or_report(c) else {
            return;
        };
        let dir = c.rel.rfind('/').map(|i| &c.rel[..i]).unwrap_or("");
        let folder = self.folder_prefix(dir);
        self.ensure_branch(&folder, batch);
        let id = self.new_leaf_id(&c.rel, batch);
        let parent = ids::parent_index(&id).unwrap_or_else(|| ids::MASTER.to_string());
        let ext = ext_of(&c.rel);
        let title = conv.title().trim().to_string();
        let title = if title.is_empty() { title_from_stem(&stem_of(&c.rel)) } else { title };
        let mut tags: Vec<String> = vec![];
        let mut aliases: Vec<String> = vec![];
        let (node_type, body, summary, payload) = match &conv {
            Conversion::Markdown { body, meta, .. } => {
                tags.extend(meta.tags.iter().map(|t| clean_tag(t)).filter(|t| !t.is_empty()));
                aliases
                    .extend(meta.aliases.iter().filter(|a| !a.trim().is_empty() && a.chars().count() <= 80).cloned());
                let body = normalize_body(body, &title);
                let summary = derive_summary(&body, &title);
                let ty = if TEXT_EXTS.contains(&ext.as_str()) {
                    "note"
                } else if MEDIA_EXTS.contains(&ext.as_str()) {
                    "media"
                } else {
                    "document"
                };
                (ty, body, summary, None)
            }
            Conversion::Dataset { tables, .. } => {
                let counts: Vec<(String, Option<i64>)> =
                    tables.iter().map(|t| (t.name.clone(), Some(t.rows.len() as i64))).collect();
                let summary = forest_convert::dataset_summary(&title, &counts);
                match self.stage_dataset(&id, tables, batch) {
                    Ok(p) => ("dataset", conv.render(), summary, Some(p)),
                    Err(e) => {
                        self.report.errors.push(err(&c.rel, e));
                        return;
                    }
                }
            }
            Conversion::Payload { tables, .. } => {
                let counts: Vec<(String, Option<i64>)> = tables.iter().map(|t| (t.name.clone(), t.count)).collect();
                let summary = forest_convert::dataset_summary(&title, &counts);
                match self.stage_copy(&id, &c.abs, batch) {
                    Ok(p) => ("dataset", conv.render(), summary, Some(p)),
                    Err(e) => {
                        self.report.errors.push(err(&c.rel, e));
                        return;
                    }
                }
            }
        };
        for t in &self.config.default_tags {
            let t = clean_tag(t);
            if !t.is_empty() && !tags.contains(&t) {
                tags.push(t);
            }
        }
        let mut seen = HashSet::new();
        tags.retain(|t| seen.insert(t.clone()));
        let derived = derive_aliases(&c.rel, &self.config.aliases, &title);
        let (aliases, clipped) = union_aliases(&aliases, &derived);
        self.report.aliases_clipped += clipped;
        let draft = Draft {
            id: id.clone(),
            parent: parent.clone(),
            title: title.clone(),
            body: body.clone(),
            summary,
            tags,
            links: vec![],
            scent: "derived".into(),
        };
        let mut n = Node { front: Default::default(), body };
        n.set_str("id", &id);
        n.set_str("type", node_type);
        n.set_str("title", &title);
        n.set_str("summary", &draft.summary);
        n.set_str("created", &self.today);
        n.set_str("updated", &self.today);
        if !draft.tags.is_empty() {
            n.set_list("tags", &draft.tags);
        }
        // Optional `lang` (BCP-47): only when the converter's detector was confident.
        if let Conversion::Markdown { meta: forest_convert::SourceMeta { lang: Some(l), .. }, .. } = &conv {
            n.set_str("lang", l);
        }
        if !draft.links.is_empty() {
            n.set("links", links_value(&draft.links));
        }
        n.set("confidence", Value::from(0.7));
        n.set_str("source", "ingest");
        if let Some((name, hash)) = &payload {
            n.set_str("payload", name);
            n.set_str("payload_type", "sqlite");
            n.set_str("payload_hash", hash);
        } else if let Some(pt) = payload_type_of(&ext) {
            // BONE: the original stays at its source unless archived.
            match self.bone_payload(&id, c, batch) {
                Ok(p) => {
                    n.set_str("payload", &p);
                    n.set_str("payload_type", pt);
                    n.set_str("payload_hash", &c.hash.sha256);
                }
                Err(e) => self.report.warnings.push(format!("{}: original not archived: {e}", c.rel)),
            }
        }
        if !aliases.is_empty() {
            n.set_list("aliases", &aliases);
        }
        n.set_str("origin", &c.origin);
        self.set_source_fields(&mut n, c);
        n.set_str("scent", &draft.scent);
        n.set_str("scent_hash", &summary_fingerprint(&draft.summary));
        if matches!(conv, Conversion::Markdown { .. }) {
            self.apply_content_policy(&id, &ext, &title, &mut n, &c.rel);
        }
        self.put(&id, n, batch);
        self.taken.insert(id.clone());
        self.add_entry(&parent, DIRECT_BANANAS, &id, &draft.summary, batch);
        if self.curate.is_some() {
            batch.curation.push(draft);
        }
        batch.manifest_up.push((c.rel.clone(), self.entry_for(&id, c)));
        self.report.planted.push(id.clone());
        batch.planted += 1;
        batch.ids.push(id);
    }

    /// FLESH policy (dialect §3.11): `cached` moves the body to
    /// `_derived/bodies/<id>.md`, `reference` leaves it at the source (text
    /// sources only; others fall back to `cached`). The passport keeps a
    /// `# <title>` stub either way.
    fn apply_content_policy(&mut self, id: &str, ext: &str, title: &str, n: &mut Node, rel: &str) {
        let policy = match self.src.content.as_str() {
            "reference" if TEXT_EXTS.contains(&ext) => "reference",
            "reference" | "cached" => "cached",
            _ => return,
        };
        if policy == "cached" && !self.opts.dry_run {
            if let Err(e) = write_cached_body(self.forest, id, &n.body) {
                self.report.errors.push(err(rel, format!("cannot cache the body: {e}")));
                return;
            }
        }
        n.body = format!("# {title}\n");
        n.set_str("content", policy);
    }

    /// The `payload` of a binary original: its source URI (BONE stays at the
    /// source), or an `_assets/` copy under `archive: always`.
    fn bone_payload(&mut self, id: &str, c: &Converted, batch: &mut Batch) -> Result<String, String> {
        if self.src.archive != "always" {
            return Ok(c.origin.clone());
        }
        let ext = ext_of(&c.rel);
        let name = format!("{}-{}{}", &c.hash.sha256.get(..8).unwrap_or("00000000"), slugify(&stem_of(&c.rel)), ext);
        let rel_asset = format!("_assets/{name}");
        if self.opts.dry_run {
            return Ok(rel_asset);
        }
        let fin = self.forest.join(ids::folder_of(id)).join(&rel_asset);
        let staged = staged_path_for(&fin);
        if let Some(p) = staged.parent() {
            std::fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        }
        std::fs::copy(&c.abs, &staged).map_err(|e| format!("cannot copy the original: {e}"))?;
        batch.renames.push((staged, fin));
        Ok(rel_asset)
    }

    fn set_source_fields(&self, n: &mut Node, c: &Converted) {
        n.set_str("source_path", &c.rel);
        n.set_str("source_hash", &c.hash.blake3);
        n.set("source_size", Value::from(c.size));
        n.set("source_mtime", Value::from(c.mtime_ms as f64 / 1000.0));
        match &c.etag {
            Some(e) => n.set_str("source_etag", e),
            None => {
                n.remove("source_etag");
            }
        }
        if self.multi || self.src.name != "default" && self.config.sources.len() > 1 {
            n.set_str("source_name", &self.src.name);
        }
    }

    fn entry_for(&self, id: &str, c: &Converted) -> ManifestEntry {
        ManifestEntry {
            id: id.to_string(),
            size: c.size,
            mtime_ms: c.mtime_ms,
            hash: c.hash.blake3.clone(),
            vanished: false,
            etag: c.etag.clone(),
        }
    }

    /// Write a dataset payload under a temp name; renamed after the commit.
    fn stage_dataset(
        &mut self,
        id: &str,
        tables: &[forest_convert::Table],
        batch: &mut Batch,
    ) -> Result<(String, String), String> {
        let name = format!("{}.db", id.rsplit('/').next().unwrap_or(id));
        let fin = self.forest.join(ids::folder_of(id)).join(&name);
        if self.opts.dry_run {
            return Ok((name, String::new()));
        }
        let staged = staged_path_for(&fin);
        if let Some(p) = staged.parent() {
            std::fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        }
        let hash = forest_convert::write_dataset_db(tables, &staged).map_err(|e| format!("dataset payload: {e}"))?;
        batch.renames.push((staged, fin));
        Ok((name, hash))
    }

    /// Copy an adopted SQLite file under a temp name; renamed after the commit.
    fn stage_copy(&mut self, id: &str, src: &Path, batch: &mut Batch) -> Result<(String, String), String> {
        let name = format!("{}.db", id.rsplit('/').next().unwrap_or(id));
        let fin = self.forest.join(ids::folder_of(id)).join(&name);
        if self.opts.dry_run {
            return Ok((name, String::new()));
        }
        let staged = staged_path_for(&fin);
        if let Some(p) = staged.parent() {
            std::fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        }
        let bytes = std::fs::read(src).map_err(|e| format!("cannot read payload: {e}"))?;
        let hash = hex::encode(Sha256::digest(&bytes));
        forest_fs::atomic_write(&staged, &bytes).map_err(|e| format!("cannot stage payload: {e}"))?;
        batch.renames.push((staged, fin));
        Ok((name, hash))
    }

    fn update(&mut self, c: &Converted, id: &str, batch: &mut Batch) {
        let Some(mut n) = self.load(id, batch) else {
            // The passport is gone (deleted by hand): plant it again.
            self.plant(c, batch);
            return;
        };
        let Some(conv) = self.conversion_or_report(c) else {
            return;
        };
        let title = n.get_str("title").unwrap_or_else(|| conv.title().to_string());
        let mut fresh_text: Option<String> = None;
        let (new_body, derived) = match &conv {
            Conversion::Markdown { body, .. } => {
                let fresh = normalize_body(body, &title);
                fresh_text = Some(fresh.clone());
                let derived = derive_summary(&fresh, &title);
                let body = match n.get_str("content").as_deref() {
                    Some("cached") => {
                        if !self.opts.dry_run {
                            if let Err(e) = write_cached_body(self.forest, id, &fresh) {
                                self.report.errors.push(err(&c.rel, format!("cannot cache the body: {e}")));
                            }
                        }
                        n.body.clone()
                    }
                    Some(c) if c != "inline" => n.body.clone(),
                    _ => keep_notes(&n.body, &fresh),
                };
                if let Some(pt) = payload_type_of(&ext_of(&c.rel)) {
                    // A source-referenced original: follow the new bytes.
                    let at_source = n.get_str("payload").is_none_or(|p| forest_model::lint::is_remote(&p));
                    if at_source && !c.hash.sha256.is_empty() && self.src.archive != "always" {
                        n.set_str("payload", &c.origin);
                        n.set_str("payload_type", pt);
                        n.set_str("payload_hash", &c.hash.sha256);
                    } else if self.src.archive == "always" && !c.hash.sha256.is_empty() {
                        // Re-archive; the old copy goes once the commit landed.
                        let old = n.get_str("payload").filter(|p| p.starts_with("_assets/"));
                        match self.bone_payload(id, c, batch) {
                            Ok(p) => {
                                if let Some(o) = old.filter(|o| *o != p) {
                                    batch.retired.push(self.forest.join(ids::folder_of(id)).join(o));
                                }
                                n.set_str("payload", &p);
                                n.set_str("payload_type", pt);
                                n.set_str("payload_hash", &c.hash.sha256);
                            }
                            Err(e) => self.report.warnings.push(format!("{}: original not archived: {e}", c.rel)),
                        }
                    }
                }
                (body, derived)
            }
            Conversion::Dataset { .. } | Conversion::Payload { .. } => {
                let (counts, staged) = match &conv {
                    Conversion::Dataset { tables, .. } => (
                        tables.iter().map(|t| (t.name.clone(), Some(t.rows.len() as i64))).collect::<Vec<_>>(),
                        self.stage_dataset(id, tables, batch),
                    ),
                    Conversion::Payload { tables, .. } => (
                        tables.iter().map(|t| (t.name.clone(), t.count)).collect::<Vec<_>>(),
                        self.stage_copy(id, &c.abs, batch),
                    ),
                    Conversion::Markdown { .. } => (vec![], Err("not a dataset".to_string())),
                };
                match staged {
                    Ok((name, hash)) => {
                        n.set_str("payload", &name);
                        n.set_str("payload_hash", &hash);
                    }
                    Err(e) => {
                        self.report.errors.push(err(&c.rel, e));
                        return;
                    }
                }
                (replace_map_sections(&n.body, &conv.render()), forest_convert::dataset_summary(&title, &counts))
            }
        };
        n.body = new_body;
        self.set_source_fields(&mut n, c);
        n.remove("source_state");
        n.set_str("updated", &self.today);
        let (aliases, clipped) =
            union_aliases(&n.get_list("aliases"), &derive_aliases(&c.rel, &self.config.aliases, &title));
        self.report.aliases_clipped += clipped;
        if !aliases.is_empty() {
            n.set_list("aliases", &aliases);
        }
        if n.get_str("origin").is_none() {
            n.set_str("origin", &c.origin);
        }
        // Scent freshness (DESIGN §5): re-derive machine-written summaries only.
        let current = n.get_str("summary").unwrap_or_default();
        let machine = matches!(n.get_str("scent").as_deref(), Some("derived") | Some("llm"))
            && n.get_str("scent_hash").as_deref() == Some(summary_fingerprint(&current).as_str());
        if machine {
            if derived != current {
                n.set_str("summary", &derived);
                n.set_str("scent", "derived");
                n.set_str("scent_hash", &summary_fingerprint(&derived));
                self.propagate_summary(id, &derived, batch);
            }
            // DESIGN §5: machine-written scent follows the source: re-curate
            // the changed document (and only it).
            if let (Some(_), Some(body)) = (self.curate, fresh_text) {
                let links = DraftLink::existing(&n);
                batch.curation_existing.insert(id.to_string(), links.len());
                batch.curation.push(Draft {
                    id: id.to_string(),
                    parent: ids::parent_index(id).unwrap_or_else(|| ids::MASTER.to_string()),
                    title: title.clone(),
                    body,
                    summary: derived.clone(),
                    tags: n.get_list("tags"),
                    links,
                    scent: "derived".into(),
                });
            }
        } else if derived != current {
            self.report.summary_stale.push(id.to_string());
        }
        self.put(id, n, batch);
        batch.manifest_up.push((c.rel.clone(), self.entry_for(id, c)));
        self.report.updated.push(id.to_string());
        batch.updated += 1;
        batch.ids.push(id.to_string());
    }

    fn transplant(&mut self, m: &reconcile::Move, batch: &mut Batch, catalog: Option<&Catalog>) {
        let Some(mut n) = self.load(&m.from_id, batch) else {
            self.report
                .errors
                .push(err(&m.to_rel, format!("moved from {} but its passport {} is missing", m.from_rel, m.from_id)));
            return;
        };
        let dir = m.to_rel.rfind('/').map(|i| &m.to_rel[..i]).unwrap_or("");
        let folder = self.folder_prefix(dir);
        self.ensure_branch(&folder, batch);
        let new_id = self.new_leaf_id(&m.to_rel, batch);
        let old_id = m.from_id.clone();
        n.set_str("id", &new_id);
        n.set_str("source_path", &m.to_rel);
        n.remove("source_state");
        n.set_str("updated", &self.today);
        let mut moved_from = n.get_list("moved_from");
        if !moved_from.contains(&old_id) {
            moved_from.push(old_id.clone());
        }
        n.set_list("moved_from", &moved_from);
        let (aliases, clipped) = union_aliases(&n.get_list("aliases"), std::slice::from_ref(&old_id));
        self.report.aliases_clipped += clipped;
        n.set_list("aliases", &aliases);
        // The payload travels with its passport.
        if let Some(p) = n.get_str("payload").filter(|p| !forest_model::lint::is_remote(p) && !p.contains('/')) {
            let new_name = format!("{}.db", new_id.rsplit('/').next().unwrap_or(&new_id));
            let from = self.forest.join(ids::folder_of(&old_id)).join(&p);
            let to = self.forest.join(ids::folder_of(&new_id)).join(&new_name);
            if from != to {
                batch.renames.push((from, to));
                n.set_str("payload", &new_name);
            }
        }
        // A machine-set origin (and a source-referenced payload) follow the file.
        let old_origin = self.access.origin_of_rel(&m.from_rel);
        let new_origin = self.access.origin_of_rel(&m.to_rel);
        if n.get_str("origin").as_deref() == Some(old_origin.as_str()) {
            n.set_str("origin", &new_origin);
        }
        if n.get_str("payload").as_deref() == Some(old_origin.as_str()) {
            n.set_str("payload", &new_origin);
        }
        if n.get_str("content").as_deref() == Some("cached") {
            let from = cached_body_path(self.forest, &old_id);
            if from.exists() {
                batch.renames.push((from, cached_body_path(self.forest, &new_id)));
            }
        }
        let summary = n.get_str("summary").unwrap_or_default();
        let old_parent = ids::parent_index(&old_id).unwrap_or_else(|| ids::MASTER.into());
        let new_parent = ids::parent_index(&new_id).unwrap_or_else(|| ids::MASTER.into());
        self.remove_entry(&old_parent, &old_id, batch);
        batch.nodes.remove(&old_id);
        batch.dirty.remove(&old_id);
        batch.deletes.insert(ids::id_to_path(&old_id));
        batch.removed_ids.push(old_id.clone());
        self.put(&new_id, n, batch);
        self.taken.insert(new_id.clone());
        self.add_entry(&new_parent, DIRECT_BANANAS, &new_id, &summary, batch);
        // Backlinks follow (frontmatter links from the catalog's edge table).
        if let Some(cat) = catalog {
            if let Ok(edges) = cat.edges_in(&old_id) {
                let mut srcs: Vec<String> = edges.into_iter().map(|e| e.src).collect();
                srcs.sort();
                srcs.dedup();
                for src in srcs {
                    let src = if src == old_id { new_id.clone() } else { src };
                    if let Some(mut sn) = self.load(&src, batch) {
                        if rewrite_link_targets(&mut sn, &old_id, &new_id) {
                            sn.set_str("updated", &self.today);
                            self.put(&src, sn, batch);
                        }
                    }
                }
            }
        }
        batch.manifest_del.push(m.from_rel.clone());
        if let Some(mut e) = batch_entry_from_node(&new_id, batch.nodes.get(&new_id)) {
            e.vanished = false;
            batch.manifest_up.push((m.to_rel.clone(), e));
        }
        batch.rekeys.push((old_id.clone(), new_id.clone()));
        self.report.moved.push(MoveRecord { from: old_id, to: new_id.clone() });
        batch.moved += 1;
        batch.ids.push(new_id);
    }

    fn mark_stale(&mut self, rel: &str, e: &ManifestEntry, batch: &mut Batch) {
        if let Some(mut n) = self.load(&e.id, batch) {
            n.set_str("source_state", "vanished");
            self.put(&e.id, n, batch);
            batch.stale += 1;
            batch.ids.push(e.id.clone());
        }
        batch.manifest_up.push((rel.to_string(), ManifestEntry { vanished: true, ..e.clone() }));
    }

    /// The curate stage: all new drafts of the batch in parallel (the
    /// Curator bounds in-flight requests), then results folded in.
    /// Take the batch's drafts for the curate stage, after indexing their
    /// derived rows so the closed catalog offers this batch's nodes too.
    fn prepare_curation(
        &mut self,
        batch: &mut Batch,
        catalog: Option<&mut Catalog>,
    ) -> Result<Vec<Draft>, GardenError> {
        let drafts = std::mem::take(&mut batch.curation);
        if drafts.is_empty() || self.curate.is_none() {
            return Ok(drafts);
        }
        // The closed catalog must offer this batch's new nodes too: index
        // their derived rows first. The marker makes the next run rebuild
        // the catalog if we die before the batch's commit lands.
        if let Some(cat) = catalog {
            forest_fs::atomic_write(&self.forest.join(CATALOG_DIRTY), b"curation batch in flight\n")
                .map_err(|e| GardenError::Io(format!("{CATALOG_DIRTY}: {e}")))?;
            let rows: Vec<_> =
                drafts.iter().filter_map(|d| batch.nodes.get(&d.id).map(|n| catalog_row(&d.id, n))).collect();
            cat.upsert(&rows).map_err(|e| GardenError::Derived(format!("catalog: {e}")))?;
        }
        Ok(drafts)
    }

    /// Fold curated drafts into the batch (invalid summaries fall back to
    /// the derived one; every fallback is listed).
    fn fold_curation(&mut self, drafts: Vec<Draft>, results: Vec<Result<(), String>>, batch: &mut Batch) {
        if self.curate.is_none() || drafts.is_empty() {
            return;
        }
        let results = results.into_iter().map(Some).chain(std::iter::repeat(None));
        for (d, r) in drafts.into_iter().zip(results) {
            match r {
                Some(Err(e)) => self.report.errors.push(err(&d.id, format!("curate: {e}"))),
                None => self.report.errors.push(err(&d.id, "curate: the curate stage did not finish")),
                Some(Ok(())) => {}
            }
            let Some(mut n) = batch.nodes.get(&d.id).cloned() else { continue };
            let summary = if validate_summary(&d.summary).is_ok() {
                d.summary.clone()
            } else {
                derive_summary(&d.body, &d.title)
            };
            let scent = if summary == d.summary { d.scent.as_str() } else { "derived" };
            if scent != "llm" {
                self.report.curation_fallbacks.push(d.id.clone());
            }
            n.set_str("summary", &summary);
            if !d.tags.is_empty() {
                n.set_list("tags", &d.tags);
            }
            // Links the node already had stay as written; proposals append.
            let before = batch.curation_existing.remove(&d.id).unwrap_or(0);
            let had: HashSet<(String, String)> = n.links().into_iter().map(|l| (l.rel, l.target)).collect();
            let proposed: Vec<DraftLink> = d
                .links
                .iter()
                .skip(before)
                .filter(|l| !had.contains(&(l.rel.clone(), l.target.clone())))
                .cloned()
                .collect();
            if !proposed.is_empty() {
                let mut seq = match n.front.get("links") {
                    Some(Value::Sequence(s)) => s.clone(),
                    _ => vec![],
                };
                if let Value::Sequence(add) = links_value(&proposed) {
                    seq.extend(add);
                }
                n.set("links", Value::Sequence(seq));
            }
            n.set_str("scent", scent);
            n.set_str("scent_hash", &summary_fingerprint(&summary));
            self.put(&d.id, n, batch);
            self.propagate_summary(&d.id, &summary, batch);
        }
    }

    fn finish_batch(
        &mut self,
        batch: &mut Batch,
        manifest: &mut Manifest,
        catalog: Option<&mut Catalog>,
    ) -> Result<(), GardenError> {
        // Coverage of every touched branch, then serialise dirty nodes.
        let dirty: Vec<String> = batch.dirty.iter().cloned().collect();
        for id in &dirty {
            if ids::is_branch_id(id) {
                if let Some(n) = batch.nodes.get_mut(id) {
                    let cov = index::coverage_of(&n.body);
                    if n.get_str("coverage").as_deref() != Some(cov.as_str()) {
                        n.set_str("coverage", &cov);
                    }
                    n.set_str("updated", &self.today);
                }
            }
        }
        let mut changes: Vec<Change> = vec![];
        let mut rows = vec![];
        for id in &dirty {
            let Some(n) = batch.nodes.get(id) else {
                continue;
            };
            let text = n.to_text();
            let path = ids::id_to_path(id);
            // Never rewrite a file whose content did not change.
            if std::fs::read(self.forest.join(&path)).ok().as_deref() == Some(text.as_bytes()) {
                continue;
            }
            rows.push(catalog_row(id, n));
            changes.push(Change::Write { path, bytes: text.into_bytes() });
        }
        for p in &batch.deletes {
            changes.push(Change::Delete { path: p.clone() });
        }
        if self.opts.dry_run {
            return Ok(());
        }
        let mut head = None;
        // Staged payloads are renamed only after the commit; the journal lets
        // the next start finish (or drop) them after a crash in between.
        if !batch.renames.is_empty() {
            write_payload_journal(self.forest, &batch.renames)?;
        }
        if !changes.is_empty() {
            let msg = self.commit_message(batch);
            let t = Instant::now();
            let committed = self.git.commit_batch(&changes, &msg)?;
            tracing::info!(
                event = "gardener.stage",
                stage = "git",
                files = changes.len(),
                ms = t.elapsed().as_millis() as u64,
                rss_mib = rss_mib()
            );
            if let Some(oid) = committed {
                self.commits.push(oid.to_string());
                head = Some(oid.to_string());
            }
        }
        // Fault injection for the crash tests: die between the commit and the
        // payload renames, the window the payload journal exists for.
        if !batch.renames.is_empty() && std::env::var_os("FOREST_FAULT_ABORT_BEFORE_PAYLOAD_RENAME").is_some() {
            std::process::abort();
        }
        for (staged, fin) in batch.renames.drain(..) {
            if let Err(e) = forest_fs::atomic_rename(&staged, &fin) {
                self.report.errors.push(err(&fin.to_string_lossy(), format!("payload rename failed: {e}")));
            }
        }
        let _ = std::fs::remove_file(self.forest.join(PAYLOAD_JOURNAL));
        // An orphan left by a crash here is only a stale, gitignored copy.
        for old in batch.retired.drain(..) {
            let _ = std::fs::remove_file(old);
        }
        let current_head = match head {
            Some(h) => Some(h),
            None => self.git.head_oid()?.map(|o| o.to_string()),
        };
        manifest.apply(&self.src.name, &batch.manifest_up, &batch.manifest_del, current_head.as_deref())?;
        if let Some(cat) = catalog {
            if !batch.removed_ids.is_empty() {
                cat.remove(&batch.removed_ids).map_err(|e| GardenError::Derived(format!("catalog: {e}")))?;
            }
            if !rows.is_empty() {
                cat.upsert(&rows).map_err(|e| GardenError::Derived(format!("catalog: {e}")))?;
            }
            let _ = std::fs::remove_file(self.forest.join(CATALOG_DIRTY));
        }
        if !batch.rekeys.is_empty() {
            if let Ok(mut trails) = forest_catalog::Trails::open(&self.forest.join(TRAILS_PATH)) {
                for (old, new) in &batch.rekeys {
                    let _ = trails.rekey(old, new);
                }
            }
        }
        Ok(())
    }

    fn commit_message(&self, batch: &Batch) -> String {
        let verb = self.command;
        let mut msg = format!(
            "gardener({verb}): {} planted, {} updated, {} moved, {} stale [source={}]\n\n",
            batch.planted, batch.updated, batch.moved, batch.stale, self.src.name
        );
        for id in batch.ids.iter().take(200) {
            msg.push_str(id);
            msg.push('\n');
        }
        if batch.ids.len() > 200 {
            msg.push_str(&format!("... and {} more\n", batch.ids.len() - 200));
        }
        msg
    }
}

fn batch_entry_from_node(id: &str, n: Option<&Node>) -> Option<ManifestEntry> {
    let n = n?;
    Some(ManifestEntry {
        id: id.to_string(),
        size: n.get_f64("source_size").map(|s| s as u64).unwrap_or(u64::MAX),
        mtime_ms: (n.get_f64("source_mtime").unwrap_or(0.0) * 1000.0).round() as i64,
        hash: n.get_str("source_hash")?,
        vanished: false,
        etag: n.get_str("source_etag"),
    })
}

/// Anonymous resident memory of this process in MiB (file-backed pack
/// mappings excluded: the kernel can drop those), for stage logs.
fn rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("RssAnon:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kb| kb / 1024)
        .unwrap_or(0)
}

/// Where a payload waits for its commit: `.<name>.<pid>.<n>.staged` beside
/// the final file. Deliberately NOT a forest_fs temp name: the git layer
/// sweeps those after a crash, and a staged payload must survive until
/// [`recover_payloads`] decides.
fn staged_path_for(fin: &Path) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = fin.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "payload".into());
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    fin.with_file_name(format!(".{name}.{}.{n}.staged", std::process::id()))
}

fn is_staged_name(p: &Path) -> bool {
    p.file_name().map(|n| n.to_string_lossy()).is_some_and(|n| n.starts_with('.') && n.ends_with(".staged"))
}

/// Journal of payload renames pending around a commit.
pub const PAYLOAD_JOURNAL: &str = "_derived/payload-journal.json";

fn write_payload_journal(forest: &Path, renames: &[(PathBuf, PathBuf)]) -> Result<(), GardenError> {
    let list: Vec<serde_json::Value> = renames
        .iter()
        .map(|(a, b)| serde_json::json!({"staged": a.to_string_lossy(), "final": b.to_string_lossy()}))
        .collect();
    let text = serde_json::to_vec(&list).map_err(|e| GardenError::Derived(format!("payload journal: {e}")))?;
    forest_fs::atomic_write(&forest.join(PAYLOAD_JOURNAL), &text)
        .map_err(|e| GardenError::Io(format!("payload journal: {e}")))
}

/// Finish payload renames interrupted by a crash: a staged payload whose
/// sha256 is the one its passport (at HEAD, in the work tree) records is
/// moved into place; anything else is dropped (the next sync rebuilds it).
pub fn recover_payloads(forest: &Path) {
    let path = forest.join(PAYLOAD_JOURNAL);
    let Ok(bytes) = std::fs::read(&path) else { return };
    let list: Vec<serde_json::Value> = serde_json::from_slice(&bytes).unwrap_or_default();
    for item in list {
        let (Some(staged), Some(fin)) = (item["staged"].as_str(), item["final"].as_str()) else { continue };
        let (staged, fin) = (PathBuf::from(staged), PathBuf::from(fin));
        if !staged.exists() {
            continue;
        }
        let want = std::fs::read_to_string(fin.with_extension("md"))
            .ok()
            .and_then(|t| Node::parse(&t).ok())
            .and_then(|n| n.get_str("payload_hash"));
        let have = std::fs::read(&staged).ok().map(|b| hex::encode(Sha256::digest(&b)));
        if want.is_some() && want == have {
            let _ = forest_fs::atomic_rename(&staged, &fin);
        } else if is_staged_name(&staged) {
            let _ = std::fs::remove_file(&staged);
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// Where a `content: cached` body lives.
pub(crate) fn cached_body_path(forest: &Path, id: &str) -> PathBuf {
    forest.join(BODIES_DIR).join(format!("{id}.md"))
}

/// Write a cached body (a regenerable cache: no fsync per file).
fn write_cached_body(forest: &Path, id: &str, body: &str) -> std::io::Result<()> {
    let p = cached_body_path(forest, id);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d)?;
    }
    forest_fs::write_replace_unsynced(&p, body.as_bytes())
}

/// The dialect's `payload_type` of an original, by extension (§1.8).
fn payload_type_of(ext: &str) -> Option<&'static str> {
    match ext {
        ".pdf" => Some("pdf"),
        ".docx" => Some("docx"),
        ".png" | ".jpg" | ".jpeg" | ".gif" | ".webp" => Some("image"),
        ".mp3" | ".wav" | ".m4a" | ".ogg" | ".flac" => Some("audio"),
        _ => None,
    }
}

fn ext_of(rel: &str) -> String {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    match file.rfind('.') {
        Some(i) if i > 0 => file[i..].to_lowercase(),
        _ => String::new(),
    }
}

fn stem_of(rel: &str) -> String {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    match file.rfind('.') {
        Some(i) if i > 0 => file[..i].to_string(),
        _ => file.to_string(),
    }
}

/// Empty -> `# title`; not starting with `#` -> `# title` prepended, so a
/// headingless text gets the same H1 on adopt and every sync.
fn normalize_body(body: &str, title: &str) -> String {
    let b = body.trim_start_matches(['\n', '\r']).trim_end();
    if b.is_empty() {
        format!("# {title}\n")
    } else if !b.starts_with('#') {
        format!("# {title}\n\n{b}\n")
    } else {
        format!("{b}\n")
    }
}

fn clean_tag(t: &str) -> String {
    slugify(t).replace('.', "-").trim_matches('-').to_string()
}

fn links_value(links: &[DraftLink]) -> Value {
    Value::Sequence(
        links
            .iter()
            .map(|l| {
                let mut m = forest_model::yaml::Mapping::new();
                m.insert("rel".into(), l.rel.clone().into());
                m.insert("target".into(), l.target.clone().into());
                if l.confidence < 1.0 {
                    m.insert("confidence".into(), Value::from(l.confidence));
                }
                if let Some(n) = l.note.as_ref().filter(|n| !n.trim().is_empty()) {
                    m.insert("note".into(), n.clone().into());
                }
                Value::Mapping(m)
            })
            .collect(),
    )
}

fn rewrite_link_targets(n: &mut Node, old: &str, new: &str) -> bool {
    let mut changed = false;
    if let Some(Value::Sequence(links)) = n.front.get_mut("links") {
        for l in links.iter_mut() {
            if let Some(m) = l.as_mapping_mut() {
                if m.get("target").and_then(|t| t.as_str()) == Some(old) {
                    m.insert("target".into(), new.into());
                    changed = true;
                }
            }
        }
    }
    changed
}

/// The `N bananas, M sub-branches` suffix an entry line carries, if any.
pub(crate) fn coverage_suffix(line: &str) -> Option<String> {
    let t = line.trim_end().trim_end_matches('.');
    let i = t.rfind(['.', '!', '?'])?;
    let tail = t[i + 1..].trim();
    index::parse_coverage(tail).map(|_| tail.to_string())
}

/// Replace a body's content while keeping a hand-written `## Notes` section.
fn keep_notes(old: &str, fresh: &str) -> String {
    let notes = section_text(old, "## Notes");
    match notes {
        Some(n) if section_text(fresh, "## Notes").is_none() => {
            format!("{}\n\n{}\n", fresh.trim_end(), n.trim_end())
        }
        _ => fresh.to_string(),
    }
}

/// A whole `## X` section (heading included) up to the next H1/H2.
fn section_text(body: &str, heading: &str) -> Option<String> {
    let lines: Vec<&str> = body.lines().collect();
    let s = lines.iter().position(|l| l.trim_end() == heading)?;
    let e = lines[s + 1..]
        .iter()
        .position(|l| l.starts_with("## ") || l.starts_with("# "))
        .map(|p| s + 1 + p)
        .unwrap_or(lines.len());
    Some(lines[s..e].join("\n"))
}

/// Rewrite only `## Query manual` and `## Sample rows` (appended if missing).
fn replace_map_sections(old: &str, rendered: &str) -> String {
    let mut body = old.to_string();
    for h in ["## Query manual", "## Sample rows"] {
        let Some(new_sec) = section_text(rendered, h) else {
            continue;
        };
        match section_text(&body, h) {
            Some(old_sec) => body = body.replacen(&old_sec, new_sec.trim_end(), 1),
            None => body = format!("{}\n\n{}\n", body.trim_end(), new_sec.trim_end()),
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_normalisation() {
        assert_eq!(normalize_body("", "T"), "# T\n");
        assert_eq!(normalize_body("text", "T"), "# T\n\ntext\n");
        assert_eq!(normalize_body("# H\nx", "T"), "# H\nx\n");
    }

    #[test]
    fn notes_survive() {
        let old = "# T\n\nold\n\n## Notes\n\nmine\n";
        assert_eq!(keep_notes(old, "# T\n\nnew\n"), "# T\n\nnew\n\n## Notes\n\nmine\n");
        let ds = "# D\n\n## Query manual\n\nold manual\n\n## Sample rows\n\nold rows\n\n## Notes\n\nkeep\n";
        let r = replace_map_sections(ds, "# D\n\n## Query manual\n\nnew manual\n\n## Sample rows\n\nnew rows\n");
        assert!(r.contains("new manual") && r.contains("new rows") && r.contains("## Notes\n\nkeep"));
        assert!(!r.contains("old"));
    }

    #[test]
    fn coverage_suffix_parse() {
        assert_eq!(
            coverage_suffix("- [[a/_index]] — Region. 2 bananas, 0 sub-branches.").as_deref(),
            Some("2 bananas, 0 sub-branches")
        );
        assert_eq!(coverage_suffix("- [[a]] — Plain summary."), None);
    }
}
