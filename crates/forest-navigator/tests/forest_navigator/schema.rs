//! Schema-constrained actions: every model turn carries a `response_format`
//! json_schema of the allowed actions (the answer only when the loop wants
//! an answer); a server that refuses it gets the text protocol for the rest
//! of the run, and the hunt still completes.

use forest_navigator::protocol::Actions;
use forest_navigator::{hunt, Chat, HuntOptions};
use serde_json::Value;

use crate::support::{chat, config, status, Request, Server};
use crate::{fixture, forest};

const ANSWER: &str = r#"{"tool":"answer","args":{"text":"Sensor X has SKU A-101.","answer_nodes":["products/sensor-x"],"confidence":0.9,"proof":"Edge sensor for agricultural telemetry, SKU A-101."}}"#;

/// The `anyOf` branches' tool names of a request's schema (one name when the
/// schema is a single action).
fn tools_of(req: &Request) -> Vec<String> {
    let schema = &req.body["response_format"]["json_schema"]["schema"];
    let branches = match schema["anyOf"].as_array() {
        Some(a) => a.clone(),
        None => vec![schema.clone()],
    };
    branches
        .iter()
        .filter_map(|b| b.pointer("/properties/tool/enum/0").and_then(Value::as_str).map(String::from))
        .collect()
}

fn has_format(req: &Request) -> bool {
    req.body.get("response_format").is_some()
}

#[test]
fn every_turn_carries_the_action_schema_and_synthesis_the_answer_schema() {
    let server = Server::with(std::time::Duration::ZERO, |_, req| {
        let last = req.messages().last().map(|m| m["content"].to_string()).unwrap_or_default();
        if last.contains("steps_over") {
            chat(ANSWER)
        } else {
            chat(r#"{"tool":"look","args":{"id":"products/sensor-x"}}"#)
        }
    });
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "What is the SKU of the field telemetry sensor?", HuntOptions::solo(4));
    assert!(r.forced, "the model only looks, so synthesis answers: {r:#?}");
    assert!(r.answer.as_deref().unwrap_or("").contains("A-101"));
    let reqs = server.requests();
    let all = ["locate", "sniff", "look", "move", "pick", "query", "scan", "harvest", "answer"];
    let after_steps = |q: &Request| q.messages().iter().any(|m| m["content"].to_string().contains("steps_over"));
    let (synth, walk): (Vec<&Request>, Vec<&Request>) = reqs.iter().partition(|q| after_steps(q));
    assert_eq!(walk.len(), 4, "one request per step");
    assert!(!synth.is_empty());
    for q in &walk {
        assert_eq!(q.body["response_format"]["type"], "json_schema");
        assert_eq!(tools_of(q), all, "one branch per tool, in the catalogue's order");
    }
    for q in &synth {
        assert_eq!(tools_of(q), ["answer"], "synthesis may only answer");
    }
    assert!(llm.structured(), "the scripted server took the schema");
}

#[test]
fn text_mode_sends_no_schema() {
    let server = Server::with(std::time::Duration::ZERO, |_, _| chat(ANSWER));
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let opts = HuntOptions { actions: Actions::Text, ..HuntOptions::solo(14) };
    let r = hunt(&mut f, &llm, "What is the SKU of the field telemetry sensor?", opts);
    assert_eq!(r.stop, "answered", "{r:#?}");
    let reqs = server.requests();
    assert!(!reqs.is_empty() && reqs.iter().all(|q| !has_format(q)), "text protocol only");
}

#[test]
fn a_server_refusing_response_format_gets_the_text_protocol_and_the_hunt_completes() {
    // llama.cpp builds without grammar support, and some proxies, answer 400.
    let server = Server::with(std::time::Duration::ZERO, |_, req| {
        if has_format(req) {
            return status(
                400,
                r#"{"error":{"code":400,"message":"'response_format' of type 'json_schema' is not supported"}}"#,
            );
        }
        let turns = req.messages().iter().filter(|m| m["role"] == "assistant").count();
        match turns {
            0 => chat(r#"Let me look. {"tool":"look","args":{"id":"products/sensor-x"}}"#),
            _ => chat(ANSWER),
        }
    });
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "What is the SKU of the field telemetry sensor?", HuntOptions::solo(14));
    assert_eq!(r.stop, "answered", "{r:#?}");
    assert!(!r.forced && r.error.is_none());
    assert_eq!(r.answer_nodes, vec!["products/sensor-x"]);
    let reqs = server.requests();
    assert!(has_format(&reqs[0]), "the first turn asks for the schema");
    assert!(!has_format(&reqs[1]), "the refused turn is retried without it");
    assert!(reqs[1..].iter().all(|q| !has_format(q)), "and every later turn is plain text");
    assert_eq!(reqs.len(), 3, "refused + 2 turns (look, answer)");
    assert_eq!(r.cost.llm_calls, 2, "the refusal is the transport's, not a turn");
    assert!(!llm.structured(), "the Curator remembers the refusal");
    assert_eq!(forest_navigator::bench::actions_used(Actions::Schema, &llm), Actions::Text);
}

#[test]
fn monkeys_get_the_action_schema_and_the_judge_the_answer_schema() {
    let (server, r, info) = crate::troop::scripted_troop();
    assert!(info.judged, "{info:#?}");
    assert_eq!(r.answer.as_deref(), Some("Sensor X, SKU A-101"));
    let reqs = server.requests();
    let (judge, monkeys): (Vec<&Request>, Vec<&Request>) =
        reqs.iter().partition(|q| q.messages()[0]["content"].to_string().contains("You judge"));
    assert_eq!(judge.len(), 1);
    assert!(monkeys.iter().all(|q| tools_of(q).len() == 9), "monkeys may call every tool");
    assert_eq!(tools_of(judge[0]), ["answer"]);
    let props = &judge[0].body["response_format"]["json_schema"]["schema"]["properties"]["args"]["properties"];
    assert!(props.get("proof").is_none(), "the judge's answer is text and nodes only: {props}");
}
