//! The answers of the catalog listings and of `move` and `view`
//! (`scan`, `coverage`, `history`, `calendar`).

use serde::Serialize;

use crate::budget::Dropped;
use crate::primitive::Answer;
use forest_model::NodeId;

/// One neighbour `move` lists.
#[derive(Debug, Serialize)]
pub struct Neighbor {
    /// Its id.
    pub id: String,
    /// The relation (inverse name when inbound; `children`).
    pub rel: String,
    /// `out` or `in`.
    pub direction: &'static str,
    /// Its dialect type (`?` when the catalog has no row).
    #[serde(rename = "type")]
    pub node_type: String,
    /// Its summary.
    pub summary: String,
    /// Its heat.
    pub heat: f64,
}

/// `move`.
#[derive(Debug, Serialize)]
pub struct Moved {
    /// Neighbours, hottest first.
    pub neighbors: Vec<Neighbor>,
    /// Some were dropped to fit the budget.
    pub truncated: bool,
    /// What was dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
}

/// One commit `history` lists.
#[derive(Debug, Serialize)]
pub struct HistoryEntry {
    /// The commit id.
    pub commit: String,
    /// Author date (ISO 8601).
    pub at: String,
    /// Subject line (redacted for a scoped caller when needed).
    pub message: String,
    /// The `Station-Principal` trailer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The primitive of a Vine commit, else the subject.
    pub action: String,
}

/// `history`.
#[derive(Debug, Serialize)]
pub struct History {
    /// The node.
    pub id: NodeId,
    /// Commits, newest first.
    pub entries: Vec<HistoryEntry>,
    /// Entries returned.
    pub returned: usize,
    /// More commits exist than were returned.
    pub truncated: bool,
    /// What the budget dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
    /// The oldest commit returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oldest: Option<String>,
}

/// The dated span `calendar` covers.
#[derive(Debug, Serialize)]
pub struct Range {
    /// First date.
    pub first: Option<String>,
    /// Last date.
    pub last: Option<String>,
    /// Dated nodes.
    pub nodes: usize,
}

/// One period `calendar` counts.
#[derive(Debug, Serialize)]
pub struct Bucket {
    /// Its label (`2024-03`, `2024-W09`, ...).
    pub period: String,
    /// Its first day.
    pub since: String,
    /// Its last day.
    pub until: String,
    /// Nodes dated in it.
    pub nodes: usize,
}

/// `calendar`.
#[derive(Debug, Serialize)]
pub struct Calendar {
    /// `created` or `updated`.
    pub date_field: String,
    /// `day`, `week`, `month` or `year`.
    pub granularity: String,
    /// The dated span.
    pub range: Range,
    /// Periods, most recent first.
    pub buckets: Vec<Bucket>,
    /// More periods exist than were returned.
    pub truncated: bool,
    /// Nodes without the date.
    pub undated: usize,
    /// The scope asked (when one was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Option<String>>,
    /// The window asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<forest_catalog::Window>,
    /// What the budget dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
}

/// Counts by name, most first (a JSON object in that order).
#[derive(Debug, Default)]
pub struct Counts(pub Vec<(String, usize)>);

impl Serialize for Counts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, n) in &self.0 {
            m.serialize_entry(k, n)?;
        }
        m.end()
    }
}

/// One root `coverage` describes.
#[derive(Debug, Serialize)]
pub struct Root {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// `branch` or `note`.
    pub kind: String,
    /// Nodes under it (itself included).
    pub nodes: usize,
    /// Branches among them.
    pub branches: usize,
    /// First date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Last date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// The origin its nodes share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Nodes without an origin when others have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_origin: Option<usize>,
}

/// `coverage`.
#[derive(Debug, Serialize)]
pub struct CoverageMap {
    /// `created` or `updated`.
    pub date_field: String,
    /// Roots, largest first.
    pub roots: Vec<Root>,
    /// Nodes in scope.
    pub total: usize,
    /// Nodes by type.
    pub types: Counts,
    /// Nodes by source.
    pub sources: Counts,
    /// Nodes without the date.
    pub undated: usize,
    /// `_meta` nodes.
    pub system: usize,
    /// The scope asked (when one was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Option<String>>,
    /// Roots were dropped to fit the budget.
    pub truncated: bool,
    /// What was dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
}

/// `view`'s header (the server adds the bytes as an image block).
#[derive(Debug, Serialize)]
pub struct Viewed {
    /// The node.
    pub id: NodeId,
    /// The image file.
    pub path: String,
    /// Its media type.
    pub media_type: &'static str,
    /// Its size in bytes.
    pub size: u64,
    /// Its recorded hash.
    pub payload_hash: String,
}

/// One field of a `scan` row, typed as the catalog holds it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Field {
    /// A string.
    Str(String),
    /// A string the node may lack (null).
    OptStr(Option<String>),
    /// A list of strings.
    List(Vec<String>),
    /// A real.
    Real(f64),
    /// An integer.
    Int(i64),
    /// A branch's coverage.
    Coverage(forest_catalog::Coverage),
}

impl Field {
    /// The text a scan filter compares: a string as it is, anything else
    /// as its JSON text.
    pub fn text(&self) -> String {
        match self {
            Field::Str(s) | Field::OptStr(Some(s)) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        }
    }
}

/// One node `scan` lists: its id, then the fields asked for in the order
/// asked, then `system: true` for a `_meta` node.
#[derive(Debug)]
pub struct ScanItem {
    /// Its id.
    pub id: NodeId,
    /// The fields asked for (`id` aside), in the order asked.
    pub fields: Vec<(String, Field)>,
    /// A `_meta` node.
    pub system: bool,
}

impl Serialize for ScanItem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &self.id)?;
        for (k, v) in &self.fields {
            m.serialize_entry(k, v)?;
        }
        if self.system {
            m.serialize_entry("system", &true)?;
        }
        m.end()
    }
}

/// `scan`.
#[derive(Debug, Serialize)]
pub struct Scanned {
    /// Nodes, hottest first (or by id after a cursor).
    pub nodes: Vec<ScanItem>,
    /// More nodes remain.
    pub truncated: bool,
    /// The window asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<forest_catalog::Window>,
    /// Nodes that passed the filters.
    pub total: usize,
    /// Nodes returned.
    pub returned: usize,
    /// The cursor of the next page (cursor mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<NodeId>,
    /// What the budget dropped (not in cursor mode: the rest is the next page).
    #[serde(flatten)]
    pub dropped: Dropped,
}

impl Answer for Moved {}
impl Answer for History {}
impl Answer for Calendar {}
impl Answer for CoverageMap {}
impl Answer for Viewed {}
impl Answer for Scanned {}
