//! Catalog degrees (typed edges out + in) without a GROUP BY over every
//! edge: the edges table is read twice in index order (by `src` through its
//! primary key, by `dst` through `idx_edges_dst`), and the two sorted id
//! streams are merged and counted. Out: `(id, degree)` in id order to a
//! visitor; memory is the visitor's, not the forest's.

use rusqlite::OptionalExtension;

use crate::{Catalog, CatalogError, EdgeRow};

impl Catalog {
    /// Call `visit(id, degree)` for every edge endpoint, ids ascending
    /// (SQLite BINARY order, which is `str` order).
    pub fn scan_degrees<E: From<CatalogError>>(
        &self,
        mut visit: impl FnMut(&str, i64) -> Result<(), E>,
    ) -> Result<(), E> {
        let sql = |r: rusqlite::Result<_>| r.map_err(|e| E::from(CatalogError::from(e)));
        let conn = self.connection();
        let mut by_src = sql(conn.prepare("SELECT src FROM edges ORDER BY src"))?;
        let mut by_dst = sql(conn.prepare("SELECT dst FROM edges ORDER BY dst"))?;
        let mut a = by_src.query_map([], |r| r.get::<_, String>(0)).map_err(|e| E::from(e.into()))?.peekable();
        let mut b = by_dst.query_map([], |r| r.get::<_, String>(0)).map_err(|e| E::from(e.into()))?.peekable();
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
            let id = id.map_err(|e| E::from(e.into()))?;
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

    /// `(kind, summary)` of a node, if it is in the catalog.
    pub fn kind_and_summary(&self, id: &str) -> crate::Result<Option<(String, String)>> {
        let mut st = self.connection().prepare_cached("SELECT kind, COALESCE(summary, '') FROM nodes WHERE id = ?1")?;
        Ok(st.query_row([id], |r| Ok((r.get(0)?, r.get(1)?))).optional()?)
    }

    /// Every edge below full confidence (the managed links), by source,
    /// to a visitor.
    pub fn for_each_managed_edge<E: From<CatalogError>>(
        &self,
        mut visit: impl FnMut(EdgeRow) -> Result<(), E>,
    ) -> Result<(), E> {
        let sql = "SELECT src, rel, dst, confidence FROM edges WHERE confidence < 1.0 ORDER BY src";
        let mut st = self.connection().prepare(sql).map_err(|e| E::from(e.into()))?;
        let rows = st
            .query_map([], |r| Ok(EdgeRow { src: r.get(0)?, rel: r.get(1)?, dst: r.get(2)?, confidence: r.get(3)? }))
            .map_err(|e| E::from(e.into()))?;
        for row in rows {
            visit(row.map_err(|e| E::from(e.into()))?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Catalog, CatalogError, CatalogLink, NodeRow};

    #[test]
    fn degrees_count_both_ends_in_id_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut cat = Catalog::open(&dir.path().join("c.db")).unwrap();
        let mut a = NodeRow::new("a", "leaf", "A", "a.");
        a.links = vec![CatalogLink::new("related", "b"), CatalogLink::new("related", "c")];
        let mut b = NodeRow::new("b", "leaf", "B", "b.");
        b.links = vec![CatalogLink::new("related", "c")];
        let mut c = NodeRow::new("c", "leaf", "C", "c.");
        c.links = vec![CatalogLink { confidence: 0.5, ..CatalogLink::new("related", "a") }];
        cat.upsert(&[a, b, c]).unwrap();
        let mut seen = vec![];
        cat.scan_degrees(|id, n| {
            seen.push((id.to_string(), n));
            Ok::<(), CatalogError>(())
        })
        .unwrap();
        assert_eq!(seen, [("a".into(), 3), ("b".into(), 2), ("c".into(), 3)]);
        let mut managed = vec![];
        cat.for_each_managed_edge(|e| {
            managed.push((e.src, e.dst, e.confidence));
            Ok::<(), CatalogError>(())
        })
        .unwrap();
        assert_eq!(managed, [("c".to_string(), "a".to_string(), 0.5)]);
        assert_eq!(cat.kind_and_summary("b").unwrap(), Some(("banana".into(), "b.".into())));
        assert_eq!(cat.kind_and_summary("z").unwrap(), None);
    }
}
