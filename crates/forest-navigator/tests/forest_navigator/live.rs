//! One hunt against the real small model (SmolLM2-135M on llama.cpp):
//! short question, small budget. Asserts the run completes with a
//! well-formed trail and cost accounting, not that the answer is right.

use forest_curator::{Curator, CuratorConfig};
use forest_navigator::{hunt, HuntOptions};

use crate::{fixture, forest};

#[test]
fn the_real_model_walks_the_fixture_forest() {
    let Ok(url) = std::env::var("FOREST_TEST_LLM_URL") else {
        forest_testkit::skip("FOREST_TEST_LLM_URL unset (ops/llm/start.sh)");
        return;
    };
    // The server has one slot shared by every test run on this machine:
    // short completions, one retry, and the hunt records a timeout as its
    // error instead of waiting for ever.
    let mut cfg = CuratorConfig::new(&url);
    cfg.max_tokens = 80;
    cfg.max_transport_retries = 1;
    cfg.timeout = std::time::Duration::from_secs(240);
    let llm = Curator::new(cfg).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let r = hunt(&mut f, &llm, "What is the SKU of Sensor X?", HuntOptions::solo(2));
    eprintln!(
        "live hunt: answer={:?} nodes={:?} stop={} error={:?} cost={:?}",
        r.answer, r.answer_nodes, r.stop, r.error, r.cost
    );
    assert_eq!(r.trail[0].tool.as_deref(), Some("look"), "the opening look of the index");
    assert!(r.cost.steps <= 2 && r.cost.llm_calls >= 1 && r.cost.llm_calls <= 2 + 3, "{:?}", r.cost);
    assert!((0.0..=0.9).contains(&r.confidence));
    assert_eq!(r.cost.calls, r.trail.iter().filter(|s| s.kind == "call").count());
    match &r.error {
        // The shared one-slot server may be too busy: the hunt still ends
        // with its trail and says why.
        Some(e) => assert_eq!(r.stop == "llm_error" || r.forced, !e.is_empty()),
        None => {
            assert!(r.cost.completion_tokens_est > 0);
            assert!(r.trail.iter().any(|s| s.by == "model"));
            assert!(["answered", "budget", "stalled"].contains(&r.stop.as_str()));
        }
    }
}
