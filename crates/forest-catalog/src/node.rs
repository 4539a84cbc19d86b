//! The row the catalog stores for one node, as callers hand it over
//! (the catalog never parses Markdown). Its own module so the search
//! index and the catalog both depend on it and not on each other.

use forest_model::Kind;
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

/// Everything the catalog stores about one `.md` node, already parsed by
/// the caller. `kind`, `parent` and `trail` are computed from `id`/`node_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogNode {
    /// Canonical id (path without `.md`).
    pub id: String,
    /// Frontmatter `type`.
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
    /// Branch coverage string (`"N bananas, M sub-branches"`).
    pub coverage: Option<String>,
    /// Estimated tokens of the body.
    pub body_tokens: i64,
    /// H2/H3 headings of the body.
    pub outline: Vec<String>,
    /// sha256 hex of the raw `.md` body ('' for cached/reference bodies).
    pub body_hash: String,
    /// `origin` URI.
    pub origin: Option<String>,
    /// Frontmatter links with rel and target.
    pub links: Vec<CatalogLink>,
    /// Former ids (transplant waymarks).
    pub moved_from: Vec<String>,
    /// The body's first words as plain text (what the fast canopy embeds
    /// beside the scent; kept in our `node_leads` table, not the dialect's).
    pub lead: String,
}

impl CatalogNode {
    /// A node with the given identity and scent; every other field empty
    /// and `confidence` 1.0.
    pub fn new(
        id: impl Into<String>,
        node_type: impl Into<String>,
        title: impl Into<String>,
        summary: impl Into<String>,
    ) -> Self {
        CatalogNode {
            id: id.into(),
            node_type: node_type.into(),
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
            coverage: None,
            body_tokens: 0,
            outline: vec![],
            body_hash: String::new(),
            origin: None,
            links: vec![],
            moved_from: vec![],
            lead: String::new(),
        }
    }

    /// Catalog-internal kind: a branch for type branch, else a banana.
    pub fn kind(&self) -> Kind {
        Kind::of_type(&self.node_type)
    }
}
