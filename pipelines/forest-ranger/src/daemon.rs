//! `forest ranger daemon --schedule CRON` (DESIGN §7): sleep until the next
//! fire time, take the writer lock only while running, catch up once at
//! start, stop cleanly on a flag (SIGTERM/SIGINT via signal-hook).

use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};
use cron::Schedule;
use forest_git::{GitForest, WriterLock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{run, RangerConfig, RangerError, RangerReport, Result};

/// Where the daemon records its last completed run.
pub const STATE_PATH: &str = "_derived/ranger-state.json";

/// Time source and sleeper of the daemon (injectable for tests).
pub trait Clock: Send + Sync {
    /// Current time in unix seconds.
    fn now(&self) -> f64;
    /// Sleep for `d` (a fake clock just advances).
    fn sleep(&self, d: Duration);
}

/// The real wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> f64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Daemon knobs.
#[derive(Clone)]
pub struct DaemonOptions {
    /// Longest single sleep: the stop flag is checked at least this often.
    pub slice: Duration,
    /// Time source.
    pub clock: Arc<dyn Clock>,
}

impl Default for DaemonOptions {
    fn default() -> Self {
        DaemonOptions { slice: Duration::from_millis(500), clock: Arc::new(SystemClock) }
    }
}

impl std::fmt::Debug for DaemonOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaemonOptions").field("slice", &self.slice).finish_non_exhaustive()
    }
}

/// Contents of `_derived/ranger-state.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RangerState {
    /// Clock of the last completed run (unix seconds).
    pub last_run: f64,
    /// Commit of that run, if it made one.
    pub last_commit: Option<String>,
}

/// What a daemon did before it stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DaemonSummary {
    /// Completed runs.
    pub runs: usize,
    /// Fire times skipped because another writer held the lock.
    pub locked: usize,
    /// Runs that failed for another reason.
    pub failed: usize,
    /// Whether a missed run was caught up at start.
    pub caught_up: bool,
}

/// Parse a cron expression. Five fields (`0 3 * * *`) get a leading `0`
/// seconds field for the `cron` crate; six or seven fields pass unchanged.
pub fn parse_schedule(expr: &str) -> Result<Schedule> {
    let fields = expr.split_whitespace().count();
    let full = match fields {
        5 => format!("0 {}", expr.trim()),
        6 | 7 => expr.trim().to_string(),
        n => {
            return Err(RangerError::Schedule {
                schedule: expr.into(),
                reason: format!("expected 5 fields (min hour dom month dow), got {n}"),
            })
        }
    };
    Schedule::from_str(&full).map_err(|e| RangerError::Schedule { schedule: expr.into(), reason: e.to_string() })
}

fn to_dt(t: f64) -> Option<DateTime<Utc>> {
    let secs = t.floor();
    let nanos = ((t - secs) * 1e9) as u32;
    DateTime::from_timestamp(secs as i64, nanos.min(999_999_999))
}

/// First fire time strictly after `t`.
fn next_after(schedule: &Schedule, t: f64) -> Option<f64> {
    let next = schedule.after(&to_dt(t)?).next()?;
    Some(next.timestamp() as f64 + f64::from(next.timestamp_subsec_nanos()) / 1e9)
}

/// The recorded state, `None` when absent or unreadable (then nothing is
/// known to be missed).
pub fn read_state(forest: &Path) -> Option<RangerState> {
    let text = std::fs::read(forest.join(STATE_PATH)).ok()?;
    serde_json::from_slice(&text).ok()
}

fn write_state(forest: &Path, state: &RangerState) -> Result<()> {
    let p = forest.join(STATE_PATH);
    let bytes = serde_json::to_vec_pretty(state)
        .map_err(|e| RangerError::io("encode ranger state", std::io::Error::other(e)))?;
    forest_fs::atomic_write(&p, &bytes).map_err(|e| RangerError::io(format!("write {}", p.display()), e))
}

/// Set `stop` on SIGTERM or SIGINT.
pub fn install_signal_handlers(stop: Arc<AtomicBool>) -> Result<()> {
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| RangerError::io(format!("register signal {sig}"), e))?;
    }
    Ok(())
}

/// [`daemon_with`] on the wall clock, checking `stop` twice a second.
pub fn daemon(
    forest: &Path,
    schedule: &str,
    stop: Arc<AtomicBool>,
    on_run: impl FnMut(&Result<RangerReport>),
) -> Result<DaemonSummary> {
    daemon_with(forest, schedule, stop, &DaemonOptions::default(), on_run)
}

