//! Propose stage (closed-catalog edge proposals): before the curate hook
//! runs, this batch's new nodes are indexed into the catalog so proposals
//! may target them; after it, proposed links are appended after the links
//! a node already had (never rewriting them).
//!
//! In: drafts and the batch's nodes. Out: catalog rows (marked dirty until
//! the commit lands) and merged `links:` values. Touches the catalog and
//! the `_derived/catalog.dirty` marker.

use crate::env::RunEnv;
use crate::error::GardenError;
use crate::options::{Draft, DraftLink};
use crate::stages::plan::Batch;
use crate::stages::text::links_value;
use crate::stages::CATALOG_DIRTY;
use forest_catalog::Catalog;
use forest_derived::catalog::catalog_row;
use forest_model::node::Node;
use forest_model::yaml::Value;
use std::collections::HashSet;

/// Take the batch's drafts for the curate stage, after indexing their
/// derived rows so the closed catalog offers this batch's nodes too.
pub(crate) fn prepare_curation(
    env: &RunEnv,
    batch: &mut Batch,
    catalog: Option<&mut Catalog>,
) -> Result<Vec<Draft>, GardenError> {
    let drafts = std::mem::take(&mut batch.curation);
    if drafts.is_empty() || env.curate.is_none() {
        return Ok(drafts);
    }
    // The marker makes the next run rebuild the catalog if we die
    // before the batch's commit lands.
    if let Some(cat) = catalog {
        forest_fs::atomic_write(&env.forest.join(CATALOG_DIRTY), b"curation batch in flight\n")
            .map_err(|e| GardenError::io(CATALOG_DIRTY, e))?;
        let rows: Vec<_> =
            drafts.iter().filter_map(|d| batch.nodes.get(&d.id).map(|n| catalog_row(&d.id, n))).collect();
        cat.upsert(&rows).map_err(GardenError::Catalog)?;
    }
    Ok(drafts)
}

/// Append a draft's proposals (its links after the first `before`, which
/// the node already had) to the node's `links:`, skipping any (rel,
/// target) the node already carries.
pub(crate) fn merge_proposed_links(n: &mut Node, links: &[DraftLink], before: usize) {
    let had: HashSet<(String, String)> = n.links().into_iter().map(|l| (l.rel, l.target)).collect();
    let proposed: Vec<DraftLink> =
        links.iter().skip(before).filter(|l| !had.contains(&(l.rel.clone(), l.target.clone()))).cloned().collect();
    if proposed.is_empty() {
        return;
    }
    let mut seq = match n.front.get("links") {
        Some(Value::Sequence(s)) => s.clone(),
        _ => vec![],
    };
    if let Value::Sequence(add) = links_value(&proposed) {
        seq.extend(add);
    }
    n.set("links", Value::Sequence(seq));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposals_append_after_existing_links_without_duplicates() {
        let mut n = Node::parse("---\nid: a\nlinks:\n- rel: see_also\n  target: b\n---\n# A\n").expect("node");
        let had = DraftLink::existing(&n);
        let mut links = had.clone();
        links.push(DraftLink { rel: "see_also".into(), target: "b".into(), confidence: 0.3, note: None });
        links.push(DraftLink { rel: "part_of".into(), target: "c".into(), confidence: 0.3, note: Some("why".into()) });
        merge_proposed_links(&mut n, &links, had.len());
        let got: Vec<(String, String)> = n.links().into_iter().map(|l| (l.rel, l.target)).collect();
        assert_eq!(got, vec![("see_also".into(), "b".into()), ("part_of".into(), "c".into())]);
        let before = n.to_text();
        merge_proposed_links(&mut n, &links[..1], 1);
        assert_eq!(n.to_text(), before, "nothing proposed: nothing rewritten");
    }

    #[test]
    fn without_a_hook_the_drafts_leave_the_batch_untouched() {
        let fx = crate::env::testing::Fixture::new();
        let env = fx.env();
        let mut batch = crate::stages::plan::Batch::default();
        let d = Draft {
            id: "a".into(),
            parent: "_index".into(),
            title: "A".into(),
            body: "# A\n".into(),
            summary: "About a.".into(),
            tags: vec![],
            links: vec![],
            scent: "derived".into(),
        };
        batch.curation.push(d);
        let drafts = prepare_curation(&env, &mut batch, None).expect("drafts");
        assert_eq!(drafts.len(), 1);
        assert_eq!(drafts[0].summary, "About a.");
        assert!(batch.curation.is_empty(), "the drafts leave the batch for the curate stage");
        assert!(!fx.forest.join(CATALOG_DIRTY).exists(), "no catalog: no dirty marker");
    }
}
