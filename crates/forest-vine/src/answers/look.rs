//! The answer of `look`: one digest or a batch of them.

use serde::Serialize;

use super::sql::{QueryManual, Sample};
use crate::primitive::Answer;
use forest_model::NodeId;

/// An outbound edge in a digest.
#[derive(Debug, Serialize)]
pub struct EdgeOut {
    /// Relation.
    pub rel: String,
    /// Target id.
    pub target: String,
    /// The target's summary, clipped.
    pub target_summary: String,
}

/// An inbound edge in a digest (relation named from this side).
#[derive(Debug, Serialize)]
pub struct EdgeIn {
    /// Inverse relation.
    pub rel: String,
    /// Source id.
    pub source: String,
}

/// A child of a branch in a digest.
#[derive(Debug, Serialize)]
pub struct Child {
    /// Its id.
    pub id: String,
    /// Its summary, clipped.
    pub summary: String,
}

/// A digest's statistics.
#[derive(Debug, Serialize)]
pub struct Stats {
    /// Tokens of the body.
    pub body_tokens: i64,
    /// Edges in and out.
    pub degree: usize,
    /// Its heat.
    pub heat: f64,
}

/// `look` of one node: its digest (≤500 tokens). A field is `None` when
/// the node has none or `fields` left it out; frontmatter values are
/// passed as they are.
#[derive(Debug, Default, Serialize)]
pub struct Digest {
    /// The node.
    pub id: NodeId,
    /// Dialect type.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// Title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Tags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Confidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// `created` as the frontmatter holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<serde_json::Value>,
    /// `updated` as the frontmatter holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated: Option<serde_json::Value>,
    /// `source` as the frontmatter holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<serde_json::Value>,
    /// Aliases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aliases: Option<Vec<String>>,
    /// Where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Declared language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Outbound edges, hottest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges_out: Option<Vec<EdgeOut>>,
    /// Inbound edges, hottest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges_in: Option<Vec<EdgeIn>>,
    /// A branch's children.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<Child>>,
    /// A branch's `## Cross trails`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_trails: Option<Vec<String>>,
    /// A branch's coverage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<forest_catalog::Coverage>,
    /// A leaf's section headers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline: Option<Vec<String>>,
    /// A dataset's tables and example queries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_manual: Option<QueryManual>,
    /// A dataset's first rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_rows: Option<Sample>,
    /// `truncated_fields` when the clip dropped `sample_rows`: the wire
    /// names them in its place.
    #[serde(rename = "truncated_fields", skip_serializing_if = "Option::is_none")]
    pub truncated_fields_in_place: Option<Vec<&'static str>>,
    /// A dataset's notes, clipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
    /// Something was clipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// The lists that lost items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_fields: Option<Vec<&'static str>>,
}

impl Digest {
    /// Leave out every field but `id` that `keep` refuses.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        macro_rules! drop_unkept {
            ($($f:ident = $k:literal),*) => {$(
                if !keep($k) {
                    self.$f = None;
                }
            )*};
        }
        drop_unkept!(
            node_type = "type",
            title = "title",
            summary = "summary",
            tags = "tags",
            confidence = "confidence",
            created = "created",
            updated = "updated",
            source = "source",
            aliases = "aliases",
            origin = "origin",
            lang = "lang",
            edges_out = "edges_out",
            edges_in = "edges_in",
            children = "children",
            cross_trails = "cross_trails",
            coverage = "coverage",
            outline = "outline",
            query_manual = "query_manual",
            sample_rows = "sample_rows",
            notes = "notes",
            stats = "stats"
        );
    }
}

/// `look` of a list of ids.
#[derive(Debug, Serialize)]
pub struct Digests {
    /// Digests, in request order.
    pub nodes: Vec<Digest>,
    /// Ids with no node.
    pub missing: Vec<String>,
    /// Ids dropped to fit the batch budget.
    pub dropped: Vec<String>,
    /// Some were dropped.
    pub truncated: bool,
}

/// What `look` answers.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum LookAnswer {
    /// One digest.
    One(Box<Digest>),
    /// A batch.
    Many(Digests),
}

impl Answer for LookAnswer {}
