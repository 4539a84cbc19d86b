//! Node types and rels: `_meta/schema.md` tables with built-in defaults
//! (dialect §1.3, §1.5, §1.7).

use indexmap::IndexMap;

/// Built-in node types.
pub const DEFAULT_TYPES: [&str; 8] = ["branch", "note", "document", "dataset", "entity", "concept", "event", "media"];

/// Built-in rels with their derived inverses.
pub const DEFAULT_RELS: [(&str, Option<&str>); 10] = [
    ("part-of", Some("contains")),
    ("related-to", Some("related-to")),
    ("mentioned-in", Some("mentions")),
    ("author", Some("author-of")),
    ("compared-with", Some("compared-with")),
    ("derived-from", Some("origin-of")),
    ("same-as", Some("same-as")),
    ("discovered-shortcut", None),
    ("succeeds", Some("precedes")),
    ("supersedes", Some("superseded-by")),
];

/// Allowed `entity_kind` values.
pub const ENTITY_KINDS: [&str; 5] = ["person", "organization", "product", "place", "other"];
/// Allowed `payload_type` values.
pub const PAYLOAD_TYPES: [&str; 5] = ["sqlite", "pdf", "docx", "image", "audio"];
/// Allowed `source` values.
pub const SOURCES: [&str; 3] = ["manual", "ingest", "agent"];
/// Max links per node.
pub const MAX_LINKS: usize = 50;

/// The live dialect of a forest.
#[derive(Debug, Clone)]
pub struct Dialect {
    /// Node type names in declaration order.
    pub types: Vec<String>,
    /// Rel -> inverse.
    pub rels: IndexMap<String, Option<String>>,
}

impl Default for Dialect {
    fn default() -> Self {
        Dialect {
            types: DEFAULT_TYPES.iter().map(|s| s.to_string()).collect(),
            rels: DEFAULT_RELS.iter().map(|(r, i)| (r.to_string(), i.map(|s| s.to_string()))).collect(),
        }
    }
}

impl Dialect {
    /// Parse the tables of `_meta/schema.md`'s body; an empty table falls back
    /// to the built-in default for that half.
    pub fn from_schema_body(body: &str) -> Dialect {
        let mut types = vec![];
        let mut rels = IndexMap::new();
        let mut rel_section = false;
        for line in body.lines() {
            let t = line.trim();
            if t.starts_with('#') {
                let h = t.trim_start_matches('#').to_lowercase();
                rel_section = h.contains("edge") || h.contains("rel");
                continue;
            }
            if !t.starts_with('|') {
                continue;
            }
            let cells: Vec<&str> = t.trim_matches('|').split('|').map(|c| c.trim()).collect();
            let Some(first) = cells.first() else { continue };
            let Some(tok) = first.strip_prefix('`').and_then(|s| s.strip_suffix('`')) else {
                continue;
            };
            let tok = tok.trim();
            if tok.is_empty() || tok == "type" || tok == "rel" {
                continue;
            }
            if rel_section {
                let inv = cells
                    .get(1)
                    .map(|c| c.trim_matches('`').trim())
                    .filter(|c| !c.is_empty() && !["—", "–", "-"].contains(c))
                    .map(|c| c.to_string());
                rels.insert(tok.to_string(), inv);
            } else {
                types.push(tok.to_string());
            }
        }
        let d = Dialect::default();
        Dialect {
            types: if types.is_empty() { d.types } else { types },
            rels: if rels.is_empty() { d.rels } else { rels },
        }
    }

    /// True when `t` is a declared node type.
    pub fn has_type(&self, t: &str) -> bool {
        self.types.iter().any(|x| x == t)
    }

    /// True when `r` is a declared rel.
    pub fn has_rel(&self, r: &str) -> bool {
        self.rels.contains_key(r)
    }
}

/// The `_meta/schema.md` text written by `forest init`.
pub fn default_schema_md(today: &str) -> String {
    let mut s = format!(
        "---\nid: _meta/schema\ntype: note\ntitle: Forest dialect\nsummary: Node and edge types valid in this forest. New types are declared here before first use.\ncreated: '{today}'\nupdated: '{today}'\n---\n\n# Forest dialect\n\n## Node types (type)\n\n| `type` | Description |\n|---|---|\n"
    );
    let desc = [
        "Index file (_index.md) of a folder",
        "Free-text knowledge",
        "Converted document (PDF/DOCX origin)",
        "Tabular data (sibling SQLite)",
        "Person, organization, product, place",
        "Definition / technical term",
        "Dated fact (meeting, decision, release)",
        "Image/audio/video with description",
    ];
    for (t, d) in DEFAULT_TYPES.iter().zip(desc) {
        s.push_str(&format!("| `{t}` | {d} |\n"));
    }
    s.push_str("\n## Edge types (rel)\n\n| `rel` | Inverse |\n|---|---|\n");
    for (r, i) in DEFAULT_RELS {
        s.push_str(&format!("| `{r}` | {} |\n", i.map(|i| format!("`{i}`")).unwrap_or("—".into())));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_default_schema() {
        let text = default_schema_md("2026-01-01");
        let node = crate::node::Node::parse(&text).unwrap();
        let d = Dialect::from_schema_body(&node.body);
        assert_eq!(d.types.len(), 8);
        assert_eq!(d.rels.get("discovered-shortcut"), Some(&None));
        assert_eq!(d.rels.get("part-of"), Some(&Some("contains".to_string())));
        let custom = Dialect::from_schema_body("## Types\n| `type` | d |\n|--|--|\n| `wizard` | x |\n");
        assert_eq!(custom.types, vec!["wizard"]);
        assert!(custom.has_rel("part-of"));
    }
}
