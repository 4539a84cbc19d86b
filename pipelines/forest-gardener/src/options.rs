//! What a caller passes into a run: [`RunOptions`], the [`Progress`] sink
//! and the [`Curate`] hook with its [`Draft`]s. Low in the module order:
//! the stages read these types, so they live apart from `entry.rs` (which
//! re-exports them) and import only [`crate::prepared`]'s store handle.

use forest_model::node::Node;

/// Default [`RunOptions::batch_bytes`]: 32 MiB, estimated from source
/// bytes when a batch is taken and measured on the converted bodies while
/// it converts. Peak RSS grows ~4.5x the budget on top of the converters'
/// transient memory (a 5,882-file Python tree: 360 / 435 / 590 MiB at
/// 16 / 32 / 64 MiB, bench/memory.sh).
pub const DEFAULT_BATCH_BYTES: u64 = 32 << 20;

/// Default [`RunOptions::convert_bytes`]: 128 MiB of converters'
/// transient memory at once (expected per file by format,
/// `stages::transient`; measured per format in bench/README.md).
pub const DEFAULT_CONVERT_BYTES: u64 = 128 << 20;

/// Knobs of one run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Write nothing; report the plan.
    pub dry_run: bool,
    /// Files per checkpoint commit.
    pub commit_every: usize,
    /// Bytes in flight per checkpoint commit: a batch also ends once the
    /// files it holds add up to this many bytes (source bytes weighed by
    /// what they put in flight: text twice, compressed files and HTML more, see
    /// `stages::reconcile::in_flight_bytes`), so a corpus of large documents
    /// (manuals, scans, gzipped changelogs) keeps at most two batches of
    /// conversions in memory however many of them fit under `commit_every`.
    pub batch_bytes: u64,
    /// Transient bytes of the conversions running beside each other: a
    /// conversion waits while the others' expected cost (by format and
    /// size, `stages::transient`) and its own would pass this; one alone
    /// always runs.
    pub convert_bytes: u64,
    /// Allow marking more than `max_stale_fraction` of a source stale.
    pub allow_mass_stale: bool,
    /// Distributed ingest: look files up in this prepared store before
    /// converting or curating them ([`crate::prepared`]).
    pub store: Option<std::sync::Arc<crate::prepared::PreparedRun>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            dry_run: false,
            commit_every: 5000,
            batch_bytes: DEFAULT_BATCH_BYTES,
            convert_bytes: DEFAULT_CONVERT_BYTES,
            allow_mass_stale: false,
            store: None,
        }
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
    /// A later phase over rows (the canopy's build): `done` of `total`.
    fn rows(&self, _what: &str, _done: u64, _total: u64) {}
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

/// Why a curate hook failed on one draft: whatever the plug-in's own error
/// is (reported per file with its causes, never fatal).
pub type CurateError = Box<dyn std::error::Error + Send + Sync>;

/// The curate hook (the Curator plugs in here; deterministic runs pass None).
pub trait Curate: Sync {
    /// Enrich a draft in place; errors are reported per file, never fatal.
    fn curate(&self, draft: &mut Draft) -> Result<(), CurateError>;
    /// Requests worth keeping in flight (the curate stage runs this many
    /// drafts at once on its own threads, independent of the CPU pool).
    fn concurrency(&self) -> usize {
        1
    }
}
