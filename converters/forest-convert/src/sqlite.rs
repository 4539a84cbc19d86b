//! SQLite adoption (G.2.2) and dataset database writing (C.7.1).

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::text::{file_name, stem};
use crate::values::{Cell, PayloadTable, Table};
use forest_model::slug::title_from_stem;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// `.db .sqlite .sqlite3` adoption: the file itself becomes the payload.
pub(crate) struct SqliteAdopt;

/// Quote an SQL identifier (`"` doubled).
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn cell_of(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(f) => Cell::Real(f),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Cell::Text(s.to_string()),
            Err(_) => Cell::Blob(t.to_vec()),
        },
        ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
    }
}

/// Read one table's schema, sample and count; `Err` only for the schema.
fn read_table(conn: &Connection, name: &str) -> Result<PayloadTable, rusqlite::Error> {
    let q = quote_ident(name);
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({q})"))?;
    let columns = stmt
        .query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?.unwrap_or_default())))?
        .collect::<Result<Vec<_>, _>>()?;
    // Sample and count are guarded separately: a damaged table still lists its schema.
    let sample = (|| -> Result<Vec<Vec<Cell>>, rusqlite::Error> {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {q} LIMIT 3"))?;
        let n = stmt.column_count();
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push((0..n).map(|i| r.get_ref(i).map(cell_of).unwrap_or(Cell::Null)).collect());
        }
        Ok(out)
    })()
    .unwrap_or_default();
    let count = conn.query_row(&format!("SELECT COUNT(*) FROM {q}"), [], |r| r.get::<_, i64>(0)).ok();
    Ok(PayloadTable { name: name.to_string(), columns, sample, count })
}

impl Converter for SqliteAdopt {
    fn name(&self) -> &str {
        "Sqlite"
    }
    fn extensions(&self) -> Vec<String> {
        [".db", ".sqlite", ".sqlite3"].map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, _: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let mut header = [0u8; 16];
        let ok = std::fs::File::open(path)?.read_exact(&mut header).is_ok();
        if ok && header.starts_with(&[0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) {
            // An OLE compound file named .db: Windows' Thumbs.db thumbnail
            // cache, found in every folder of a company drive; nothing to plant.
            return Err(crate::error::skipped("Windows thumbnail cache (OLE file named .db), not a document"));
        }
        if !ok || &header != b"SQLite format 3\0" {
            return Err(schema(format!("not a SQLite database: {name}")));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)?;
        let names: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite_%' ORDER BY name",
            )?
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        let mut tables = Vec::new();
        for t in &names {
            match read_table(&conn, t) {
                Ok(pt) => tables.push(pt),
                Err(e) => warnings.push(format!("table {t} could not be read: {e}")),
            }
        }
        if tables.is_empty() {
            return Err(schema(format!("database has no tables: {name}")));
        }
        Ok(Conversion::Payload { title: title_from_stem(&stem(path)), tables })
    }
}

/// Write `tables` as a new SQLite file at `out` (temp file, one transaction,
/// rename) and return the sha256 hex of its bytes.
///
/// Not fsynced: a fresh file needs no rollback journal, and its callers
/// stage it and make it durable with their batch (the gardener's commit
/// barrier syncs the filesystem once; a torn staged file fails the hash
/// check of its passport and is rebuilt). Five fsyncs per dataset were
/// most of the gardener's plan time on CSV-heavy corpora.
pub fn write_dataset_db(tables: &[Table], out: &Path) -> Result<String, ConvertError> {
    let tmp = forest_fs::temp_path_for(out);
    let result = (|| -> Result<String, ConvertError> {
        let mut conn = Connection::open(&tmp)?;
        conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
        let tx = conn.transaction()?;
        for t in tables {
            let cols: Vec<String> =
                t.columns.iter().map(|(c, ty)| format!("{} {}", quote_ident(c), ty.sql())).collect();
            tx.execute(&format!("CREATE TABLE {} ({})", quote_ident(&t.name), cols.join(", ")), [])?;
            if t.columns.is_empty() {
                continue;
            }
            let marks = vec!["?"; t.columns.len()].join(", ");
            let mut stmt = tx.prepare(&format!("INSERT INTO {} VALUES ({marks})", quote_ident(&t.name)))?;
            for row in &t.rows {
                let vals = (0..t.columns.len()).map(|i| match row.get(i) {
                    None | Some(Cell::Null) => Value::Null,
                    Some(Cell::Int(v)) => Value::Integer(*v),
                    Some(Cell::Real(v)) => Value::Real(*v),
                    Some(Cell::Text(v)) => Value::Text(v.clone()),
                    Some(Cell::Blob(v)) => Value::Blob(v.clone()),
                });
                stmt.execute(rusqlite::params_from_iter(vals))?;
            }
        }
        tx.commit()?;
        conn.close().map_err(|(_, e)| e)?;
        let bytes = std::fs::read(&tmp)?;
        let digest = hex::encode(Sha256::digest(&bytes));
        forest_fs::rename_unsynced(&tmp, out)?;
        Ok(digest)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::ColType;

    #[test]
    fn writes_and_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("x.db");
        let t = Table {
            name: "order".into(),
            columns: vec![("group".into(), ColType::Integer), ("v".into(), ColType::Text)],
            rows: vec![vec![Cell::Int(1), Cell::Text("a".into())], vec![Cell::Null, Cell::Null]],
        };
        let h = write_dataset_db(&[t], &out).unwrap();
        assert_eq!(h, hex::encode(Sha256::digest(std::fs::read(&out).unwrap())));
        let mut w = Vec::new();
        match SqliteAdopt.convert(&out, &Limits::default(), &mut w).unwrap() {
            Conversion::Payload { tables, .. } => {
                assert_eq!(tables[0].count, Some(2));
                assert_eq!(tables[0].columns[0], ("group".to_string(), "INTEGER".to_string()));
                assert_eq!(tables[0].sample[0], vec![Cell::Int(1), Cell::Text("a".into())]);
            }
            other => panic!("{other:?}"),
        }
        let leftovers = std::fs::read_dir(d.path()).unwrap().count();
        assert_eq!(leftovers, 1);
    }
}
