//! What the commands share: the forest argument, the options of a garden
//! run, the exit codes (DESIGN §9), the not-a-forest refusal and the JSON
//! printer.

use anyhow::Result;
use clap::Args;
use forest_git::GitError;
use serde::Serialize;
use std::path::PathBuf;

pub(crate) const EXIT_ERROR: u8 = 1;
pub(crate) const EXIT_PARTIAL: u8 = 3;
pub(crate) const EXIT_NOT_FOREST: u8 = 10;
pub(crate) const EXIT_LOCKED: u8 = 11;

#[derive(Args, Clone)]
pub(crate) struct ForestArg {
    /// Forest directory (default: $FOREST_DIR, else the current directory).
    #[arg(long, env = "FOREST_DIR", default_value = ".")]
    pub(crate) forest: PathBuf,
}

#[derive(Args, Clone)]
pub(crate) struct GardenArgs {
    /// Plan only: write nothing, print what would happen.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Checkpoint commit every N files.
    #[arg(long, default_value_t = 5000)]
    pub(crate) commit_every: usize,
    /// Also checkpoint once a batch's files add up to this many MiB
    /// (estimated from source bytes, then measured on the converted
    /// bodies; bounds memory on corpora of large documents).
    #[arg(long, default_value_t = forest_gardener::DEFAULT_BATCH_BYTES >> 20)]
    pub(crate) batch_mib: u64,
    /// Allow marking more than max_stale_fraction of a source stale.
    #[arg(long)]
    pub(crate) allow_mass_stale: bool,
    /// Curate new nodes with the LLM endpoint (MONKEYLLM_LLM_* / OPENAI_* env),
    /// propose closed-catalog links, then roll up branch summaries.
    #[arg(long)]
    pub(crate) curate: bool,
    /// Print the JSON report on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Marker error: the directory is not a forest.
#[derive(Debug)]
pub(crate) struct NotForest(PathBuf);

impl std::fmt::Display for NotForest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "E_NOT_A_FOREST: {} is not a forest (no _index.md); run `forest init DIR` first", self.0.display())
    }
}
impl std::error::Error for NotForest {}

pub(crate) fn exit_code_for(e: &anyhow::Error) -> u8 {
    for cause in e.chain() {
        if cause.downcast_ref::<NotForest>().is_some() {
            return EXIT_NOT_FOREST;
        }
        if let Some(g) = cause.downcast_ref::<GitError>() {
            if g.code() == forest_model::ErrorCode::Locked {
                return EXIT_LOCKED;
            }
        }
        if let Some(forest_gardener::GardenError::Git(g)) = cause.downcast_ref::<forest_gardener::GardenError>() {
            if g.code() == forest_model::ErrorCode::Locked {
                return EXIT_LOCKED;
            }
        }
    }
    EXIT_ERROR
}

pub(crate) fn forest_root(f: &ForestArg) -> Result<PathBuf> {
    let root = std::fs::canonicalize(&f.forest).map_err(|_| NotForest(f.forest.clone()))?;
    if !root.join("_index.md").is_file() {
        return Err(NotForest(root).into());
    }
    Ok(root)
}

/// Streamed, not built as one string: a 10^6-file adopt's report lists a
/// million ids.
pub(crate) fn print_json<T: Serialize>(v: &T) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, v)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}
