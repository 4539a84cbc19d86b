//! `forest`: a thin binary over the library crates. Data and `--json` go to
//! stdout, progress and logs to stderr. Exit codes (DESIGN §9): 0 ok,
//! 1 error, 3 partial, 10 not a forest, 11 locked.

mod canopy_cmd;
mod curate_cmd;
mod dist_cmd;
mod fetch_cmd;
mod garden_cmd;
mod hunt_cmd;
mod locate_cmd;
mod progress;
mod render;
mod schemas;
mod snapshot_cmd;
mod token_cmd;
mod validate_cmd;
mod vine_cmd;

use garden_cmd::{build_curator, finish_garden, run_options, with_curation, with_curation_from};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use forest_catalog::Trails;
use forest_gardener::derived::{open_catalog, reindex, TRAILS_PATH};
use forest_gardener::RunOptions;
use forest_git::{GitError, GitForest, WriterLock};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const EXIT_ERROR: u8 = 1;
const EXIT_PARTIAL: u8 = 3;
const EXIT_NOT_FOREST: u8 = 10;
const EXIT_LOCKED: u8 = 11;

#[derive(Parser)]
#[command(
    name = "forest",
    version,
    about = "Build and tend knowledge forests: git-versioned Markdown with curated scent."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Args, Clone)]
struct ForestArg {
    /// Forest directory (default: $FOREST_DIR, else the current directory).
    #[arg(long, env = "FOREST_DIR", default_value = ".")]
    forest: PathBuf,
}

