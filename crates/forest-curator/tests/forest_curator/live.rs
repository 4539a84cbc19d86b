//! End-to-end against a real OpenAI-compatible server (ops/llm/start.sh).
//! Skipped, with a printed reason, unless FOREST_TEST_LLM_URL is set.

use forest_curator::{Candidate, CandidateProvider, Curator, CuratorConfig, SummaryOrigin};
use forest_model::scent::validate_summary;
use std::time::Instant;

const DOCS: [(&str, &str); 3] = [
    (
        "Lisbon store sales, Q1 2026",
        "The Lisbon store sold 14,302 units between January and March 2026. Revenue reached \
         412,000 EUR, up 8% on Q1 2025. Best sellers were coffee machines (2,100 units) and \
         kettles (1,740 units). Returns are tracked separately in the returns ledger.",
    ),
    (
        "Onboarding checklist for engineers",
        "New engineers get a laptop on day one, meet their mentor on day two and ship a first \
         change in their first week. The checklist covers accounts, VPN, code review rules and \
         the on-call rotation, which starts after three months. Owner: Maria Santos, updated May 2025.",
    ),
    (
        "Porto warehouse incident, 12 August 2024",
        "A forklift collision in aisle 7 of the Porto warehouse on 12 August 2024 damaged 40 pallets \
         of ceramic tiles. Nobody was hurt. Losses were estimated at 23,500 EUR and the aisle \
         reopened after two days. Root cause: a faulty reversing alarm.",
    ),
];

struct Few;

impl CandidateProvider for Few {
    fn candidates(&self, _query: &str, limit: usize) -> Vec<Candidate> {
        let c = |id: &str, t: &str, s: &str| Candidate { id: id.into(), title: t.into(), summary: s.into() };
        vec![
            c(
                "sales/porto-q1-2026",
                "Porto store sales, Q1 2026",
                "Sales of the Porto store, Jan-Mar 2026, 9,800 units.",
            ),
            c("sales/returns-q1-2026", "Returns ledger Q1 2026", "Returned items of all stores, Jan-Mar 2026."),
            c("hr/holidays-2026", "Holiday calendar 2026", "Public holidays and office closures in 2026."),
        ]
        .into_iter()
        .take(limit)
        .collect()
    }
}

#[test]
fn real_server_summaries_are_always_valid() {
    let Ok(url) = std::env::var("FOREST_TEST_LLM_URL") else {
        forest_testkit::skip("FOREST_TEST_LLM_URL is not set (the llama.cpp server: ops/llm/start.sh)");
        return;
    };
    let c = Curator::new(CuratorConfig::new(&url)).unwrap();
    eprintln!("live: endpoint {url}, model {}", c.model());
    let mut llm = 0u64;
    for (title, body) in DOCS {
        let t = Instant::now();
        let out = c.summarize(title, body, "");
        let ms = t.elapsed().as_millis();
        eprintln!("live: {ms:>6} ms  {:?}  {:?}  tags={:?}", out.origin, out.summary, out.tags);
        assert!(validate_summary(&out.summary).is_ok(), "{out:?}");
        assert_ne!(out.origin, SummaryOrigin::Skipped);
        if out.is_llm() {
            llm += 1;
        }
    }
    let s = c.stats();
    eprintln!("live: stats {}", serde_json::to_string(&s).unwrap());
    assert_eq!(s.llm_summaries, llm);
    // Each document ends one of three ways: the model's summary, a fallback,
    // or the derived scent kept because the candidate said no more.
    assert_eq!(s.llm_summaries + s.fallbacks + s.kept_derived_less_informative, DOCS.len() as u64);
    assert!(s.repaired <= s.llm_summaries);
    assert_eq!(s.fallbacks, s.rejected + s.transport_errors);
    assert!(s.requests >= DOCS.len() as u64 && s.requests <= 1 + 3 * DOCS.len() as u64 + s.transport_retries);

    let t = Instant::now();
    let p = c.propose_links(
        "sales/lisbon-q1-2026",
        Some("sales/_index"),
        DOCS[0].0,
        "Lisbon store sales, Q1 2026.",
        &[],
        &Few,
    );
    eprintln!("live: proposals in {} ms: {:?}", t.elapsed().as_millis(), p);
    assert!(p.links.len() <= 3);
    assert!(p.links.iter().all(|l| p.offered.contains(&l.target) && l.rel == "related-to"));
}
