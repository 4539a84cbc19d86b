//! Pure planning: link lifecycle (dialect §5.2) and landmarks (§5.5).
//! No I/O here, so the rules are testable (and property-tested) in isolation.

use std::collections::HashMap;

use forest_model::ids;
use schemars::JsonSchema;
use serde::Serialize;

use crate::RangerConfig;

/// Most landmarks the master lists (`MAX_LANDMARKS`).
pub const MAX_LANDMARKS: usize = 20;

/// Round to 4 decimals, as the dialect compares heat.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// A frontmatter link with a numeric confidence below 1.0.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ManagedLink {
    /// Source node id (the file holding the link).
    pub src: String,
    /// Relation name.
    pub rel: String,
    /// Target node id.
    pub target: String,
    /// Link-level confidence (< 1.0).
    pub confidence: f64,
}

impl ManagedLink {
    /// `<src> <rel>-><target>` as the dialect reports it.
    pub fn label(&self) -> String {
        format!("{} {}->{}", self.src, self.rel, self.target)
    }

    /// True when the Ranger may touch this link at all: a finite confidence
    /// strictly below 1.0 (absent/1.0 = structural, never managed).
    pub fn is_managed(&self) -> bool {
        self.confidence.is_finite() && self.confidence < 1.0
    }
}

/// What to do with one managed link.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum LinkAction {
    /// Raise the link's confidence to `to`.
    Promote {
        /// The link as found.
        link: ManagedLink,
        /// New confidence (`promoted_confidence`).
        to: f64,
    },
    /// Remove the link from its source's frontmatter.
    Prune {
        /// The link as found.
        link: ManagedLink,
    },
}

impl LinkAction {
    /// The link the action applies to.
    pub fn link(&self) -> &ManagedLink {
        match self {
            LinkAction::Promote { link, .. } | LinkAction::Prune { link } => link,
        }
    }

    /// Commit-body line: `promote <src> <rel>-><target> 0.8` / `prune <src> <rel>-><target>`.
    pub fn body_line(&self) -> String {
        match self {
            LinkAction::Promote { link, to } => format!("promote {} {to}", link.label()),
            LinkAction::Prune { link } => format!("prune {}", link.label()),
        }
    }
}

/// Decide promotions and prunings (dialect §5.2), in input order.
///
/// `heat` holds persistent heat per id (absent = 0); values are rounded to
/// 4 decimals before comparing. Links that are not managed are ignored.
pub fn plan_links(managed: &[ManagedLink], heat: &HashMap<String, f64>, cfg: &RangerConfig) -> Vec<LinkAction> {
    let h = |id: &str| round4(heat.get(id).copied().unwrap_or(0.0));
    managed
        .iter()
        .filter(|l| l.is_managed())
        .filter_map(|l| {
            let (hs, ht) = (h(&l.src), h(&l.target));
            if hs >= cfg.promote_floor && ht >= cfg.promote_floor && l.confidence < cfg.promoted_confidence {
                Some(LinkAction::Promote { link: l.clone(), to: cfg.promoted_confidence })
            } else if l.confidence <= cfg.prune_below && hs == 0.0 && ht == 0.0 {
                Some(LinkAction::Prune { link: l.clone() })
            } else {
                None
            }
        })
        .collect()
}

/// One edge endpoint with its catalog degree and (when it has a catalog
/// row) its kind and summary.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DegreeEntry {
    /// Node id.
    pub id: String,
    /// Typed edges out + in.
    pub degree: i64,
    /// Catalog `kind` (`branch` | `banana`); `None` = no catalog row.
    pub kind: Option<String>,
    /// Catalog summary.
    pub summary: String,
}

