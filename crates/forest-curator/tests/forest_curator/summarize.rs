//! Leaf and branch summaries: prompt shape, validate-and-retry, salvage,
//! repair, fallbacks and the json_schema downgrade (dialect §4.2-§4.6).

use crate::support::{chat, curator, status, summary, Server, BODY};
use forest_curator::{SummaryOrigin, PROMPT_VERSION};
use forest_model::scent::{derive_summary, validate_summary};

const GOOD: &str =
    "Sales ledger of the Lisbon store, Q1 2026. Monthly revenue from Jan to Mar 2026 with 14,302 EUR in January.";

#[test]
fn good_reply_is_used_with_clean_tags_and_exact_stats() {
    let srv = Server::start(vec![summary(GOOD, &["Sales", "sales", "lisbon", "São", "2026", "x y"])]);
    let c = curator(&srv);
    let out = c.summarize("Lisbon sales", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Llm);
    assert_eq!(out.summary, GOOD);
    assert_eq!(out.tags, vec!["sales", "lisbon", "2026"]);
    let s = c.stats();
    assert_eq!((s.llm_summaries, s.fallbacks, s.retries, s.requests), (1, 0, 0, 1));
    assert_eq!((s.transport_errors, s.rejected, s.repaired, s.skipped), (0, 0, 0, 0));
    assert_eq!(s.first_attempt, 1);

    let req = &srv.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.body["model"], "test-model");
    assert_eq!(req.body["temperature"], 0.1);
    assert_eq!(req.body["max_tokens"], 300);
    assert_eq!(req.body["response_format"]["type"], "json_schema");
    assert_eq!(req.header("authorization"), Some("Bearer no-key"));
    let m = req.messages();
    assert_eq!(m.len(), 2);
    assert_eq!(m[0]["role"], "system");
    assert!(m[0]["content"].as_str().unwrap().contains("240 characters"));
    let user = m[1]["content"].as_str().unwrap();
    assert!(user.starts_with("Title: Lisbon sales\n\nContent:\nQuarterly sales ledger"), "{user}");
    assert!(user.contains("| Jan 2026 | 14,302 |"), "tables survive clipping");
    assert!(!PROMPT_VERSION.is_empty());
}

#[test]
fn too_long_then_anti_pattern_then_good_retries_twice_with_feedback() {
    let long = "Sales ledger. ".repeat(30);
    let srv = Server::start(vec![
        summary(&long, &[]),
        summary("This document describes sales.", &[]),
        summary(GOOD, &["sales"]),
    ]);
    let c = curator(&srv);
    let out = c.summarize("Lisbon sales", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Llm);
    assert_eq!(out.summary, GOOD);
    let s = c.stats();
    assert_eq!((s.retries, s.llm_summaries, s.requests, s.repaired), (2, 1, 3, 0));
    assert_eq!(s.first_attempt, 0, "accepted only at the third attempt");
    assert!(s.last_reject.as_deref().unwrap().starts_with("summary: anti-pattern"));
    let m = srv.requests()[2].messages();
    assert_eq!(m.len(), 6, "system, user, then assistant+user per rejection");
    assert_eq!(m[2]["role"], "assistant");
    let fb = m[3]["content"].as_str().unwrap();
    assert!(fb.starts_with("previous summary rejected: summary: exceeds 60 tokens"), "{fb}");
    assert!(fb.ends_with("; rewrite strictly, keep under 240 characters, JSON only"));
}

#[test]
fn over_long_replies_are_repaired_by_whole_sentences() {
    let extra = "Rows list monthly totals. Figures are net of tax. Returns are excluded. Card and cash both count. \
                 The ledger is kept weekly. Staff notes sit apart. Refunds wait a day. Coupons are ignored.";
    let long = format!("{GOOD} {extra}");
    let srv = Server::start(vec![summary(&long, &["sales"]); 3]);
    let c = curator(&srv);
    let out = c.summarize("Lisbon sales", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Repaired);
    assert!(validate_summary(&out.summary).is_ok());
    assert!(!out.summary.ends_with('…'), "whole sentences kept: {}", out.summary);
    assert!(out.summary.starts_with(GOOD));
    assert_eq!(out.tags, vec!["sales"]);
    let s = c.stats();
    assert_eq!((s.repaired, s.llm_summaries, s.retries, s.rejected, s.fallbacks), (1, 1, 2, 0, 0));
    assert_eq!((s.requests, s.repeated_rejection_stops), (2, 1), "the same reply twice ends the loop");
}

#[test]
fn the_same_anti_pattern_twice_falls_back_to_derived() {
    let srv = Server::start(vec![summary("File containing the sales.", &[]); 3]);
    let c = curator(&srv);
    let out = c.summarize("Lisbon sales", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Fallback);
    assert_eq!(out.summary, derive_summary(BODY, "Lisbon sales"));
    assert!(validate_summary(&out.summary).is_ok());
    assert!(out.tags.is_empty());
    let s = c.stats();
    assert_eq!((s.rejected, s.fallbacks, s.llm_summaries, s.retries, s.requests), (1, 1, 0, 2, 2));
    assert_eq!(s.repeated_rejection_stops, 1);
    assert!(s.last_reject.unwrap().contains("anti-pattern \"file containing...\""));
    assert!(s.last_reply.unwrap().contains("File containing"));
}

