//! The arguments of every primitive, one type each, as the wire names them
//! (vine spec C.12, plus `lang` and the unadvertised extras the reference
//! accepts). Each derives `Deserialize` (the MCP edge turns a checked JSON
//! object into it) and `JsonSchema` (the signature table of
//! [`crate::primitive`] is read from that schema: names, types, required).
//!
//! The objects inside `plant`'s nodes, `graft`'s patch and `scan`'s
//! filter are typed in [`crate::specs`]; their schema stays the wire's
//! (`object`, any keys), their keys are checked by the primitive itself.
//!
//! In: nothing. Out: types. Touches nothing.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;

use crate::specs::{GraftPatch, NodeSpec, ScanFilter};

/// An integer argument: a value outside `i64` reads as absent (the table
/// admits any JSON integer).
fn int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(Option::<Value>::deserialize(d)?.and_then(|v| v.as_i64()))
}

/// `str | [str]` read as a list (`sniff`'s terms).
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match IdArg::deserialize(d)? {
        IdArg::One(s) => vec![s],
        IdArg::Many(v) => v,
    })
}

/// `id: str | [str]`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IdArg {
    /// One id: the single shape.
    One(String),
    /// A list: the batch shape.
    Many(Vec<String>),
}

impl Default for IdArg {
    fn default() -> IdArg {
        IdArg::One(String::new())
    }
}

/// `section: str | [str] | null`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SectionArg {
    /// One header (exact, then prefix match).
    One(String),
    /// Several headers in one budget.
    Many(Vec<String>),
}

/// `node: object | [object]` of `plant`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NodeSpecs {
    /// One node.
    One(#[schemars(with = "BTreeMap<String, Value>")] Box<NodeSpec>),
    /// A batch, planted in one commit.
    Many(#[schemars(with = "Vec<BTreeMap<String, Value>>")] Vec<NodeSpec>),
}

impl Default for NodeSpecs {
    fn default() -> NodeSpecs {
        NodeSpecs::One(Box::default())
    }
}

/// Arguments of [`crate::Vine::locate`].
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct LocateArgs {
    /// The question.
    pub query: String,
    /// Results to keep (≥ 1; default 5).
    #[serde(default, deserialize_with = "int")]
    #[schemars(with = "Option<i64>")]
    pub k: Option<i64>,
    /// all | branches | notes (bananas).
    pub scope: Option<String>,
    /// Keep only this type.
    pub type_filter: Option<String>,
    /// `["outline"]` adds outlines.
    pub include: Option<Vec<String>>,
    /// Window lower bound.
    pub since: Option<String>,
    /// Window upper bound.
    pub until: Option<String>,
    /// `created` | `updated`.
    pub date_field: Option<String>,
    /// BCP-47 tag the node declares (`lang:` frontmatter), exact match.
    pub lang: Option<String>,
    /// The reference's switch (not advertised): true is its RRF, false
    /// BM25 alone; `fusion` wins when both are given.
    pub hybrid: Option<bool>,
    /// `blend` | `rrf` | `bm25` (not advertised: the server's default is
    /// the one to use; this is for side-by-side runs).
    pub fusion: Option<String>,
}

impl LocateArgs {
    /// The fusion asked for: `fusion`, else the one `hybrid` names.
    pub fn fusion_asked(&self) -> Option<String> {
        self.fusion.clone().or_else(|| self.hybrid.map(|h| if h { "rrf" } else { "bm25" }.to_string()))
    }
}

/// Arguments of `look`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct LookArgs {
    /// One id or up to 10.
    pub id: IdArg,
    /// Digest fields to keep.
    pub fields: Option<Vec<String>>,
    /// Accepted, unused (the reference's navigation hint).
    pub gauntlet: Option<bool>,
    /// Accepted, unused (the reference's navigation hint).
    pub toward: Option<String>,
}

/// Arguments of `move`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct MoveArgs {
    /// The node.
    pub id: String,
    /// A relation, or `children`.
    pub rel: Option<String>,
    /// out | in | both.
    pub direction: Option<String>,
    /// Accepted, unused (the reference's navigation hint).
    pub gauntlet: Option<bool>,
    /// Accepted, unused (the reference's navigation hint).
    pub toward: Option<String>,
}

/// Arguments of `pick`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct PickArgs {
    /// One id or up to 5.
    pub id: IdArg,
    /// One header or up to 10.
    pub section: Option<SectionArg>,
    /// The page cursor of a long body.
    pub after: Option<String>,
}

/// Arguments of the primitives that name one node and nothing else
/// (`view`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct IdOnly {
    /// The node.
    pub id: String,
}

/// Arguments of [`crate::Vine::scan`].
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct ScanArgs {
    /// The branch (or node) whose children are listed.
    pub parent_id: String,
    /// Filter object (`tags_any`, `*_after`, `*_before`, `min_confidence`,
    /// `origin_prefix`, `kind`, `lang`, any catalog column by equality).
    #[schemars(with = "Option<BTreeMap<String, Value>>")]
    pub filter: Option<ScanFilter>,
    /// Fields per item (default id, type, summary, body_tokens).
    pub fields: Option<Vec<String>>,
    /// Whole subtree instead of direct children.
    #[serde(default)]
    pub recursive: bool,
    /// Items per page (clamped 1..=50).
    #[serde(default, deserialize_with = "int")]
    #[schemars(with = "Option<i64>")]
    pub limit: Option<i64>,
    /// Cursor: ids strictly after this one, in id order.
    pub after: Option<String>,
    /// Accepted, unused (the reference's navigation hint).
    pub gauntlet: Option<bool>,
    /// Accepted, unused (the reference's navigation hint).
    pub toward: Option<String>,
    /// Window lower bound.
    pub since: Option<String>,
    /// Window upper bound.
    pub until: Option<String>,
    /// `created` | `updated`.
    pub date_field: Option<String>,
}