/// Landmarks (dialect §5.5): top [`MAX_LANDMARKS`] by degree desc then id,
/// excluding branches, `_meta/` ids, degree 0 and endpoints without a
/// catalog row. Returns `(id, summary)` in display order.
pub fn plan_landmarks(degrees: &[DegreeEntry]) -> Vec<(String, String)> {
    let mut keep: Vec<&DegreeEntry> = degrees
        .iter()
        .filter(|d| d.degree > 0)
        .filter(|d| matches!(d.kind.as_deref(), Some(k) if k != "branch"))
        .filter(|d| !ids::is_meta(&d.id) && !ids::is_branch_id(&d.id))
        .collect();
    keep.sort_by(|a, b| b.degree.cmp(&a.degree).then_with(|| a.id.cmp(&b.id)));
    keep.truncate(MAX_LANDMARKS);
    keep.into_iter().map(|d| (d.id.clone(), d.summary.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn link(src: &str, target: &str, c: f64) -> ManagedLink {
        ManagedLink { src: src.into(), rel: "related-to".into(), target: target.into(), confidence: c }
    }

    fn heat(pairs: &[(&str, f64)]) -> HashMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn promote_prune_leave() {
        let cfg = RangerConfig::default();
        let h = heat(&[("hot", 0.4), ("hot2", 0.2), ("warm", 0.1), ("dust", 0.00004)]);
        let plan = plan_links(
            &[
                link("hot", "hot2", 0.5),
                link("hot", "warm", 0.3),
                link("cold", "cold2", 0.5),
                link("cold", "cold2", 0.6),
                link("cold", "dust", 0.3),
                link("hot", "hot2", 0.8),
                link("cold", "cold2", 1.0),
            ],
            &h,
            &cfg,
        );
        let lines: Vec<String> = plan.iter().map(LinkAction::body_line).collect();
        assert_eq!(
            lines,
            vec![
                "promote hot related-to->hot2 0.8",
                "prune cold related-to->cold2",
                // 0.00004 rounds to 0 at 4 decimals: counts as cold.
                "prune cold related-to->dust",
            ]
        );
    }

    #[test]
    fn landmarks_filter_and_order() {
        let e = |id: &str, d: i64, kind: Option<&str>| DegreeEntry {
            id: id.into(),
            degree: d,
            kind: kind.map(String::from),
            summary: format!("S {id}"),
        };
        let mut input = vec![
            e("a", 3, Some("banana")),
            e("b", 5, Some("banana")),
            e("c", 3, Some("banana")),
            e("x/_index", 9, Some("branch")),
            e("_meta/schema", 9, Some("banana")),
            e("ghost", 9, None),
            e("zero", 0, Some("banana")),
        ];
        for i in 0..30 {
            input.push(e(&format!("n{i:02}"), 1, Some("banana")));
        }
        let got = plan_landmarks(&input);
        assert_eq!(got.len(), MAX_LANDMARKS);
        let ids: Vec<&str> = got.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(&ids[..4], &["b", "a", "c", "n00"]);
        assert_eq!(got[0].1, "S b");
    }

    fn arb_link() -> impl Strategy<Value = ManagedLink> {
        (0u8..6, 0u8..6, prop::sample::select(vec![0.1, 0.3, 0.5, 0.6, 0.8, 0.95, 1.0]))
            .prop_map(|(s, t, c)| link(&format!("n{s}"), &format!("n{t}"), c))
    }

    /// Apply a plan the way `run` does: promotions rewrite, prunes remove.
    fn apply(links: &[ManagedLink], plan: &[LinkAction]) -> Vec<ManagedLink> {
        let mut out = vec![];
        for l in links {
            match plan.iter().find(|a| a.link() == l) {
                Some(LinkAction::Promote { to, .. }) => out.push(ManagedLink { confidence: *to, ..l.clone() }),
                Some(LinkAction::Prune { .. }) => {}
                None => out.push(l.clone()),
            }
        }
        out
    }

    proptest! {
        #[test]
        fn planning_is_idempotent(
            links in prop::collection::vec(arb_link(), 0..20),
            heats in prop::collection::vec(prop::sample::select(vec![0.0, 0.00004, 0.1, 0.2, 0.5, 1.0]), 6),
        ) {
            let cfg = RangerConfig::default();
            let h: HashMap<String, f64> =
                heats.iter().enumerate().map(|(i, v)| (format!("n{i}"), *v)).collect();
            let first = plan_links(&links, &h, &cfg);
            let after = apply(&links, &first);
            // A second plan over the result at the same heat changes nothing.
            prop_assert!(plan_links(&after, &h, &cfg).is_empty());
            // Structural links are never planned; promoted links never pruned.
            for a in &first {
                prop_assert!(a.link().confidence < 1.0);
                if let LinkAction::Prune { link } = a {
                    prop_assert!(link.confidence <= cfg.prune_below);
                }
            }
        }
    }
}