#[derive(Args, Clone)]
struct GardenArgs {
    /// Plan only: write nothing, print what would happen.
    #[arg(long)]
    dry_run: bool,
    /// Checkpoint commit every N files.
    #[arg(long, default_value_t = 5000)]
    commit_every: usize,
    /// Also checkpoint once a batch's files add up to this many MiB
    /// (estimated from source bytes, then measured on the converted
    /// bodies; bounds memory on corpora of large documents).
    #[arg(long, default_value_t = forest_gardener::DEFAULT_BATCH_BYTES >> 20)]
    batch_mib: u64,
    /// Allow marking more than max_stale_fraction of a source stale.
    #[arg(long)]
    allow_mass_stale: bool,
    /// Curate new nodes with the LLM endpoint (MONKEYLLM_LLM_* / OPENAI_* env),
    /// propose closed-catalog links, then roll up branch summaries.
    #[arg(long)]
    curate: bool,
    /// Print the JSON report on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Clone)]
struct AdoptArgs {
    #[command(flatten)]
    f: ForestArg,
    /// Source folder, file:// URI or s3://bucket/prefix.
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
    #[command(flatten)]
    g: GardenArgs,
}

#[derive(Subcommand)]
enum Cmd {
    /// Create an empty forest (its own git repo, one commit).
    Init {
        /// Directory of the new forest.
        dir: PathBuf,
        /// Forest title.
        #[arg(long, default_value = "Forest")]
        title: String,
        #[arg(long)]
        json: bool,
    },
    /// Lint every node (dialect §2.6 + ours).
    Validate {
        #[command(flatten)]
        f: ForestArg,
        #[arg(long)]
        json: bool,
        /// Exit 1 on warnings too.
        #[arg(long)]
        deny_warnings: bool,
    },
    /// Adopt a source (local folder or s3://bucket/prefix): record it and plant one node per file.
    Adopt(AdoptArgs),
    /// Re-walk recorded sources (or one file) and reconcile.
    Sync {
        #[command(flatten)]
        f: ForestArg,
        /// Only this source.
        #[arg(long)]
        source: Option<String>,
        /// Only this source-relative path (targeted sync).
        path: Option<String>,
        /// Distributed ingest worker: prepare shard I of N (`I/N`, or `N`
        /// with I from JOB_COMPLETION_INDEX) into --store, then exit. No
        /// writer lock, no commit.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Prepared store (s3://bucket/prefix or a directory): workers fill
        /// it; a sync without --shard (the committer) looks files up in it
        /// before converting or curating them.
        #[arg(long, value_name = "URI")]
        store: Option<String>,
        /// Committer: leave files the store does not hold yet for the next
        /// run (workers still running) instead of converting them here.
        #[arg(long, requires = "store")]
        prepared_only: bool,
        #[command(flatten)]
        g: GardenArgs,
    },
    /// Curate ingested leaves whose scent is still derived, hottest first
    /// (needs the LLM endpoint).
    Curate {
        #[command(flatten)]
        f: ForestArg,
        /// Only nodes still carrying a derived summary (the only mode).
        #[arg(long, default_value_t = true)]
        pending: bool,
        /// Stop after N documents (`40`) or once a duration has elapsed
        /// (`90s`, `15m`, `1h30m`); the next run continues. No limit when absent.
        #[arg(long, value_name = "N|DURATION", value_parser = curate_cmd::parse_budget)]
        budget: Option<forest_gardener::demand::Budget>,
        #[arg(long)]
        json: bool,
    },
    /// Roll up branch summaries deepest-first (LLM when --curate, else deterministic).
    Rollup {
        #[command(flatten)]
        f: ForestArg,
        /// Every non-_meta branch, not only `source: ingest` ones.
        #[arg(long)]
        all: bool,
        /// Use the LLM endpoint (deterministic otherwise).
        #[arg(long)]
        curate: bool,
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Rebuild `_derived/catalog.db` from the Markdown.
    Reindex {
        #[command(flatten)]
        f: ForestArg,
        #[arg(long)]
        json: bool,
    },
    /// Entry search: scent-weighted BM25 fused with the canopy when the
    /// forest has a current one, x heat (the same ranking as MCP `locate`).
    Locate(locate_cmd::LocateArgs),
    /// The Canopy: the optional vector layer of locate (`_derived/canopy/`).
    Canopy {
        #[command(subcommand)]
        cmd: canopy_cmd::CanopyCmd,
    },
    /// Maintenance: evaporation, link lifecycle, landmarks, health, cache eviction, gc.
    Ranger {
        #[command(subcommand)]
        cmd: RangerCmd,
    },
    /// Health report (dialect §5.3 + summary_stale + per-source counts).
    Health {
        #[command(flatten)]
        f: ForestArg,
        /// Exit 1 unless the forest is healthy (for CI and monitoring).
        #[arg(long)]
        check: bool,
        #[arg(long)]
        json: bool,
    },
    /// Fetch nodes' payloads (BONE) into the hash-validated cache, or print their bodies (FLESH).
    Fetch {
        #[command(flatten)]
        f: ForestArg,
        /// Node ids.
        #[arg(required = true)]
        ids: Vec<String>,
        /// Print each node's body (inline, cached or read live at the source) instead.
        #[arg(long)]
        body: bool,
        #[arg(long)]
        json: bool,
    },
    /// Fetch every remote payload under a branch (default: the whole forest) into the cache.
    Prefetch {
        #[command(flatten)]
        f: ForestArg,
        /// Branch id or folder (`_index` or empty = whole forest).
        #[arg(default_value = "")]
        scope: String,
        #[arg(long)]
        json: bool,
    },
    /// Pheromone trails: deposit and inspect heat.
    Heat {
        #[command(subcommand)]
        cmd: HeatCmd,
    },
    /// Pack the forest into one `.forest` file, or restore one (either engine's).
    Snapshot {
        #[command(subcommand)]
        cmd: snapshot_cmd::SnapshotCmd,
    },
    /// Bearer tokens of `serve --transport http` (create, list, revoke).
    Token {
        #[command(subcommand)]
        cmd: token_cmd::TokenCmd,
    },
    #[command(flatten)]
    Vine(vine_cmd::VineCmd),
    #[command(flatten)]
    Hunt(hunt_cmd::HuntCmd),
    /// Write the JSON Schemas of every report to a directory (or --check them).
    Schemas {
        #[arg(long, default_value = "schemas")]
        out: PathBuf,
        /// Fail when the files on disk differ from the generated ones.
        #[arg(long)]
        check: bool,
    },
}

#[derive(Subcommand)]
enum RangerCmd {
    /// One cycle; one audited commit or none.
    Run {
        #[command(flatten)]
        f: ForestArg,
        /// The clock (RFC 3339), for reproducible runs and tests.
        #[arg(long)]
        now: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Run on a cron schedule until SIGTERM/SIGINT (holds the lock only while running).
    Daemon {
        #[command(flatten)]
        f: ForestArg,
        /// Cron expression, e.g. "0 3 * * *".
        #[arg(long)]
        schedule: String,
    },
}

#[derive(Subcommand)]
enum HeatCmd {
    /// Add heat to nodes (capped at 1.0).
    Deposit {
        #[command(flatten)]
        f: ForestArg,
        ids: Vec<String>,
        #[arg(long, default_value_t = 0.1)]
        amount: f64,
        #[arg(long)]
        session: Option<String>,
    },
    /// Heat statistics and the hottest nodes.
    Show {
        #[command(flatten)]
        f: ForestArg,
        #[arg(long)]
        json: bool,
    },
}

/// mimalloc instead of glibc malloc: a 10^6-file adopt allocates on the
/// converter threads and frees on the committing thread, and glibc's
/// per-thread arenas kept that memory (anonymous RSS grew ~2 MiB per batch).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    init_tracing();
    let cli = Cli::parse();
    let server = matches!(&cli.cmd, Cmd::Vine(vine_cmd::VineCmd::Serve { .. }))
        || matches!(&cli.cmd, Cmd::Ranger { cmd: RangerCmd::Daemon { .. } });
    if !server {
        quiet_on_closed_stdout();
    }
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let code = exit_code_for(&e);
            eprintln!("forest: {}", render::error_chain(e.as_ref()));
            ExitCode::from(code)
        }
    }
}

