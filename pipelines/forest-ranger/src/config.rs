//! `_meta/ranger.yaml` (dialect §5.8), validated.
//!
//! The dialect ignores unknown keys and takes any value; we refuse both,
//! naming the key, because a typo (`half_life_day: 7`) would otherwise
//! silently run with the default and decay heat at the wrong rate.

use std::path::Path;

use forest_derived::curation::{parse_duration, Budget};
use forest_model::yaml::{self, Value};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{RangerError, Result};

/// Path of the config inside a forest.
pub const RANGER_CONFIG_PATH: &str = "_meta/ranger.yaml";

/// Ranger knobs with the dialect's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RangerConfig {
    /// Heat half-life in days (> 0).
    pub half_life_days: f64,
    /// Session rows older than this many hours are cleared (> 0).
    pub session_ttl_hours: f64,
    /// Both ends must have at least this heat for a promotion, in [0, 1].
    pub promote_floor: f64,
    /// Confidence a promoted link gets, in (0, 1).
    pub promoted_confidence: f64,
    /// Cold links at or below this confidence are pruned, in [0, 1).
    pub prune_below: f64,
    /// Payload-cache budget in decimal GB (>= 0).
    pub payload_cache_gb: f64,
    /// Curation budget of a Ranger run (issue 35): `forest ranger run`
    /// curates this many pending leaves, or for this long, hottest first,
    /// after its pass when an LLM endpoint is configured. Off when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curation: Option<CurationConfig>,
    /// The canopy's second tier: a Ranger run rebuilds a canopy the fast
    /// encoder made (every adopt and sync) with the full model when the
    /// forest has at most this many nodes (0: never). The full model
    /// embeds 70-90 nodes/s on 2 cores: 10^5 nodes take about 20 minutes.
    pub canopy_full_max_nodes: f64,
}

/// The `curation:` block of `_meta/ranger.yaml`: a document budget, a
/// time budget, or both (whichever ends first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CurationConfig {
    /// Documents handed to the model per run at most (> 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
    /// Wall time per run after which no new document is taken (`90s`,
    /// `10m`, `1h30m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
}

impl CurationConfig {
    /// The budget this block spends; the error names the bad key.
    pub fn budget(&self) -> Result<Budget> {
        if self.budget.is_none() && self.duration.is_none() {
            return Err(bad("curation", "set budget (documents) or duration (e.g. 10m), or remove the block"));
        }
        if self.budget == Some(0) {
            return Err(bad("curation.budget", "must be > 0"));
        }
        let time = match &self.duration {
            Some(d) => Some(parse_duration(d).map_err(|e| bad("curation.duration", e.to_string()))?),
            None => None,
        };
        Ok(Budget { docs: self.budget, time })
    }
}

impl Default for RangerConfig {
    fn default() -> Self {
        RangerConfig {
            half_life_days: 30.0,
            session_ttl_hours: 24.0,
            promote_floor: 0.2,
            promoted_confidence: 0.8,
            prune_below: 0.5,
            payload_cache_gb: 5.0,
            curation: None,
            canopy_full_max_nodes: 100_000.0,
        }
    }
}

fn bad(key: &str, reason: impl Into<String>) -> RangerError {
    RangerError::Config { key: key.to_string(), reason: reason.into() }
}

fn number(key: &str, v: &Value) -> Result<f64> {
    let f = match v {
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    match f {
        Some(f) if f.is_finite() => Ok(f),
        _ => Err(bad(key, "must be a finite number")),
    }
}

/// The change that versions `_meta/ranger.yaml` in the run's commit: `Some`
/// when the work tree's copy differs from HEAD's and validates (an invalid
/// file fails the run before anything is committed), else `None`.
pub fn versioned_change(forest: &Path, git: &forest_git::GitForest) -> Result<Option<forest_git::Change>> {
    let p = forest.join(RANGER_CONFIG_PATH);
    let bytes = match std::fs::read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RangerError::io(format!("read {}", p.display()), e)),
    };
    if git.read_head_file(RANGER_CONFIG_PATH)?.as_deref() == Some(bytes.as_slice()) {
        return Ok(None);
    }
    let text = String::from_utf8(bytes).map_err(|_| bad("<root>", "not UTF-8"))?;
    RangerConfig::from_yaml(&text)?;
    Ok(Some(forest_git::Change::Write { path: RANGER_CONFIG_PATH.to_string(), bytes: text.into_bytes() }))
}

