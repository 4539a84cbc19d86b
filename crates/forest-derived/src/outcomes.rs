//! The outcomes of files the Gardener did not plant, as both sides read
//! them: the `outcomes` table of `_derived/manifest.db` (written by the
//! Gardener's sync, listed by `forest health` and the Ranger). Read-only.

use crate::DerivedError;
use rusqlite::Connection;
use schemars::JsonSchema;
use serde::Serialize;
use std::path::Path;

/// What became of a file that was not planted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKind {
    /// No converter claims its extension.
    Unsupported,
    /// Deliberately left out with a reason (empty, over the size limit,
    /// a symlink policy, an unusable name): never makes a run partial.
    Skipped,
    /// A converter or the file system failed on it (partial when new).
    Failed,
}

impl OutcomeKind {
    /// The spelling stored in the `outcomes` table.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Unsupported => "unsupported",
            OutcomeKind::Skipped => "skipped",
            OutcomeKind::Failed => "failed",
        }
    }
    /// Read a stored spelling (anything unknown is `failed`).
    pub fn parse(s: &str) -> OutcomeKind {
        match s {
            "unsupported" => OutcomeKind::Unsupported,
            "skipped" => OutcomeKind::Skipped,
            _ => OutcomeKind::Failed,
        }
    }
}

/// A known problem as `forest health` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KnownProblem {
    /// Source name.
    pub source: String,
    /// Source-relative path.
    pub path: String,
    /// `unsupported`, `skipped` or `failed`.
    pub kind: OutcomeKind,
    /// Why.
    pub reason: String,
    /// Day first met (with the current bytes).
    pub since: String,
}

fn sq(source: rusqlite::Error) -> DerivedError {
    DerivedError::Manifest { table: "outcomes", source }
}

/// Every remembered problem of a forest, for `forest health` (read-only;
/// empty when the forest has no manifest yet).
pub fn known_problems(forest: &Path) -> crate::Result<Vec<KnownProblem>> {
    let path = forest.join(crate::paths::MANIFEST_PATH);
    if !path.exists() {
        return Ok(vec![]);
    }
    let conn = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(sq)?;
    let has: bool = conn
        .query_row("SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='outcomes'", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(sq)?
        > 0;
    if !has {
        return Ok(vec![]);
    }
    let mut st =
        conn.prepare("SELECT source, path, kind, reason, since FROM outcomes ORDER BY source, path").map_err(sq)?;
    let rows = st
        .query_map([], |r| {
            Ok(KnownProblem {
                source: r.get(0)?,
                path: r.get(1)?,
                kind: OutcomeKind::parse(&r.get::<_, String>(2)?),
                reason: r.get(3)?,
                since: r.get(4)?,
            })
        })
        .map_err(sq)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(sq)
}
