//! `_derived/trails.db` (dialect §6): persistent and session-scoped heat,
//! plus the Ranger's evaporation primitives (dialect §5.1).

use std::collections::HashMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, params_from_iter, Connection};
use schemars::JsonSchema;
use serde::Serialize;

use crate::pyjson::round4;
use crate::{open_tuned, CatalogError, Result};

/// Scope name of persistent heat.
pub const PERSISTENT_SCOPE: &str = "";

/// Weight of session heat folded into ranking heat (dialect §6.5).
const SESSION_BETA: f64 = 0.5;

/// Ids per `IN (...)` query in bulk reads.
const CHUNK: usize = 400;

/// Rows below this after decay are dust and deleted.
const DUST: f64 = 0.01;

const SCHEMA_SQL: &str = "CREATE TABLE IF NOT EXISTS heat (
    scope TEXT NOT NULL DEFAULT '',
    node_id TEXT NOT NULL,
    heat REAL NOT NULL DEFAULT 0,
    updated REAL NOT NULL,
    PRIMARY KEY (scope, node_id)
);";

/// `{rows, max, mean}` of the persistent scope (rounded to 4 decimals).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HeatStats {
    /// Persistent rows.
    pub rows: i64,
    /// Highest heat.
    pub max: f64,
    /// Mean heat.
    pub mean: f64,
}

/// Result of one evaporation pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Evaporation {
    /// Rows decayed and re-stamped.
    pub decayed: usize,
    /// Rows that fell below the dust floor and were deleted.
    pub removed: usize,
}

/// Handle on `_derived/trails.db`.
#[derive(Debug)]
pub struct Trails {
    conn: Connection,
}

/// Wall clock in unix seconds.
pub(crate) fn wall_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

impl Trails {
    /// Open (creating if needed) the heat store.
    pub fn open(path: &Path) -> Result<Trails> {
        let conn = open_tuned(path)?;
        conn.execute_batch(SCHEMA_SQL)?;
        Ok(Trails { conn })
    }

    /// Add `amount` heat to each id in `scope` (`""` = persistent), capped at
    /// 1.0, stamped with the wall clock.
    pub fn deposit(&mut self, ids: &[String], amount: f64, scope: &str) -> Result<()> {
        self.deposit_at(ids, amount, scope, wall_now())
    }

