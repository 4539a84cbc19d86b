//! `_derived/manifest.db` (DESIGN §3): (source, path) -> (id, size, mtime,
//! hash, etag). A cache: rebuilt from passports when missing or when it was
//! last synced at a commit other than HEAD. The same file holds the
//! `outcomes` table of files that were not planted ([`crate::outcomes`]).

use crate::error::GardenError;
use crate::reconcile::ManifestEntry;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;
use std::path::Path;

/// Manifest path inside a forest.
pub use forest_derived::paths::MANIFEST_PATH;

/// The table of [`crate::outcomes`] (created by [`Manifest::open`]; here so
/// the manifest imports nothing of the outcomes module that uses it).
const OUTCOMES_SCHEMA: &str = "CREATE TABLE IF NOT EXISTS outcomes (source TEXT NOT NULL, path TEXT NOT NULL,
   kind TEXT NOT NULL, reason TEXT NOT NULL, size INTEGER NOT NULL, mtime_ms INTEGER NOT NULL, etag TEXT,
   converter TEXT NOT NULL, since TEXT NOT NULL, PRIMARY KEY (source, path));";

/// The sync manifest.
pub struct Manifest {
    conn: Connection,
}

fn sq(e: rusqlite::Error) -> GardenError {
    GardenError::Manifest { table: "manifest", source: e }
}

