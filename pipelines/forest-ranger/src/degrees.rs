//! Catalog degrees (typed edges out + in) without a GROUP BY over every
//! edge: the edges table is read twice in index order (by `src` through its
//! primary key, by `dst` through `idx_edges_dst`), and the two sorted id
//! streams are merged and counted. In: the catalog. Out: `(id, degree)` in
//! id order to a visitor; memory is the visitor's, not the forest's.

use forest_catalog::{Catalog, CatalogError};
use rusqlite::OptionalExtension;

use crate::{RangerError, Result};

fn sql<T>(r: rusqlite::Result<T>) -> Result<T> {
    r.map_err(|e| RangerError::Catalog(CatalogError::from(e)))
}

/// Call `visit(id, degree)` for every edge endpoint, ids ascending (SQLite
/// BINARY order, which is `str` order).
pub(crate) fn scan(catalog: &Catalog, mut visit: impl FnMut(&str, i64) -> Result<()>) -> Result<()> {
    let conn = catalog.connection();
    let mut by_src = sql(conn.prepare("SELECT src FROM edges ORDER BY src"))?;
    let mut by_dst = sql(conn.prepare("SELECT dst FROM edges ORDER BY dst"))?;
    let mut a = sql(by_src.query_map([], |r| r.get::<_, String>(0)))?.peekable();
    let mut b = sql(by_dst.query_map([], |r| r.get::<_, String>(0)))?.peekable();
    let mut cur: Option<(String, i64)> = None;
    loop {
        // Take the smaller head of the two streams.
        let next = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (Some(x), Some(y)) => match (x, y) {
                (Ok(x), Ok(y)) if x <= y => a.next(),
                (Ok(_), Ok(_)) => b.next(),
                (Err(_), _) => a.next(),
                (_, Err(_)) => b.next(),
            },
        };
        let Some(id) = next else { break };
        let id = sql(id)?;
        match &mut cur {
            Some((c, n)) if *c == id => *n += 1,
            _ => {
                if let Some((c, n)) = cur.take() {
                    visit(&c, n)?;
                }
                cur = Some((id, 1));
            }
        }
    }
    if let Some((c, n)) = cur {
        visit(&c, n)?;
    }
    Ok(())
}

/// `(kind, summary)` of a catalog row.
pub(crate) fn row_of(catalog: &Catalog, id: &str) -> Result<Option<(String, String)>> {
    let mut st =
        sql(catalog.connection().prepare_cached("SELECT kind, COALESCE(summary, '') FROM nodes WHERE id = ?1"))?;
    sql(st.query_row([id], |r| Ok((r.get(0)?, r.get(1)?))).optional())
}