    /// [`Trails::deposit`] with an explicit clock (tests, replays).
    pub fn deposit_at(&mut self, ids: &[String], amount: f64, scope: &str, now: f64) -> Result<()> {
        if !amount.is_finite() || amount < 0.0 {
            return Err(CatalogError::Schema(format!("heat amount must be a finite number >= 0, got {amount}")));
        }
        let tx = self.conn.transaction()?;
        {
            let mut st = tx.prepare_cached(
                "INSERT INTO heat (scope, node_id, heat, updated) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT(scope, node_id) DO UPDATE SET heat = MIN(heat + ?5, 1.0), updated = ?4",
            )?;
            for id in ids {
                st.execute(params![scope, id, amount.min(1.0), now, amount])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Ranking heat of one node: persistent + 0.5 × session heat, capped at
    /// 1.0, rounded to 4 decimals; 0.0 when absent.
    pub fn get_heat(&self, id: &str, session: Option<&str>) -> Result<f64> {
        let map = self.heat_map(&[id.to_string()], session)?;
        Ok(map.get(id).copied().unwrap_or(0.0))
    }

    /// [`Trails::get_heat`] for many ids (queried in chunks of 400). Every
    /// requested id is present in the map.
    pub fn heat_map(&self, ids: &[String], session: Option<&str>) -> Result<HashMap<String, f64>> {
        let mut raw: HashMap<String, f64> = ids.iter().map(|i| (i.clone(), 0.0)).collect();
        let persistent = self.scope_heat(ids, PERSISTENT_SCOPE)?;
        for (id, h) in persistent {
            raw.insert(id, h);
        }
        if let Some(s) = session.filter(|s| !s.is_empty()) {
            for (id, h) in self.scope_heat(ids, s)? {
                *raw.entry(id).or_insert(0.0) += SESSION_BETA * h;
            }
        }
        Ok(raw.into_iter().map(|(id, h)| (id, round4(h.min(1.0)))).collect())
    }

    fn scope_heat(&self, ids: &[String], scope: &str) -> Result<Vec<(String, f64)>> {
        let mut out = Vec::new();
        for chunk in ids.chunks(CHUNK) {
            let marks = vec!["?"; chunk.len()].join(",");
            let sql = format!("SELECT node_id, heat FROM heat WHERE scope = ? AND node_id IN ({marks})");
            let mut st = self.conn.prepare_cached(&sql)?;
            let args = std::iter::once(scope).chain(chunk.iter().map(String::as_str));
            let rows = st.query_map(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))?;
            for row in rows {
                out.push(row?);
            }
        }
        Ok(out)
    }

    /// Delete a session namespace; returns rows removed.
    pub fn clear_session(&mut self, session: &str) -> Result<usize> {
        Ok(self.conn.execute("DELETE FROM heat WHERE scope = ?1", [session])?)
    }

    /// Deposit persistent heat on `ids`, then clear the session.
    pub fn promote_session(&mut self, session: &str, ids: &[String], amount: f64) -> Result<()> {
        self.deposit(ids, amount, PERSISTENT_SCOPE)?;
        self.clear_session(session)?;
        Ok(())
    }

    /// Transplant: move every scope's heat of `old` onto `new`, keeping the
    /// larger heat (and later stamp) where `new` already has a row.
    pub fn rekey(&mut self, old: &str, new: &str) -> Result<()> {
        if old == new {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO heat (scope, node_id, heat, updated) \
             SELECT scope, ?2, heat, updated FROM heat WHERE node_id = ?1 \
             ON CONFLICT(scope, node_id) DO UPDATE SET \
               heat = MAX(heat, excluded.heat), updated = MAX(updated, excluded.updated)",
            params![old, new],
        )?;
        tx.execute("DELETE FROM heat WHERE node_id = ?1", [old])?;
        tx.commit()?;
        Ok(())
    }

    /// `{rows, max, mean}` over the persistent scope.
    pub fn stats(&self) -> Result<HeatStats> {
        let (rows, max, mean): (i64, f64, f64) = self.conn.query_row(
            "SELECT COUNT(*), COALESCE(MAX(heat), 0.0), COALESCE(AVG(heat), 0.0) \
             FROM heat WHERE scope = ''",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        Ok(HeatStats { rows, max: round4(max), mean: round4(mean) })
    }

    /// Every persistent row `(node_id, heat, updated)`, by id (for reports
    /// and tests).
    pub fn persistent_rows(&self) -> Result<Vec<(String, f64, f64)>> {
        let mut st = self.conn.prepare("SELECT node_id, heat, updated FROM heat WHERE scope = '' ORDER BY node_id")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Half-life decay of persistent heat at clock `now` (dialect §5.1):
    /// rows with `dt <= 0` are untouched; decayed values below 0.01 are
    /// deleted; the rest are re-stamped with `now`, so a second pass at the
    /// same instant is a no-op and later passes compose exactly.
    pub fn evaporate(&mut self, now: f64, half_life_days: f64) -> Result<Evaporation> {
        if !(half_life_days.is_finite() && half_life_days > 0.0) {
            return Err(CatalogError::Schema(format!(
                "half_life_days must be a positive number, got {half_life_days}"
            )));
        }
        let half_life_s = half_life_days * 86400.0;
        let tx = self.conn.transaction()?;
        let mut ev = Evaporation { decayed: 0, removed: 0 };
        {
            let rows: Vec<(String, f64, f64)> = {
                let mut st = tx.prepare("SELECT node_id, heat, updated FROM heat WHERE scope = '' AND updated < ?1")?;
                let it = st.query_map([now], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                it.collect::<rusqlite::Result<Vec<_>>>()?
            };
            let mut del = tx.prepare("DELETE FROM heat WHERE scope = '' AND node_id = ?1")?;
            let mut upd = tx.prepare("UPDATE heat SET heat = ?1, updated = ?2 WHERE scope = '' AND node_id = ?3")?;
            for (id, heat, updated) in rows {
                let dt = now - updated;
                if dt <= 0.0 {
                    continue;
                }
                let new = heat * 0.5f64.powf(dt / half_life_s);
                if new < DUST {
                    del.execute([&id])?;
                    ev.removed += 1;
                } else {
                    upd.execute(params![new, now, id])?;
                    ev.decayed += 1;
                }
            }
        }
        tx.commit()?;
        Ok(ev)
    }

    /// Delete session rows (`scope != ''`) older than `ttl_hours` at `now`
    /// (Troop crash leftovers). Returns rows removed.
    pub fn clear_stale_sessions(&mut self, now: f64, ttl_hours: f64) -> Result<usize> {
        Ok(self.conn.execute("DELETE FROM heat WHERE scope != '' AND updated < ?1", [now - ttl_hours * 3600.0])?)
    }
}
