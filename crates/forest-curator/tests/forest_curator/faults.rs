//! Transport fault injection: 5xx, 429 + Retry-After, hangs, resets,
//! non-retryable statuses, key redaction, concurrency and rate limits.

use crate::support::{config, curator, status, summary, Server, Step, BODY};
use forest_curator::{Curator, SummaryOrigin};
use forest_model::scent::validate_summary;
use std::time::{Duration, Instant};

const GOOD: &str = "Sales ledger of the Lisbon store, Q1 2026. Monthly revenue with 14,302 EUR in January.";

#[test]
fn server_error_then_success_is_retried() {
    let srv = Server::start(vec![status(500, "{\"error\": \"overloaded\"}"), summary(GOOD, &[])]);
    let c = curator(&srv);
    let out = c.summarize("Lisbon", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Llm);
    let s = c.stats();
    assert_eq!((srv.count(), s.transport_retries, s.transport_errors, s.retries), (2, 1, 0, 0));
}

#[test]
fn too_many_requests_honours_retry_after() {
    let srv = Server::start(vec![
        Step::Reply(429, vec![("Retry-After".into(), "1".into())], "{\"error\": \"slow down\"}".into()),
        summary(GOOD, &[]),
    ]);
    let c = curator(&srv);
    let t = Instant::now();
    let out = c.summarize("Lisbon", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Llm);
    assert_eq!((srv.count(), c.stats().transport_retries), (2, 1));
    // Backoff alone would be ~20 ms; Retry-After asked for one second.
    assert!(t.elapsed() >= Duration::from_millis(900), "{:?}", t.elapsed());
}

#[test]
fn hanging_socket_times_out_and_falls_back() {
    let srv = Server::start(vec![Step::Hang(Duration::from_secs(4)); 2]);
    let mut cfg = config(&srv.url());
    cfg.timeout = Duration::from_millis(600);
    cfg.max_transport_retries = 1;
    let c = Curator::new(cfg).unwrap();
    let out = c.summarize("Lisbon", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Fallback);
    assert!(validate_summary(&out.summary).is_ok());
    let s = c.stats();
    assert_eq!((srv.count(), s.transport_retries, s.transport_errors, s.fallbacks), (2, 1, 1, 1));
    let err = s.last_error.unwrap();
    assert!(err.to_lowercase().contains("timed out") || err.contains("timeout"), "{err}");
    assert!(err.contains("hint:") && err.chars().count() <= 300, "{err}");
}

#[test]
fn resets_exhaust_retries_then_fall_back() {
    let srv = Server::start(vec![Step::Close; 5]);
    let c = curator(&srv);
    let out = c.summarize("Lisbon", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Fallback);
    let s = c.stats();
    assert_eq!((srv.count(), s.transport_retries, s.transport_errors), (5, 4, 1), "1 + 4 retries");
    assert_eq!(s.retries, 0, "transport failures are not validation retries");
}

#[test]
fn client_errors_are_not_retried_and_the_key_never_leaks() {
    let key = "sk-test-very-secret-42";
    let srv = Server::with(Duration::ZERO, |_, req| {
        // A hostile server echoing the credentials back.
        status(401, &format!("bad key: {}", req.header("authorization").unwrap_or("")))
    });
    let c = Curator::new(config(&srv.url()).with_api_key(key)).unwrap();
    let out = c.summarize("Lisbon", BODY, "");
    assert_eq!(out.origin, SummaryOrigin::Fallback);
    assert_eq!(srv.requests()[0].header("authorization"), Some(format!("Bearer {key}").as_str()));
    let s = c.stats();
    assert_eq!((srv.count(), s.transport_errors), (1, 1));
    let err = s.last_error.unwrap();
    assert!(err.starts_with("LLM endpoint 401: bad key"), "{err}");
    assert!(!err.contains(key), "{err}");
    assert!(!format!("{c:?}").contains(key));
}

#[test]
fn concurrency_limit_is_respected_across_threads() {
    let body = serde_json::json!({"summary": GOOD, "tags": []}).to_string();
    let srv = Server::with(Duration::from_millis(120), move |_, _| crate::support::chat(&body));
    let mut cfg = config(&srv.url());
    cfg.concurrency = 2;
    let c = Curator::new(cfg).unwrap();
    std::thread::scope(|s| {
        for i in 0..8 {
            let c = &c;
            s.spawn(move || {
                let out = c.summarize(&format!("Doc {i}"), &format!("{BODY}\nBody number {i}."), "");
                assert_eq!(out.origin, SummaryOrigin::Llm);
            });
        }
    });
    assert_eq!(srv.count(), 8);
    assert_eq!(srv.peak(), 2, "never more than 2 in flight, and the 2 are used");
    assert_eq!(c.stats().llm_summaries, 8);
}

#[test]
fn requests_per_minute_spaces_requests() {
    let body = serde_json::json!({"summary": GOOD, "tags": []}).to_string();
    let srv = Server::with(Duration::ZERO, move |_, _| crate::support::chat(&body));
    let mut cfg = config(&srv.url());
    cfg.requests_per_minute = 600; // one per 100 ms
    let c = Curator::new(cfg).unwrap();
    let t = Instant::now();
    for i in 0..4 {
        c.summarize(&format!("Doc {i}"), &format!("{BODY}\nBody {i}."), "");
    }
    assert_eq!(srv.count(), 4);
    assert!(t.elapsed() >= Duration::from_millis(290), "{:?}", t.elapsed());
}