/// Arguments of [`crate::Vine::sniff`].
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct SniffArgs {
    /// Literal terms (a phrase may contain spaces).
    #[serde(deserialize_with = "one_or_many")]
    #[schemars(with = "IdArg")]
    pub terms: Vec<String>,
    /// Branch or leaf to search under.
    pub scope: Option<String>,
    /// Results (clamped to 1..=20; default 5).
    #[serde(default, deserialize_with = "int")]
    #[schemars(with = "Option<i64>")]
    pub k: Option<i64>,
    /// Keep only this type.
    pub type_filter: Option<String>,
    /// Window lower bound.
    pub since: Option<String>,
    /// Window upper bound.
    pub until: Option<String>,
    /// `created` | `updated`.
    pub date_field: Option<String>,
    /// Declared language, exact.
    pub lang: Option<String>,
}

/// Arguments of `calendar`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct CalendarArgs {
    /// Branch or leaf to count under.
    pub scope: Option<String>,
    /// `created` | `updated`.
    pub date_field: Option<String>,
    /// day | week | month | year.
    pub granularity: Option<String>,
    /// Window lower bound.
    pub since: Option<String>,
    /// Window upper bound.
    pub until: Option<String>,
    /// Buckets at most.
    #[serde(default, deserialize_with = "int")]
    #[schemars(with = "Option<i64>")]
    pub limit: Option<i64>,
}

/// Arguments of `coverage`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct CoverageArgs {
    /// Branch or leaf to measure.
    pub scope: Option<String>,
    /// `created` | `updated`.
    pub date_field: Option<String>,
}

/// Arguments of `query` and `tend`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct SqlArgs {
    /// The dataset node.
    pub id: String,
    /// One statement.
    pub sql: String,
}

/// Arguments of `history`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct HistoryArgs {
    /// The node.
    pub id: String,
    /// Commits at most (≤ 50).
    #[serde(default, deserialize_with = "int")]
    #[schemars(with = "Option<i64>")]
    pub limit: Option<i64>,
}

/// Arguments of [`crate::Vine::harvest`].
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct HarvestArgs {
    /// The question.
    pub query: String,
    /// Literal terms (default: derived from the question).
    pub terms: Option<Vec<String>>,
    /// Results (clamped to 1..=cap, default 3).
    #[serde(default, deserialize_with = "int")]
    #[schemars(with = "Option<i64>")]
    pub k: Option<i64>,
    /// Window bounds and field.
    pub since: Option<String>,
    /// Window upper bound.
    pub until: Option<String>,
    /// `created` | `updated`.
    pub date_field: Option<String>,
    /// Keep superseded notes.
    #[serde(default)]
    pub include_superseded: bool,
    /// Declared language, exact.
    pub lang: Option<String>,
}

/// Arguments of `plant`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct PlantArgs {
    /// One node or up to 20.
    pub node: NodeSpecs,
    /// An existing id is reported, not refused.
    #[serde(default)]
    pub if_absent: bool,
    /// Check only; write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// Arguments of `graft`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct GraftArgs {
    /// The node.
    pub id: String,
    /// `set_frontmatter`, `add_links`, `remove_links`, `append_section`,
    /// `replace_section`, `replace_body`.
    #[schemars(with = "BTreeMap<String, Value>")]
    pub patch: GraftPatch,
}

/// Arguments of `prune`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct PruneArgs {
    /// The node.
    pub id: String,
    /// Remove the links that point at it too.
    #[serde(default)]
    pub force: bool,
}

/// Arguments of `transplant`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct TransplantArgs {
    /// The leaf.
    pub id: String,
    /// Where it goes.
    pub new_id: String,
}

/// Arguments of `close_session`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct CloseArgs {
    /// Whether the hunt found its answer.
    pub success: bool,
    /// The nodes that answered it.
    pub answer_nodes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_objects_become_arguments() {
        let a: LocateArgs = serde_json::from_value(json!({"query": "q", "k": u64::MAX, "hybrid": false})).unwrap();
        assert_eq!((a.k, a.fusion_asked().as_deref()), (None, Some("bm25")));
        let a: LocateArgs = serde_json::from_value(json!({"query": "q", "hybrid": true, "fusion": "blend"})).unwrap();
        assert_eq!(a.fusion_asked().as_deref(), Some("blend"));
        let s: SniffArgs = serde_json::from_value(json!({"terms": "one phrase"})).unwrap();
        assert_eq!(s.terms, ["one phrase"]);
        let p: PlantArgs = serde_json::from_value(json!({"node": [{"id": "a"}], "dry_run": true})).unwrap();
        assert!(matches!(p.node, NodeSpecs::Many(ref v) if v.len() == 1) && p.dry_run && !p.if_absent);
        let k: PickArgs = serde_json::from_value(json!({"id": ["a", "b"], "section": "S"})).unwrap();
        assert_eq!((k.id, k.section), (IdArg::Many(vec!["a".into(), "b".into()]), Some(SectionArg::One("S".into()))));
    }
}
