//! Issue 35: a model summary must be grounded in its source and say more
//! than the names an agent already sees; otherwise the derived scent stays
//! and the report counts why.

use crate::support::{curator, summary, Server, BODY};
use forest_curator::{ScentRequest, SummaryOrigin};
use forest_model::scent::derive_summary;

const GOOD: &str = "Sales ledger of the Lisbon store for Q1: 14,302 EUR of revenue in January 2026.";

fn request<'a>(derived: &'a str, names: &'a [&'a str]) -> ScentRequest<'a> {
    ScentRequest { title: "Lisbon sales", body: BODY, directives: "", derived: Some(derived), names, keyphrases: &[] }
}

#[test]
fn invented_numbers_and_names_are_rejected_then_the_derived_scent_stays() {
    let invented = [
        "Sales ledger of the Porto store: 99,000 EUR in July 2024, audited by John Smith.",
        "Sales ledger of the Faro store: 12,000 EUR in 2023.",
        "Sales ledger of the Braga store, audited by Acme in 2025.",
    ];
    let srv = Server::start(invented.iter().map(|i| summary(i, &[])).collect());
    let c = curator(&srv);
    let derived = derive_summary(BODY, "Lisbon sales");
    let out = c.summarize_scent(&request(&derived, &[]));
    assert_eq!(out.origin, SummaryOrigin::Fallback);
    assert_eq!(out.summary, derived, "the derived summary stays after the whole retry budget");
    let s = c.stats();
    assert_eq!((s.requests, s.grounding_rejections, s.retries, s.llm_summaries), (3, 3, 3, 0));
    assert_eq!(s.repeated_rejection_stops, 0, "each reply had a new fault");
    // The retry names the offending tokens.
    let retry = srv.requests()[1].messages();
    let fb = retry.last().unwrap()["content"].as_str().unwrap();
    assert!(fb.contains("not in the content: Porto, 99,000, 2024, John, Smith"), "{fb}");
    assert!(out.reason.unwrap().contains("Braga"));

    // The same invention twice: the model ignored the feedback, the third
    // call is not made.
    let srv = Server::start(vec![summary(invented[0], &[]); 3]);
    let c = curator(&srv);
    assert_eq!(c.summarize_scent(&request(&derived, &[])).origin, SummaryOrigin::Fallback);
    let s = c.stats();
    assert_eq!((s.requests, s.grounding_rejections, s.repeated_rejection_stops, s.rejected), (2, 2, 1, 1));
}

#[test]
fn invented_tag_numbers_are_rejected_and_a_grounded_retry_is_taken() {
    let srv = Server::start(vec![summary(GOOD, &["sales", "2019"]), summary(GOOD, &["sales", "2026"])]);
    let c = curator(&srv);
    let out = c.summarize_scent(&request("Quarterly sales ledger.", &[]));
    assert_eq!(out.origin, SummaryOrigin::Llm);
    assert_eq!((out.summary.as_str(), out.tags.clone()), (GOOD, vec!["sales".to_string(), "2026".into()]));
    assert_eq!(c.stats().grounding_rejections, 1);
}

#[test]
fn the_title_or_the_file_name_as_a_summary_keeps_the_derived_scent() {
    let names = ["finance/lisbon-sales-q1", "finance"];
    for answer in ["Lisbon sales.", "Lisbon sales Q1 finance.", "Finance: lisbon-sales-q1."] {
        let srv = Server::start(vec![summary(answer, &["sales"])]);
        let c = curator(&srv);
        let derived = "Quarterly sales ledger for the Lisbon store; monthly revenue in EUR.";
        let out = c.summarize_scent(&request(derived, &names));
        assert_eq!(out.origin, SummaryOrigin::KeptDerived, "{answer}: {out:?}");
        assert_eq!(out.summary, derived, "{answer}");
        assert!(out.tags.is_empty(), "nothing of the candidate is taken");
        assert!(out.reason.unwrap().starts_with("kept derived: less informative"));
        let s = c.stats();
        assert_eq!((s.kept_derived_less_informative, s.llm_summaries, s.requests), (1, 0, 1), "{answer}");
    }
}

#[test]
fn a_repeated_phrase_is_rejected_then_the_derived_scent_stays() {
    let looped = "Sales ledger, sales ledger, sales ledger of the store.";
    let srv = Server::start(vec![summary(looped, &[]); 3]);
    let c = curator(&srv);
    let derived = "Quarterly sales ledger for the Lisbon store.";
    let out = c.summarize_scent(&request(derived, &[]));
    assert_eq!(out.origin, SummaryOrigin::Fallback);
    assert_eq!(out.summary, derived);
    let s = c.stats();
    assert_eq!((s.repeated_phrase_rejections, s.llm_summaries, s.requests), (2, 0, 2), "stopped at the repeat");
    assert_eq!(s.repeated_rejection_stops, 1);
    assert!(s.last_reject.unwrap().contains("repeats"));
}

#[test]
fn a_summary_that_says_more_replaces_the_derived_one() {
    let srv = Server::start(vec![summary(GOOD, &["revenue"])]);
    let c = curator(&srv);
    let out = c.summarize_scent(&request("Lisbon sales.", &["finance/lisbon-sales"]));
    assert_eq!(out.origin, SummaryOrigin::Llm);
    assert_eq!(out.summary, GOOD);
    assert_eq!(c.stats().kept_derived_less_informative, 0);
}

#[test]
fn a_rollup_that_lists_its_children_or_repeats_itself_is_rejected() {
    let entries: Vec<String> = ["spinlock", "mutex", "barrier"]
        .iter()
        .map(|n| format!("- [[man3/{n}]] — {n} primitives of POSIX threads."))
        .collect();
    let listing = "Pages spinlock, mutex and barrier.";
    let looped = "This branch contains a pthread_spinlock, pthread_spinlock, pthread_spinlock.";
    let srv = Server::start(vec![summary(listing, &[])]);
    let c = curator(&srv);
    // The listing passes the loop (grounded, no repeat) but says nothing
    // beyond the children's names: the deterministic summary stays.
    assert_eq!(c.branch_summary("man3", &entries), None);
    let s = c.stats();
    assert_eq!((s.kept_derived_less_informative, s.branch_fallbacks, s.requests), (1, 1, 1));
    let srv = Server::start(vec![summary(looped, &[]); 3]);
    let c = curator(&srv);
    assert_eq!(c.branch_summary("man3", &entries), None);
    let s = c.stats();
    assert_eq!((s.repeated_phrase_rejections, s.branch_fallbacks, s.branch_rollups), (2, 1, 0));
    assert_eq!((s.requests, s.repeated_rejection_stops), (2, 1));
    let good = "Synchronisation primitives of POSIX threads: locks and condition waits.";
    let srv = Server::start(vec![summary(good, &[])]);
    assert_eq!(curator(&srv).branch_summary("man3", &entries).as_deref(), Some(good));
}
