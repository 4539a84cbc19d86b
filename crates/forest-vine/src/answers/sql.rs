//! The answers of `query` and `tend`, and the dataset parts of a digest.

use serde::Serialize;

use super::flag::is_false;
use crate::primitive::Answer;
use forest_model::NodeId;

/// One SQL cell as the wire shows it: a number, a string (long text
/// clipped, a blob described) or null.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A real (null when not finite).
    Real(f64),
    /// Text, or the description of a blob or of clipped text.
    Text(String),
}

/// `query`.
#[derive(Debug, Serialize)]
pub struct Rows {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows returned.
    pub rows: Vec<Vec<Cell>>,
    /// Rows returned (after the budget).
    pub row_count: usize,
    /// The row cap stopped the read.
    pub limited: bool,
    /// Time spent.
    pub elapsed_ms: f64,
    /// The budget dropped rows.
    #[serde(skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// What the budget dropped, and how to ask for less.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `tend`.
#[derive(Debug, Serialize)]
pub struct Tended {
    /// The dataset node.
    pub id: NodeId,
    /// Rows the statement changed.
    pub rows_affected: usize,
    /// The payload's new hash.
    pub payload_hash: String,
    /// The commit recording it.
    pub commit: Option<String>,
    /// Time spent.
    pub elapsed_ms: f64,
}

/// The tables of a dataset and the example queries of its manual.
#[derive(Debug, Serialize)]
pub struct QueryManual {
    /// Columns by table.
    pub tables: Tables,
    /// Up to three `SELECT`s from its `## Query manual`.
    pub example_queries: Vec<String>,
}

/// Columns by table, in the dataset's order (a JSON object).
#[derive(Debug, Default)]
pub struct Tables(pub Vec<(String, Vec<String>)>);

impl Serialize for Tables {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The first rows of a dataset's first table.
#[derive(Debug, Serialize)]
pub struct Sample {
    /// Column names.
    pub columns: Vec<String>,
    /// Up to three rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Answer for Rows {}
impl Answer for Tended {}
