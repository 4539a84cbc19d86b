//! Resource caps of the SQL a client sends (`query`, `tend`): per-connection
//! SQLite limits (value length, LIKE/GLOB pattern length, expression depth),
//! the process-wide heap ceiling of a server, the constant-WHERE refusal of
//! `tend` (SQLite decides whether the WHERE reads a column) and `tend`'s
//! per-statement row and byte budget.
//!
//! In: an open connection and the guarded statement. Out: `()` or an
//! envelope. Touches nothing.

use std::sync::{Arc, Mutex};

use rusqlite::hooks::{AuthAction, Authorization};
use rusqlite::limits::Limit;
use rusqlite::Connection;

use crate::error::{VResult, VineError};
use crate::sqllex::lex;

/// Largest string or blob a statement may build (`randomblob(5e8)` fails).
pub const MAX_VALUE: i32 = 8 << 20;
/// Longest LIKE/GLOB pattern (SQLite's matcher recurses per wildcard).
pub const MAX_PATTERN: i32 = 1000;
/// Deepest expression tree.
pub const MAX_EXPR_DEPTH: i32 = 200;
/// Bytes of one text cell returned by `query` (the rest is elided).
pub const MAX_CELL: usize = 4096;
/// Process-wide SQLite heap ceiling of a server (all connections).
pub const HEAP_LIMIT: i64 = 192 << 20;
/// Default rows one `tend` statement may change (`FOREST_TEND_MAX_ROWS`).
pub const TEND_MAX_ROWS: usize = 1000;
/// Default bytes one `tend` statement may grow a dataset by (`FOREST_TEND_MAX_BYTES`).
pub const TEND_MAX_BYTES: u64 = 8 << 20;

/// Apply the per-connection caps.
pub(crate) fn limit(conn: &Connection) -> VResult<()> {
    for (l, v) in [
        (Limit::SQLITE_LIMIT_LENGTH, MAX_VALUE),
        (Limit::SQLITE_LIMIT_SQL_LENGTH, crate::limits::MAX_SQL as i32 + 64),
        (Limit::SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_PATTERN),
        (Limit::SQLITE_LIMIT_EXPR_DEPTH, MAX_EXPR_DEPTH),
        (Limit::SQLITE_LIMIT_COMPOUND_SELECT, 64),
        (Limit::SQLITE_LIMIT_ATTACHED, 0),
    ] {
        conn.set_limit(l, v).map_err(|e| VineError::internal(format!("sqlite limit: {e}")))?;
    }
    Ok(())
}

/// Cap SQLite's heap for the whole process (a server calls this once):
/// an allocation past it fails the statement with "out of memory".
pub fn cap_heap() {
    // SAFETY: sqlite3_hard_heap_limit64 only stores a process-wide integer
    // under SQLite's own mutex; any value is valid.
    unsafe {
        rusqlite::ffi::sqlite3_hard_heap_limit64(HEAP_LIMIT);
    }
}

/// The envelope of a statement stopped by a cap, if `msg` is one.
pub(crate) fn capped(msg: &str, verb: &str) -> Option<VineError> {
    let m = msg.to_lowercase();
    let what = if m.contains("string or blob too big") {
        format!("a value is over the {} MiB cap", MAX_VALUE >> 20)
    } else if m.contains("pattern too complex") {
        format!("a LIKE/GLOB pattern is over {MAX_PATTERN} characters")
    } else if m.contains("expression tree is too large") || m.contains("too many terms") {
        "the statement is nested too deeply".to_string()
    } else if m.contains("out of memory") {
        format!("it needs more than the {} MiB SQL memory cap", HEAP_LIMIT >> 20)
    } else if m.contains("statement too long") {
        "the statement is too long".to_string()
    } else {
        return None;
    };
    Some(
        VineError::forbidden(format!("{verb} refused: {what}"))
            .hint("Select fewer or smaller values, or aggregate; the server caps the work of one statement."),
    )
}

/// Recording authorizer: table names of row writes and reads of columns.
#[derive(Default)]
struct Seen {
    written: Vec<String>,
    columns_read: usize,
}

