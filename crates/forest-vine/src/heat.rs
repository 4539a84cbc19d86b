//! Session heat on the engine: the heat a `pick` or `query` lays on its
//! node's trail, and `close_session`, which turns a successful hunt into
//! persistent heat and starts a fresh session (vine spec §3).
//!
//! In: the engine's tracer and trails. Out: the close line. Touches
//! `_derived/trails.db` (a writable engine) and the traces.

use crate::answers::{Closed, Outcome};
use forest_catalog::PERSISTENT_SCOPE;

use crate::engine::{norm_id, Vine};
use crate::error::{VResult, VineError};
use crate::session::{now, CLOSE_HEAT, MAX_ANSWER_NODES, SESSION_HEAT, SHOUT_THRESHOLD};

impl Vine {
    /// Lay session heat on `trail(id) + [id]` after a successful harvest.
    pub(crate) fn session_deposit(&mut self, id: &str) -> VResult<()> {
        let mut ids = forest_model::ids::trail(id);
        ids.push(id.to_string());
        if !self.shared_writes {
            self.tracer.memory_deposit(&ids, SESSION_HEAT);
            return Ok(());
        }
        let session = self.tracer.session();
        self.trails.deposit(&ids, SESSION_HEAT, &session)?;
        Ok(())
    }

    /// `close_session(success, answer_nodes)`: on success with answers,
    /// +0.1 persistent heat on each answer's trail and itself (two answers
    /// under one branch give it +0.2); a trail of ≥4 calls before the answer
    /// suggests the answer as a shortcut. The session's own heat is then
    /// cleared and a fresh session starts (so a second close never re-counts).
    /// Only ids the catalog knows earn heat (at most [`MAX_ANSWER_NODES`]),
    /// and a read-only server (`shared_writes` false) deposits none: its
    /// session heat stays in memory and is dropped here.
    pub fn close_session(&mut self, success: bool, answer_nodes: &[String]) -> VResult<Closed> {
        if answer_nodes.len() > MAX_ANSWER_NODES {
            return Err(VineError::schema(format!(
                "close_session: {} answer_nodes, at most {MAX_ANSWER_NODES}",
                answer_nodes.len()
            )));
        }
        let metrics = self.tracer.metrics(answer_nodes);
        let mut suggest: Vec<String> = vec![];
        // Shared heat ranks locate for everyone: only callers that may
        // write deposit it (a read token's session heat stays its own).
        if success && !answer_nodes.is_empty() && self.access.may_write_heat() {
            for n in answer_nodes {
                let n = norm_id(n);
                if !self.shared_writes || self.catalog.get(&n)?.is_none() {
                    continue;
                }
                let mut ids = forest_model::ids::trail(&n);
                ids.push(n.clone());
                self.trails.deposit(&ids, CLOSE_HEAT, PERSISTENT_SCOPE)?;
            }
            if metrics.trail_len.is_some_and(|t| t as i64 >= SHOUT_THRESHOLD) {
                suggest = answer_nodes.to_vec();
            }
        }
        let old = self.tracer.session();
        let line = Closed {
            ts: now(),
            session: old.clone(),
            outcome: Outcome { success, answer_nodes: answer_nodes.to_vec() },
            metrics,
            suggest_shortcuts: suggest,
        };
        self.tracer.append(&old, &line);
        self.tracer.restart();
        if self.shared_writes {
            self.trails.clear_session(&old)?;
        }
        Ok(line)
    }
}
