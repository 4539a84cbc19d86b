//! The troop against a scripted model: monkeys harvest from their entries,
//! patience stops after two dry harvests, the judge merges.

use forest_navigator::protocol::Actions;
use forest_navigator::{troop, HuntResult, StopPolicy, TroopInfo, TroopOptions};

use crate::support::{chat, config, Server};
use crate::{fixture, forest};

/// Two monkeys (patience stop, schema actions) over the fixture against a
/// scripted model whose monkeys answer "A-101" and whose judge merges; the
/// server is returned for its requests.
pub(crate) fn scripted_troop() -> (Server, HuntResult, TroopInfo) {
    let server = Server::with(std::time::Duration::ZERO, |_, req| {
        let sys = req.messages().first().map(|m| m["content"].to_string()).unwrap_or_default();
        if sys.contains("You judge") {
            chat(r#"{"tool":"answer","args":{"text":"Sensor X, SKU A-101","answer_nodes":["products/sensor-x"]}}"#)
        } else {
            chat(r#"{"tool":"answer","args":{"text":"A-101","answer_nodes":["products/sensor-x"]}}"#)
        }
    });
    let llm = forest_curator::Curator::new(config(&server.url())).unwrap();
    let (_d, root) = fixture();
    let mut f = forest(&root, false);
    let o =
        TroopOptions { n: 2, policy: StopPolicy::Patience, fork_width: 1, expected: None, actions: Actions::Schema };
    let (r, info) = troop(&mut f, &llm, "Which product sensor led sales revenue in the Q1 2026 report?", &o);
    (server, r, info)
}

#[test]
fn patience_stops_the_troop_and_the_judge_merges() {
    let (server, r, info) = scripted_troop();
    // Harvest 1 is fresh, 2 and 3 are dry: P = 2 stops the troop.
    assert_eq!(info.harvests.len(), 3, "{info:#?}");
    assert!(info.judged);
    assert_eq!(r.answer.as_deref(), Some("Sensor X, SKU A-101"));
    assert_eq!(r.answer_nodes, vec!["products/sensor-x"]);
    assert_eq!(info.monkeys.iter().map(|m| m.harvests).sum::<usize>(), 3);
    let briefs: Vec<String> = server.requests().iter().map(|q| q.messages()[1]["content"].to_string()).collect();
    assert!(briefs[0].contains("monkey 1 of 2") && briefs[1].contains("monkey 2 of 2"));
    assert_eq!(server.count(), 4, "three monkey turns and one judge call");
}