#[test]
fn local_model_is_resolved_from_models_endpoint() {
    let srv = Server::with(Duration::ZERO, |_, req| {
        if req.path.ends_with("/models") {
            status(200, "{\"object\": \"list\", \"data\": [{\"id\": \"served-model\"}, {\"id\": \"other\"}]}")
        } else {
            summary(GOOD, &[])
        }
    });
    let mut cfg = config(&srv.url());
    cfg.model = "local".into();
    let c = Curator::new(cfg).unwrap();
    assert_eq!(c.model(), "served-model");
    c.summarize("Lisbon", BODY, "");
    let reqs = srv.requests();
    assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("GET", "/v1/models"));
    assert_eq!(reqs[1].body["model"], "served-model");

    let broken = Server::start(vec![status(404, "no")]);
    let mut cfg = config(&broken.url());
    cfg.model = "local".into();
    assert_eq!(Curator::new(cfg).unwrap().model(), "local", "failures are ignored");
}

#[test]
fn concurrency_follows_the_servers_slots_unless_set() {
    let srv = Server::with(Duration::ZERO, |_, req| {
        if req.path == "/props" {
            status(200, "{\"total_slots\": 2, \"model_path\": \"m.gguf\"}")
        } else {
            summary(GOOD, &[])
        }
    });
    let mut cfg = config(&srv.url());
    cfg.concurrency = 4;
    cfg.auto_concurrency = true;
    assert_eq!(Curator::new(cfg.clone()).unwrap().config().concurrency, 2);
    assert_eq!(srv.requests()[0].path, "/props", "asked at the server root, not under /v1");
    cfg.auto_concurrency = false;
    assert_eq!(Curator::new(cfg).unwrap().config().concurrency, 4, "an explicit setting wins");
    // The environment: unset means automatic, set means fixed.
    let env = |k: &str| match k {
        "MONKEYLLM_LLM_ENDPOINT" => Some("http://127.0.0.1:9/v1".to_string()),
        _ => None,
    };
    assert!(forest_curator::CuratorConfig::from_lookup(env).unwrap().auto_concurrency);
    let env2 = |k: &str| match k {
        "MONKEYLLM_LLM_ENDPOINT" => Some("http://127.0.0.1:9/v1".to_string()),
        "FOREST_LLM_CONCURRENCY" => Some("3".to_string()),
        _ => None,
    };
    let c = forest_curator::CuratorConfig::from_lookup(env2).unwrap();
    assert!(!c.auto_concurrency);
    assert_eq!(c.concurrency, 3);
}

/// A port nothing listens on (bound, then released).
pub fn closed_port_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}/v1")
}

#[test]
fn a_dead_endpoint_takes_the_curator_offline_after_three_connection_failures() {
    let mut cfg = config(&closed_port_url());
    // Long backoffs: a refused connection is retried soon regardless, and
    // going offline wakes whatever still sleeps.
    cfg.backoff_base = Duration::from_secs(60);
    cfg.backoff_max = Duration::from_secs(60);
    let c = Curator::new(cfg).unwrap();
    std::thread::scope(|s| {
        for i in 0..4 {
            let c = &c;
            s.spawn(move || {
                let out = c.summarize(&format!("Doc {i}"), &format!("{BODY}\nBody number {i}."), "");
                assert_eq!(out.origin, SummaryOrigin::Fallback);
                assert!(validate_summary(&out.summary).is_ok());
            });
        }
    });
    assert!(c.offline());
    for i in 4..40 {
        let out = c.summarize(&format!("Doc {i}"), &format!("{BODY}\nBody number {i}."), "");
        assert_eq!(out.origin, SummaryOrigin::Fallback);
        assert!(out.reason.unwrap().contains("not sent"));
    }
    assert_eq!(c.branch_summary("Region", &["- [[a/b]] — Something.".to_string()]), None);
    let s = c.stats();
    // Four summaries were in flight when the third refusal came back: at
    // most one attempt each reached the (dead) network after that.
    assert!(s.requests <= 6, "{s:?}");
    assert_eq!(s.fallbacks, 40);
    assert!(s.offline_skips >= 37, "{s:?}");
    let err = s.last_error.unwrap();
    assert!(err.contains("not sent") && err.contains("hint:"), "{err}");
}

#[test]
fn a_server_error_is_not_a_dead_endpoint() {
    let srv = Server::with(Duration::ZERO, |_, _| status(503, "busy"));
    let mut cfg = config(&srv.url());
    cfg.max_transport_retries = 5;
    let c = Curator::new(cfg).unwrap();
    assert_eq!(c.summarize("Lisbon", BODY, "").origin, SummaryOrigin::Fallback);
    assert!(!c.offline(), "the server answered: it is up, if unhappy");
    assert_eq!(srv.count(), 6);
}
