//! Failed authentication, per peer address (pure; the clock is passed in):
//! each peer's failures are counted in a fixed window; past
//! [`AuthFailures::max_failures`] in one window the peer is answered 429
//! with `Retry-After` until the window ends, and every window that ends
//! becomes ONE aggregated audit line (peer, failures, of which refused
//! as limited). A valid token is always checked first and always passes,
//! so a flood from an address never locks out the honest clients behind it.
//!
//! Memory is bounded: at most `max_peers` windows are kept; when full,
//! ended windows are swept first and, if still full, new peers share one
//! overflow window (address `0.0.0.0`), so a flood from many addresses is
//! limited as one.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One peer's window.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: Instant,
    failures: u64,
    limited: u64,
}

/// The aggregate of one ended window (one audit line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    /// The peer address (`0.0.0.0`: the overflow of many peers).
    pub peer: IpAddr,
    /// Failed authentications in the window.
    pub failures: u64,
    /// Of which answered 429 (over the limit).
    pub limited: u64,
}

/// What to answer a failed authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// 401 with the Bearer challenge.
    Unauthorized,
    /// 429: over the limit until the window ends (retry after this).
    Limited(Duration),
}

/// Failed-authentication counters of a server.
#[derive(Debug)]
pub struct AuthFailures {
    /// Length of a window.
    pub interval: Duration,
    /// Failures a peer may have in one window before 429.
    pub max_failures: u64,
    /// Windows kept at most.
    pub max_peers: usize,
    map: Mutex<HashMap<IpAddr, Window>>,
}

/// The overflow pseudo-peer.
pub const OVERFLOW: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

impl AuthFailures {
    /// Counters with these limits.
    pub fn new(interval: Duration, max_failures: u64, max_peers: usize) -> AuthFailures {
        AuthFailures { interval, max_failures, max_peers: max_peers.max(1), map: Mutex::new(HashMap::new()) }
    }

    /// Count one failure of `peer` at `now`: the verdict, and the
    /// aggregates of windows that ended (to audit).
    pub fn fail(&self, peer: IpAddr, now: Instant) -> (Verdict, Vec<Aggregate>) {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let mut ended = vec![];
        if let Some(w) = m.get(&peer).copied().filter(|w| now.saturating_duration_since(w.start) >= self.interval) {
            ended.push(Aggregate { peer, failures: w.failures, limited: w.limited });
            m.remove(&peer);
        }
        let mut key = peer;
        if !m.contains_key(&peer) && m.len() >= self.max_peers {
            ended.extend(self.drain(&mut m, now, false));
            if m.len() >= self.max_peers {
                key = OVERFLOW;
            }
        }
        let w = m.entry(key).or_insert(Window { start: now, failures: 0, limited: 0 });
        w.failures += 1;
        let verdict = if w.failures > self.max_failures {
            w.limited += 1;
            Verdict::Limited(
                self.interval.saturating_sub(now.saturating_duration_since(w.start)).max(Duration::from_secs(1)),
            )
        } else {
            Verdict::Unauthorized
        };
        (verdict, ended)
    }

    /// The aggregates of every window ended at `now` (all of them when
    /// `all`, at shutdown), forgetting them.
    pub fn sweep(&self, now: Instant, all: bool) -> Vec<Aggregate> {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        self.drain(&mut m, now, all)
    }

    fn drain(&self, m: &mut HashMap<IpAddr, Window>, now: Instant, all: bool) -> Vec<Aggregate> {
        let mut out = vec![];
        m.retain(|peer, w| {
            let over = all || now.saturating_duration_since(w.start) >= self.interval;
            if over {
                out.push(Aggregate { peer: *peer, failures: w.failures, limited: w.limited });
            }
            !over
        });
        out.sort_by_key(|a| a.peer);
        out
    }

    /// Windows held now.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// True when no window is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_peer_over_the_limit_gets_429_until_its_window_ends() {
        let f = AuthFailures::new(Duration::from_secs(10), 3, 16);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(f.fail(ip("10.0.0.1"), t0).0, Verdict::Unauthorized);
        }
        let (v, ended) = f.fail(ip("10.0.0.1"), t0 + Duration::from_secs(4));
        assert_eq!(v, Verdict::Limited(Duration::from_secs(6)));
        assert!(ended.is_empty());
        // Another peer is not limited by the first one.
        assert_eq!(f.fail(ip("10.0.0.2"), t0).0, Verdict::Unauthorized);
        // The window ends: one aggregate line for it, a fresh window.
        let (v, ended) = f.fail(ip("10.0.0.1"), t0 + Duration::from_secs(10));
        assert_eq!(v, Verdict::Unauthorized);
        assert_eq!(ended, vec![Aggregate { peer: ip("10.0.0.1"), failures: 4, limited: 1 }]);
        let swept = f.sweep(t0 + Duration::from_secs(30), false);
        assert_eq!(swept.len(), 2, "{swept:?}");
        assert!(f.is_empty());
    }

    #[test]
    fn memory_is_bounded_by_an_overflow_window() {
        let f = AuthFailures::new(Duration::from_secs(10), 5, 4);
        let t0 = Instant::now();
        for i in 0..1000u32 {
            let peer = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i));
            f.fail(peer, t0);
        }
        assert!(f.len() <= 5, "{}", f.len());
        // The many peers past the cap share one window, limited as one.
        assert!(matches!(f.fail(ip("10.9.9.9"), t0).0, Verdict::Limited(_)));
        let all = f.sweep(t0, true);
        let overflow = all.iter().find(|a| a.peer == OVERFLOW).unwrap();
        assert_eq!(all.iter().map(|a| a.failures).sum::<u64>(), 1001);
        assert!(overflow.limited > 0);
        assert!(f.is_empty());
    }
}