fn record(conn: &mut Connection, sql: &str) -> Option<Seen> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s2 = seen.clone();
    conn.authorizer(Some(move |ctx: rusqlite::hooks::AuthContext<'_>| {
        let mut s = s2.lock().unwrap_or_else(|p| p.into_inner());
        match ctx.action {
            AuthAction::Update { table_name, .. } | AuthAction::Delete { table_name } => {
                s.written.push(table_name.to_string())
            }
            AuthAction::Read { column_name, .. } if !column_name.is_empty() => s.columns_read += 1,
            _ => {}
        }
        Authorization::Allow
    }))
    .ok()?;
    let ok = conn.prepare(sql).is_ok();
    let _ = conn.authorizer(None::<fn(rusqlite::hooks::AuthContext<'_>) -> Authorization>);
    let out = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    ok.then_some(out)
}

/// The text of the top-level WHERE expression of an UPDATE/DELETE.
pub(crate) fn where_expr(stmt: &str) -> Option<&str> {
    let (words, _) = lex(stmt);
    let w = words.iter().position(|w| w.depth == 0 && w.text == "WHERE")?;
    let start = words[w].at + "WHERE".len();
    let end = words[w + 1..]
        .iter()
        .find(|x| x.depth == 0 && ["RETURNING", "ORDER", "LIMIT"].contains(&x.text.as_str()))
        .map_or(stmt.len(), |x| x.at);
    stmt.get(start..end)
}

/// Refuse an UPDATE/DELETE whose WHERE reads no column (`WHERE 1`,
/// `WHERE 'a'='a'`, `WHERE NOT 0`, ...): SQLite prepares the WHERE over the
/// target table and its authorizer reports whether any column is read.
/// When SQLite cannot prepare the probe (aliases, UPDATE FROM) the
/// statement passes here and the row budget still bounds it.
pub(crate) fn refuse_constant_where(conn: &mut Connection, stmt: &str, verb: &str) -> VResult<()> {
    let Some(expr) = where_expr(stmt) else { return Ok(()) };
    let Some(table) = record(conn, stmt).and_then(|s| s.written.into_iter().next()) else { return Ok(()) };
    let probe = format!("SELECT 1 FROM \"{}\" WHERE ({expr}\n)", table.replace('"', "\"\""));
    match record(conn, &probe) {
        Some(s) if s.columns_read == 0 => {
            Err(VineError::forbidden(format!("{verb} with a constant WHERE is not allowed (mass-wipe guard)"))
                .hint("The WHERE must test a column of the rows to change, e.g. WHERE id = 42."))
        }
        _ => Ok(()),
    }
}

/// Size of the database file as the open transaction sees it.
pub(crate) fn page_bytes(conn: &Connection) -> rusqlite::Result<u64> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok((pages.max(0) as u64) * (size.max(0) as u64))
}

/// Rows and bytes one `tend` statement may change or add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TendBudget {
    /// Rows changed at most.
    pub max_rows: usize,
    /// Bytes the dataset file may grow by at most.
    pub max_bytes: u64,
}

impl TendBudget {
    /// Defaults, overridden by `FOREST_TEND_MAX_ROWS` / `FOREST_TEND_MAX_BYTES`.
    pub fn from_env() -> TendBudget {
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<u64>().ok());
        TendBudget {
            max_rows: num("FOREST_TEND_MAX_ROWS").map_or(TEND_MAX_ROWS, |n| n as usize),
            max_bytes: num("FOREST_TEND_MAX_BYTES").unwrap_or(TEND_MAX_BYTES),
        }
    }

    /// `E_QUERY_FORBIDDEN` when the statement went over the budget (the
    /// caller rolls back).
    pub fn admit(&self, rows: usize, grown: u64) -> VResult<()> {
        if rows > self.max_rows {
            return Err(VineError::forbidden(format!(
                "tend would change {rows} rows, over the budget of {} per statement; rolled back",
                self.max_rows
            ))
            .hint("Narrow the WHERE or split the change; the operator sets FOREST_TEND_MAX_ROWS."));
        }
        if grown > self.max_bytes {
            return Err(VineError::forbidden(format!(
                "tend would grow the dataset by {grown} bytes, over the budget of {} per statement; rolled back",
                self.max_bytes
            ))
            .hint("Write smaller values; the operator sets FOREST_TEND_MAX_BYTES."));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE s (id INTEGER PRIMARY KEY, region TEXT); INSERT INTO s VALUES (1,'a'),(2,'b');")
            .unwrap();
        c
    }

    #[test]
    fn constant_where_is_refused_by_asking_sqlite() {
        let mut c = table();
        for bad in [
            "UPDATE s SET region = 'x' WHERE 1",
            "UPDATE s SET region = 'x' WHERE 1=1",
            "DELETE FROM s WHERE 'a'='a'",
            "DELETE FROM s WHERE NOT 0",
            "UPDATE s SET region = (SELECT region FROM s WHERE id = 1) WHERE (SELECT 1)",
            "DELETE FROM s WHERE 0 = 0 RETURNING id",
        ] {
            let Err(e) = refuse_constant_where(&mut c, bad, "X") else { panic!("{bad} passed") };
            assert_eq!(e.code, "E_QUERY_FORBIDDEN", "{bad}");
        }
        for good in [
            "UPDATE s SET region = 'x' WHERE id = 1",
            "DELETE FROM s WHERE id IN (SELECT id FROM s WHERE region = 'a')",
            "UPDATE s SET region = 'where' WHERE region = 'a' RETURNING id",
        ] {
            assert!(refuse_constant_where(&mut c, good, "X").is_ok(), "{good}");
        }
        assert_eq!(where_expr("DELETE FROM s WHERE id = 1 ORDER BY id LIMIT 1"), Some(" id = 1 "));
    }

    #[test]
    fn caps_turn_into_clear_refusals() {
        let c = table();
        limit(&c).unwrap();
        let e = c.query_row("SELECT length(randomblob(500000000))", [], |r| r.get::<_, i64>(0)).unwrap_err();
        assert!(capped(&e.to_string(), "query").is_some(), "{e}");
        let pat = format!("'{}'", "%a".repeat(20_000));
        let e = c.query_row(&format!("SELECT 'aaa' LIKE {pat}"), [], |r| r.get::<_, i64>(0)).unwrap_err();
        assert_eq!(capped(&e.to_string(), "query").unwrap().code, "E_QUERY_FORBIDDEN");
        let b = TendBudget { max_rows: 2, max_bytes: 10 };
        assert!(b.admit(2, 10).is_ok());
        assert!(b.admit(3, 0).unwrap_err().message.contains("over the budget"));
        assert!(b.admit(1, 11).is_err());
    }
}