/// `forest locate … | head` ends quietly, like any Unix filter: a closed
/// stdout ends the process (default SIGPIPE) instead of panicking in
/// `println!`. Not for the servers, whose sockets must not kill them.
fn quiet_on_closed_stdout() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Default log filter: our crates at `warn`, third-party targets (pdf_extract,
/// lopdf, html5ever, aws...) off unless `FOREST_LOG` asks for them.
const DEFAULT_LOG: &str = "off,forest=warn,forest_cli=warn,forest_gardener=warn,forest_convert=warn,\
forest_ranger=warn,forest_catalog=warn,forest_curator=warn,forest_storage=warn,forest_git=warn,forest_model=warn,forest_fs=warn";

fn init_tracing() {
    use std::io::IsTerminal;
    // Panics caught on converter threads are one report line each, never a backtrace.
    forest_convert::quiet_converter_panics();
    let filter = tracing_subscriber::EnvFilter::try_from_env("FOREST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG));
    // No ANSI colours in a log file, a pipe or journald.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Marker error: the directory is not a forest.
#[derive(Debug)]
struct NotForest(PathBuf);

impl std::fmt::Display for NotForest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "E_NOT_A_FOREST: {} is not a forest (no _index.md); run `forest init DIR` first", self.0.display())
    }
}
impl std::error::Error for NotForest {}

fn exit_code_for(e: &anyhow::Error) -> u8 {
    for cause in e.chain() {
        if cause.downcast_ref::<NotForest>().is_some() {
            return EXIT_NOT_FOREST;
        }
        if let Some(g) = cause.downcast_ref::<GitError>() {
            if g.code() == "E_LOCKED" {
                return EXIT_LOCKED;
            }
        }
        if let Some(forest_gardener::GardenError::Git(g)) = cause.downcast_ref::<forest_gardener::GardenError>() {
            if g.code() == "E_LOCKED" {
                return EXIT_LOCKED;
            }
        }
    }
    EXIT_ERROR
}

