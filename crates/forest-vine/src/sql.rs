//! `query` and `tend` (vine spec §2.5, §2.15) and the dataset digest of `look`.
//!
//! Safety is by construction, not by text: `query` runs on a `mode=ro`
//! connection with `query_only`, an authorizer that allows only SELECT,
//! reads, functions and recursive CTEs, a 200-row step cap and a 2 s
//! progress deadline. `tend` accepts exactly one statement (SQLite's own
//! parser decides), whose authorizer allows only INSERT/UPDATE/DELETE on
//! user tables plus reads; UPDATE/DELETE need a top-level WHERE. The
//! keyword checks over the lexed text (literals and identifiers skipped)
//! exist to give precise refusals, not to be the guard.

use crate::answers::{Cell, QueryManual, Rows, Sample, Tables, Tended};
use forest_model::ErrorCode;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use forest_catalog::NodeRow;
use rusqlite::hooks::{AuthAction, Authorization};
use rusqlite::{Connection, OpenFlags};
use sha2::{Digest, Sha256};

use crate::budget::estimate_of;
use crate::engine::Vine;
use crate::error::{VResult, VineError};
use crate::sqllex::{lex, Word};

/// Rows a query returns at most.
pub const ROW_CAP: usize = 200;
/// Budget of a query answer.
pub const QUERY_BUDGET: usize = 2000;
/// Statement deadline.
pub const DEADLINE: Duration = Duration::from_secs(2);

