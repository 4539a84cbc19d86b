//! `forest`: a thin binary over the library crates. Data and `--json` go to
//! stdout, progress and logs to stderr. Exit codes (DESIGN §9): 0 ok,
//! 1 error, 3 partial, 10 not a forest, 11 locked.

mod canopy_cmd;
mod cli;
mod curate_cmd;
mod dist_cmd;
mod fetch_cmd;
mod garden_cmd;
mod health_cmd;
mod heat_cmd;
mod hunt_cmd;
mod ingest_cmd;
mod init_cmd;
mod locate_cmd;
mod progress;
mod ranger_cmd;
mod reindex_cmd;
mod render;
mod rollup_cmd;
mod schemas;
mod snapshot_cmd;
mod token_cmd;
mod validate_cmd;
mod vine_cmd;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

use cli::{exit_code_for, ForestArg};

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
    Adopt(ingest_cmd::AdoptArgs),
    /// Re-walk recorded sources (or one file) and reconcile.
    Sync(ingest_cmd::SyncArgs),
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
        budget: Option<forest_derived::curation::Budget>,
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
        cmd: ranger_cmd::RangerCmd,
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
        cmd: heat_cmd::HeatCmd,
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

/// mimalloc instead of glibc malloc: a 10^6-file adopt allocates on the
/// converter threads and frees on the committing thread, and glibc's
/// per-thread arenas kept that memory (anonymous RSS grew ~2 MiB per batch).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    init_tracing();
    let cli = Cli::parse();
    let server = matches!(&cli.cmd, Cmd::Vine(vine_cmd::VineCmd::Serve { .. }))
        || matches!(&cli.cmd, Cmd::Ranger { cmd: ranger_cmd::RangerCmd::Daemon { .. } });
    if !server {
        quiet_on_closed_stdout();
    }
    if matches!(&cli.cmd, Cmd::Locate(_)) || (matches!(&cli.cmd, Cmd::Vine(_)) && !server) {
        small_pages_only();
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

/// A one-query process (`locate`, the Vine's verbs) lives for tens of
/// milliseconds, and mimalloc asks for transparent huge pages: each fresh
/// 2 MiB page is zeroed on first touch however little of it is used
/// (`clear_page_erms` was 17% of a hybrid `locate`'s samples at 10^6
/// nodes). With 4 KiB pages the same 50 queries took 3.15 s of CPU
/// instead of 3.39-3.65 s and the slowest of 300 93-179 ms instead of
/// 167-223 ms; p50 and p95 moved within their noise.
fn small_pages_only() {
    #[cfg(target_os = "linux")]
    // SAFETY: a process-wide flag for this process alone; no memory passed.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
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

fn run(cli: Cli) -> Result<u8> {
    match cli.cmd {
        Cmd::Init { dir, title, json } => init_cmd::run(&dir, &title, json),
        Cmd::Validate { f, json, deny_warnings } => validate_cmd::run(&f, json, deny_warnings),
        Cmd::Adopt(a) => ingest_cmd::adopt(a),
        Cmd::Sync(a) => ingest_cmd::sync(&a),
        Cmd::Curate { f, pending: _, budget, json } => curate_cmd::cmd_curate(&f, budget, json),
        Cmd::Rollup { f, all, curate, dry_run, json } => rollup_cmd::run(&f, all, curate, dry_run, json),
        Cmd::Reindex { f, json } => reindex_cmd::run(&f, json),
        Cmd::Locate(a) => locate_cmd::run(a),
        Cmd::Canopy { cmd } => canopy_cmd::run(cmd),
        Cmd::Ranger { cmd } => ranger_cmd::run(cmd),
        Cmd::Health { f, check, json } => health_cmd::run(&f, check, json),
        Cmd::Fetch { f, ids, body, json } if body => fetch_cmd::cmd_fetch_bodies(&f, &ids, json),
        Cmd::Fetch { f, ids, body: _, json } => fetch_cmd::cmd_fetch_payloads(&f, &ids, json),
        Cmd::Prefetch { f, scope, json } => fetch_cmd::cmd_prefetch(&f, &scope, json),
        Cmd::Heat { cmd } => heat_cmd::run(cmd),
        Cmd::Snapshot { cmd } => snapshot_cmd::run(cmd),
        Cmd::Schemas { out, check } => schemas::write_or_check(&out, check),
        Cmd::Token { cmd } => token_cmd::run(cmd),
        Cmd::Vine(cmd) => vine_cmd::run(cmd),
        Cmd::Hunt(cmd) => hunt_cmd::run(cmd),
    }
}
