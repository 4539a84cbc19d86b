//! Several endpoints behind one Curator: spread by free slots, a failing
//! endpoint taken out of rotation for its back-off period.

use crate::support::{config, status, summary, Server, BODY};
use forest_curator::{Curator, SummaryOrigin};
use std::time::Duration;

const GOOD: &str = "Quarterly sales ledger for the Lisbon store, January to March 2026.";

fn summarize_all(c: &Curator, n: usize) {
    std::thread::scope(|s| {
        for i in 0..n {
            s.spawn(move || {
                let out = c.summarize(&format!("Doc {i}"), &format!("{BODY}\nBody number {i}."), "");
                assert_eq!(out.origin, SummaryOrigin::Llm, "{out:?}");
            });
        }
    });
}

#[test]
fn requests_spread_over_endpoints_by_free_slots() {
    let a = Server::with(Duration::from_millis(100), |_, _| summary(GOOD, &[]));
    let b = Server::with(Duration::from_millis(100), |_, _| summary(GOOD, &[]));
    let mut cfg = config(&format!("{},{}", a.url(), b.url()));
    cfg.concurrency = 3;
    let c = Curator::new(cfg).unwrap();
    assert_eq!(c.config().concurrency, 6, "the total of both endpoints' slots");
    summarize_all(&c, 12);
    assert_eq!(a.count() + b.count(), 12);
    assert_eq!((a.peak(), b.peak()), (3, 3), "each endpoint's slots are used and never exceeded");
    assert!(a.count() >= 4 && b.count() >= 4, "spread: {} / {}", a.count(), b.count());
}

#[test]
fn a_failing_endpoint_is_backed_off_and_the_other_serves() {
    let bad = Server::with(Duration::ZERO, |_, _| status(503, "overloaded"));
    let good = Server::with(Duration::from_millis(20), |_, _| summary(GOOD, &[]));
    let mut cfg = config(&format!("{} {}", bad.url(), good.url()));
    cfg.concurrency = 2;
    cfg.endpoint_backoff = Duration::from_secs(60);
    let c = Curator::new(cfg).unwrap();
    summarize_all(&c, 10);
    assert_eq!(c.stats().llm_summaries, 10, "every request ended on the healthy endpoint");
    // Only requests already in flight when it failed reached it.
    assert!(bad.count() <= 2, "backed off after failing: {} requests", bad.count());
    assert!(good.count() >= 10);
    // After the back-off, it is tried again (and it is still down).
    let mut cfg = config(&format!("{},{}", bad.url(), good.url()));
    cfg.concurrency = 1;
    cfg.endpoint_backoff = Duration::from_millis(50);
    let c = Curator::new(cfg).unwrap();
    let before = bad.count();
    for i in 0..3 {
        c.summarize(&format!("Later {i}"), BODY, "");
        std::thread::sleep(Duration::from_millis(80));
    }
    assert!(bad.count() > before, "back in rotation after its back-off");
}