#[test]
fn garbage_then_truncated_json_is_salvaged() {
    let truncated = format!("{{\"summary\": \"{GOOD}\", \"tags\": [\"sal");
    let srv = Server::start(vec![chat("Sure, here is a summary!"), chat(&truncated)]);
    let c = curator(&srv);
    let out = c.summarize("Lisbon sales", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Llm);
    assert_eq!(out.summary, GOOD);
    assert!(out.tags.is_empty(), "salvage keeps no tags");
    let s = c.stats();
    assert_eq!((s.retries, s.requests), (1, 2), "salvage itself needs no retry");
    assert_eq!(s.last_reject.as_deref(), Some("no summary found in the JSON reply"));
}

#[test]
fn empty_and_blank_replies_fall_back() {
    let srv = Server::start(vec![chat("{\"summary\": \"\"}"), chat("  "), chat("{\"summary\": \"  \"}")]);
    let c = curator(&srv);
    let out = c.summarize("Lisbon sales", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Fallback);
    let s = c.stats();
    assert_eq!(s.last_reject.as_deref(), Some("no summary found in the JSON reply"));
    assert_eq!((s.retries, s.rejected, s.fallbacks), (3, 1, 1));

    let srv = Server::start(vec![chat(""); 3]);
    let c = curator(&srv);
    c.summarize("Lisbon sales", BODY, "");
    assert_eq!(c.stats().last_reject.as_deref(), Some("the model returned an empty message"));
    assert_eq!((c.stats().requests, c.stats().repeated_rejection_stops), (2, 1), "empty twice: no third call");
}

#[test]
fn rejection_survives_later_success_and_empty_body_is_skipped() {
    let srv = Server::start(vec![chat("nope"), summary(GOOD, &[]), summary(GOOD, &[])]);
    let c = curator(&srv);
    assert_eq!(c.summarize("A", BODY, "").origin, SummaryOrigin::Llm);
    assert_eq!(c.summarize("B", &format!("{BODY}\nAnother body, 2026."), "").origin, SummaryOrigin::Llm);
    let skipped = c.summarize("Empty", " \n ", "");
    assert_eq!(skipped.origin, SummaryOrigin::Skipped);
    assert!(validate_summary(&skipped.summary).is_ok());
    let s = c.stats();
    assert_eq!(s.last_reject.as_deref(), Some("no summary found in the JSON reply"));
    assert_eq!((s.skipped, s.requests, s.llm_summaries), (1, 3, 2));
}

#[test]
fn directives_reach_the_system_prompt() {
    let srv = Server::start(vec![summary(GOOD, &[])]);
    let c = curator(&srv);
    c.summarize("Lisbon sales", BODY, "Mention the store code.");
    let sys = srv.requests()[0].messages()[0]["content"].as_str().unwrap().to_string();
    assert!(sys.contains("Operator directives (apply them):\nMention the store code."), "{sys}");
}

#[test]
fn schema_refusal_switches_to_plain_json_for_the_session() {
    let srv = Server::start(vec![
        status(500, "{\"error\": \"response_format json_schema is not supported\"}"),
        summary(GOOD, &[]),
        summary(GOOD, &[]),
    ]);
    let c = curator(&srv);
    assert!(c.structured_output());
    assert_eq!(c.summarize("A", BODY, "").origin, SummaryOrigin::Llm);
    assert_eq!(c.summarize("B", &format!("{BODY}\nOther body."), "").origin, SummaryOrigin::Llm);
    assert!(!c.structured_output());
    let reqs = srv.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].body.get("response_format").is_some());
    assert!(reqs[1].body.get("response_format").is_none());
    assert!(reqs[2].body.get("response_format").is_none());
    let s = c.stats();
    assert_eq!((s.transport_errors, s.transport_retries, s.retries), (0, 0, 0));
}

#[test]
fn branch_summary_good_invalid_empty_and_transport() {
    let region = "Sales region of 2026: ledgers for Lisbon and Porto, Jan-Mar 2026.";
    let entries =
        vec!["- [[sales/lisbon]] Lisbon ledger, Q1 2026.".to_string(), "- [[sales/porto]] Porto ledger.".into()];
    let srv = Server::start(vec![
        chat(&format!("{{\"summary\": \"{region}\"}}")),
        summary("File containing files.", &[]),
        summary("File containing files.", &[]),
    ]);
    let c = curator(&srv);
    assert_eq!(c.branch_summary("Sales", &entries).as_deref(), Some(region));
    let user = srv.requests()[0].messages()[1]["content"].as_str().unwrap().to_string();
    assert!(user.starts_with("Branch: Sales\n\nChildren:\n- [[sales/lisbon]]"), "{user}");
    assert_eq!(c.branch_summary("Sales", &entries), None, "the same invalid reply twice");
    assert_eq!(c.branch_summary("Sales", &[]), None);
    let s = c.stats();
    assert_eq!((s.branch_rollups, s.branch_fallbacks, s.requests), (1, 2, 3), "empty entries make no call");

    let mut cfg = crate::support::config("http://127.0.0.1:9/v1");
    cfg.max_transport_retries = 0;
    let dead = forest_curator::Curator::new(cfg).unwrap();
    assert_eq!(dead.branch_summary("Sales", &entries), None);
    assert_eq!((dead.stats().transport_errors, dead.stats().branch_fallbacks), (1, 1));
}