fn forest_root(f: &ForestArg) -> Result<PathBuf> {
    let root = std::fs::canonicalize(&f.forest).map_err(|_| NotForest(f.forest.clone()))?;
    if !root.join("_index.md").is_file() {
        return Err(NotForest(root).into());
    }
    Ok(root)
}

/// Streamed, not built as one string: a 10^6-file adopt's report lists a
/// million ids.
fn print_json<T: Serialize>(v: &T) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, v)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

fn run(cli: Cli) -> Result<u8> {
    match cli.cmd {
        Cmd::Init { dir, title, json } => cmd_init(&dir, &title, json),
        Cmd::Validate { f, json, deny_warnings } => cmd_validate(&f, json, deny_warnings),
        Cmd::Adopt(a) => cmd_adopt(a),
        Cmd::Sync { f, source, path, shard, store, prepared_only, g } => {
            cmd_sync(&f, source.as_deref(), path.as_deref(), shard.as_deref(), store.as_deref(), prepared_only, &g)
        }
        Cmd::Curate { f, pending: _, budget, json } => curate_cmd::cmd_curate(&f, budget, json),
        Cmd::Rollup { f, all, curate, dry_run, json } => cmd_rollup(&f, all, curate, dry_run, json),
        Cmd::Reindex { f, json } => cmd_reindex(&f, json),
        Cmd::Locate(a) => locate_cmd::run(a),
        Cmd::Canopy { cmd } => canopy_cmd::run(cmd),
        Cmd::Ranger { cmd: RangerCmd::Run { f, now, json } } => cmd_ranger_run(&f, now.as_deref(), json),
        Cmd::Ranger { cmd: RangerCmd::Daemon { f, schedule } } => cmd_ranger_daemon(&f, &schedule),
        Cmd::Health { f, check, json } => cmd_health(&f, check, json),
        Cmd::Fetch { f, ids, body, json } => {
            if body {
                fetch_cmd::cmd_fetch_bodies(&f, &ids, json)
            } else {
                fetch_cmd::cmd_fetch_payloads(&f, &ids, json)
            }
        }
        Cmd::Prefetch { f, scope, json } => fetch_cmd::cmd_prefetch(&f, &scope, json),
        Cmd::Heat { cmd: HeatCmd::Deposit { f, ids, amount, session } } => {
            let root = forest_root(&f)?;
            let mut trails = Trails::open(&root.join(TRAILS_PATH))?;
            trails.deposit(&ids, amount, session.as_deref().unwrap_or(""))?;
            Ok(0)
        }
        Cmd::Heat { cmd: HeatCmd::Show { f, json } } => cmd_heat_show(&f, json),
        Cmd::Snapshot { cmd } => snapshot_cmd::run(cmd),
        Cmd::Schemas { out, check } => schemas::write_or_check(&out, check),
        Cmd::Token { cmd } => token_cmd::run(cmd),
        Cmd::Vine(cmd) => vine_cmd::run(cmd),
        Cmd::Hunt(cmd) => hunt_cmd::run(cmd),
    }
}

fn cmd_validate(f: &ForestArg, json: bool, deny_warnings: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let report = validate_cmd::report(&root);
    if json {
        print_json(&report)?;
    } else {
        for i in &report.issues {
            println!("{i}");
        }
        println!("{} error(s), {} warning(s)", report.errors, report.warnings);
    }
    Ok(if report.errors > 0 || (deny_warnings && report.warnings > 0) { EXIT_ERROR } else { 0 })
}

