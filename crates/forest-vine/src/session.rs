//! Sessions (vine spec §3): the trace of one hunt, session-scoped heat
//! while it runs, and `close_session`, which deposits persistent heat on the
//! winning trails and suggests shortcuts.
//!
//! Touches `_derived/traces/<session>.jsonl` (one line per traced call) and
//! `_derived/trails.db` (session scope during the hunt, persistent on close).

use crate::answers::Metrics;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::budget::estimate;

/// Session heat laid on `trail + [id]` by a successful pick/query (the
/// Troop's per-harvest pheromone, vine spec §5); ranking reads it at 0.5.
pub const SESSION_HEAT: f64 = 0.2;
/// Persistent heat per answer node (and its trail) on a successful close.
pub const CLOSE_HEAT: f64 = 0.1;
/// Trail length from which a close suggests a shortcut.
pub const SHOUT_THRESHOLD: i64 = 4;

/// One traced call.
#[derive(Debug, Clone)]
pub struct Event {
    /// Primitive name.
    pub primitive: String,
    /// The call's string `id`, if any.
    pub id: Option<String>,
    /// Estimated tokens of the answer.
    pub tokens_out: usize,
}

/// Bytes after which a trace file is rotated to `<session>.jsonl.1`.
pub const TRACE_ROTATE_BYTES: u64 = 4 << 20;
/// Ids a `close_session` considers at most.
pub const MAX_ANSWER_NODES: usize = 64;

/// Sessions a server keeps traces of at once; the least recently used is
/// forgotten past this (its trace file stays).
pub const MAX_TRACED_SESSIONS: usize = 1024;

/// The traces of a server's sessions, shared by its engines: each caller
/// session (an MCP session of one token; the one session of stdio and the
/// CLI) has its own events, in-memory heat and trace id, so no client sees
/// or resets another's. A clone bound to a session key ([`Tracer::bind`])
/// reads and writes that session only.
#[derive(Debug, Clone)]
pub struct Tracer {
    states: Arc<Mutex<Sessions>>,
    /// `None`: no trace files (a `--readonly` server writes nothing).
    dir: Option<PathBuf>,
    key: String,
}

#[derive(Debug, Default)]
struct Sessions {
    map: HashMap<String, TraceState>,
    /// Use counter (the least recently used session is dropped first).
    tick: u64,
    /// The trace id of the default session (key `""`).
    first: Option<String>,
}

#[derive(Debug)]
struct TraceState {
    session: String,
    events: Vec<Event>,
    /// Session heat of a read-only server (never written to trails.db).
    heat: HashMap<String, f64>,
    used: u64,
}

pub(crate) fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// 12 hex chars from the clock, the pid and a counter (unique per process).
pub fn new_session_id() -> String {
    use sha2::{Digest, Sha256};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let seed = format!("{}-{}-{n}", now(), std::process::id());
    hex::encode(Sha256::digest(seed.as_bytes()))[..12].to_string()
}

impl Tracer {
    pub(crate) fn new(root: &Path, session: Option<String>) -> Tracer {
        let first = session.filter(|s| !s.is_empty());
        let states = Sessions { first, ..Sessions::default() };
        Tracer { states: Arc::new(Mutex::new(states)), dir: Some(root.join("_derived/traces")), key: String::new() }
    }

    /// The same sessions, writing no trace file (a `--readonly` server).
    pub fn without_files(mut self) -> Tracer {
        self.dir = None;
        self
    }

    /// This tracer bound to the session `key` (`""`: the default session).
    pub fn bind(&mut self, key: &str) {
        if self.key != key {
            self.key = key.to_string();
        }
    }

    /// Run `f` on the bound session's state (created on first use).
    fn with<T>(&self, f: impl FnOnce(&mut TraceState) -> T) -> T {
        // A panicking call cannot poison the traces for the others.
        let mut g = self.states.lock().unwrap_or_else(|p| p.into_inner());
        g.tick += 1;
        let tick = g.tick;
        if !g.map.contains_key(&self.key) {
            if g.map.len() >= MAX_TRACED_SESSIONS {
                let oldest = g.map.iter().min_by_key(|(_, s)| s.used).map(|(k, _)| k.clone());
                if let Some(k) = oldest {
                    g.map.remove(&k);
                }
            }
            let session = if self.key.is_empty() { g.first.take() } else { None }.unwrap_or_else(new_session_id);
            g.map.insert(self.key.clone(), TraceState { session, events: vec![], heat: HashMap::new(), used: 0 });
        }
        let st = g.map.get_mut(&self.key).expect("inserted above");
        st.used = tick;
        f(st)
    }

    /// Current trace id of the bound session.
    pub fn session(&self) -> String {
        self.with(|s| s.session.clone())
    }

    /// Events of the bound session so far.
    pub fn events(&self) -> Vec<Event> {
        self.with(|s| s.events.clone())
    }

    /// In-memory session heat of `id` (read-only servers).
    pub(crate) fn memory_heat(&self, id: &str) -> f64 {
        self.with(|s| s.heat.get(id).copied().unwrap_or(0.0))
    }

    pub(crate) fn memory_deposit(&self, ids: &[String], amount: f64) {
        self.with(|st| {
            for id in ids {
                let h = st.heat.entry(id.clone()).or_insert(0.0);
                *h = (*h + amount).min(1.0);
            }
        })
    }

    /// Record a call that returned (a raising call records nothing).
    pub(crate) fn record(&mut self, primitive: &str, id: Option<String>, args: &Value, out: &Value, ms: f64) {
        let tokens_out = estimate(out);
        let session = self.session();
        let line = CallLine {
            ts: now(),
            session: &session,
            primitive,
            id: id.as_deref(),
            tokens_in: estimate(args),
            tokens_out,
            elapsed_ms: (ms * 1000.0).round() / 1000.0,
        };
        self.append(&session, &line);
        self.with(|s| s.events.push(Event { primitive: primitive.to_string(), id, tokens_out }));
    }

