//! Several OpenAI-compatible endpoints behind one Curator
//! (`MONKEYLLM_LLM_ENDPOINT=url1,url2`): each has its own slots; a request
//! goes to the healthy endpoint with the most free slots, and an endpoint
//! whose request failed in transport (connection, timeout, 5xx, 429) is
//! taken out of rotation for a back-off period. When every endpoint with a
//! free slot is backed off, the one whose back-off ends first is used
//! anyway: requests degrade to retries, they never deadlock.
//!
//! An endpoint's state changes (up → down, down → up) are logged once each,
//! never per request; consecutive *connection* failures (nothing listening,
//! no route, DNS) are counted per endpoint so the Curator can stop asking
//! for the rest of a run when every endpoint is unreachable
//! ([`EndpointPool::all_unreachable`]).

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug)]
struct Slot {
    free: usize,
    down_until: Option<Instant>,
    /// Logged as down (cleared by the next reply).
    down: bool,
    /// Connection failures since the last reply.
    connect_failures: u32,
}

/// The endpoints of one Curator and their free slots.
#[derive(Debug)]
pub(crate) struct EndpointPool {
    urls: Vec<String>,
    state: Mutex<Vec<Slot>>,
    cv: Condvar,
    backoff: Duration,
}

/// A slot on one endpoint; released on drop.
pub(crate) struct Lease<'a> {
    pool: &'a EndpointPool,
    idx: usize,
}

impl Lease<'_> {
    /// Base URL of the leased endpoint.
    pub(crate) fn url(&self) -> &str {
        &self.pool.urls[self.idx]
    }

    /// Take the endpoint out of rotation for the back-off period;
    /// `connect`: the connection itself failed (counted towards
    /// [`EndpointPool::all_unreachable`]). Logged on the up → down change only.
    pub(crate) fn failed(&self, connect: bool) {
        let mut st = self.pool.state.lock().unwrap_or_else(|p| p.into_inner());
        let slot = &mut st[self.idx];
        slot.down_until = Some(Instant::now() + self.pool.backoff);
        if connect {
            slot.connect_failures = slot.connect_failures.saturating_add(1);
        } else {
            slot.connect_failures = 0;
        }
        if !slot.down {
            slot.down = true;
            tracing::warn!(event = "curator.endpoint_down", endpoint = %self.url(), backoff_ms = self.pool.backoff.as_millis() as u64, "LLM endpoint down");
        }
    }

    /// A reply came back: the endpoint is healthy again (logged on the
    /// down → up change only).
    pub(crate) fn succeeded(&self) {
        let mut st = self.pool.state.lock().unwrap_or_else(|p| p.into_inner());
        let slot = &mut st[self.idx];
        slot.down_until = None;
        slot.connect_failures = 0;
        if slot.down {
            slot.down = false;
            tracing::warn!(event = "curator.endpoint_up", endpoint = %self.url(), "LLM endpoint answers again");
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut st = self.pool.state.lock().unwrap_or_else(|p| p.into_inner());
        st[self.idx].free += 1;
        self.pool.cv.notify_one();
    }
}

impl EndpointPool {
    /// `urls[i]` gets `slots[i]` (at least 1) concurrent requests.
    pub(crate) fn new(urls: Vec<String>, slots: &[usize], backoff: Duration) -> Self {
        let state = urls
            .iter()
            .enumerate()
            .map(|(i, _)| Slot {
                free: slots.get(i).copied().unwrap_or(1).max(1),
                down_until: None,
                down: false,
                connect_failures: 0,
            })
            .collect();
        EndpointPool { urls, state: Mutex::new(state), cv: Condvar::new(), backoff }
    }

    /// Whether every endpoint has failed to connect at least `after` times
    /// in a row (`after == 0`: never).
    pub(crate) fn all_unreachable(&self, after: u32) -> bool {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        after > 0 && !st.is_empty() && st.iter().all(|s| s.connect_failures >= after)
    }

