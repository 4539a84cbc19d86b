//! The answers of `locate`, `sniff` and `harvest`, and the closing
//! fields of a windowed read.

use serde::Serialize;

use super::flag::is_false;
use crate::budget::Dropped;
use crate::primitive::Answer;

/// The fields a windowed read adds at its end: the window, what it left
/// out, and on an empty answer why (also a plain `locate`'s empty answer:
/// `searched` and `hint`).
#[derive(Debug, Default, Serialize)]
pub struct WindowTail {
    /// The window asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<forest_catalog::Window>,
    /// Undated nodes the window left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undated_excluded: Option<i64>,
    /// Nodes searched (an empty answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched: Option<i64>,
    /// Nodes inside the window (an empty answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_window: Option<i64>,
    /// Why nothing came back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `locate`.
#[derive(Debug, Serialize)]
pub struct Located {
    /// Ranked hits.
    pub results: Vec<forest_catalog::LocateItem>,
    /// Some were dropped to fit the budget.
    pub truncated: bool,
    /// What was dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
    /// A note on how the ranking ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The window and the empty answer's fields.
    #[serde(flatten)]
    pub tail: WindowTail,
}

/// One matching line `sniff` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Match {
    /// Its section header, `None` before the first.
    pub section: Option<String>,
    /// Its 1-based line.
    pub line: usize,
    /// The text around the match.
    pub snippet: String,
}

/// One node `sniff` found.
#[derive(Debug, Serialize)]
pub struct SniffHit {
    /// Its id.
    pub id: String,
    /// Its dialect type.
    #[serde(rename = "type")]
    pub node_type: String,
    /// Its title.
    pub title: String,
    /// Its trail.
    pub trail: Vec<String>,
    /// Terms hit, matches and heat combined.
    pub score: f64,
    /// Its heat.
    pub heat: f64,
    /// Tokens of its body.
    pub body_tokens: i64,
    /// Matching lines in all.
    pub match_count: usize,
    /// More lines matched than are shown.
    pub truncated_matches: bool,
    /// Up to three matching lines.
    pub matches: Vec<Match>,
    /// A branch's hit, ranked after the leaves.
    #[serde(skip_serializing_if = "is_false")]
    pub demoted: bool,
}

/// `sniff`.
#[derive(Debug, Serialize)]
pub struct Sniffed {
    /// Hits, best first.
    pub results: Vec<SniffHit>,
    /// Nodes whose bodies were read.
    pub scanned_nodes: usize,
    /// More nodes matched than were returned.
    pub truncated: bool,
    /// What the budget dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
    /// The window and the empty answer's fields.
    #[serde(flatten)]
    pub tail: WindowTail,
}

/// What `harvest` attaches of one node: its whole body, a matched
/// section, or (a long body without matched sections) its outline.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// The whole body (short enough).
    Whole {
        /// Always `None`.
        section: Option<String>,
        /// The body.
        body: String,
        /// Its tokens.
        body_tokens: usize,
    },
    /// A long body's outline and how to read it.
    Outline {
        /// Always `None`.
        section: Option<String>,
        /// Its section headers (first page's).
        outline: Option<Vec<String>>,
        /// Tokens of its first page.
        body_tokens: usize,
        /// How to page it.
        hint: Option<String>,
    },
    /// One matched section.
    Section {
        /// The section.
        section: String,
        /// Its text.
        body: Option<String>,
        /// Its tokens.
        body_tokens: Option<usize>,
    },
}

/// One node `harvest` returns.
#[derive(Debug, Serialize)]
pub struct HarvestItem {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its dialect type.
    #[serde(rename = "type")]
    pub node_type: String,
    /// Its trail.
    pub trail: Vec<String>,
    /// Its summary.
    pub summary: String,
    /// The fused rank score.
    pub score: f64,
    /// `locate`, `sniff` or both.
    pub found_by: Vec<&'static str>,
    /// Tokens of its body.
    pub body_tokens: i64,
    /// Matching lines.
    pub matches: Vec<Match>,
    /// Its content.
    pub content: Vec<Content>,
    /// `created`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// `updated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    /// The live nodes that supersede it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<Vec<String>>,
}

/// A superseded node `harvest` left out.
#[derive(Debug, Serialize)]
pub struct Superseded {
    /// Its id.
    pub id: String,
    /// The nodes that supersede it.
    pub by: Vec<String>,
}

/// `harvest`.
#[derive(Debug, Serialize)]
pub struct Harvested {
    /// The question.
    pub query: String,
    /// The terms sniffed.
    pub terms: Vec<String>,
    /// Evidence, best first.
    pub results: Vec<HarvestItem>,
    /// Some were dropped to fit the budget.
    pub truncated: bool,
    /// Superseded nodes left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_excluded: Option<Vec<Superseded>>,
    /// The window asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<forest_catalog::Window>,
    /// Undated nodes the window left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undated_excluded: Option<i64>,
    /// What the budget dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
    /// Nodes searched (an empty answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched: Option<i64>,
    /// Why nothing came back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Answer for Located {}
impl Answer for Sniffed {}
impl Answer for Harvested {}
