//! Curate stage: the batch's drafts (new nodes, changed nodes with
//! machine-written scent) go to the [`Curate`] hook on its own thread pool,
//! overlapping the next batch's conversion; results fold back into the
//! batch (invalid summaries fall back to the derived one).
//!
//! In: drafts taken from the [`Batch`]. Out: the same drafts, curated, and
//! per-draft results, folded into the batch's nodes. Touches nothing on
//! disk itself (the hook may call the network; [`crate::stages::propose`]
//! indexes the catalog first).

use crate::env::RunEnv;
use crate::options::{Curate, Draft};
use crate::report::{err, FileError, SourceReport};
use crate::stages::plan::Batch;
use crate::stages::propose::merge_proposed_links;
use forest_model::scent::{derive_summary, summary_fingerprint, validate_summary};
use rayon::prelude::*;

/// Run the hook over all drafts on `pool` (the Curator bounds in-flight
/// requests). Without a hook or pool the drafts come back untouched and
/// without results.
pub(crate) fn curate_drafts(
    hook: Option<&dyn Curate>,
    pool: Option<&rayon::ThreadPool>,
    mut drafts: Vec<Draft>,
) -> (Vec<Draft>, Vec<Result<(), crate::options::CurateError>>) {
    match (hook, pool) {
        (Some(h), Some(p)) if !drafts.is_empty() => {
            let r: Vec<Result<(), crate::options::CurateError>> =
                p.install(|| drafts.par_iter_mut().map(|d| h.curate(d)).collect());
            (drafts, r)
        }
        _ => (drafts, vec![]),
    }
}

/// The curate stage's part of the report.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct CurateReport {
    /// Drafts the hook failed on or did not finish.
    pub(crate) errors: Vec<FileError>,
    /// Drafts left with (or fallen back to) the derived summary.
    pub(crate) fallbacks: Vec<String>,
}

impl CurateReport {
    /// Add this part to the source's report.
    pub(crate) fn fold(self, report: &mut SourceReport) {
        report.errors.extend(self.errors);
        report.curation_fallbacks.extend(self.fallbacks);
    }
}

/// Fold curated drafts into the batch (invalid summaries fall back to
/// the derived one; every fallback is listed). Without a hook in `env`
/// nothing changes.
pub(crate) fn fold_curation(
    env: &RunEnv,
    drafts: Vec<Draft>,
    results: Vec<Result<(), crate::options::CurateError>>,
    batch: &mut Batch,
) -> CurateReport {
    let mut out = CurateReport::default();
    if env.curate.is_none() || drafts.is_empty() {
        return out;
    }
    let results = results.into_iter().map(Some).chain(std::iter::repeat_with(|| None));
    for (d, r) in drafts.into_iter().zip(results) {
        match r {
            Some(Err(e)) => out.errors.push(err(&d.id, format!("curate: {}", crate::error::chain(&*e)))),
            None => out.errors.push(err(&d.id, "curate: the curate stage did not finish")),
            Some(Ok(())) => {}
        }
        let Some(mut n) = batch.nodes.get(&d.id).cloned() else { continue };
        let summary =
            if validate_summary(&d.summary).is_ok() { d.summary.clone() } else { derive_summary(&d.body, &d.title) };
        let scent = if summary == d.summary { d.scent.as_str() } else { "derived" };
        if scent != "llm" {
            out.fallbacks.push(d.id.clone());
        }
        // A curated scent keeps what made the derived one findable.
        let tags = if scent == "llm" {
            let derived = n.get_str("summary").unwrap_or_default();
            forest_model::kept_terms::kept_tags(&derived, &n.get_list("tags"), &summary, &d.tags)
        } else {
            d.tags.clone()
        };
        n.set_str("summary", &summary);
        if !tags.is_empty() {
            n.set_list("tags", &tags);
        }
        // Links the node already had stay as written; proposals append.
        let before = batch.curation_existing.remove(&d.id).unwrap_or(0);
        merge_proposed_links(&mut n, &d.links, before);
        n.set_str("scent", scent);
        n.set_str("scent_hash", &summary_fingerprint(&summary));
        batch.put(&d.id, n);
        batch.propagate_summary(env.forest, &d.id, &summary);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::testing::Fixture;
    use forest_model::node::Node;

    struct Upper;
    impl Curate for Upper {
        fn curate(&self, d: &mut Draft) -> Result<(), crate::options::CurateError> {
            if d.id == "bad" {
                return Err("model down".into());
            }
            d.summary = format!("Curated {}.", d.title);
            d.scent = "llm".into();
            Ok(())
        }
    }

    fn draft(id: &str) -> Draft {
        Draft {
            id: id.into(),
            parent: "_index".into(),
            title: id.to_uppercase(),
            body: format!("# {id}\n\nBody of {id}.\n"),
            summary: "Derived.".into(),
            tags: vec![],
            links: vec![],
            scent: "derived".into(),
        }
    }

    #[test]
    fn curates_on_the_pool_and_folds_with_fallbacks() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
        let (drafts, results) = curate_drafts(Some(&Upper), Some(&pool), vec![draft("ok"), draft("bad")]);
        assert_eq!(drafts[0].summary, "Curated OK.");
        assert!(results[0].is_ok() && results[1].is_err());
        let (same, none) = curate_drafts(None, None, vec![draft("x")]);
        assert!(none.is_empty() && same[0].summary == "Derived.");

        let fx = Fixture::new();
        let mut env = fx.env();
        env.curate = Some(&Upper);
        let mut batch = Batch::default();
        for id in ["ok", "bad"] {
            let n = Node::parse(&format!("---\nid: {id}\nsummary: Derived.\n---\n# {id}\n")).expect("node");
            batch.nodes.insert(id.into(), n);
        }
        let report = fold_curation(&env, drafts, results, &mut batch);
        assert_eq!(batch.nodes["ok"].get_str("scent").as_deref(), Some("llm"));
        assert_eq!(batch.nodes["ok"].get_str("summary").as_deref(), Some("Curated OK."));
        assert_eq!(batch.nodes["bad"].get_str("scent").as_deref(), Some("derived"));
        assert_eq!(report.fallbacks, vec!["bad"]);
        assert!(report.errors.iter().any(|e| e.path == "bad" && e.message.contains("model down")));
    }
}