const QUERY_FORBIDDEN: [&str; 11] =
    ["ATTACH", "DETACH", "PRAGMA", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER", "CREATE", "VACUUM", "REINDEX"];
const TEND_FORBIDDEN: [&str; 11] =
    ["ATTACH", "DETACH", "PRAGMA", "DROP", "ALTER", "CREATE", "VACUUM", "REINDEX", "BEGIN", "COMMIT", "TRANSACTION"];

/// Trim, strip trailing `;`, refuse a second statement.
fn single(sql: &str) -> VResult<(String, Vec<Word>)> {
    let s = sql.trim().trim_end_matches([';', ' ', '\t', '\n', '\r']).trim().to_string();
    let (words, semi) = lex(&s);
    if semi {
        return Err(VineError::forbidden("only a single SQL statement is allowed"));
    }
    Ok((s, words))
}

fn forbidden_word(words: &[Word], set: &[&str]) -> Option<String> {
    words.iter().find(|w| set.contains(&w.text.as_str()) || w.text.starts_with("PRAGMA_")).map(|w| w.text.clone())
}

/// The guard of `query` (before any connection is opened).
pub fn guard_query(sql: &str) -> VResult<String> {
    let (s, words) = single(sql)?;
    let first = s.split_whitespace().next().unwrap_or("").to_uppercase();
    if first != "SELECT" && first != "WITH" {
        return Err(VineError::forbidden("statement must start with SELECT or WITH"));
    }
    if let Some(w) = forbidden_word(&words, &QUERY_FORBIDDEN) {
        return Err(VineError::forbidden(format!("forbidden keyword: {w}")));
    }
    Ok(s)
}

/// The guard of `tend`: returns the statement and its verb.
pub fn guard_tend(sql: &str) -> VResult<(String, String)> {
    let (s, words) = single(sql)?;
    let first = s.split_whitespace().next().unwrap_or("").to_uppercase();
    if !["INSERT", "UPDATE", "DELETE"].contains(&first.as_str()) {
        return Err(VineError::forbidden("tend accepts INSERT, UPDATE or DELETE only")
            .hint("Reads go through query(); schema changes belong to the Gardener."));
    }
    if let Some(w) = forbidden_word(&words, &TEND_FORBIDDEN) {
        return Err(VineError::forbidden(format!("forbidden keyword: {w}")));
    }
    if first != "INSERT" && !words.iter().any(|w| w.depth == 0 && w.text == "WHERE") {
        return Err(VineError::forbidden(format!("{first} without WHERE is not allowed (mass-wipe guard)")));
    }
    Ok((s, first))
}

fn is_user_table(t: &str) -> bool {
    !t.to_lowercase().starts_with("sqlite_")
}

/// Read-only authorizer: SELECT, reads, functions, recursive CTEs.
fn read_auth(ctx: rusqlite::hooks::AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Function { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

/// Write authorizer of tend: row writes on user tables, plus reads (and
/// the engine's own BEGIN/COMMIT; the guard admits no user transaction verb).
fn write_auth(ctx: rusqlite::hooks::AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Transaction { .. } => Authorization::Allow,
        AuthAction::Pragma { pragma_name, pragma_value: None }
            if ["page_count", "page_size"].iter().any(|n| pragma_name.eq_ignore_ascii_case(n)) =>
        {
            Authorization::Allow
        }
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Function { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        AuthAction::Insert { table_name }
        | AuthAction::Delete { table_name }
        | AuthAction::Update { table_name, .. }
            if is_user_table(table_name) =>
        {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

/// Interrupt the statement at `DEADLINE` or the call's own deadline,
/// whichever comes first; the connection gets the resource caps too.
fn deadline(conn: &mut Connection, call: Option<Instant>) -> VResult<()> {
    let end = Instant::now() + DEADLINE;
    let end = call.map_or(end, |c| c.min(end));
    crate::sqlcap::limit(conn)?;
    conn.progress_handler(1000, Some(move || Instant::now() >= end))?;
    Ok(())
}

fn cell(v: rusqlite::types::ValueRef<'_>) -> Cell {
    use rusqlite::types::ValueRef::*;
    match v {
        Null => Cell::Null,
        Integer(i) => Cell::Int(i),
        Real(f) if f.is_finite() => Cell::Real(f),
        Real(_) => Cell::Null,
        Text(t) if t.len() > crate::sqlcap::MAX_CELL => {
            let s = String::from_utf8_lossy(&t[..crate::sqlcap::MAX_CELL]);
            Cell::Text(format!("{}… <{} bytes>", s.trim_end_matches('\u{fffd}'), t.len()))
        }
        Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
        Blob(b) => Cell::Text(format!("<blob {} bytes>", b.len())),
    }
}

/// Names of tables and views, by name.
fn tables_and_views(conn: &Connection) -> Vec<String> {
    let mut st = match conn.prepare(
        "SELECT name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name",
    ) {
        Ok(s) => s,
        Err(_) => return vec![],
    };
    st.query_map([], |r| r.get::<_, String>(0)).map(|it| it.filter_map(Result::ok).collect()).unwrap_or_default()
}

fn columns_of(conn: &Connection, table: &str) -> Vec<String> {
    let q = format!("SELECT name FROM pragma_table_info('{}')", table.replace('\'', "''"));
    let mut st = match conn.prepare(&q) {
        Ok(s) => s,
        Err(_) => return vec![],
    };
    st.query_map([], |r| r.get::<_, String>(0)).map(|it| it.filter_map(Result::ok).collect()).unwrap_or_default()
}

/// Map a SQLite failure to the envelope, with name hints.
fn sql_error(e: rusqlite::Error, conn_for_hints: Option<&Connection>, verb: &str) -> VineError {
    let msg = e.to_string();
    if let Some(err) = crate::sqlcap::capped(&msg, verb) {
        return err;
    }
    if msg.contains("interrupted") {
        return VineError::new(ErrorCode::Timeout, format!("{verb} exceeded 2.0s"));
    }
    if msg.contains("not authorized") || msg.contains("prohibited") {
        return VineError::forbidden(format!("{verb} may not do that: {msg}")).hint(if verb == "query" {
            "query is read-only: SELECT/WITH over the dataset's tables."
        } else {
            "tend writes rows of the dataset's tables: one INSERT, UPDATE or DELETE."
        });
    }
    if matches!(e, rusqlite::Error::MultipleStatement) {
        return VineError::forbidden("only a single SQL statement is allowed");
    }
    let mut err = VineError::new(ErrorCode::QueryInvalid, format!("SQL error: {msg}"));
    if let Some(conn) = conn_for_hints {
        let tables = tables_and_views(conn);
        if msg.contains("no such table") && !tables.is_empty() {
            err = err.hint(format!("Tables in this dataset: {}.", tables.join(", ")));
        } else if msg.contains("no such column") {
            let parts: Vec<String> = tables
                .iter()
                .take(4)
                .map(|t| format!("{t}({})", columns_of(conn, t).into_iter().take(25).collect::<Vec<_>>().join(", ")))
                .collect();
            if !parts.is_empty() {
                err = err.hint(format!("Columns: {}", parts.join("; ")));
            }
        }
    }
    err
}

/// Digest pieces of a dataset node for `look`.
pub(crate) struct DatasetDigest {
    pub query_manual: QueryManual,
    pub sample_rows: Sample,
    /// `(notes, clipped)`.
    pub notes: Option<(String, bool)>,
}

impl Vine {
    fn dataset_path(&mut self, row: &NodeRow) -> VResult<PathBuf> {
        let payload = row.payload.clone().unwrap_or_default();
        if payload.contains("://") {
            return Err(VineError::forbidden(format!("remote payload is not opened here: {payload}"))
                .hint("Run `forest fetch` / prefetch to bring it into the cache."));
        }
        let dir = self.root.join(forest_model::ids::folder_of(&row.id));
        let p = dir.join(&payload);
        let canon =
            std::fs::canonicalize(&p).map_err(|_| VineError::not_found(format!("payload missing: {payload}")))?;
        if !canon.starts_with(&self.root) {
            return Err(VineError::schema("payload escapes the forest"));
        }
        if !self.file_in_scope(&canon) {
            return Err(VineError::not_found(format!("payload missing: {payload}")));
        }
        Ok(canon)
    }

    fn dataset_row(&mut self, id: &str) -> VResult<NodeRow> {
        let row = self.row(id)?;
        if row.node_type != "dataset" || row.payload_type.as_deref() != Some("sqlite") {
            return Err(VineError::forbidden(format!(
                "node {} is not a sqlite dataset (type={})",
                row.id, row.node_type
            )));
        }
        Ok(row)
    }

    /// `query(id, sql)`: read-only SQL over a dataset's payload.
    pub fn query(&mut self, id: &str, sql: &str) -> VResult<Rows> {
        let row = self.dataset_row(id)?;
        let stmt_text = guard_query(sql)?;
        let path = self.dataset_path(&row)?;
        let started = Instant::now();
        let mut conn = Connection::open_with_flags(
            format!("file:{}?mode=ro", path.display()),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| VineError::internal(format!("open payload: {e}")))?;
        conn.execute_batch("PRAGMA query_only = 1;")?;
        deadline(&mut conn, self.deadline)?;
        conn.authorizer(Some(read_auth))?;
        let result = (|| -> rusqlite::Result<(Vec<String>, Vec<Vec<Cell>>, bool)> {
            let mut st = conn.prepare(&stmt_text)?;
            if !st.readonly() {
                return Err(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_AUTH),
                    Some("not authorized: statement writes".into()),
                ));
            }
            let cols: Vec<String> = st.column_names().map(String::from).collect();
            let n = cols.len();
            let mut rows = st.query([])?;
            let mut out = vec![];
            let mut more = false;
            while let Some(r) = rows.next()? {
                if out.len() == ROW_CAP {
                    more = true;
                    break;
                }
                let mut cells = Vec::with_capacity(n);
                for i in 0..n {
                    cells.push(cell(r.get_ref(i)?));
                }
                out.push(cells);
            }
            Ok((cols, out, more))
        })();
        conn.authorizer(None::<fn(rusqlite::hooks::AuthContext<'_>) -> Authorization>)?;
        let (columns, rows, limited) = result.map_err(|e| sql_error(e, Some(&conn), "query"))?;
        let elapsed = (started.elapsed().as_secs_f64() * 1000.0 * 100.0).round() / 100.0;
        let n = rows.len();
        let mut out =
            Rows { columns, rows: vec![], row_count: n, limited, elapsed_ms: elapsed, truncated: false, hint: None };
        let base = estimate_of(&out);
        let mut kept = 0usize;
        let mut sum = 0usize;
        for r in &rows {
            let t = estimate_of(r);
            if base + sum + t > QUERY_BUDGET {
                break;
            }
            sum += t;
            kept += 1;
        }
        let first_cost = rows.first().map(estimate_of).unwrap_or(0);
        let mut rows = rows;
        if kept < n {
            rows.truncate(kept);
            out.truncated = true;
            let ncol = out.columns.len();
            let hint = if kept > 0 {
                format!("Showing {kept} of {n} rows: the other rows matched and exist, but the response budget dropped them, not by your filter. Do not report these rows as complete; {ncol} column(s) per row — select fewer columns or aggregate.")
            } else {
                format!("{n} row(s) matched your query and exist; one row costs ~{first_cost} tokens across {ncol} column(s), over the response budget. Nothing is missing: name fewer columns or aggregate.")
            };
            out.hint = Some(hint);
        }
        out.row_count = rows.len();
        out.rows = rows;
        // The per-row sum ignores separators: re-check the whole answer.
        while estimate_of(&out) > QUERY_BUDGET {
            if out.rows.pop().is_none() {
                break;
            }
            out.row_count = out.rows.len();
            out.truncated = true;
        }
        Ok(out)
    }

    /// `tend(id, sql)`: one row write, audited by one commit of the `.md`.
    pub fn tend(&mut self, id: &str, sql: &str) -> VResult<Tended> {
        self.writer()?;
        let row = self.dataset_row(id)?;
        let (stmt_text, verb) = guard_tend(sql)?;
        let payload = row.payload.clone().unwrap_or_default();
        if payload.contains("://") {
            return Err(VineError::forbidden(format!("remote payload is read-only: {payload}")));
        }
        let path = self.dataset_path(&row)?;
        let started = Instant::now();
        let mut conn =
            Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(|e| VineError::internal(format!("open payload: {e}")))?;
        conn.busy_timeout(Duration::from_secs(2))?;
        deadline(&mut conn, self.deadline)?;
        if verb != "INSERT" {
            crate::sqlcap::refuse_constant_where(&mut conn, &stmt_text, &verb)?;
        }
        conn.authorizer(Some(write_auth))?;
        let budget = crate::sqlcap::TendBudget::from_env();
        let res = (|| -> rusqlite::Result<Result<usize, VineError>> {
            let tx = conn.unchecked_transaction()?;
            let before = crate::sqlcap::page_bytes(&tx)?;
            let n = {
                let mut st = tx.prepare(&stmt_text)?;
                st.execute([])?
            };
            let grown = crate::sqlcap::page_bytes(&tx)?.saturating_sub(before);
            if let Err(e) = budget.admit(n, grown) {
                tx.rollback()?;
                return Ok(Err(e));
            }
            tx.commit()?;
            Ok(Ok(n))
        })();
        conn.authorizer(None::<fn(rusqlite::hooks::AuthContext<'_>) -> Authorization>)?;
        let affected = res.map_err(|e| sql_error(e, Some(&conn), "tend"))??;
        drop(conn);
        let bytes = std::fs::read(&path)?;
        let hash = hex::encode(Sha256::digest(&bytes));
        let mut node = self.read_node(&row.id)?;
        node.set_str("payload_hash", &hash);
        node.set_str("updated", &forest_model::node::today());
        let msg = format!("tend({}): {verb} {affected} row(s)", row.id);
        let commit = self.commit_nodes(&[(row.id.to_string(), node)], &[], &msg)?;
        let elapsed = (started.elapsed().as_secs_f64() * 1000.0 * 100.0).round() / 100.0;
        Ok(Tended { id: row.id, rows_affected: affected, payload_hash: hash, commit, elapsed_ms: elapsed })
    }
}

/// query_manual, sample_rows and notes of a dataset (quoted identifiers).
pub(crate) fn dataset_digest(v: &mut Vine, row: &NodeRow, body: &str) -> VResult<DatasetDigest> {
    let path = v.dataset_path(row)?;
    let mut conn = Connection::open_with_flags(
        format!("file:{}?mode=ro", path.display()),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(|e| VineError::internal(format!("open payload: {e}")))?;
    deadline(&mut conn, v.deadline)?;
    let tables: Vec<String> = {
        let mut st =
            conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")?;
        let it = st.query_map([], |r| r.get::<_, String>(0))?;
        it.collect::<rusqlite::Result<Vec<_>>>()?
    };
    let tmap = Tables(tables.iter().map(|t| (t.clone(), columns_of(&conn, t))).collect());
    let manual = crate::section::extract_section(body, "Query manual").map(|s| s.1).unwrap_or_default();
    static TICK: once_cell::sync::Lazy<regex::Regex> =
        once_cell::sync::Lazy::new(|| regex::Regex::new(r"`([^`]+)`").expect("static regex"));
    let examples: Vec<String> = TICK
        .captures_iter(&manual)
        .map(|c| c[1].to_string())
        .filter(|s| s.trim_start().to_uppercase().starts_with("SELECT"))
        .take(3)
        .collect();
    let sample = match tables.first() {
        None => Sample { columns: vec![], rows: vec![] },
        Some(t) => {
            let mut st = conn.prepare(&format!("SELECT * FROM \"{}\" LIMIT 3", t.replace('"', "\"\"")))?;
            let cols: Vec<String> = st.column_names().map(String::from).collect();
            let n = cols.len();
            let rows = st
                .query_map([], |r| (0..n).map(|i| r.get_ref(i).map(cell)).collect::<rusqlite::Result<Vec<_>>>())?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Sample { columns: cols, rows }
        }
    };
    let notes =
        crate::section::extract_section(body, "Notes").map(|(_, t)| t.trim().to_string()).filter(|t| !t.is_empty());
    let notes = notes.map(|t| {
        let clipped = forest_model::tokens::estimate_tokens(&t) > 200;
        (crate::budget::clip(&t, 200), clipped)
    });
    let query_manual = QueryManual { tables: tmap, example_queries: examples };
    Ok(DatasetDigest { query_manual, sample_rows: sample, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexer_skips_literals_and_comments() {
        let (w, semi) = lex("SELECT 'a;update' AS \"delete\" FROM t -- drop\n WHERE x=1 /* ; */");
        assert!(!semi);
        let t: Vec<&str> = w.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(t, vec!["SELECT", "AS", "FROM", "T", "WHERE", "X", "1"]);
        assert!(lex("SELECT 1; DROP TABLE x").1);
    }

    #[test]
    fn guards() {
        assert!(guard_query("SELECT region FROM sales WHERE region = 'update';").is_ok());
        for bad in [
            "DROP TABLE sales",
            "EXPLAIN SELECT 1",
            "PRAGMA x",
            "SELECT 1; DROP TABLE sales",
            "WITH x AS (SELECT 1) INSERT INTO sales SELECT * FROM x",
            "SELECT * FROM pragma_table_info('sales')",
        ] {
            assert_eq!(guard_query(bad).unwrap_err().code, "E_QUERY_FORBIDDEN", "{bad}");
        }
        assert_eq!(
            guard_tend("UPDATE sales SET qty = 0").unwrap_err().message,
            "UPDATE without WHERE is not allowed (mass-wipe guard)"
        );
        assert!(guard_tend("DELETE FROM s WHERE id IN (SELECT id FROM s WHERE x)").is_ok());
        assert!(guard_tend("UPDATE s SET v = (SELECT 1 WHERE 1)").is_err(), "a WHERE inside a subquery does not count");
        assert!(guard_tend("INSERT INTO s VALUES (1)").is_ok());
        assert!(guard_tend("CREATE TABLE x (a)").is_err());
    }
}
