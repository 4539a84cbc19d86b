//! Fault injection: a scripted chat server plays a model that calls unknown
//! tools, passes bad arguments, writes garbage, never answers or gives
//! low-confidence answers; the loop answers with envelopes, respects its
//! step budget, ends with a (possibly forced) result and never panics.

use forest_navigator::{hunt, HuntOptions, Step as TrailStep};
use serde_json::Value;

use crate::support::{chat, config, status, Server};
use crate::{fixture, forest};

fn last_user(req: &crate::support::Request) -> String {
    req.messages().iter().rev().find(|m| m["role"] == "user").map(|m| m["content"].to_string()).unwrap_or_default()
}

fn kinds(trail: &[TrailStep]) -> Vec<String> {
    trail.iter().filter(|s| s.by == "model").map(|s| s.kind.clone()).collect()
}

const PROOF: &str = "Edge sensor for agricultural telemetry, SKU A-101.";

#[test]
fn bad_calls_get_envelopes_and_the_hunt_still_answers() {
    let server = Server::with(std::time::Duration::ZERO, |i, _| {
        chat(match i {
            0 => r#"{"tool": "fly", "args": {}}"#,
            1 => r#"{"tool": "look", "args": {"id": 42}}"#,
            2 => r#"{"tool": "pick", "args": ["products/sensor-x"]}"#,
            3 => "Let me think about this without JSON.",
            4 => r#"{"tool": "look", "args": {"id": "products/sensor-x"}}"#,
            5 => r#"{"tool": "pick", "args": {"id": "products/sensor-x", "bogus": 1}}"#,
            _ => {
                r#"{"tool":"answer","args":{"text":"Sensor X has SKU A-101.","answer_nodes":["products/sensor-x"],"confidence":0.9,"proof":"Edge sensor for agricultural telemetry, SKU A-101."}}"#
            }
        })
    });
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "What is the SKU of the field telemetry sensor?", HuntOptions::solo(14));
    assert_eq!(r.stop, "answered", "{r:#?}");
    assert!(!r.forced);
    assert_eq!(r.answer_nodes, vec!["products/sensor-x"]);
    assert!(r.answer.as_deref().unwrap().contains("A-101"));
    assert_eq!(kinds(&r.trail), vec!["unknown_tool", "error", "error", "unparseable", "call", "error", "answer"]);
    let reqs = server.requests();
    assert!(last_user(&reqs[1]).contains("unknown tool 'fly'"));
    assert!(last_user(&reqs[2]).contains("parameter 'id' expects string or list of string, got integer"));
    assert!(last_user(&reqs[3]).contains("args must be an object"));
    assert!(last_user(&reqs[4]).contains("E_PROTOCOL"));
    assert!(last_user(&reqs[6]).contains("unknown parameter 'bogus'"));
    assert!(reqs.iter().all(|q| q.body.get("tools").is_none()), "text protocol: no tools field");
    // The opening look and the model's look ran; the bad calls did not count as calls.
    assert_eq!(r.cost.calls, 2);
    assert_eq!(r.cost.llm_calls, 7);
    assert_eq!(r.cost.steps, 7);
    assert!(r.cost.observation_tokens > 0 && r.cost.prompt_tokens_est > r.cost.completion_tokens_est);
    assert!(PROOF.contains("A-101"));
}

#[test]
fn a_model_that_never_answers_is_stopped_and_synthesised() {
    // Always the same search: repeats climb the stall ladder, the harness
    // opens pending hits itself (≤ 3), then leaves; synthesis gets garbage.
    let server = Server::with(std::time::Duration::ZERO, |_, req| {
        if last_user(req).contains("steps_over") {
            chat("I really cannot say.")
        } else {
            chat(r#"{"tool":"locate","args":{"query":"sensor telemetry"}}"#)
        }
    });
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "Which sensor does telemetry?", HuntOptions::solo(14));
    assert!(r.forced, "{r:#?}");
    assert_eq!(r.stop, "stalled");
    assert!(kinds(&r.trail).iter().filter(|k| *k == "repeat").count() >= 2);
    assert!(r.trail.iter().any(|s| s.by == "harness" && s.tool.as_deref() == Some("pick")), "eager digest");
    assert_eq!(r.confidence, 0.1, "last resort: the raw reply");
    assert_eq!(r.answer.as_deref(), Some("I really cannot say."));
    assert!(r.cost.steps <= 14 && r.cost.llm_calls <= 14 + 3);
}

#[test]
fn garbage_spends_exactly_the_budget_then_synthesis() {
    let server = Server::with(std::time::Duration::ZERO, |_, _| chat("}{ not json at all"));
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "Anything?", HuntOptions::solo(5));
    assert_eq!((r.stop.as_str(), r.cost.steps, r.cost.llm_calls), ("budget", 5, 8), "{r:#?}");
    assert!(r.trail.iter().any(|s| s.kind == "deadline"), "a deadline nudge with 2 steps left");
    assert!(r.forced && r.confidence <= 0.1);
    assert!(r.answer_nodes.is_empty(), "nothing was opened but the index");
}