    /// The endpoints, for messages.
    pub(crate) fn urls(&self) -> &[String] {
        &self.urls
    }

    /// Total slots across endpoints (what is worth keeping in flight).
    pub(crate) fn capacity(slots: &[usize]) -> usize {
        slots.iter().map(|s| (*s).max(1)).sum()
    }

    /// Block until some endpoint has a free slot; prefer healthy endpoints,
    /// then the most free slots (ties: the first listed).
    pub(crate) fn acquire(&self) -> Lease<'_> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            let healthy = |s: &Slot| s.down_until.is_none_or(|t| t <= now);
            let pick = (0..st.len())
                .filter(|&i| st[i].free > 0 && healthy(&st[i]))
                .max_by_key(|&i| (st[i].free, std::cmp::Reverse(i)))
                .or_else(|| {
                    // Only backed-off endpoints have room: soonest back in first.
                    let any_healthy_busy = st.iter().any(healthy);
                    if any_healthy_busy {
                        return None;
                    }
                    (0..st.len()).filter(|&i| st[i].free > 0).min_by_key(|&i| st[i].down_until)
                });
            if let Some(i) = pick {
                st[i].free -= 1;
                return Lease { pool: self, idx: i };
            }
            st = self
                .cv
                .wait_timeout(st, Duration::from_millis(50))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_by_free_slots_and_skips_a_failed_endpoint() {
        let pool = EndpointPool::new(vec!["a".into(), "b".into()], &[2, 2], Duration::from_secs(60));
        let l1 = pool.acquire();
        let l2 = pool.acquire();
        assert_ne!(l1.url(), l2.url(), "the second request goes where more slots are free");
        l2.failed(false);
        drop(l2);
        // b is backed off: a takes what it can even with b's slots free.
        let l3 = pool.acquire();
        assert_eq!(l3.url(), l1.url());
        drop((l1, l3));
        assert_eq!(pool.acquire().url(), "a");
        // With every healthy slot busy, a request waits instead of using b...
        let (x, y) = (pool.acquire(), pool.acquire());
        let waited = std::thread::scope(|s| {
            let h = s.spawn(|| {
                let t = Instant::now();
                let l = pool.acquire();
                (t.elapsed(), l.url().to_string())
            });
            std::thread::sleep(Duration::from_millis(120));
            drop(x);
            h.join().unwrap()
        });
        assert!(waited.0 >= Duration::from_millis(100) && waited.1 == "a", "{waited:?}");
        drop(y);
        // ...but when every endpoint is backed off, requests still go out.
        let only = EndpointPool::new(vec!["c".into()], &[1], Duration::from_secs(60));
        only.acquire().failed(true);
        assert_eq!(only.acquire().url(), "c");
        assert_eq!(EndpointPool::capacity(&[4, 0, 2]), 7);
    }

    #[test]
    fn unreachable_only_after_consecutive_connect_failures_on_every_endpoint() {
        let pool = EndpointPool::new(vec!["a".into(), "b".into()], &[1, 1], Duration::ZERO);
        // Both slots leased at once: one lease per endpoint.
        let on = |url: &str, f: &dyn Fn(&Lease<'_>)| {
            let (x, y) = (pool.acquire(), pool.acquire());
            f(if x.url() == url { &x } else { &y });
        };
        let fail = |url: &str, connect: bool| on(url, &|l| l.failed(connect));
        for _ in 0..3 {
            fail("a", true);
        }
        assert!(!pool.all_unreachable(3), "b has not failed yet");
        fail("b", true);
        fail("b", true);
        fail("b", false);
        assert!(!pool.all_unreachable(3), "a server error shows b is reachable");
        for _ in 0..3 {
            fail("b", true);
        }
        assert!(pool.all_unreachable(3));
        assert!(!pool.all_unreachable(0), "0 turns the check off");
        // One reply resets the count.
        on("a", &|l| l.succeeded());
        assert!(!pool.all_unreachable(3));
    }
}