impl RangerConfig {
    /// Load from a forest; an absent file means the defaults.
    pub fn load(forest: &Path) -> Result<RangerConfig> {
        let p = forest.join(RANGER_CONFIG_PATH);
        match std::fs::read_to_string(&p) {
            Ok(text) => Self::from_yaml(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(RangerError::io(format!("read {}", p.display()), e)),
        }
    }

    /// Parse and validate the YAML text of `_meta/ranger.yaml`.
    pub fn from_yaml(text: &str) -> Result<RangerConfig> {
        let map = yaml::parse_mapping(text).map_err(|e| bad("<root>", e.to_string()))?;
        let mut cfg = RangerConfig::default();
        for (k, v) in &map {
            let Some(key) = k.as_str() else {
                return Err(bad(&format!("{k:?}"), "keys must be strings"));
            };
            if key == "curation" {
                let c = CurationConfig::deserialize(v.clone()).map_err(|e| bad("curation", e.to_string()))?;
                c.budget()?;
                cfg.curation = Some(c);
                continue;
            }
            let slot = match key {
                "half_life_days" => &mut cfg.half_life_days,
                "session_ttl_hours" => &mut cfg.session_ttl_hours,
                "promote_floor" => &mut cfg.promote_floor,
                "promoted_confidence" => &mut cfg.promoted_confidence,
                "prune_below" => &mut cfg.prune_below,
                "payload_cache_gb" => &mut cfg.payload_cache_gb,
                "canopy_full_max_nodes" => &mut cfg.canopy_full_max_nodes,
                _ => {
                    return Err(bad(
                        key,
                        "unknown key (accepted: half_life_days, session_ttl_hours, \
                         promote_floor, promoted_confidence, prune_below, payload_cache_gb, \
                         canopy_full_max_nodes, curation)",
                    ))
                }
            };
            *slot = number(key, v)?;
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// Check every value's range; the error names the first bad key.
    pub fn validate(&self) -> Result<()> {
        let checks: [(&str, f64, bool, &str); 7] = [
            ("half_life_days", self.half_life_days, self.half_life_days > 0.0, "must be > 0"),
            ("session_ttl_hours", self.session_ttl_hours, self.session_ttl_hours > 0.0, "must be > 0"),
            ("promote_floor", self.promote_floor, (0.0..=1.0).contains(&self.promote_floor), "must be in [0, 1]"),
            (
                "promoted_confidence",
                self.promoted_confidence,
                self.promoted_confidence > 0.0 && self.promoted_confidence < 1.0,
                // 1.0 would turn a managed link into a structural one.
                "must be in (0, 1)",
            ),
            ("prune_below", self.prune_below, (0.0..1.0).contains(&self.prune_below), "must be in [0, 1)"),
            ("payload_cache_gb", self.payload_cache_gb, self.payload_cache_gb >= 0.0, "must be >= 0"),
            (
                "canopy_full_max_nodes",
                self.canopy_full_max_nodes,
                self.canopy_full_max_nodes >= 0.0 && self.canopy_full_max_nodes.fract() == 0.0,
                "must be a whole number >= 0",
            ),
        ];
        for (key, value, ok, reason) in checks {
            if !value.is_finite() || !ok {
                return Err(bad(key, format!("{reason}, got {value}")));
            }
        }
        // Keeps "a promoted link is never pruned" true (dialect §5.2).
        if self.prune_below >= self.promoted_confidence {
            return Err(bad(
                "prune_below",
                format!("must be below promoted_confidence ({}), got {}", self.promoted_confidence, self.prune_below),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(text: &str) -> String {
        match RangerConfig::from_yaml(text) {
            Err(RangerError::Config { key, .. }) => key,
            other => panic!("expected a config error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(RangerConfig::from_yaml("").unwrap(), RangerConfig::default());
        let c = RangerConfig::from_yaml("half_life_days: 7\npayload_cache_gb: 0.5\n").unwrap();
        assert_eq!(c.half_life_days, 7.0);
        assert_eq!(c.payload_cache_gb, 0.5);
        assert_eq!(c.prune_below, 0.5);
        assert_eq!(c.curation, None, "curation is off when absent");
    }

    #[test]
    fn a_curation_block_sets_the_budget_of_a_run() {
        let c = RangerConfig::from_yaml("curation: { budget: 40 }\n").unwrap().curation.unwrap();
        assert_eq!(c.budget().unwrap(), Budget { docs: Some(40), time: None });
        let c = RangerConfig::from_yaml("curation:\n  duration: 10m\n").unwrap().curation.unwrap();
        assert_eq!(c.budget().unwrap().time, Some(std::time::Duration::from_secs(600)));
        let both = RangerConfig::from_yaml("curation: { budget: 5, duration: 90s }\nhalf_life_days: 7\n").unwrap();
        assert_eq!(both.half_life_days, 7.0);
        let b = both.curation.unwrap().budget().unwrap();
        assert_eq!((b.docs, b.time), (Some(5), Some(std::time::Duration::from_secs(90))));
    }

    #[test]
    fn errors_name_the_key() {
        assert_eq!(key_of("half_life_day: 7\n"), "half_life_day");
        assert_eq!(key_of("half_life_days: 0\n"), "half_life_days");
        assert_eq!(key_of("session_ttl_hours: -1\n"), "session_ttl_hours");
        assert_eq!(key_of("promote_floor: 1.5\n"), "promote_floor");
        assert_eq!(key_of("promoted_confidence: 1.0\n"), "promoted_confidence");
        assert_eq!(key_of("prune_below: '0.3'\n"), "prune_below");
        assert_eq!(key_of("payload_cache_gb: -2\n"), "payload_cache_gb");
        assert_eq!(key_of("prune_below: 0.9\n"), "prune_below");
        assert_eq!(key_of("- a\n- b\n"), "<root>");
        assert_eq!(key_of("curation: { budgte: 4 }\n"), "curation", "unknown keys are refused");
        assert_eq!(key_of("curation: {}\n"), "curation");
        assert_eq!(key_of("curation: { budget: 0 }\n"), "curation.budget");
        assert_eq!(key_of("curation: { budget: '40' }\n"), "curation");
        assert_eq!(key_of("curation: { duration: 10 }\n"), "curation");
        assert_eq!(key_of("curation: { duration: 10 minutes }\n"), "curation.duration");
        let msg = RangerConfig::from_yaml("promote_floor: 2\n").unwrap_err().to_string();
        assert!(msg.contains("promote_floor") && msg.contains("[0, 1]"), "{msg}");
    }
}