    /// Append one line to `<session>.jsonl`, rotating it to `.jsonl.1`
    /// past [`TRACE_ROTATE_BYTES`] (so one session's trace stays bounded).
    pub(crate) fn append(&self, session: &str, line: &impl serde::Serialize) {
        // Traces are telemetry: a full disk must not fail a read.
        let Some(dir) = &self.dir else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let Ok(text) = serde_json::to_string(line) else { return };
        append_rotating(&dir.join(format!("{session}.jsonl")), &text, TRACE_ROTATE_BYTES);
    }

    /// Start a fresh trace id for the bound session, forgetting its events
    /// and heat; returns the old id.
    pub(crate) fn restart(&self) -> String {
        self.with(|st| {
            st.events.clear();
            st.heat.clear();
            std::mem::replace(&mut st.session, new_session_id())
        })
    }

    /// Part D metrics over the events, in order.
    pub fn metrics(&self, answer_nodes: &[String]) -> Metrics {
        self.with(|st| metrics_of(&st.events, answer_nodes))
    }
}

/// One traced call, as its trace line reads.
#[derive(serde::Serialize)]
struct CallLine<'a> {
    ts: f64,
    session: &'a str,
    primitive: &'a str,
    id: Option<&'a str>,
    tokens_in: usize,
    tokens_out: usize,
    elapsed_ms: f64,
}

fn metrics_of(events: &[Event], answer_nodes: &[String]) -> Metrics {
    let first_harvest = events.iter().position(|e| e.primitive == "pick" || e.primitive == "query");
    let hops =
        first_harvest.map(|i| events[..i].iter().filter(|e| e.primitive == "look" || e.primitive == "move").count());
    let trail_len = events.iter().position(|e| {
        (e.primitive == "pick" || e.primitive == "query")
            && e.id.as_ref().is_some_and(|id| answer_nodes.iter().any(|a| a == id))
    });
    Metrics {
        hops_to_banana: hops,
        trail_len,
        tokens_to_banana: events.iter().map(|e| e.tokens_out).sum::<usize>(),
        calls: events.len(),
        answer_nodes: answer_nodes.to_vec(),
    }
}

/// Append one line to `path`; past `max` bytes (or when `path` is a
/// symlink) the file is first renamed to `<path>.1`, replacing the older
/// one: at most two files of about `max` bytes each.
fn append_rotating(path: &Path, line: &str, max: u64) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.len() > max || m.file_type().is_symlink()) {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        let _ = std::fs::rename(path, PathBuf::from(old));
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(f, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metrics_follow_part_d() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Tracer::new(dir.path(), Some("s1".into()));
        let v = json!({});
        for (p, id) in
            [("locate", None), ("pick", Some("a")), ("locate", None), ("pick", Some("b")), ("pick", Some("x"))]
        {
            t.record(p, id.map(String::from), &v, &v, 0.1);
        }
        let m = serde_json::to_value(t.metrics(&["x".to_string()])).unwrap();
        assert_eq!(m["trail_len"], json!(4));
        assert_eq!(m["hops_to_banana"], json!(0));
        assert_eq!(m["calls"], json!(5));
        let lines = std::fs::read_to_string(dir.path().join("_derived/traces/s1.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), 5);
        assert_ne!(new_session_id(), new_session_id());
    }

    #[test]
    fn sessions_are_kept_apart() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Tracer::new(dir.path(), Some("first".into()));
        let mut b = a.clone();
        b.bind("eng#s2");
        let v = json!({});
        a.record("pick", Some("hr/x".into()), &v, &v, 0.1);
        a.record("look", Some("hr/y".into()), &v, &v, 0.1);
        b.record("look", Some("engineering/z".into()), &v, &v, 0.1);
        b.memory_deposit(&["engineering/z".into()], 0.2);
        assert_eq!(a.session(), "first");
        assert_ne!(b.session(), a.session());
        assert_eq!((a.events().len(), b.events().len()), (2, 1));
        assert_eq!(a.memory_heat("engineering/z"), 0.0);
        let old = b.restart();
        assert_ne!(b.session(), old);
        assert!(b.events().is_empty());
        assert_eq!(a.events().len(), 2, "one session's close resets only its own");
        let quiet = a.clone().without_files();
        let mut q = quiet.clone();
        q.bind("ro#s3");
        q.record("look", None, &v, &v, 0.1);
        assert!(!dir.path().join(format!("_derived/traces/{}.jsonl", q.session())).exists());
    }

    #[test]
    fn traced_sessions_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Tracer::new(dir.path(), None).without_files();
        for i in 0..MAX_TRACED_SESSIONS + 10 {
            t.bind(&format!("k{i}"));
            t.memory_deposit(&["x".into()], 0.1);
        }
        assert_eq!(t.states.lock().unwrap().map.len(), MAX_TRACED_SESSIONS);
    }

    #[test]
    fn traces_rotate_and_stay_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        for i in 0..1000 {
            append_rotating(&path, &format!("{{\"n\": {i}, \"pad\": \"{}\"}}", "x".repeat(80)), 4096);
        }
        let cur = std::fs::metadata(&path).unwrap().len();
        let old = std::fs::metadata(dir.path().join("s.jsonl.1")).unwrap().len();
        assert!(cur <= 4096 + 200 && old <= 4096 + 200, "{cur} {old}");
        assert!(std::fs::read_to_string(&path).unwrap().contains("\"n\": 999,"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
