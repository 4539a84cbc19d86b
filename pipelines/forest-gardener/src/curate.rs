//! The Curator as the Gardener's curate hook, with the catalog as its
//! closed candidate set.

use crate::options::{Curate, Draft, DraftLink};
use forest_catalog::Catalog;
use forest_curator::{append_tags, Candidate, CandidateProvider, Curator, Link, ScentRequest};
use std::sync::Mutex;

/// BM25 candidates from `_derived/catalog.db` (branches already skipped).
pub struct CatalogCandidates {
    cat: Mutex<Catalog>,
}

impl CatalogCandidates {
    /// Wrap a catalog connection (its own connection: readers never block).
    pub fn new(cat: Catalog) -> Self {
        CatalogCandidates { cat: Mutex::new(cat) }
    }
}

impl CandidateProvider for CatalogCandidates {
    fn candidates(&self, query: &str, limit: usize) -> Vec<Candidate> {
        let Ok(cat) = self.cat.lock() else { return vec![] };
        cat.candidates(query, limit, &[])
            .unwrap_or_default()
            .into_iter()
            // `_meta/*` nodes describe the forest itself: never a link target.
            .filter(|c| !forest_model::ids::is_meta(&c.id))
            .map(|c| Candidate { id: c.id, title: c.title, summary: c.summary })
            .collect()
    }
}

/// Curate hook: LLM summary + tags, then closed-catalog edge proposals.
pub struct CuratorHook<'a> {
    curator: &'a Curator,
    candidates: Option<&'a dyn CandidateProvider>,
    directives: String,
    prepared: Option<std::sync::Arc<crate::prepared::PreparedRun>>,
}

impl<'a> CuratorHook<'a> {
    /// A hook over a shared Curator (its pacing and stats are per Curator).
    pub fn new(curator: &'a Curator, candidates: Option<&'a dyn CandidateProvider>, directives: &str) -> Self {
        CuratorHook { curator, candidates, directives: directives.to_string(), prepared: None }
    }

    /// Take summaries a distributed-ingest worker already curated for the
    /// very draft this hook is handed ([`crate::prepared::draft_key`]):
    /// no model call for those; proposals are still made here.
    pub fn with_prepared(mut self, prepared: std::sync::Arc<crate::prepared::PreparedRun>) -> Self {
        self.prepared = Some(prepared);
        self
    }
}

impl Curate for CuratorHook<'_> {
    fn concurrency(&self) -> usize {
        self.curator.config().concurrency
    }

    fn curate(&self, d: &mut Draft) -> Result<(), crate::options::CurateError> {
        let stored = self
            .prepared
            .as_ref()
            .and_then(|p| p.curation_for(&crate::prepared::draft_key(&d.title, &d.body, &d.tags, &self.directives)));
        if let Some(c) = stored {
            d.summary = c.summary;
            d.scent = c.scent;
            d.tags = c.tags;
        } else {
            // The derived scent stays unless the model's says more than the
            // names an agent already sees (title, file and folder names).
            let names = [d.id.as_str()];
            let req = ScentRequest {
                title: &d.title,
                body: &d.body,
                directives: &self.directives,
                derived: Some(&d.summary).filter(|s| !s.trim().is_empty()).map(String::as_str),
                names: &names,
                keyphrases: &d.tags,
            };
            let out = self.curator.summarize_scent(&req);
            if out.is_llm() {
                d.summary = out.summary;
                d.scent = "llm".into();
                d.tags = append_tags(&d.tags, &out.tags);
            }
        }
        // An offline Curator sends nothing: no candidate search either.
        if let Some(c) = self.candidates.filter(|_| !self.curator.offline()) {
            let existing: Vec<Link> = d
                .links
                .iter()
                .map(|l| Link {
                    rel: l.rel.clone(),
                    target: l.target.clone(),
                    confidence: l.confidence,
                    note: l.note.clone(),
                })
                .collect();
            let p = self.curator.propose_links(&d.id, Some(&d.parent), &d.title, &d.summary, &existing, c);
            for l in p.links {
                d.links.push(DraftLink { rel: l.rel, target: l.target, confidence: l.confidence, note: l.note });
            }
        }
        Ok(())
    }
}
