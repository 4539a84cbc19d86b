//! Narrow reads over the catalog's rows for the crates around it (the
//! canopy's scent pages, the payload prefetch): SQL over the catalog's
//! tables stays in this crate (an ARCHITECTURE.md invariant, checked in CI).

use crate::{Catalog, Result};

/// What the canopy embeds of a node: its scent, and its body's lead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScentRow {
    pub id: String,
    pub title: String,
    pub summary: String,
    pub aliases: Vec<String>,
    pub tags: Vec<String>,
    /// The body's first words ('' when none is kept).
    pub lead: String,
}

/// A node whose FLESH lives behind a payload reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadRow {
    pub id: String,
    pub payload: String,
    /// The payload's recorded hash, when one was recorded.
    pub hash: Option<String>,
}

/// What a literal body search reads of a node: `(id, type, title, trail
/// JSON, body tokens)`.
pub type BodyCandidate = (String, String, String, Option<String>, i64);

fn json_list(s: &str) -> Vec<String> {
    serde_json::from_str(s).unwrap_or_default()
}

impl Catalog {
    /// At most `limit` nodes' scent with ids after `after`, in id order: a
    /// page of a streamed walk (each page is its own short read, so a walk
    /// that works for hours between pages holds no read transaction open).
    pub fn scent_page(&self, after: &str, limit: usize) -> Result<Vec<ScentRow>> {
        let sql = "SELECT n.id, n.title, n.summary, n.aliases, n.tags, l.lead FROM nodes n \
                   LEFT JOIN node_leads l ON l.id = n.id WHERE n.id > ?1 ORDER BY n.id LIMIT ?2";
        let mut st = self.connection().prepare_cached(sql)?;
        let rows = st.query_map(rusqlite::params![after, limit as i64], |r| {
            Ok(ScentRow {
                id: r.get(0)?,
                title: r.get(1)?,
                summary: r.get(2)?,
                aliases: json_list(&r.get::<_, String>(3)?),
                tags: json_list(&r.get::<_, String>(4)?),
                lead: r.get::<_, Option<String>>(5)?.unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// A handle that interrupts the query this catalog runs now (a
    /// caller's deadline, from another thread).
    pub fn interrupt_handle(&self) -> rusqlite::InterruptHandle {
        self.connection().get_interrupt_handle()
    }

    /// A node's children as `(id, summary)`, branches first, then by id.
    pub fn children(&self, parent: &str) -> Result<Vec<(String, String)>> {
        let sql = "SELECT id, summary FROM nodes WHERE parent = ?1 ORDER BY kind = 'branch' DESC, id";
        let mut st = self.connection().prepare_cached(sql)?;
        let rows = st.query_map([parent], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// A node's children's ids, by id.
    pub fn child_ids(&self, parent: &str) -> Result<Vec<String>> {
        let mut st = self.connection().prepare_cached("SELECT id FROM nodes WHERE parent = ?1 ORDER BY id")?;
        let rows = st.query_map([parent], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The ids that start with `prefix` (a folder's `"dir/"`), by id.
    pub fn ids_under(&self, prefix: &str) -> Result<Vec<String>> {
        let sql = "SELECT id FROM nodes WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id";
        let mut st = self.connection().prepare_cached(sql)?;
        let rows = st.query_map([prefix], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Every node in the date window `win` (all without one) and of type
    /// `node_type` (any without one), by id: what a literal body search
    /// reads.
    pub fn body_candidates(&self, win: Option<&crate::Window>, node_type: Option<&str>) -> Result<Vec<BodyCandidate>> {
        let (mut pred, mut args) = win.map_or(("1=1".to_string(), vec![]), |w| w.sql(""));
        if let Some(t) = node_type {
            pred.push_str(" AND type = ?");
            args.push(t.to_string());
        }
        let sql = format!("SELECT id, type, title, trail, body_tokens FROM nodes WHERE {pred} ORDER BY id");
        let mut st = self.connection().prepare(&sql)?;
        let rows = st.query_map(rusqlite::params_from_iter(args.iter()), |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get::<_, Option<i64>>(4)?.unwrap_or(0)))
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// How many nodes, and of them branches, have an id under `prefix`
    /// (a folder's `"dir/"`): a range of the id index, not a table scan.
    pub fn count_under(&self, prefix: &str) -> Result<(i64, i64)> {
        // Every id under "dir/" sorts in ["dir/", "dir0"): '0' follows '/'.
        let end = format!("{}0", prefix.strip_suffix('/').unwrap_or(prefix));
        let sql = "SELECT COUNT(*), COALESCE(SUM(kind = 'branch'), 0) FROM nodes WHERE id >= ?1 AND id < ?2";
        let mut st = self.connection().prepare_cached(sql)?;
        Ok(st.query_row([prefix, end.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }

    /// How many children a node has.
    pub fn child_count(&self, parent: &str) -> Result<i64> {
        Ok(self.connection().query_row("SELECT COUNT(*) FROM nodes WHERE parent = ?1", [parent], |r| r.get(0))?)
    }

    /// Every node with a payload reference whose id starts with `prefix`
    /// (`""`: all), in id order.
    pub fn payload_rows(&self, prefix: &str) -> Result<Vec<PayloadRow>> {
        let mut st = self.connection().prepare(
            "SELECT id, payload, payload_hash FROM nodes WHERE payload IS NOT NULL AND payload != '' ORDER BY id",
        )?;
        let rows = st.query_map([], |r| Ok(PayloadRow { id: r.get(0)?, payload: r.get(1)?, hash: r.get(2)? }))?;
        let mut out = Vec::new();
        for row in rows {
            let row = row?;
            if row.id.starts_with(prefix) {
                out.push(row);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NodeRow;

    fn node(id: &str, payload: Option<&str>) -> NodeRow {
        let mut n = NodeRow::new(id, "leaf", format!("Title {id}"), format!("About {id}."));
        n.aliases = vec![format!("alias-{id}")];
        n.tags = vec!["t".into()];
        n.payload = payload.map(str::to_string);
        n
    }

    #[test]
    fn scent_pages_walk_every_node_in_id_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut cat = Catalog::open(&dir.path().join("c.db")).unwrap();
        cat.upsert(&[node("b", None), node("a", None), node("c", Some("s3://x/c"))]).unwrap();
        let first = cat.scent_page("", 2).unwrap();
        assert_eq!(first.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(first[0].aliases, ["alias-a"]);
        assert_eq!(first[0].tags, ["t"]);
        assert_eq!(first[0].summary, "About a.");
        let rest = cat.scent_page("b", 2).unwrap();
        assert_eq!(rest.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["c"]);
        let payloads = cat.payload_rows("").unwrap();
        assert_eq!(payloads.len(), 1);
        assert_eq!(payloads[0].payload, "s3://x/c");
        assert!(cat.payload_rows("d").unwrap().is_empty());
        assert_eq!(cat.ids_under("b").unwrap(), ["b"]);
        assert!(cat.ids_under("d").unwrap().is_empty());
    }

    #[test]
    fn counts_under_a_folder_read_a_range_of_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let mut cat = Catalog::open(&path).unwrap();
        let branch = NodeRow::new("eng/_index", "branch", "Eng", "Eng.");
        let nodes =
            [node("eng/a", None), node("eng/b/c", None), node("eng.x", None), node("eng0", None), node("engx/a", None)];
        cat.upsert(&nodes).unwrap();
        cat.upsert(&[branch]).unwrap();
        assert_eq!(cat.count_under("eng/").unwrap(), (3, 1));
        assert_eq!(cat.count_under("hr/").unwrap(), (0, 0));
        drop(cat);
        let ro = Catalog::open_read_only(&path).unwrap();
        assert_eq!(ro.count_under("eng/").unwrap(), (3, 1));
        assert!(Catalog::open_read_only(&dir.path().join("missing.db")).is_err(), "never creates");
    }
}