#[test]
fn low_confidence_answers_bounce_then_the_gate_gives_in() {
    let answer = r#"{"tool":"answer","args":{"text":"maybe A-101","answer_nodes":["products/sensor-x"],"confidence":0.2,"proof":""}}"#;
    let server = Server::with(std::time::Duration::ZERO, move |_, _| chat(answer));
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "SKU?", HuntOptions::solo(14));
    assert_eq!((r.stop.as_str(), r.rejections, r.confidence), ("answered", 3, 0.0), "{r:#?}");
    assert_eq!(r.cost.steps, 1, "rejected answers refund their turn");
    let reqs = server.requests();
    assert!(last_user(&reqs[1]).contains("answer_rejected"));
    assert!(last_user(&reqs[2]).contains("unexplored"), "from rejection 2 the fix lists branches");
}

#[test]
fn a_dead_endpoint_ends_the_hunt_with_an_error_not_a_panic() {
    let server = Server::with(std::time::Duration::ZERO, |_, _| status(500, "boom"));
    let mut cfg = config(&server.url());
    cfg.max_transport_retries = 0;
    let llm = forest_curator::Curator::new(cfg).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "Anything?", HuntOptions::solo(14));
    assert_eq!(r.stop, "llm_error");
    assert!(r.answer.is_none() && r.error.as_deref().unwrap().contains("500"));
    assert_eq!(server.count(), 1);
}

#[test]
fn learn_closes_the_session_with_the_answer_nodes() {
    let server = Server::with(std::time::Duration::ZERO, |i, _| {
        chat(match i {
            0 => r#"{"tool":"pick","args":{"id":"products/sensor-x"}}"#,
            _ => {
                r#"{"tool":"answer","args":{"text":"SKU A-101","answer_nodes":["products/sensor-x"],"confidence":0.9,"proof":"SKU A-101"}}"#
            }
        })
    });
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, true);
    let r = hunt(&mut f, &llm, "SKU of the sensor?", HuntOptions::solo(14));
    let closed = r.closed.clone().expect("closed");
    assert_eq!(closed["outcome"]["success"], Value::Bool(true), "{r:#?}");
    assert_eq!(closed["outcome"]["answer_nodes"][0], "products/sensor-x");
    assert_eq!(r.cost.trail_len, Some(1), "opening look, then the pick of the answer node");
    let trace = std::fs::read_to_string(root.join("_derived/traces/test-hunt.jsonl")).unwrap();
    assert!(trace.lines().last().unwrap().contains("\"outcome\""));
}

#[test]
fn a_small_context_window_is_learnt_and_the_walk_goes_on() {
    // A server that plays llama.cpp with a small window: a prompt over
    // LIMIT characters is refused with its `exceed_context_size_error`.
    const LIMIT: usize = 9_000;
    let size = |req: &crate::support::Request| -> usize {
        req.messages().iter().map(|m| m["content"].as_str().unwrap_or("").len()).sum()
    };
    let server = Server::with(std::time::Duration::ZERO, move |_, req| {
        let chars = size(req);
        if chars > LIMIT {
            let body = serde_json::json!({"error": {"code": 400, "type": "exceed_context_size_error",
                "message": format!("request ({} tokens) exceeds the available context size ({} tokens), try increasing it", chars / 3, LIMIT / 3),
                "n_prompt_tokens": chars / 3, "n_ctx": LIMIT / 3}});
            return status(400, &body.to_string());
        }
        let turns = req.messages().iter().filter(|m| m["role"] == "assistant").count();
        let dropped = req
            .messages()
            .iter()
            .any(|m| m["content"].as_str().unwrap_or("").contains("earlier turn(s) were left out"));
        if dropped && turns <= 3 {
            chat(
                r#"{"tool":"answer","args":{"text":"Sensor X has SKU A-101.","answer_nodes":["products/sensor-x"],"confidence":0.9,"proof":"Edge sensor for agricultural telemetry, SKU A-101."}}"#,
            )
        } else {
            chat(&format!(r#"{{"tool":"locate","args":{{"query":"sensor telemetry {turns}"}}}}"#))
        }
    });
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "What is the SKU of the field telemetry sensor?", HuntOptions::solo(14));
    assert_eq!(r.stop, "answered", "{r:#?}");
    assert_eq!(r.answer_nodes, vec!["products/sensor-x"]);
    let reqs = server.requests();
    let refused: Vec<usize> = reqs.iter().enumerate().filter(|(_, q)| size(q) > LIMIT).map(|(i, _)| i).collect();
    assert_eq!(refused.len(), 1, "one refusal teaches the window; every later prompt fits: {refused:?}");
    assert!(reqs[refused[0] + 1..].iter().all(|q| size(q) <= LIMIT));
    assert!(r.trail.iter().any(|s| s.by == "harness" && s.kind == "context_fit"), "{:?}", r.trail);
    let opening = reqs.last().unwrap().messages()[1]["content"].as_str().unwrap_or("").to_string();
    assert!(
        opening.contains("What is the SKU") && opening.contains("locate("),
        "the opening keeps the question and names the calls: {opening}"
    );
}