fn cmd_adopt(a: AdoptArgs) -> Result<u8> {
    let AdoptArgs { f, g, .. } = &a;
    let spec = forest_gardener::AdoptSpec {
        source: a.source.clone(),
        name: a.name.clone(),
        dest: a.dest.clone(),
        content: a.content.clone(),
        archive: a.archive.clone(),
        endpoint_url: a.endpoint_url.clone(),
        path_style: a.path_style,
        follow_symlinks: a.follow_symlinks,
        rclone_config: a.rclone_config.clone(),
        record_only: a.record_only,
    };
    let root = forest_root(f)?;
    let _lock = WriterLock::acquire(&root)?;
    let git = GitForest::open(&root)?;
    let opts = run_options(g);
    let bar = progress::Bar::new();
    let report = with_curation(&root, &git, g, |hook| forest_gardener::adopt(&root, &git, &spec, &opts, &bar, hook))?;
    finish_garden(&report, g.json)
}

fn cmd_sync(
    f: &ForestArg,
    source: Option<&str>,
    path: Option<&str>,
    shard: Option<&str>,
    store: Option<&str>,
    prepared_only: bool,
    g: &GardenArgs,
) -> Result<u8> {
    let root = forest_root(f)?;
    let prepared = match store {
        Some(u) => Some(std::sync::Arc::new(forest_gardener::prepared::PreparedRun::open(u, prepared_only)?)),
        None => None,
    };
    if let Some(spec) = shard {
        return dist_cmd::worker(&root, spec, source, prepared, g);
    }
    let _lock = WriterLock::acquire(&root)?;
    let git = GitForest::open(&root)?;
    let opts = RunOptions { store: prepared.clone(), ..run_options(g) };
    let bar = progress::Bar::new();
    let report = with_curation_from(&root, &git, g, prepared.as_ref(), |hook| {
        forest_gardener::sync(&root, &git, source, path, &opts, &bar, hook)
    })?;
    finish_garden(&report, g.json)
}

fn cmd_rollup(f: &ForestArg, all: bool, curate: bool, dry_run: bool, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let _lock = WriterLock::acquire(&root)?;
    let git = GitForest::open(&root)?;
    let curator = if curate { Some(build_curator(&root)?) } else { None };
    let r = forest_gardener::rollup::rollup(&root, &git, curator.as_ref(), all, None, dry_run)?;
    if json {
        print_json(&r)?;
    } else {
        println!("rolled {} branch(es), {} deterministic, {} skipped", r.rolled.len(), r.fallbacks.len(), r.skipped);
    }
    Ok(0)
}

fn cmd_reindex(f: &ForestArg, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let started = std::time::Instant::now();
    let n = reindex(&root)?;
    let out = ReindexReport { version: 1, nodes: n, elapsed_ms: started.elapsed().as_millis() as u64 };
    if json {
        print_json(&out)?;
    } else {
        println!("reindexed {} nodes in {} ms", out.nodes, out.elapsed_ms);
    }
    Ok(0)
}

fn cmd_ranger_run(f: &ForestArg, now: Option<&str>, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let now = match now {
        Some(t) => {
            chrono::DateTime::parse_from_rfc3339(t)
                .with_context(|| format!("--now expects RFC 3339, got '{t}'"))?
                .timestamp_millis() as f64
                / 1000.0
        }
        None => chrono::Utc::now().timestamp_millis() as f64 / 1000.0,
    };
    let cfg = forest_ranger::RangerConfig::load(&root)?;
    let _lock = WriterLock::acquire(&root)?;
    let git = GitForest::open(&root)?;
    let mut r = forest_ranger::run(&root, &git, now, &cfg)?;
    let code = curate_cmd::into_report(curate_cmd::ranger_curation(&root, &git, &cfg), &mut r);
    if json {
        print_json(&r)?;
    } else {
        println!(
            "evaporation: {} decayed, {} removed; links: {} promoted, {} pruned; landmarks: {} (changed: {}); {}",
            r.evaporation.decayed,
            r.evaporation.removed,
            r.links.promoted.len(),
            r.links.pruned.len(),
            r.landmarks.landmarks,
            r.landmarks.changed,
            match r.gc {
                forest_ranger::GcStatus::Ran => "git gc --auto ran",
                forest_ranger::GcStatus::Unavailable => "git gc unavailable",
            }
        );
        if let Some(c) = &r.curation {
            println!("curation: {}", curate_cmd::summary_line(c));
        }
    }
    Ok(code)
}

