//! Thread-safe Curator counters (dialect §4.3 stats keys, plus pacing extras).

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Max chars kept in `last_error` / `last_reject` (dialect: 300).
pub(crate) const LAST_MAX: usize = 300;
/// Max chars kept in `last_reply` (dialect: 400).
pub(crate) const REPLY_MAX: usize = 400;

/// Live counters shared by every thread using one Curator.
#[derive(Debug, Default)]
pub struct CuratorStats {
    pub(crate) llm_summaries: AtomicU64,
    pub(crate) fallbacks: AtomicU64,
    pub(crate) retries: AtomicU64,
    pub(crate) skipped: AtomicU64,
    pub(crate) links_proposed: AtomicU64,
    pub(crate) proposal_fallbacks: AtomicU64,
    pub(crate) branch_rollups: AtomicU64,
    pub(crate) branch_fallbacks: AtomicU64,
    pub(crate) transport_errors: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) repaired: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) transport_retries: AtomicU64,
    pub(crate) cache_hits: AtomicU64,
    pub(crate) request_ms: AtomicU64,
    pub(crate) first_attempt: AtomicU64,
    pub(crate) offline_skips: AtomicU64,
    pub(crate) grounding_rejections: AtomicU64,
    pub(crate) repeated_phrase_rejections: AtomicU64,
    pub(crate) kept_derived_less_informative: AtomicU64,
    pub(crate) repeated_rejection_stops: AtomicU64,
    last: Mutex<LastMessages>,
}

#[derive(Debug, Default, Clone)]
struct LastMessages {
    error: Option<String>,
    reject: Option<String>,
    reply: Option<String>,
}

/// A point-in-time copy of [`CuratorStats`]; the first eleven counters and
/// the three `last_*` fields are the dialect's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StatsSnapshot {
    /// Summaries written by the model (including repaired and cache hits).
    pub llm_summaries: u64,
    /// Leaf curations that kept the derived summary.
    pub fallbacks: u64,
    /// Rejected model replies that led to another attempt (or gave up).
    pub retries: u64,
    /// Drafts without body, not curated.
    pub skipped: u64,
    /// `related-to` links proposed.
    pub links_proposed: u64,
    /// Proposal calls that failed (transport / non-JSON / bad shape).
    pub proposal_fallbacks: u64,
    /// Branch summaries written by the model.
    pub branch_rollups: u64,
    /// Branch summaries left to the deterministic rollup.
    pub branch_fallbacks: u64,
    /// Summary loops given up because of a transport failure (after retries).
    pub transport_errors: u64,
    /// Summary loops that failed all attempts without a repairable reply.
    pub rejected: u64,
    /// Over-long replies rescued by `fit_summary`.
    pub repaired: u64,
    /// HTTP requests sent (every attempt, `/models` included).
    pub requests: u64,
    /// Transport retries (429 / 5xx / timeout / reset) performed.
    pub transport_retries: u64,
    /// Summaries served from the curation cache (no HTTP).
    pub cache_hits: u64,
    /// Wall time spent in HTTP requests, milliseconds, summed over threads.
    pub request_ms: u64,
    /// Summary loops (leaf and branch) whose first reply passed the contract.
    pub first_attempt: u64,
    /// Calls (summaries, rollups, proposals) not sent because every
    /// endpoint had stopped answering earlier in the run.
    pub offline_skips: u64,
    /// Model replies rejected because a number, date, version or name in
    /// them does not occur in the source (each one led to a retry or gave up).
    pub grounding_rejections: u64,
    /// Model replies rejected because they repeat a phrase.
    pub repeated_phrase_rejections: u64,
    /// Valid, grounded candidates that said no more than the derived scent
    /// (leaves: the derived summary kept; branches: the deterministic one).
    pub kept_derived_less_informative: u64,
    /// Summary loops (leaf and branch) ended before their last call because
    /// the reply repeated the fault the previous one was rejected for.
    pub repeated_rejection_stops: u64,
    /// Last transport error (message + hint, <= 300 chars).
    pub last_error: Option<String>,
    /// Last rejection reason; a later success does not clear it.
    pub last_reject: Option<String>,
    /// First 400 chars of the last rejected reply.
    pub last_reply: Option<String>,
}

pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn clip_chars(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

impl CuratorStats {
    /// Copy the counters.
    pub fn snapshot(&self) -> StatsSnapshot {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let last = self.last.lock().map(|l| l.clone()).unwrap_or_else(|p| p.into_inner().clone());
        StatsSnapshot {
            llm_summaries: g(&self.llm_summaries),
            fallbacks: g(&self.fallbacks),
            retries: g(&self.retries),
            skipped: g(&self.skipped),
            links_proposed: g(&self.links_proposed),
            proposal_fallbacks: g(&self.proposal_fallbacks),
            branch_rollups: g(&self.branch_rollups),
            branch_fallbacks: g(&self.branch_fallbacks),
            transport_errors: g(&self.transport_errors),
            rejected: g(&self.rejected),
            repaired: g(&self.repaired),
            requests: g(&self.requests),
            transport_retries: g(&self.transport_retries),
            cache_hits: g(&self.cache_hits),
            request_ms: g(&self.request_ms),
            first_attempt: g(&self.first_attempt),
            offline_skips: g(&self.offline_skips),
            grounding_rejections: g(&self.grounding_rejections),
            repeated_phrase_rejections: g(&self.repeated_phrase_rejections),
            kept_derived_less_informative: g(&self.kept_derived_less_informative),
            repeated_rejection_stops: g(&self.repeated_rejection_stops),
            last_error: last.error,
            last_reject: last.reject,
            last_reply: last.reply,
        }
    }

    fn with_last(&self, f: impl FnOnce(&mut LastMessages)) {
        // A poisoned lock only means another thread panicked mid-update of
        // three strings: keep going with whatever is there.
        let mut guard = self.last.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard);
    }

    pub(crate) fn set_error(&self, msg: &str) {
        let m = clip_chars(msg, LAST_MAX);
        self.with_last(|l| l.error = Some(m));
    }

    pub(crate) fn set_reject(&self, reason: &str, reply: &str) {
        let r = clip_chars(reason, LAST_MAX);
        let p = clip_chars(reply, REPLY_MAX);
        self.with_last(|l| {
            l.reject = Some(r);
            l.reply = Some(p);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_clips_and_counts() {
        let s = CuratorStats::default();
        bump(&s.retries);
        bump(&s.retries);
        s.set_error(&"e".repeat(1000));
        s.set_reject("bad", &"r".repeat(1000));
        let snap = s.snapshot();
        assert_eq!(snap.retries, 2);
        assert_eq!(snap.last_error.map(|e| e.len()), Some(LAST_MAX));
        assert_eq!(snap.last_reply.map(|e| e.len()), Some(REPLY_MAX));
        assert_eq!(snap.last_reject.as_deref(), Some("bad"));
    }

    #[test]
    fn snapshot_serializes_every_dialect_key() {
        let v = serde_json::to_value(CuratorStats::default().snapshot()).unwrap();
        for k in [
            "llm_summaries",
            "fallbacks",
            "retries",
            "skipped",
            "links_proposed",
            "proposal_fallbacks",
            "branch_rollups",
            "branch_fallbacks",
            "transport_errors",
            "rejected",
            "repaired",
            "last_error",
            "last_reject",
            "last_reply",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
    }
}
