//! The draft scent of a leaf (pure): title, tags, aliases, normalised body
//! and derived summary, as the plan stage writes them into a passport and
//! hands them to the curate hook. A distributed worker calls the same
//! functions, so the summary it stores answers the committer's request.

use crate::stages::scent::LeafScent;
use crate::stages::text::{normalize_body, stem_of, with_default_tags};
use forest_convert::Conversion;
use forest_model::node::Node;
use forest_model::scent::derive_summary;
use forest_model::slug::title_from_stem;

/// A leaf's scent before it is planted.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LeafDraft {
    pub(crate) title: String,
    pub(crate) tags: Vec<String>,
    /// The document's own aliases, then the acronyms it defines.
    pub(crate) aliases: Vec<String>,
    /// The normalised Markdown body (empty for datasets).
    pub(crate) body: String,
    /// The derived summary (empty for datasets).
    pub(crate) summary: String,
}

/// The draft of a new leaf from its conversion and leaf scent (derived on
/// the convert threads; None for datasets): the scent's title (else the
/// converter's, else the file stem), source and keyphrase tags then
/// `default_tags`, and for Markdown the normalised body and its summary.
pub(crate) fn new_leaf_draft(
    rel: &str,
    conv: &Conversion,
    scent: Option<LeafScent>,
    default_tags: &[String],
) -> LeafDraft {
    let title = match &scent {
        Some(s) => s.title.clone(),
        None => {
            let t = conv.title().trim().to_string();
            if t.is_empty() {
                title_from_stem(&stem_of(rel))
            } else {
                t
            }
        }
    };
    let mut d = LeafDraft { title, ..Default::default() };
    if let Conversion::Markdown { body, meta, .. } = conv {
        let scent = scent.unwrap_or_default();
        d.tags.extend(scent.tags);
        d.aliases.extend(meta.aliases.iter().filter(|a| !a.trim().is_empty() && a.chars().count() <= 80).cloned());
        for a in scent.aliases {
            if !d.aliases.contains(&a) {
                d.aliases.push(a);
            }
        }
        d.body = normalize_body(body, &d.title);
        d.summary = if scent.summary.is_empty() { derive_summary(&d.body, &d.title) } else { scent.summary };
    }
    let columns: Vec<&str> = match conv {
        Conversion::Dataset { tables, .. } => tables.iter().flat_map(|t| &t.columns).map(|c| c.0.as_str()).collect(),
        Conversion::Payload { tables, .. } => tables.iter().flat_map(|t| &t.columns).map(|c| c.0.as_str()).collect(),
        Conversion::Markdown { .. } => vec![],
    };
    if !matches!(conv, Conversion::Markdown { .. }) {
        d.tags = crate::stages::scent::dataset_tags(rel, &columns);
    }
    with_default_tags(&mut d.tags, default_tags);
    d
}

/// The draft of a changed leaf whose passport is `n`: its title (else the
/// converter's) and tags, and for Markdown the fresh normalised body and
/// the summary derived from it. Aliases are the passport's business.
pub(crate) fn changed_leaf_draft(n: &Node, conv: &Conversion) -> LeafDraft {
    let title = n.get_str("title").unwrap_or_else(|| conv.title().to_string());
    let mut d = LeafDraft { tags: n.get_list("tags"), ..Default::default() };
    if let Conversion::Markdown { body, .. } = conv {
        d.body = normalize_body(body, &title);
        d.summary = derive_summary(&d.body, &title);
    }
    d.title = title;
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use forest_convert::SourceMeta;

    fn md(title: &str, body: &str, meta: SourceMeta) -> Conversion {
        Conversion::Markdown { title: title.into(), body: body.into(), meta }
    }

    #[test]
    fn a_new_leaf_takes_its_scent_then_the_default_tags() {
        let conv = md(
            "Alpha plan",
            "# Alpha plan\n\nSome text about it.\n",
            SourceMeta {
                tags: vec!["notes".into(), "Budget".into()],
                aliases: vec!["AP".into()],
                ..Default::default()
            },
        );
        let scent = crate::stages::scent::of_conversion("team/a.md", &conv);
        let d = new_leaf_draft("team/a.md", &conv, scent, &["drive".into(), "notes".into()]);
        assert_eq!(d.title, "Alpha plan");
        assert_eq!(d.tags[..2], ["notes", "budget"], "{:?}", d.tags);
        assert_eq!(d.tags.last().map(String::as_str), Some("drive"));
        assert_eq!(d.tags.iter().filter(|t| *t == "notes").count(), 1, "{:?}", d.tags);
        assert_eq!(d.aliases, vec!["AP"]);
        assert_eq!(d.body, normalize_body("# Alpha plan\n\nSome text about it.\n", "Alpha plan"));
        assert_eq!(d.summary, derive_summary(&d.body, &d.title));
        // Without a scent (a dataset), the converter's title or the stem.
        let empty = md("  ", "", SourceMeta::default());
        assert_eq!(new_leaf_draft("x/budget_2024.csv", &empty, None, &[]).title, title_from_stem("budget_2024"));
    }

    #[test]
    fn a_changed_leaf_keeps_its_title_and_tags() {
        let n = Node::parse("---\nid: a\ntitle: Kept\ntags: [x]\n---\n# Kept\n").expect("node");
        let d = changed_leaf_draft(&n, &md("New", "# New\n\nFresh words here.\n", SourceMeta::default()));
        assert_eq!((d.title.as_str(), d.tags.clone()), ("Kept", vec!["x".to_string()]));
        assert_eq!(d.body, normalize_body("# New\n\nFresh words here.\n", "Kept"));
        assert_eq!(d.summary, derive_summary(&d.body, "Kept"));
        assert!(d.aliases.is_empty());
    }
}
