//! The contract of a budgeted curation run that the Gardener's
//! `forest curate --pending` and the Ranger's nightly run share: the
//! budget ([`Budget`], [`parse_duration`]), why a run stopped
//! ([`StoppedBy`], [`stopped_by`]) and its report ([`PendingReport`]).
//! Plain values and pure functions; the run itself is the Gardener's.

use std::time::Duration;

/// A `--budget` or a `duration:` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// A document count too large for this machine.
    #[error("budget '{0}' is too large")]
    TooLarge(String),
    /// A document count of 0.
    #[error("a budget of 0 documents curates nothing; leave --budget out for no limit")]
    Zero,
    /// Neither a count nor a duration.
    #[error("'{0}' is neither a document count nor a duration like 90s, 15m, 1h30m")]
    Unreadable(String),
}

impl BudgetError {
    /// Stable error code.
    pub fn code(&self) -> &'static str {
        "E_SCHEMA"
    }
}

/// How much a curation run may spend: documents sent to the model, wall
/// time, or both (whichever ends first); unlimited when both are `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// Documents handed to the model at most.
    pub docs: Option<usize>,
    /// Wall time after which no new document is taken (in-flight ones finish).
    pub time: Option<Duration>,
}

impl Budget {
    /// `N` documents or a duration (`90s`, `15m`, `1h30m`), as `--budget` takes it.
    pub fn parse(s: &str) -> Result<Budget, BudgetError> {
        let s = s.trim();
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            let n: usize = s.parse().map_err(|_| BudgetError::TooLarge(s.to_string()))?;
            if n == 0 {
                return Err(BudgetError::Zero);
            }
            return Ok(Budget { docs: Some(n), time: None });
        }
        Ok(Budget { docs: None, time: Some(parse_duration(s)?) })
    }

    /// No limit at all.
    pub fn is_unlimited(&self) -> bool {
        self.docs.is_none() && self.time.is_none()
    }
}

/// `90s`, `15m`, `2h`, `1h30m` (units s, m, h; at least one second).
pub fn parse_duration(s: &str) -> Result<Duration, BudgetError> {
    let bad = || BudgetError::Unreadable(s.to_string());
    let mut secs: u64 = 0;
    let mut num = String::new();
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            _ => return Err(bad()),
        };
        let n: u64 = num.parse().map_err(|_| bad())?;
        secs = n.checked_mul(unit).and_then(|v| secs.checked_add(v)).ok_or_else(bad)?;
        num.clear();
    }
    if !num.is_empty() || secs == 0 {
        return Err(bad());
    }
    Ok(Duration::from_secs(secs))
}

/// Why a curation run stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StoppedBy {
    /// Every pending leaf was handed to the model.
    #[default]
    Done,
    /// The document budget was spent.
    Budget,
    /// The time budget ran out.
    Time,
    /// The endpoint went down (the Curator went offline): the rest waits
    /// for the next run.
    Offline,
}

/// Why a run that handed `taken` of `total` candidates to the model
/// stopped (`time_up`: the clock ran out before the next one was taken;
/// `offline`: the Curator went offline).
pub fn stopped_by(taken: usize, total: usize, budget: &Budget, time_up: bool, offline: bool) -> StoppedBy {
    if taken >= total {
        StoppedBy::Done
    } else if offline {
        StoppedBy::Offline
    } else if time_up {
        StoppedBy::Time
    } else if budget.docs.is_some_and(|n| taken >= n) {
        StoppedBy::Budget
    } else {
        // Workers stop only at a limit; anything else is the clock.
        StoppedBy::Time
    }
}

/// `forest curate --pending --json`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PendingReport {
    /// Report shape version (2: `kept_derived`, `left`, `stopped_by`, `commits`).
    pub version: u32,
    /// Leaves pending when the run started.
    pub pending: usize,
    /// Leaves now carrying an LLM summary.
    pub curated: Vec<String>,
    /// Leaves handed to the model whose derived scent stays (no candidate
    /// passed validate-and-retry, or none said more); still pending.
    pub kept_derived: Vec<String>,
    /// The same list under its version-1 name.
    pub still_pending: Vec<String>,
    /// Leaves pending after the run (kept derived, and those the budget
    /// did not reach): what the next run works on.
    pub left: usize,
    /// `done` (every pending leaf was handed to the model), `budget` (the
    /// document budget was spent), `time` (the time budget ran out) or
    /// `offline` (the endpoint went down; the rest waits for the next run).
    pub stopped_by: StoppedBy,
    /// The last commit, when anything changed.
    pub commit: Option<String>,
    /// Every commit of the run, oldest first.
    pub commits: Vec<String>,
    /// Wall time of the run.
    pub elapsed_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_parse_as_documents_or_durations() {
        assert_eq!(Budget::parse("40"), Ok(Budget { docs: Some(40), time: None }));
        assert_eq!(Budget::parse("90s").unwrap().time, Some(Duration::from_secs(90)));
        assert_eq!(Budget::parse("15m").unwrap().time, Some(Duration::from_secs(900)));
        assert_eq!(Budget::parse(" 1h30m ").unwrap().time, Some(Duration::from_secs(5400)));
        for bad in ["0", "", "0s", "15x", "m", "1.5h", "-3", "10m5"] {
            assert!(Budget::parse(bad).is_err(), "{bad:?} must be refused");
        }
        assert!(Budget::default().is_unlimited());
        assert!(!Budget::parse("3").unwrap().is_unlimited());
    }

    #[test]
    fn why_a_run_stopped() {
        let docs = Budget { docs: Some(2), time: None };
        assert_eq!(stopped_by(2, 5, &docs, false, false), StoppedBy::Budget);
        assert_eq!(stopped_by(2, 2, &docs, false, false), StoppedBy::Done, "nothing left: done, not budget");
        let time = Budget { docs: None, time: Some(Duration::from_secs(1)) };
        assert_eq!(stopped_by(1, 5, &time, true, false), StoppedBy::Time);
        assert_eq!(stopped_by(5, 5, &time, true, false), StoppedBy::Done);
        assert_eq!(stopped_by(0, 0, &Budget::default(), false, false), StoppedBy::Done);
        let both = Budget { docs: Some(3), time: Some(Duration::from_secs(1)) };
        assert_eq!(stopped_by(1, 5, &both, true, false), StoppedBy::Time);
        assert_eq!(stopped_by(3, 5, &both, false, false), StoppedBy::Budget);
        assert_eq!(stopped_by(1, 5, &Budget::default(), false, true), StoppedBy::Offline);
        assert_eq!(stopped_by(5, 5, &Budget::default(), false, true), StoppedBy::Done);
    }
}
