//! Edge proposals (dialect §4.4): closed candidate set, caps, fallbacks.

use crate::support::{chat, curator, Server};
use forest_curator::{Candidate, CandidateProvider, Link, OFFER_MAX, PROPOSAL_CONFIDENCE};
use serde_json::json;
use std::sync::Mutex;

/// Returns fixed rows and records the queries it was asked.
struct Fixed {
    rows: Vec<Candidate>,
    asked: Mutex<Vec<(String, usize)>>,
}

impl Fixed {
    fn new(ids: &[&str]) -> Fixed {
        let rows = ids
            .iter()
            .map(|id| Candidate {
                id: id.to_string(),
                title: format!("Title {id}"),
                summary: format!("Summary of {id}."),
            })
            .collect();
        Fixed { rows, asked: Mutex::new(Vec::new()) }
    }
}

impl CandidateProvider for Fixed {
    fn candidates(&self, query: &str, limit: usize) -> Vec<Candidate> {
        self.asked.lock().unwrap().push((query.to_string(), limit));
        self.rows.iter().take(limit).cloned().collect()
    }
}

fn related(picks: serde_json::Value) -> crate::support::Step {
    chat(&json!({ "related": picks }).to_string())
}

const ID: &str = "sales/lisbon";
const PARENT: &str = "sales/_index";

#[test]
fn valid_pick_becomes_a_related_to_link() {
    let srv = Server::start(vec![related(json!([{"id": "sales/porto", "note": "  same quarter  "}]))]);
    let c = curator(&srv);
    let p = Fixed::new(&["sales/porto", "hr/payroll"]);
    let out = c.propose_links(ID, Some(PARENT), "Lisbon sales", "Sales, Q1 2026.", &[], &p);
    assert_eq!(
        out.links,
        vec![Link {
            rel: "related-to".into(),
            target: "sales/porto".into(),
            confidence: PROPOSAL_CONFIDENCE,
            note: Some("same quarter".into())
        }]
    );
    assert!(!out.fallback);
    assert_eq!(p.asked.lock().unwrap()[0], ("Lisbon sales Sales, Q1 2026.".to_string(), 3 * OFFER_MAX));
    let req = &srv.requests()[0];
    let m = req.messages();
    assert_eq!((m.len(), m[0]["role"].as_str()), (1, Some("user")), "user-only prompt");
    let prompt = m[0]["content"].as_str().unwrap();
    assert!(prompt.contains("id: sales/porto") && prompt.contains("id: hr/payroll"));
    let allowed = &req.body["response_format"]["json_schema"]["schema"]["properties"]["related"]["items"]["properties"]
        ["id"]["enum"];
    assert_eq!(allowed, &json!(["sales/porto", "hr/payroll"]));
    assert_eq!(c.stats().links_proposed, 1);
}

#[test]
fn hallucinated_malformed_and_numeric_picks_are_dropped() {
    let srv = Server::start(vec![related(json!([
        {"id": "sales/invented"}, 42, {"note": "no id"}, {"id": 7}, "hr/payroll", [1], {"id": "sales/_index"}
    ]))]);
    let c = curator(&srv);
    let p = Fixed::new(&["sales/porto", "hr/payroll"]);
    let out = c.propose_links(ID, Some(PARENT), "Lisbon", "Sales.", &[], &p);
    assert_eq!(out.links.iter().map(|l| l.target.as_str()).collect::<Vec<_>>(), vec!["hr/payroll"]);
    assert_eq!(out.links[0].note, None);
    assert_eq!(out.dropped, 6);
    assert!(!out.fallback);
    assert!(out.links.iter().all(|l| out.offered.contains(&l.target)));
    let s = c.stats();
    assert_eq!((s.proposal_fallbacks, s.links_proposed), (0, 1));
}

#[test]
fn cap_three_with_dedup_and_existing_links_skipped() {
    let srv = Server::start(vec![related(json!(["a/1", "a/1", "a/2", "a/3", "a/4", "a/5"]))]);
    let c = curator(&srv);
    let p = Fixed::new(&["a/1", "a/2", "a/3", "a/4", "a/5"]);
    let existing = vec![Link { rel: "related-to".into(), target: "a/2".into(), confidence: 0.8, note: None }];
    let out = c.propose_links(ID, None, "T", "S.", &existing, &p);
    let targets: Vec<&str> = out.links.iter().map(|l| l.target.as_str()).collect();
    assert_eq!(targets, vec!["a/1", "a/3", "a/4"]);
    assert_eq!(out.dropped, 3);
    assert_eq!(c.stats().links_proposed, 3);
}

#[test]
fn self_parent_and_branches_are_never_offered() {
    let srv = Server::start(vec![]);
    let c = curator(&srv);
    let p = Fixed::new(&[ID, PARENT, "hr/_index", "_index"]);
    let out = c.propose_links(ID, Some(PARENT), "T", "S.", &[], &p);
    assert!(out.offered.is_empty() && out.links.is_empty() && !out.fallback);
    assert_eq!(srv.count(), 0, "nothing offered, no call");

    let srv = Server::start(vec![related(json!([ID, PARENT]))]);
    let c = curator(&srv);
    let ids: Vec<String> = (0..20).map(|i| format!("n/{i}")).collect();
    let mut all: Vec<&str> = vec![ID, PARENT, "n/0"];
    all.extend(ids.iter().map(String::as_str));
    let out = c.propose_links(ID, Some(PARENT), "T", "S.", &[], &Fixed::new(&all));
    assert_eq!(out.offered.len(), OFFER_MAX);
    assert_eq!(out.offered[0], "n/0", "duplicates collapse");
    assert!(!out.offered.iter().any(|o| o == ID || o == PARENT || o.ends_with("_index")));
    assert!(out.links.is_empty(), "self/parent picks are outside the offered set");
}

#[test]
fn bad_replies_are_proposal_fallbacks_but_empty_list_is_fine() {
    let srv = Server::start(vec![
        chat("I think sales/porto."),
        chat("{\"related\": \"sales/porto\"}"),
        related(json!([])),
        crate::support::status(400, "bad request"),
    ]);
    let c = curator(&srv);
    let p = Fixed::new(&["sales/porto"]);
    let a = c.propose_links(ID, None, "T", "S.", &[], &p);
    let b = c.propose_links(ID, None, "T", "S.", &[], &p);
    let e = c.propose_links(ID, None, "T", "S.", &[], &p);
    let t = c.propose_links(ID, None, "T", "S.", &[], &p);
    assert!(a.fallback && b.fallback && !e.fallback && t.fallback);
    assert!(a.links.is_empty() && b.links.is_empty() && e.links.is_empty() && t.links.is_empty());
    let s = c.stats();
    assert_eq!((s.proposal_fallbacks, s.links_proposed), (3, 0));
}

#[test]
fn note_is_clipped_to_120_chars() {
    let long = "n".repeat(300);
    let srv = Server::start(vec![related(json!([{"id": "a/1", "note": long}]))]);
    let c = curator(&srv);
    let out = c.propose_links(ID, None, "T", "S.", &[], &Fixed::new(&["a/1"]));
    assert_eq!(out.links[0].note.as_ref().map(|n| n.chars().count()), Some(120));
}
