//! The audit log of a served forest: one JSON line per write and per
//! refused call (who = token name, what = tool + ids, when, outcome), in
//! a size-bounded file rotated into `audit.log.1 .. audit.log.N`.
//!
//! Two logs, each rotated on its own, so one kind of traffic never rotates
//! the other away: `audit.log` holds what authenticated callers did
//! (writes, refused tool calls); `access.log` holds what the HTTP guard
//! refused before any tool (failed logins, aggregated per peer per
//! interval; session and in-flight caps), which unauthenticated traffic
//! can fill.
//!
//! Default place: `<forest>/.forest/audit.log`, beside the token store
//! (outside git, not a disposable cache). A failed append is reported once
//! on the tracing log (`vine.audit.failed`) and never fails the call.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde_json::Value;

/// Rotation: bytes per file and files kept besides the live one.
#[derive(Debug, Clone, Copy)]
pub struct Rotation {
    /// A file is rotated before it would grow past this.
    pub max_bytes: u64,
    /// Rotated files kept (`.1` newest .. `.N` oldest).
    pub keep: usize,
}

/// One access-log line (`peer` only for HTTP callers).
#[derive(serde::Serialize)]
struct Line<'a> {
    ts: String,
    who: &'a str,
    tool: &'a str,
    ids: &'a [String],
    outcome: &'a str,
    code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer: Option<&'a str>,
}

impl Default for Rotation {
    fn default() -> Self {
        Rotation { max_bytes: 8 << 20, keep: 5 }
    }
}

/// One audited event.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Token name (`local` for the process owner, `-` when unauthenticated).
    pub who: &'a str,
    /// Tool name, or `http` for a refusal before MCP.
    pub tool: &'a str,
    /// Ids the call named.
    pub ids: Vec<String>,
    /// `ok`, `refused`, `error`.
    pub outcome: &'a str,
    /// Envelope code or refusal reason (`E_FORBIDDEN`, `unauthenticated`, ...).
    pub code: &'a str,
    /// Peer address when known.
    pub peer: Option<String>,
}

/// An append-only, rotating JSON-lines log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    rot: Rotation,
    file: Mutex<Option<(File, u64)>>,
    warned: AtomicBool,
}

impl AuditLog {
    /// The log at `path` (created with its directory on first append).
    pub fn new(path: &Path, rot: Rotation) -> AuditLog {
        AuditLog { path: path.to_path_buf(), rot, file: Mutex::new(None), warned: AtomicBool::new(false) }
    }

    /// `<forest>/.forest/audit.log`.
    pub fn default_path(forest: &Path) -> PathBuf {
        crate::tokens::private_dir(forest).join("audit.log")
    }

    /// `<forest>/.forest/access.log` (refusals of the HTTP guard).
    pub fn default_access_path(forest: &Path) -> PathBuf {
        crate::tokens::private_dir(forest).join("access.log")
    }

    /// The live file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one event.
    pub fn record(&self, e: &Entry<'_>) {
        let ts = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let line = Line {
            ts,
            who: e.who,
            tool: e.tool,
            ids: &e.ids,
            outcome: e.outcome,
            code: e.code,
            peer: e.peer.as_deref(),
        };
        self.write_line(&line);
    }

    /// Append one JSON object (an aggregate line), stamped with `ts`.
    pub fn record_json(&self, mut line: Value) {
        if let Some(m) = line.as_object_mut() {
            let ts = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            m.insert("ts".into(), Value::String(ts));
        }
        self.write_line(&line);
    }

    fn write_line(&self, line: &impl serde::Serialize) {
        let Ok(mut text) = serde_json::to_string(line) else { return };
        text.push('\n');
        if let Err(err) = self.append(text.as_bytes()) {
            if !self.warned.swap(true, Ordering::Relaxed) {
                tracing::warn!(event = "vine.audit.failed", path = %self.path.display(), error = %err);
            }
        }
    }

    fn append(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_some_and(|(_, size)| size + bytes.len() as u64 > self.rot.max_bytes) {
            *guard = None;
            self.rotate()?;
        }
        if guard.is_none() {
            if let Some(d) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                crate::tokens::private(d)?;
            }
            let f = OpenOptions::new().create(true).append(true).open(&self.path)?;
            let size = f.metadata()?.len();
            *guard = Some((f, size));
            if size + bytes.len() as u64 > self.rot.max_bytes && size > 0 {
                *guard = None;
                self.rotate()?;
                let f = OpenOptions::new().create(true).append(true).open(&self.path)?;
                *guard = Some((f, 0));
            }
        }
        let (f, size) = guard.as_mut().expect("opened above");
        f.write_all(bytes)?;
        *size += bytes.len() as u64;
        Ok(())
    }

    /// `.N-1 -> .N`, ..., live -> `.1`; the oldest beyond `keep` is dropped.
    fn rotate(&self) -> std::io::Result<()> {
        let name = |i: usize| PathBuf::from(format!("{}.{i}", self.path.display()));
        if self.rot.keep == 0 {
            return std::fs::remove_file(&self.path).or_else(ignore_missing);
        }
        std::fs::remove_file(name(self.rot.keep)).or_else(ignore_missing)?;
        for i in (1..self.rot.keep).rev() {
            std::fs::rename(name(i), name(i + 1)).or_else(ignore_missing)?;
        }
        std::fs::rename(&self.path, name(1)).or_else(ignore_missing)
    }
}

fn ignore_missing(e: std::io::Error) -> std::io::Result<()> {
    if e.kind() == std::io::ErrorKind::NotFound {
        Ok(())
    } else {
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_and_keeps_n_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/audit.log");
        let log = AuditLog::new(&p, Rotation { max_bytes: 400, keep: 2 });
        for i in 0..40 {
            let id = format!("hr/n{i}");
            log.record(&Entry {
                who: "eng",
                tool: "look",
                ids: vec![id],
                outcome: "refused",
                code: "out_of_scope",
                peer: None,
            });
        }
        let live = std::fs::read_to_string(&p).unwrap();
        assert!(live.lines().last().unwrap().contains("hr/n39"));
        assert!(std::fs::metadata(&p).unwrap().len() <= 400);
        assert!(dir.path().join("a/audit.log.1").is_file());
        assert!(dir.path().join("a/audit.log.2").is_file());
        assert!(!dir.path().join("a/audit.log.3").exists());
        let v: Value = serde_json::from_str(live.lines().next().unwrap()).unwrap();
        assert_eq!(v["who"], "eng");
        assert_eq!(v["outcome"], "refused");
    }
}
