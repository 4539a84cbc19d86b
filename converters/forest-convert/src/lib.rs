//! Source-file converters for the Gardener (dialect §3.5, DESIGN §10).
//!
//! A [`Registry`] maps lowercased extensions to [`Converter`]s in discovery
//! order (command hooks first, built-ins last) and runs the §3.5 fallback
//! chain under [`Limits`]: input size, zip-bomb guard, wall-clock timeout and
//! panic containment. Everything here is `Send + Sync` and free of global
//! state so the pipeline can call it from rayon workers.

mod docx;
mod error;
mod hook;
mod html;
mod infer;
mod json;
mod media;
mod pdf;
mod registry;
mod samplemap;
mod sheet;
mod sqlite;
mod tabular;
mod text;
mod xml;
mod zipguard;

pub use error::ConvertError;
pub use registry::{ConvertOutcome, Converter, Registry};
pub use samplemap::{dataset_summary, python_float_repr, render_cell, render_sample_map, MapTable};
pub use sqlite::write_dataset_db;

use std::time::Duration;

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

/// Metadata lifted from a source Markdown file's YAML frontmatter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceMeta {
    /// `title:` when it is a non-empty string.
    pub title: Option<String>,
    /// `tags:` (list of strings, or one string).
    pub tags: Vec<String>,
    /// `aliases:` (list of strings, or one string).
    pub aliases: Vec<String>,
}

/// Result of one conversion (dialect §3.5).
#[derive(Debug, Clone, PartialEq)]
pub enum Conversion {
    /// Text note/document/media body.
    Markdown {
        /// Node title.
        title: String,
        /// Markdown body (frontmatter removed).
        body: String,
        /// Frontmatter facts of a source `.md` file (empty otherwise).
        meta: SourceMeta,
    },
    /// Tabular data to be born as a dataset with rows.
    Dataset {
        /// Node title.
        title: String,
        /// Tables with all rows.
        tables: Vec<Table>,
    },
    /// An SQLite file adopted as the payload itself.
    Payload {
        /// Node title.
        title: String,
        /// Schema, samples and counts.
        tables: Vec<PayloadTable>,
    },
}

impl Conversion {
    /// Node title of any variant.
    pub fn title(&self) -> &str {
        match self {
            Conversion::Markdown { title, .. }
            | Conversion::Dataset { title, .. }
            | Conversion::Payload { title, .. } => title,
        }
    }

    /// Node body: the Markdown body, or `# <title>\n\n` + the §1.9 sample map.
    pub fn render(&self) -> String {
        match self {
            Conversion::Markdown { body, .. } => body.clone(),
            Conversion::Dataset { title, tables } => {
                let maps: Vec<MapTable> = tables.iter().map(MapTable::from).collect();
                format!("# {title}\n\n{}", render_sample_map(&maps))
            }
            Conversion::Payload { title, tables } => {
                let maps: Vec<MapTable> = tables.iter().map(MapTable::from).collect();
                format!("# {title}\n\n{}", render_sample_map(&maps))
            }
        }
    }
}

/// Resource limits applied to every converter call (DESIGN §10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest input file accepted, in bytes.
    pub max_input_bytes: u64,
    /// Most entries a zip container (xlsx, docx, ods) may declare.
    pub max_zip_entries: usize,
    /// Largest total uncompressed size a zip container may declare.
    pub max_unzipped_bytes: u64,
    /// Wall-clock budget of one converter call.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: 256 * 1024 * 1024,
            max_zip_entries: 10_000,
            max_unzipped_bytes: 1024 * 1024 * 1024,
            timeout: Duration::from_secs(60),
        }
    }
}