/// Run the Ranger on `schedule` until `stop` is set. A scheduled run missed
/// since the last recorded one is caught up once at start. A run in progress
/// when `stop` is set completes first (one commit or none). `on_run` sees
/// every attempt's outcome, including `E_LOCKED` (retried at the next fire).
pub fn daemon_with(
    forest: &Path,
    schedule: &str,
    stop: Arc<AtomicBool>,
    opts: &DaemonOptions,
    mut on_run: impl FnMut(&Result<RangerReport>),
) -> Result<DaemonSummary> {
    let sched = parse_schedule(schedule)?;
    let clock = opts.clock.as_ref();
    let mut summary = DaemonSummary::default();
    tracing::info!(event = "ranger.daemon.start", forest = %forest.display(), schedule);
    if let Some(state) = read_state(forest) {
        if next_after(&sched, state.last_run).is_some_and(|due| due <= clock.now()) {
            summary.caught_up = true;
            tracing::info!(event = "ranger.daemon.catch_up", last_run = state.last_run);
            run_once(forest, clock, &mut summary, &mut on_run);
        }
    }
    'outer: while !stop.load(Ordering::SeqCst) {
        let Some(due) = next_after(&sched, clock.now()) else {
            tracing::warn!(event = "ranger.daemon.exhausted", schedule);
            break;
        };
        loop {
            if stop.load(Ordering::SeqCst) {
                break 'outer;
            }
            let left = due - clock.now();
            if left <= 0.0 {
                break;
            }
            clock.sleep(opts.slice.min(Duration::from_secs_f64(left)));
        }
        run_once(forest, clock, &mut summary, &mut on_run);
    }
    tracing::info!(event = "ranger.daemon.stop", runs = summary.runs);
    Ok(summary)
}

fn run_once(
    forest: &Path,
    clock: &dyn Clock,
    summary: &mut DaemonSummary,
    on_run: &mut impl FnMut(&Result<RangerReport>),
) {
    let now = clock.now();
    tracing::info!(event = "ranger.run.start", forest = %forest.display(), now);
    // (a config that does not load fails the run below, under the lock)
    let acquired = match RangerConfig::load(forest) {
        Ok(cfg) => crate::canopy::lock_after_staging(forest, &cfg),
        Err(_) => WriterLock::acquire(forest).map(|l| (l, 0)),
    };
    let (lock, staged) = match acquired {
        Ok(l) => l,
        Err(e) => {
            let err = RangerError::from(e);
            if err.code() == forest_model::ErrorCode::Locked {
                summary.locked += 1;
                tracing::warn!(event = "ranger.run.locked", error = %forest_model::error_chain(&err));
            } else {
                summary.failed += 1;
                tracing::error!(event = "ranger.run.failed", error = %forest_model::error_chain(&err));
            }
            on_run(&Err(err));
            return;
        }
    };
    let result = GitForest::open(forest).map_err(RangerError::from).and_then(|git| {
        let cfg = RangerConfig::load(forest)?;
        let mut report = run(forest, &git, now, &cfg)?;
        report.canopy_upgraded = report.canopy_upgraded.map(|n| n + staged);
        write_state(forest, &RangerState { last_run: now, last_commit: report.commit.clone() })?;
        Ok(report)
    });
    drop(lock);
    match &result {
        Ok(r) => {
            summary.runs += 1;
            tracing::info!(
                event = "ranger.run.done",
                commit = r.commit.as_deref().unwrap_or(""),
                promoted = r.links.promoted.len(),
                pruned = r.links.pruned.len(),
                total_ms = r.timings_ms.total
            );
        }
        Err(e) => {
            summary.failed += 1;
            tracing::error!(event = "ranger.run.failed", error = %forest_model::error_chain(e));
        }
    }
    on_run(&result);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        let s = parse_schedule("0 3 * * *").unwrap();
        // 2026-01-01T00:00:00Z -> next 03:00 the same day.
        let t0 = 1_767_225_600.0;
        assert_eq!(next_after(&s, t0), Some(t0 + 3.0 * 3600.0));
        assert_eq!(next_after(&s, t0 + 3.0 * 3600.0), Some(t0 + 27.0 * 3600.0));
        let every = parse_schedule("* * * * *").unwrap();
        assert_eq!(next_after(&every, t0 + 0.5), Some(t0 + 60.0));
        assert!(parse_schedule("* * *").is_err());
        let e = parse_schedule("61 * * * *").unwrap_err();
        assert_eq!(e.code(), "E_SCHEMA");
    }
}
