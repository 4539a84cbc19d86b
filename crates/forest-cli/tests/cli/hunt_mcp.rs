//! `forest hunt` and `forest bench` against a forest served elsewhere: a
//! real `forest serve --transport http` with a token, walked over MCP
//! (`--mcp URL --token T`). The greedy bench gives the same per-question
//! outcomes over MCP as in process; a hunt with `--learn` deposits its heat
//! through the server; a server that is not there, refuses the token or
//! dies in the middle of a hunt is one clear error, never a panic.

use std::net::TcpStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use serde_json::Value;

use super::serve_access::{serve, token};
use super::vine::fixture_forest;
use super::*;
use crate::llm_support::{chat, Server as Chat};

fn json_out(o: &Output) -> Value {
    assert_eq!(code(o), 0, "stderr: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// What a bench row says about a question, without the wall time.
fn outcome(row: &Value) -> Value {
    let mut r = row.clone();
    let m = r.as_object_mut().unwrap();
    m.remove("wall_s");
    r
}

/// One clear error: a non-zero exit, one `forest:` line, no panic.
fn one_error(o: &Output, want: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_ne!(code(o), 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("forest: ")).count(), 1, "{err}");
    assert!(err.contains(want), "{want} in {err}");
    err
}

#[test]
fn bench_and_hunt_walk_a_forest_served_over_mcp() {
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest(d.path());
    let qfile = fixtures().join("questions-v1.json");
    let q = qfile.to_str().unwrap();
    let local = json_out(&run(&["bench", q, "--forest", &f(&root), "--arms", "greedy", "--json"]));

    let t = token(&root, "agent", "write", &[]);
    let srv = serve(&root, &[]);
    let url = format!("http://{}/mcp", srv.addr);
    // Tokens exist, so the server wants one: refused without, one error.
    one_error(&run(&["bench", q, "--mcp", &url, "--arms", "greedy"]), "token");

    let remote = json_out(&run(&["bench", q, "--mcp", &url, "--token", &t, "--arms", "greedy", "--json"]));
    assert_eq!(remote["forest"], url.as_str());
    let (l, r) = (local["results"]["greedy"].as_array().unwrap(), remote["results"]["greedy"].as_array().unwrap());
    assert_eq!(l.len(), r.len());
    assert!(!l.is_empty());
    for (a, b) in l.iter().zip(r) {
        assert_eq!(outcome(a), outcome(b), "the same walk over MCP as in process");
    }
    assert!(l.iter().any(|row| row["banana_precision"].as_f64().unwrap() > 0.0), "the walks reach expected nodes");
    let strip = |v: &Value| {
        let mut s = v["summaries"][0].clone();
        for k in ["wall_s_median", "wall_s_p95", "wall_s_total"] {
            s.as_object_mut().unwrap().remove(k);
        }
        s
    };
    assert_eq!(strip(&local), strip(&remote));

    // A navigator over MCP with --learn: close_session runs on the server.
    let script = Chat::with(std::time::Duration::ZERO, |i, _| {
        chat(match i {
            0 => r#"{"tool":"sniff","args":{"terms":["A-101"]}}"#,
            1 => r#"{"tool":"pick","args":{"id":"products/sensor-x"}}"#,
            _ => {
                r#"{"tool":"answer","args":{"text":"The SKU is A-101.","answer_nodes":["products/sensor-x"],"confidence":0.9,"proof":"SKU: A-101"}}"#
            }
        })
    });
    let o = bin()
        .args(["hunt", "What is the SKU of the telemetry sensor?", "--mcp", &url, "--endpoint", &script.url()])
        .args(["--model", "scripted", "--learn", "--json"])
        .env("FOREST_LLM_CONCURRENCY", "1")
        .env("FOREST_MCP_TOKEN", &t)
        .output()
        .unwrap();
    let h = json_out(&o);
    assert_eq!(h["answer_nodes"][0], "products/sensor-x");
    assert_eq!(h["stop"], "answered");
    assert_eq!(h["session"], format!("mcp:{url}"));
    assert_eq!(h["closed"]["outcome"]["success"], true, "{}", h["closed"]);
    let tools: Vec<&str> = h["trail"].as_array().unwrap().iter().filter_map(|s| s["tool"].as_str()).collect();
    assert_eq!(&tools[..3], &["look", "sniff", "pick"], "{tools:?}");

    // The server gone: the same command is one clear error.
    drop(srv);
    let e = one_error(&run(&["bench", q, "--mcp", &url, "--token", &t, "--arms", "greedy"]), "forest server");
    assert!(e.contains(&url), "{e}");
    // The heat of the hunt is in the forest, where the Ranger reads it.
    let heat = json_out(&run(&["heat", "show", "--forest", &f(&root), "--json"]));
    let hot: Vec<&str> = heat["hottest"].as_array().unwrap().iter().filter_map(|h| h["id"].as_str()).collect();
    assert!(hot.contains(&"products/sensor-x"), "{heat}");
}

/// The server dies between two tool calls of a hunt: the hunt stops at
/// once with one error naming the lost server, no further model turns.
#[test]
fn a_server_that_dies_mid_hunt_is_one_error() {
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest(d.path());
    let srv = serve(&root, &["--readonly"]);
    let url = format!("http://{}/mcp", srv.addr);
    let pid = Arc::new(AtomicU32::new(srv.child.id()));
    let addr = srv.addr.clone();
    let p = pid.clone();
    let script = Chat::with(std::time::Duration::ZERO, move |i, _| {
        if i == 1 {
            // Kill the forest server and wait until its port is closed.
            unsafe { super::libc_kill(p.load(Ordering::SeqCst) as i32, 9) };
            while TcpStream::connect(&addr).is_ok() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        chat(match i {
            0 => r#"{"tool":"sniff","args":{"terms":["A-101"]}}"#,
            _ => r#"{"tool":"pick","args":{"id":"products/sensor-x"}}"#,
        })
    });
    let o = bin()
        .args(["hunt", "What is the SKU?", "--mcp", &url, "--endpoint", &script.url(), "--model", "m", "--json"])
        .env("FOREST_LLM_CONCURRENCY", "1")
        .output()
        .unwrap();
    one_error(&o, "the forest server went away");
    assert!(o.stdout.is_empty(), "no report after the error");
    assert_eq!(script.count(), 2, "no model turn after the server went away");
    drop(srv);
}