impl Manifest {
    /// Open (creating) the manifest at `path`.
    pub fn open(path: &Path) -> Result<Manifest, GardenError> {
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| GardenError::io(p.display().to_string(), e))?;
        }
        let conn = Connection::open(path).map_err(sq)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;
             CREATE TABLE IF NOT EXISTS files (source TEXT NOT NULL, path TEXT NOT NULL, id TEXT NOT NULL,
               size INTEGER NOT NULL, mtime_ms INTEGER NOT NULL, hash TEXT NOT NULL, etag TEXT,
               vanished INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (source, path));
             CREATE INDEX IF NOT EXISTS files_id ON files(id);
             CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
        )
        .map_err(sq)?;
        conn.execute_batch(OUTCOMES_SCHEMA).map_err(sq)?;
        Ok(Manifest { conn })
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The commit this manifest was last brought up to.
    pub fn head(&self) -> Result<Option<String>, GardenError> {
        self.conn.query_row("SELECT value FROM meta WHERE key='head'", [], |r| r.get(0)).optional().map_err(sq)
    }

    /// All entries of one source.
    pub fn entries(&self, source: &str) -> Result<HashMap<String, ManifestEntry>, GardenError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT path, id, size, mtime_ms, hash, vanished, etag FROM files WHERE source=?1")
            .map_err(sq)?;
        let rows = st
            .query_map([source], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    ManifestEntry {
                        id: r.get(1)?,
                        size: r.get::<_, i64>(2)? as u64,
                        mtime_ms: r.get(3)?,
                        hash: r.get(4)?,
                        vanished: r.get::<_, i64>(5)? != 0,
                        etag: r.get(6)?,
                    },
                ))
            })
            .map_err(sq)?;
        rows.collect::<Result<HashMap<_, _>, _>>().map_err(sq)
    }

    /// Stream one source's rows in path order (byte order, the order the
    /// listing is produced in) to `f`; `only` restricts to one path. Holds
    /// one row at a time. A read error ends the stream and is returned
    /// after `f` (whose result is then discarded).
    pub fn scan_sorted<R>(
        &self,
        source: &str,
        only: Option<&str>,
        f: impl FnOnce(&mut dyn Iterator<Item = (String, ManifestEntry)>) -> R,
    ) -> Result<R, GardenError> {
        const COLS: &str = "SELECT path, id, size, mtime_ms, hash, vanished, etag FROM files";
        let sql = match only {
            Some(_) => format!("{COLS} WHERE source=?1 AND path=?2 ORDER BY path"),
            None => format!("{COLS} WHERE source=?1 ORDER BY path"),
        };
        let mut st = self.conn.prepare(&sql).map_err(sq)?;
        let read = |r: &rusqlite::Row<'_>| {
            Ok((
                r.get::<_, String>(0)?,
                ManifestEntry {
                    id: r.get(1)?,
                    size: r.get::<_, i64>(2)? as u64,
                    mtime_ms: r.get(3)?,
                    hash: r.get(4)?,
                    vanished: r.get::<_, i64>(5)? != 0,
                    etag: r.get(6)?,
                },
            ))
        };
        let rows = match only {
            Some(p) => st.query_map(params![source, p], read),
            None => st.query_map(params![source], read),
        }
        .map_err(sq)?;
        let mut failed = None;
        let mut it = rows.map_while(|r| match r {
            Ok(x) => Some(x),
            Err(e) => {
                failed = Some(e);
                None
            }
        });
        let out = f(&mut it);
        drop(it);
        match failed {
            Some(e) => Err(sq(e)),
            None => Ok(out),
        }
    }

    /// Number of rows of one source.
    pub fn count(&self, source: &str) -> Result<usize, GardenError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM files WHERE source=?1", [source], |r| r.get::<_, i64>(0))
            .map(|n| n as usize)
            .map_err(sq)
    }

    /// Paths of one source whose rows name one of `ids` (by the id index,
    /// without reading the source's other rows).
    pub fn paths_of_ids(&self, source: &str, ids: &[String]) -> Result<Vec<String>, GardenError> {
        let mut st = self.conn.prepare_cached("SELECT path FROM files WHERE source=?1 AND id=?2").map_err(sq)?;
        let mut out = vec![];
        for id in ids {
            let rows = st.query_map(params![source, id], |r| r.get::<_, String>(0)).map_err(sq)?;
            for r in rows {
                out.push(r.map_err(sq)?);
            }
        }
        Ok(out)
    }

    /// Number of rows (all sources).
    pub fn len(&self) -> Result<usize, GardenError> {
        self.conn.query_row("SELECT COUNT(*) FROM files", [], |r| r.get::<_, i64>(0)).map(|n| n as usize).map_err(sq)
    }

    /// True when empty.
    pub fn is_empty(&self) -> Result<bool, GardenError> {
        Ok(self.len()? == 0)
    }

    /// Apply upserts and deletes for one source and record `head`, in one transaction.
    pub fn apply(
        &mut self,
        source: &str,
        upserts: &[(String, ManifestEntry)],
        deletes: &[String],
        head: Option<&str>,
    ) -> Result<(), GardenError> {
        let tx = self.conn.transaction().map_err(sq)?;
        {
            let mut up = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO files (source, path, id, size, mtime_ms, hash, vanished, etag) VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
                )
                .map_err(sq)?;
            for (path, e) in upserts {
                up.execute(params![source, path, e.id, e.size as i64, e.mtime_ms, e.hash, e.vanished as i64, e.etag])
                    .map_err(sq)?;
            }
            let mut del = tx.prepare_cached("DELETE FROM files WHERE source=?1 AND path=?2").map_err(sq)?;
            for path in deletes {
                del.execute(params![source, path]).map_err(sq)?;
            }
            if let Some(h) = head {
                tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('head', ?1)", [h]).map_err(sq)?;
            }
        }
        tx.commit().map_err(sq)
    }

    /// A value of the `meta` table (a git source's recorded commit lives
    /// under `git:<source>`; a rebuild from passports clears it).
    pub fn meta(&self, key: &str) -> Result<Option<String>, GardenError> {
        self.conn.query_row("SELECT value FROM meta WHERE key=?1", [key], |r| r.get(0)).optional().map_err(sq)
    }

    /// Set a value of the `meta` table.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), GardenError> {
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", [key, value]).map_err(sq)?;
        Ok(())
    }

    /// [`Manifest::scan_sorted`] over the rows of `paths` only (sorted,
    /// unique): one lookup each, memory proportional to `paths`.
    pub fn scan_paths<R>(
        &self,
        source: &str,
        paths: &[String],
        f: impl FnOnce(&mut dyn Iterator<Item = (String, ManifestEntry)>) -> R,
    ) -> Result<R, GardenError> {
        let mut rows = Vec::new();
        for p in paths {
            self.scan_sorted(source, Some(p), |it| rows.extend(it))?;
        }
        Ok(f(&mut rows.into_iter()))
    }

    /// Record `head` without other changes.
    pub fn set_head(&mut self, head: &str) -> Result<(), GardenError> {
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('head', ?1)", [head]).map_err(sq)?;
        Ok(())
    }

    /// Replace everything (rebuild from passports).
    pub fn replace_all(
        &mut self,
        rows: &[(String, String, ManifestEntry)],
        head: Option<&str>,
    ) -> Result<(), GardenError> {
        let tx = self.conn.transaction().map_err(sq)?;
        tx.execute("DELETE FROM files", []).map_err(sq)?;
        tx.execute("DELETE FROM meta", []).map_err(sq)?;
        {
            let mut up = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO files (source, path, id, size, mtime_ms, hash, vanished, etag) VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
                )
                .map_err(sq)?;
            for (source, path, e) in rows {
                up.execute(params![source, path, e.id, e.size as i64, e.mtime_ms, e.hash, e.vanished as i64, e.etag])
                    .map_err(sq)?;
            }
            if let Some(h) = head {
                tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('head', ?1)", [h]).map_err(sq)?;
            }
        }
        tx.commit().map_err(sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: &str) -> ManifestEntry {
        ManifestEntry { id: id.into(), size: 1, mtime_ms: 2, hash: "blake3:x".into(), vanished: false, etag: None }
    }

    #[test]
    fn scan_is_in_byte_order_and_scoped() {
        let d = tempfile::tempdir().unwrap();
        let mut m = Manifest::open(&d.path().join("m.db")).unwrap();
        let rows: Vec<(String, ManifestEntry)> =
            ["a/b.md", "a-c.md", "a.md", "B.md"].iter().map(|p| (p.to_string(), e(p))).collect();
        m.apply("s", &rows, &[], Some("h")).unwrap();
        m.apply("other", &[("zz.md".into(), e("zz"))], &[], None).unwrap();
        let got: Vec<String> = m.scan_sorted("s", None, |it| it.map(|(p, _)| p).collect()).unwrap();
        let mut want: Vec<String> = rows.iter().map(|(p, _)| p.clone()).collect();
        want.sort();
        assert_eq!(got, want);
        let one: Vec<String> = m.scan_sorted("s", Some("a.md"), |it| it.map(|(p, _)| p).collect()).unwrap();
        assert_eq!(one, vec!["a.md"]);
        assert_eq!(m.count("s").unwrap(), 4);
        assert_eq!(m.paths_of_ids("s", &["a-c.md".into(), "nope".into()]).unwrap(), vec!["a-c.md"]);
    }
}
