//! Pacing of model requests (DESIGN §6): a requests-per-minute limiter and
//! jittered exponential backoff (in-flight requests are bounded per
//! endpoint by [`crate::endpoints`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Spaces request starts `60 s / rpm` apart, first come first served.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    interval: Option<Duration>,
    next: Mutex<Option<Instant>>,
}

impl RateLimiter {
    pub(crate) fn new(requests_per_minute: u32) -> Self {
        let interval = (requests_per_minute > 0).then(|| Duration::from_secs(60) / requests_per_minute);
        RateLimiter { interval, next: Mutex::new(None) }
    }

    /// Block until this caller's slot.
    pub(crate) fn wait(&self) {
        let Some(interval) = self.interval else {
            return;
        };
        let slot = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let slot = match *next {
                Some(n) if n > now => n,
                _ => now,
            };
            *next = Some(slot + interval);
            slot
        };
        let now = Instant::now();
        if slot > now {
            std::thread::sleep(slot - now);
        }
    }
}

/// splitmix64 over a shared counter: jitter needs spread, not secrecy.
#[derive(Debug)]
pub(crate) struct Jitter(AtomicU64);

impl Jitter {
    pub(crate) fn new() -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        Jitter(AtomicU64::new(seed))
    }

    /// A value in `[0, 1)`.
    pub(crate) fn unit(&self) -> f64 {
        let mut z = self.0.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Delay before transport retry `n` (0-based): `base * 2^n` capped at `max`,
/// then jittered into `[d/2, d)` so concurrent callers do not retry in step.
pub(crate) fn backoff_delay(n: u32, base: Duration, max: Duration, unit: f64) -> Duration {
    let d = base.saturating_mul(1u32 << n.min(20)).min(max);
    d / 2 + d.mul_f64(unit.clamp(0.0, 1.0) / 2.0)
}

/// `Retry-After` in seconds (the HTTP-date form is ignored: backoff applies).
pub(crate) fn parse_retry_after(v: &str) -> Option<Duration> {
    let s: f64 = v.trim().parse().ok()?;
    (s.is_finite() && s >= 0.0).then(|| Duration::from_secs_f64(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limiter_spaces_starts() {
        let rl = RateLimiter::new(1200); // 50 ms apart
        let t = Instant::now();
        for _ in 0..5 {
            rl.wait();
        }
        assert!(t.elapsed() >= Duration::from_millis(195), "{:?}", t.elapsed());
        let unlimited = RateLimiter::new(0);
        let t = Instant::now();
        for _ in 0..1000 {
            unlimited.wait();
        }
        assert!(t.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let base = Duration::from_millis(100);
        let max = Duration::from_secs(1);
        assert_eq!(backoff_delay(0, base, max, 0.0), Duration::from_millis(50));
        assert_eq!(backoff_delay(2, base, max, 0.0), Duration::from_millis(200));
        assert_eq!(backoff_delay(10, base, max, 0.0), Duration::from_millis(500));
        assert!(backoff_delay(10, base, max, 0.999) < max);
        let j = Jitter::new();
        let xs: Vec<f64> = (0..100).map(|_| j.unit()).collect();
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        assert!(xs.iter().any(|x| *x > 0.5) && xs.iter().any(|x| *x < 0.5));
    }

    #[test]
    fn retry_after_seconds() {
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }
}
