//! The tables of a dataset or SQLite payload conversion as a store object
//! holds them (forest-convert's [`Table`], [`PayloadTable`] and [`Cell`]
//! are not serde). A dataset keeps all its rows, so the committer stages
//! the same SQLite payload from the object as from its own conversion; a
//! payload keeps its schema, samples and counts (the committer copies the
//! source file it has hashed, as it does after converting it).
//!
//! In: a conversion's tables. Out: their stored form and back, exactly
//! (floats travel as their shortest round-trip text, so NaN, infinities
//! and every bit of a double survive JSON).

use forest_convert::{Cell, ColType, PayloadTable, Table};
use serde::{Deserialize, Serialize};

/// The tables of a non-Markdown conversion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "tables", rename_all = "snake_case")]
pub enum PreparedTables {
    /// A tabular file born as a dataset with all its rows.
    Dataset(Vec<PreparedTable>),
    /// An SQLite file adopted as the payload itself.
    Payload(Vec<PreparedTable>),
}

/// One table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedTable {
    /// Table name.
    pub name: String,
    /// Column names with their type: the inferred SQL type of a dataset
    /// column, the declared type of a payload column (may be empty).
    pub columns: Vec<(String, String)>,
    /// A dataset's rows, a payload's sample rows.
    pub rows: Vec<Vec<PreparedCell>>,
    /// A payload table's `COUNT(*)` (None when unreadable, and for datasets).
    #[serde(default)]
    pub count: Option<i64>,
}

/// One value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreparedCell {
    /// SQL NULL.
    Null,
    /// 64-bit integer.
    Int(i64),
    /// A double as its shortest round-trip text (`f64` `Display`).
    Real(String),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl PreparedCell {
    fn of(c: &Cell) -> PreparedCell {
        match c {
            Cell::Null => PreparedCell::Null,
            Cell::Int(i) => PreparedCell::Int(*i),
            Cell::Real(r) => PreparedCell::Real(r.to_string()),
            Cell::Text(t) => PreparedCell::Text(t.clone()),
            Cell::Blob(b) => PreparedCell::Blob(b.clone()),
        }
    }

    /// The cell; a real that does not parse (a tampered object that still
    /// verifies cannot exist: the store checks its hash) becomes NULL.
    fn cell(&self) -> Cell {
        match self {
            PreparedCell::Null => Cell::Null,
            PreparedCell::Int(i) => Cell::Int(*i),
            PreparedCell::Real(r) => r.parse().map(Cell::Real).unwrap_or(Cell::Null),
            PreparedCell::Text(t) => Cell::Text(t.clone()),
            PreparedCell::Blob(b) => Cell::Blob(b.clone()),
        }
    }
}

fn row_of(r: &[Cell]) -> Vec<PreparedCell> {
    r.iter().map(PreparedCell::of).collect()
}

fn cells(r: &[PreparedCell]) -> Vec<Cell> {
    r.iter().map(PreparedCell::cell).collect()
}

fn col_type(sql: &str) -> ColType {
    match sql {
        "INTEGER" => ColType::Integer,
        "REAL" => ColType::Real,
        "BLOB" => ColType::Blob,
        _ => ColType::Text,
    }
}

impl PreparedTables {
    /// The stored form of a dataset's tables.
    pub fn dataset(tables: &[Table]) -> PreparedTables {
        PreparedTables::Dataset(
            tables
                .iter()
                .map(|t| PreparedTable {
                    name: t.name.clone(),
                    columns: t.columns.iter().map(|(n, ty)| (n.clone(), ty.sql().to_string())).collect(),
                    rows: t.rows.iter().map(|r| row_of(r)).collect(),
                    count: None,
                })
                .collect(),
        )
    }

    /// The stored form of a payload's tables.
    pub fn payload(tables: &[PayloadTable]) -> PreparedTables {
        PreparedTables::Payload(
            tables
                .iter()
                .map(|t| PreparedTable {
                    name: t.name.clone(),
                    columns: t.columns.clone(),
                    rows: t.sample.iter().map(|r| row_of(r)).collect(),
                    count: t.count,
                })
                .collect(),
        )
    }

    /// A dataset's tables back.
    pub fn dataset_tables(tables: &[PreparedTable]) -> Vec<Table> {
        tables
            .iter()
            .map(|t| Table {
                name: t.name.clone(),
                columns: t.columns.iter().map(|(n, ty)| (n.clone(), col_type(ty))).collect(),
                rows: t.rows.iter().map(|r| cells(r)).collect(),
            })
            .collect()
    }

    /// A payload's tables back.
    pub fn payload_tables(tables: &[PreparedTable]) -> Vec<PayloadTable> {
        tables
            .iter()
            .map(|t| PayloadTable {
                name: t.name.clone(),
                columns: t.columns.clone(),
                sample: t.rows.iter().map(|r| cells(r)).collect(),
                count: t.count,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dataset_and_payload_tables_roundtrip_through_json_exactly() {
        let rows = vec![
            vec![Cell::Int(-3), Cell::Real(0.1 + 0.2), Cell::Text("a \"b\"\n".into()), Cell::Null],
            vec![Cell::Int(i64::MAX), Cell::Real(f64::INFINITY), Cell::Blob(vec![0, 255, 7]), Cell::Real(-0.0)],
        ];
        let table = Table {
            name: "t".into(),
            columns: vec![
                ("n".into(), ColType::Integer),
                ("x".into(), ColType::Real),
                ("s".into(), ColType::Text),
                ("b".into(), ColType::Blob),
            ],
            rows: rows.clone(),
        };
        let stored = PreparedTables::dataset(std::slice::from_ref(&table));
        let back: PreparedTables = serde_json::from_slice(&serde_json::to_vec(&stored).unwrap()).unwrap();
        let PreparedTables::Dataset(t) = back else { panic!("a dataset") };
        let again = PreparedTables::dataset_tables(&t);
        assert_eq!(again, vec![table]);
        // -0.0 == 0.0 under PartialEq: check the sign bit travelled.
        let Cell::Real(z) = again[0].rows[1][3] else { panic!("a real") };
        assert!(z.is_sign_negative());
        let p =
            PayloadTable { name: "p".into(), columns: vec![("c".into(), String::new())], sample: rows, count: None };
        let stored = PreparedTables::payload(std::slice::from_ref(&p));
        let back: PreparedTables = serde_json::from_slice(&serde_json::to_vec(&stored).unwrap()).unwrap();
        let PreparedTables::Payload(t) = back else { panic!("a payload") };
        assert_eq!(PreparedTables::payload_tables(&t), vec![p]);
    }
}
