//! A catalog narrowed to some branches: TEMP views named `nodes`, `edges`
//! and `moves` shadow the tables on this connection, so every query of the
//! catalog (ranking included) sees only ids under the given prefixes until
//! [`Catalog::widen`]. A scoped MCP token's calls run narrowed.

use crate::{Catalog, Result};

/// SQL predicate: `col` starts with one of `prefixes` (quoted literals).
fn prefix_pred(prefixes: &[String], col: &str) -> String {
    prefixes
        .iter()
        .map(|p| format!("substr({col}, 1, {}) = '{}'", p.chars().count(), p.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// Removes the scoped views (the whole catalog shows again).
const DROP_VIEWS_SQL: &str =
    "DROP VIEW IF EXISTS temp.nodes; DROP VIEW IF EXISTS temp.edges; DROP VIEW IF EXISTS temp.moves;";

/// The views that narrow the catalog to `prefixes`.
fn scope_views_sql(prefixes: &[String]) -> String {
    let pred = |col: &str| prefix_pred(prefixes, col);
    format!(
        "{drop}\
         CREATE TEMP VIEW nodes AS SELECT rowid AS rowid, * FROM main.nodes WHERE {n};\
         CREATE TEMP VIEW edges AS SELECT * FROM main.edges WHERE ({s}) AND ({d});\
         CREATE TEMP VIEW moves AS SELECT * FROM main.moves WHERE ({o}) AND ({w});",
        drop = DROP_VIEWS_SQL,
        n = pred("id"),
        s = pred("src"),
        d = pred("dst"),
        o = pred("old_id"),
        w = pred("new_id"),
    )
}

impl Catalog {
    /// Narrow this connection's view of the catalog to ids under
    /// `prefixes` (each a branch folder such as `"engineering/"`).
    pub fn narrow_to(&self, prefixes: &[String]) -> Result<()> {
        Ok(self.connection().execute_batch(&scope_views_sql(prefixes))?)
    }

    /// Undo [`Catalog::narrow_to`].
    pub fn widen(&self) -> Result<()> {
        Ok(self.connection().execute_batch(DROP_VIEWS_SQL)?)
    }

    /// Links into `id` from nodes outside `prefixes`, counted over the
    /// whole catalog (narrowed or not).
    pub fn links_from_outside(&self, id: &str, prefixes: &[String]) -> Result<i64> {
        let outside = prefix_pred(prefixes, "src");
        let sql = format!("SELECT COUNT(*) FROM main.edges WHERE dst = ?1 AND NOT ({outside})");
        Ok(self.connection().query_row(&sql, [id], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CatalogLink, NodeRow};

    #[test]
    fn views_quote_prefixes() {
        let sql = scope_views_sql(&["it's/".into()]);
        assert!(sql.contains("substr(id, 1, 5) = 'it''s/'"));
    }

    #[test]
    fn a_narrowed_catalog_shows_only_its_branches_until_widened() {
        let dir = tempfile::tempdir().unwrap();
        let mut cat = Catalog::open(&dir.path().join("c.db")).unwrap();
        let mut hr = NodeRow::new("hr/pay", "leaf", "Pay", "Salaries.");
        hr.links = vec![CatalogLink::new("related", "eng/build")];
        cat.upsert(&[NodeRow::new("eng/build", "leaf", "Build", "How to build."), hr]).unwrap();
        let eng = vec!["eng/".to_string()];
        cat.narrow_to(&eng).unwrap();
        assert_eq!(cat.count_nodes().unwrap(), 1);
        assert!(cat.get("hr/pay").unwrap().is_none());
        assert!(cat.edges_in("eng/build").unwrap().is_empty());
        assert_eq!(cat.links_from_outside("eng/build", &eng).unwrap(), 1);
        cat.widen().unwrap();
        assert_eq!(cat.count_nodes().unwrap(), 2);
        assert_eq!(cat.edges_in("eng/build").unwrap().len(), 1);
    }
}