fn cmd_ranger_daemon(f: &ForestArg, schedule: &str) -> Result<u8> {
    let root = forest_root(f)?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    forest_ranger::install_signal_handlers(stop.clone())?;
    let summary = forest_ranger::daemon(&root, schedule, stop, |r| match r {
        Ok(rep) => {
            eprintln!(
                "ranger: run done ({} promoted, {} pruned, commit {:?})",
                rep.links.promoted.len(),
                rep.links.pruned.len(),
                rep.commit
            );
            curate_cmd::daemon_curation(&root);
        }
        Err(e) => eprintln!("ranger: run failed: {}", render::error_chain(e)),
    })?;
    eprintln!(
        "ranger daemon stopped after {} run(s), {} locked, {} failed",
        summary.runs, summary.locked, summary.failed
    );
    Ok(0)
}

fn cmd_health(f: &ForestArg, check: bool, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let catalog = open_catalog(&root)?;
    let trails = Trails::open(&root.join(TRAILS_PATH))?;
    let h = forest_ranger::health(&root, &catalog, &trails)?;
    // local sources whose folder is gone (a sync of them reads nothing)
    let missing: Vec<String> = forest_gardener::config::GardenerConfig::load(&root)
        .map(|c| c.sources)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|s| {
            let p = forest_gardener::config::local_path(&s.uri)?;
            (!p.exists()).then(|| format!("{} ({})", s.name, p.display()))
        })
        .collect();
    let (verdict, _) = render::health_verdict(&h, &missing);
    if json {
        print_json(&h)?;
    } else {
        print!("{}", render::health(&h, &missing));
    }
    Ok(if h.lint.errors > 0 || (check && verdict != "healthy") { EXIT_ERROR } else { 0 })
}

fn cmd_heat_show(f: &ForestArg, json: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let trails = Trails::open(&root.join(TRAILS_PATH))?;
    let stats = trails.stats()?;
    let mut rows = trails.persistent_rows()?;
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    rows.truncate(20);
    let out = HeatReport {
        version: 1,
        stats,
        hottest: rows.into_iter().map(|(id, heat, updated)| HeatRow { id, heat, updated }).collect(),
    };
    if json {
        print_json(&out)?;
    } else {
        println!("rows {}  max {:.4}  mean {:.4}", out.stats.rows, out.stats.max, out.stats.mean);
        for r in &out.hottest {
            println!("{:.4}  {}", r.heat, r.id);
        }
    }
    Ok(0)
}

/// `forest reindex --json`.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ReindexReport {
    /// Report shape version.
    pub version: u32,
    /// Nodes indexed.
    pub nodes: usize,
    /// Wall time.
    pub elapsed_ms: u64,
}

/// `forest heat show --json`.
#[derive(Serialize, schemars::JsonSchema)]
pub struct HeatReport {
    /// Report shape version.
    pub version: u32,
    /// Persistent-scope statistics.
    pub stats: forest_catalog::HeatStats,
    /// Up to 20 hottest nodes.
    pub hottest: Vec<HeatRow>,
}

/// One heat row.
#[derive(Serialize, schemars::JsonSchema)]
pub struct HeatRow {
    /// Node id.
    pub id: String,
    /// Persistent heat.
    pub heat: f64,
    /// Unix seconds of the last deposit/decay.
    pub updated: f64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct InitReport {
    version: u32,
    forest: String,
    commit: String,
}

fn cmd_init(dir: &Path, title: &str, json: bool) -> Result<u8> {
    let git = forest_gardener::init::init_forest(dir, title).context("init")?;
    let head = git.head_oid()?.map(|o| o.to_string()).unwrap_or_default();
    if json {
        print_json(&InitReport { version: 1, forest: dir.display().to_string(), commit: head })?;
    } else {
        println!("initialised forest '{title}' at {}", dir.display());
    }
    Ok(0)
}
