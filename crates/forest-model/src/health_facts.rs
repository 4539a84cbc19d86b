//! What one node contributes to the health report (dialect §5.3 plus our
//! `summary_stale`), computed where the node is read: by the Ranger's
//! health pass for nodes the cache does not know, and by the Gardener for
//! every node it writes, so a forest's first health run reads nothing the
//! Gardener planted ([`crate::lint_cache::record_written`]).
//!
//! Everything but the live check that a passport's source file still
//! exists, which stays with the health report.

use serde::{Deserialize, Serialize};

use crate::ids;
use crate::node::Node;
use crate::scent::summary_fingerprint;
use crate::tokens::estimate_tokens;

/// The media stub sentence (written by forest-convert's media stub; shared
/// text, dialect §5.3).
pub const MEDIA_STUB_SENTENCE: &str = "No description has been generated for this media yet.";

/// Where the health cache lives (derived, never committed).
pub const HEALTH_CACHE_PATH: &str = "_derived/health-cache.db";

/// The cache file of earlier versions (JSON lines), removed when seen.
pub const LEGACY_HEALTH_CACHE_PATH: &str = "_derived/health-cache.jsonl";

/// Bump when [`NodeFacts`] or [`facts`] changes: older caches are dropped.
pub const FACTS_VERSION: &str = "health-3";

/// Passport key the Gardener writes when a body failed the converter's
/// fidelity check: `<reason code>: <what tripped it>`.
pub const SUSPECT_KEY: &str = "conversion_suspect";

/// A branch with more entry lines than this needs splitting.
pub const SPLIT_ENTRIES: usize = 150;
/// A branch with more body tokens than this needs splitting.
pub const SPLIT_TOKENS: usize = 3000;

/// One node's health facts, as cached with its lint record.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFacts {
    /// A branch over [`SPLIT_ENTRIES`] entry lines or [`SPLIT_TOKENS`] tokens.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_split: bool,
    /// Marked `source_state: vanished`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vanished: bool,
    /// A `type: media` node still carrying the stub description.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_description: bool,
    /// A machine-written summary edited since (`scent_hash` differs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summary_stale: bool,
    /// `(source_name or "default", source_path)` of a passport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passport: Option<(String, String)>,
    /// `"%.1f"` confidence buckets of its managed (uncertain) links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<String>,
    /// The body failed the converter's fidelity check ([`SUSPECT_KEY`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspect: Option<String>,
    /// A leaf's machine scent: `llm` (curated) or `derived`; `None` for
    /// branches and hand-written scent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_scent: Option<String>,
    /// A leaf `forest curate --pending` would curate
    /// ([`crate::scent::is_pending_curation`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub curation_pending: bool,
}

/// The facts of node `id`.
pub fn facts(id: &str, node: &Node) -> NodeFacts {
    let mut f = NodeFacts::default();
    let node_type = node.get_str("type").unwrap_or_default();
    let branch = ids::is_branch_id(id) || node_type == "branch";
    if !branch {
        f.leaf_scent = node.get_str("scent").filter(|s| s == "llm" || s == "derived");
        f.curation_pending = crate::scent::is_pending_curation(node);
    }
    if branch {
        let entries = node.body.lines().filter(|l| l.starts_with("- [[")).count();
        f.needs_split = entries > SPLIT_ENTRIES || estimate_tokens(&node.body) > SPLIT_TOKENS;
    }
    f.needs_description = node_type == "media" && node.body.contains(MEDIA_STUB_SENTENCE);
    if let Some(path) = node.get_str("source_path") {
        let source = node.get_str("source_name").unwrap_or_else(|| "default".into());
        f.vanished = node.get_str("source_state").as_deref() == Some("vanished");
        f.passport = Some((source, path));
    }
    if let (Some(hash), Some(scent)) = (node.get_str("scent_hash"), node.get_str("scent")) {
        if scent == "derived" || scent == "llm" {
            let summary = node.get_str("summary").unwrap_or_default();
            f.summary_stale = summary_fingerprint(&summary) != hash;
        }
    }
    f.suspect = node.get_str(SUSPECT_KEY);
    f.buckets = node
        .links()
        .into_iter()
        .filter_map(|l| l.confidence)
        .filter(|c| c.is_finite() && *c < 1.0)
        .map(|c| format!("{c:.1}"))
        .collect();
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_facts() {
        let fp = summary_fingerprint("Original.");
        let text = format!(
            "---\nid: a\ntype: media\ntitle: A\nsummary: Edited.\nscent: derived\n\
             scent_hash: {fp}\nsource_path: a.png\nlinks:\n- rel: related-to\n  target: b\n  \
             confidence: 0.3\n- rel: part-of\n  target: c\n---\n\n# A\n\n{MEDIA_STUB_SENTENCE}\n"
        );
        let n = Node::parse(&text).unwrap();
        let f = facts("a", &n);
        assert!(f.needs_description && f.summary_stale && !f.needs_split && !f.vanished);
        assert_eq!(f.passport, Some(("default".to_string(), "a.png".to_string())));
        assert_eq!(f.buckets, vec!["0.3"]);
        assert_eq!(f.suspect, None);
        assert_eq!(f.leaf_scent.as_deref(), Some("derived"));
        assert!(!f.curation_pending, "edited since, and not ingested");
        let pending = text.replace("summary: Edited.", "summary: Original.").replace("type: media", "source: ingest");
        let f = facts("a", &Node::parse(&pending).unwrap());
        assert!(f.curation_pending && f.leaf_scent.as_deref() == Some("derived"));
        let curated = pending.replace("scent: derived", "scent: llm");
        let f = facts("a", &Node::parse(&curated).unwrap());
        assert!(!f.curation_pending && f.leaf_scent.as_deref() == Some("llm"));
        let marked = text.replace("scent: derived", "scent: derived\nconversion_suspect: 'raw_roff: roff requests'");
        assert_eq!(facts("a", &Node::parse(&marked).unwrap()).suspect.as_deref(), Some("raw_roff: roff requests"));
        let manual = text.replace("scent: derived", "scent: manual");
        let f = facts("a", &Node::parse(&manual).unwrap());
        assert!(!f.summary_stale);
        // The cached form round-trips.
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(serde_json::from_str::<NodeFacts>(&json).unwrap(), f);
        // A branch over the entry limit needs splitting.
        let entries: String = (0..151).map(|i| format!("- [[x/n{i}]] N{i}\n")).collect();
        let b = Node::parse(&format!("---\nid: x/_index\ntype: branch\n---\n\n# X\n\n{entries}")).unwrap();
        assert!(facts("x/_index", &b).needs_split);
    }
}
