//! The curation cache: a hit makes no HTTP call; failures are not cached.

use crate::support::{config, summary, Server, BODY};
use forest_curator::{CurationCache, Curator, SummaryOrigin};

const GOOD: &str = "Sales ledger of the Lisbon store, Q1 2026. Monthly revenue with 14,302 EUR in January.";

#[test]
fn cache_hit_makes_zero_requests_even_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("_derived/curation.db");
    let srv = Server::start(vec![summary(GOOD, &["sales"]), summary(GOOD, &["sales"]), summary(GOOD, &[])]);

    let c = Curator::new(config(&srv.url())).unwrap().with_cache(CurationCache::open(&db).unwrap());
    assert_eq!(c.summarize("Lisbon", BODY, "").origin, SummaryOrigin::Llm);
    assert_eq!(srv.count(), 1);
    let hit = c.summarize("Lisbon", BODY, "");
    assert_eq!(
        (hit.origin, hit.summary.as_str(), hit.tags.clone()),
        (SummaryOrigin::Cached, GOOD, vec!["sales".to_string()])
    );
    assert_eq!(srv.count(), 1, "hit: no HTTP");
    drop(c);

    // A new run (new Curator, reopened file) still pays nothing.
    let c = Curator::new(config(&srv.url())).unwrap().with_cache(CurationCache::open(&db).unwrap());
    assert_eq!(c.summarize("Lisbon", BODY, "").origin, SummaryOrigin::Cached);
    assert_eq!(srv.count(), 1);
    assert_eq!((c.stats().cache_hits, c.stats().llm_summaries, c.stats().requests), (1, 1, 0));

    // Other content, directives or model: a miss.
    assert_eq!(c.summarize("Lisbon", BODY, "be brief").origin, SummaryOrigin::Llm);
    assert_eq!(srv.count(), 2);
    let mut other = config(&srv.url());
    other.model = "other-model".into();
    let c2 = Curator::new(other).unwrap().with_cache(CurationCache::open(&db).unwrap());
    assert_eq!(c2.summarize("Lisbon", BODY, "").origin, SummaryOrigin::Llm, "other model: a miss");
    assert_eq!(srv.count(), 3);
}

#[test]
fn fallbacks_are_not_cached() {
    let srv = Server::start(vec![
        summary("File containing sales.", &[]),
        summary("File containing sales.", &[]),
        summary("File containing sales.", &[]),
        summary(GOOD, &[]),
    ]);
    let c = Curator::new(config(&srv.url())).unwrap().with_cache(CurationCache::in_memory().unwrap());
    assert_eq!(c.summarize("Lisbon", BODY, "").origin, SummaryOrigin::Fallback);
    assert_eq!(c.summarize("Lisbon", BODY, "").origin, SummaryOrigin::Llm, "retried later, not served from cache");
    assert_eq!(srv.count(), 4);
}

#[test]
fn branch_summaries_are_cached_too() {
    let srv = Server::start(vec![summary("Sales region, Q1 2026: Lisbon and Porto ledgers.", &[])]);
    let c = Curator::new(config(&srv.url())).unwrap().with_cache(CurationCache::in_memory().unwrap());
    let entries =
        vec!["- [[sales/lisbon]] Lisbon ledger, Q1 2026.".to_string(), "- [[sales/porto]] Porto ledger.".into()];
    let a = c.branch_summary("Sales", &entries);
    let b = c.branch_summary("Sales", &entries);
    assert!(a.is_some());
    assert_eq!(a, b);
    assert_eq!((srv.count(), c.stats().branch_rollups, c.stats().cache_hits), (1, 2, 1));
}
