//! The values a conversion produces: tables, cells, column types and the
//! frontmatter facts of a source file. Plain data, no behaviour beyond
//! naming; every converter and the sample map build on these.

/// SQLite storage class of a converted column (dialect §3.5 type inference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    /// All non-empty values are integers.
    Integer,
    /// All non-empty values parse as floats, at least one is not an integer.
    Real,
    /// Anything else (also: no non-empty values).
    Text,
    /// Raw bytes (never inferred; available to callers building tables).
    Blob,
}

impl ColType {
    /// Upper-case SQL type name used in DDL and the query manual.
    pub fn sql(self) -> &'static str {
        match self {
            ColType::Integer => "INTEGER",
            ColType::Real => "REAL",
            ColType::Text => "TEXT",
            ColType::Blob => "BLOB",
        }
    }
}

/// One stored value.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// SQL NULL.
    Null,
    /// 64-bit integer.
    Int(i64),
    /// Double.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes (SQLite text that is not UTF-8 is kept as bytes).
    Blob(Vec<u8>),
}

/// A table produced by a tabular conversion (C.7.1 birth with rows).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// SQL-safe table name (`sql_name`).
    pub name: String,
    /// Column names (`sql_column`, deduped) with inferred types.
    pub columns: Vec<(String, ColType)>,
    /// All rows, each exactly `columns.len()` long.
    pub rows: Vec<Vec<Cell>>,
}

/// A table read from an adopted SQLite file (G.2.2): the file is the payload.
#[derive(Debug, Clone, PartialEq)]
pub struct PayloadTable {
    /// Table name as stored.
    pub name: String,
    /// Column names with declared types as-is (may be empty).
    pub columns: Vec<(String, String)>,
    /// Up to 3 sample rows (`SELECT * ... LIMIT 3`).
    pub sample: Vec<Vec<Cell>>,
    /// `COUNT(*)`, `None` when the table could not be read.
    pub count: Option<i64>,
}

/// Facts about the source beside its body: frontmatter of a source `.md`
/// file, the detected language, and why a node is only a stub.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceMeta {
    /// `title:` when it is a non-empty string.
    pub title: Option<String>,
    /// `tags:` (list of strings, or one string).
    pub tags: Vec<String>,
    /// `aliases:` (list of strings, or one string).
    pub aliases: Vec<String>,
    /// BCP-47-shaped language tag (`en`, `pt`) when a detector is confident
    /// about a long body; `None` on short or mixed text (optional `lang` field).
    pub lang: Option<String>,
    /// Why the body holds no text of the file (`encrypted`, `no text layer`,
    /// `media`); `None` for real conversions.
    pub stub: Option<String>,
    /// The programming language of a source file converted as code
    /// (`Python`, `C`...); `None` for documents.
    pub code: Option<String>,
    /// Names a source file defines at top level (functions, classes, types),
    /// in file order; empty for documents.
    pub defines: Vec<String>,
}
