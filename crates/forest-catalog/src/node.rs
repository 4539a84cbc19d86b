//! The row the catalog stores for one node, as callers hand it over
//! (the catalog never parses Markdown). Its own module so the search
//! index and the catalog both depend on it and not on each other.

use forest_model::{Kind, NodeId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One frontmatter link as the catalog indexes it (dialect §1.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CatalogLink {
    /// Relation name (`related-to`, `part-of`, ...).
    pub rel: String,
    /// Target node id.
    pub target: String,
    /// Link-level confidence; 1.0 when absent.
    #[serde(default = "one")]
    pub confidence: f64,
}

fn one() -> f64 {
    1.0
}

impl CatalogLink {
    /// A structural link (confidence 1.0).
    pub fn new(rel: impl Into<String>, target: impl Into<String>) -> Self {
        CatalogLink { rel: rel.into(), target: target.into(), confidence: 1.0 }
    }
}

/// One `nodes` row: what a caller hands the catalog for one `.md` node
/// (already parsed; the catalog never parses Markdown) and what a read
/// returns (JSON columns decoded). On a write `kind`, `parent`, `trail`
/// and `stale` are the catalog's own (computed from `id`/`node_type`,
/// whatever the row holds is ignored) and `links`/`moved_from` go to the
/// `edges` and `moves` tables; a read fills the former and leaves the
/// latter empty, and gives an absent `created`/`updated` as `''`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeRow {
    /// Canonical id (path without `.md`).
    pub id: NodeId,
    /// A banana or a branch (from `node_type`).
    pub kind: Kind,
    /// Frontmatter `type`.
    #[serde(rename = "type")]
    pub node_type: String,
    /// Title (frontmatter, else body H1, else id).
    pub title: String,
    /// The scent (frontmatter summary, else first blockquote).
    pub summary: String,
    /// Frontmatter tags.
    pub tags: Vec<String>,
    /// Frontmatter aliases.
    pub aliases: Vec<String>,
    /// `created` as written (first 10 chars of a date).
    pub created: Option<String>,
    /// `updated` as written.
    pub updated: Option<String>,
    /// Node-level confidence (1.0 when absent).
    pub confidence: f64,
    /// `source` (manual | ingest | agent).
    pub source: Option<String>,
    /// `entity_kind` for entities.
    pub entity_kind: Option<String>,
    /// `payload` location.
    pub payload: Option<String>,
    /// `payload_type`.
    pub payload_type: Option<String>,
    /// `payload_hash` (sha256 hex).
    pub payload_hash: Option<String>,
    /// Parent index id (None for `_index`).
    pub parent: Option<String>,
    /// Trail of index ids.
    pub trail: Vec<String>,
    /// Branch coverage string (`"N bananas, M sub-branches"`).
    pub coverage: Option<String>,
    /// Estimated tokens of the body.
    pub body_tokens: i64,
    /// H2/H3 headings of the body.
    pub outline: Vec<String>,
    /// Re-embedding flag.
    pub stale: i64,
    /// sha256 hex of the raw `.md` body ('' for cached/reference bodies).
    pub body_hash: String,
    /// `origin` URI.
    pub origin: Option<String>,
    /// Frontmatter links with rel and target (written to `edges`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<CatalogLink>,
    /// Former ids, transplant waymarks (written to `moves`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moved_from: Vec<String>,
    /// A leaf body's first words as plain text (what the fast canopy
    /// embeds beside the scent; written to our `node_leads` table, not the
    /// dialect's; a read leaves it empty: see `Catalog::scent_page`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub lead: String,
}

impl NodeRow {
    /// A node with the given identity and scent; every other field empty
    /// and `confidence` 1.0.
    pub fn new(
        id: impl Into<String>,
        node_type: impl Into<String>,
        title: impl Into<String>,
        summary: impl Into<String>,
    ) -> Self {
        let node_type = node_type.into();
        NodeRow {
            id: NodeId::from(id.into()),
            kind: Kind::of_type(&node_type),
            node_type,
            title: title.into(),
            summary: summary.into(),
            tags: vec![],
            aliases: vec![],
            created: None,
            updated: None,
            confidence: 1.0,
            source: None,
            entity_kind: None,
            payload: None,
            payload_type: None,
            payload_hash: None,
            parent: None,
            trail: vec![],
            coverage: None,
            body_tokens: 0,
            outline: vec![],
            stale: 0,
            body_hash: String::new(),
            origin: None,
            links: vec![],
            moved_from: vec![],
            lead: String::new(),
        }
    }
}
