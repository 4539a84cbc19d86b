//! The answers of the writes (`plant`, `graft`, `prune`, `transplant`)
//! and of `close_session`.

use serde::Serialize;

use super::flag::is_false;
use crate::primitive::Answer;
use forest_model::NodeId;

/// A `{rel, target}` link an answer names.
#[derive(Debug, Clone, Serialize)]
pub struct LinkRef {
    /// Relation.
    pub rel: String,
    /// Target id.
    pub target: String,
}

/// `plant` of one node.
#[derive(Debug, Serialize)]
pub struct Planted {
    /// The node (the existing one under `if_absent`).
    pub id: Option<String>,
    /// False when `if_absent` found it.
    pub created: bool,
    /// The commit, `None` when nothing was written.
    pub commit: Option<String>,
    /// Its trail.
    pub trail: Option<Vec<String>>,
}

/// `plant` of a batch.
#[derive(Debug, Serialize)]
pub struct PlantedBatch {
    /// Ids created.
    pub created: Vec<String>,
    /// Ids found under `if_absent`.
    pub existing: Vec<String>,
    /// How many were created.
    pub count: usize,
    /// The commit, `None` when nothing was written.
    pub commit: Option<String>,
}

/// A valid `plant` dry run of a batch.
#[derive(Debug, Serialize)]
pub struct PlantCheckedBatch {
    /// Always true (a refusal is an error).
    pub valid: bool,
    /// Nodes checked.
    pub count: usize,
    /// Always true.
    pub dry_run: bool,
}

/// A valid `plant` dry run of one node.
#[derive(Debug, Serialize)]
pub struct PlantChecked {
    /// The node.
    pub id: Option<String>,
    /// Always true (a refusal is an error).
    pub valid: bool,
    /// Always true.
    pub dry_run: bool,
}

/// What `plant` answers.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum PlantAnswer {
    /// One node.
    One(Planted),
    /// A batch.
    Batch(PlantedBatch),
    /// A dry run of one node.
    Checked(PlantChecked),
    /// A dry run of a batch.
    CheckedBatch(PlantCheckedBatch),
}

/// `graft`.
#[derive(Debug, Serialize)]
pub struct Grafted {
    /// The node.
    pub id: String,
    /// The commit, `None` when the patch changed nothing.
    pub commit: Option<String>,
    /// Links re-added (reinforced, not duplicated).
    pub fortified: Vec<LinkRef>,
    /// Its trail.
    pub trail: Vec<String>,
    /// The body changed and the summary was not set with it.
    #[serde(skip_serializing_if = "is_false")]
    pub summary_stale: bool,
}

/// `prune`.
#[derive(Debug, Serialize)]
pub struct Pruned {
    /// The node deleted.
    pub id: NodeId,
    /// Always true.
    pub pruned: bool,
    /// Links to it removed from other nodes.
    pub backlinks_removed: usize,
    /// Where its payload went (`_derived/graveyard/...`).
    pub payload_moved: Option<String>,
    /// The commit.
    pub commit: Option<String>,
}

/// `transplant`.
#[derive(Debug, Serialize)]
pub struct Transplanted {
    /// The new id.
    pub id: String,
    /// The old id.
    pub moved_from: String,
    /// Links to it rewritten in other nodes.
    pub backlinks_rewritten: usize,
    /// The commit.
    pub commit: Option<String>,
    /// Its new trail.
    pub trail: Vec<String>,
    /// The old id did not fit the alias list.
    #[serde(skip_serializing_if = "is_false")]
    pub alias_clipped: bool,
}

/// A hunt's part D metrics (over the session's calls, in order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// `look`/`move` calls before the first `pick`/`query`.
    pub hops_to_banana: Option<usize>,
    /// Calls before the first `pick`/`query` of an answer node.
    pub trail_len: Option<usize>,
    /// Tokens answered in all.
    pub tokens_to_banana: usize,
    /// Calls made.
    pub calls: usize,
    /// The answer nodes named.
    pub answer_nodes: Vec<String>,
}

/// How a hunt ended.
#[derive(Debug, Serialize)]
pub struct Outcome {
    /// The caller's verdict.
    pub success: bool,
    /// The nodes that answered.
    pub answer_nodes: Vec<String>,
}

/// `close_session` (also the trace's closing line).
#[derive(Debug, Serialize)]
pub struct Closed {
    /// When (seconds since the epoch).
    pub ts: f64,
    /// The session closed.
    pub session: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Its metrics.
    pub metrics: Metrics,
    /// Answer nodes worth a shortcut.
    pub suggest_shortcuts: Vec<String>,
}

impl Answer for PlantAnswer {}
impl Answer for Grafted {}
impl Answer for Pruned {}
impl Answer for Transplanted {}
impl Answer for Closed {}
