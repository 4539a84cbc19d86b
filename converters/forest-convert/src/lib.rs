//! Source-file converters for the Gardener (dialect §3.5, DESIGN §10).
//!
//! A [`Registry`] maps lowercased extensions to [`Converter`]s in discovery
//! order (command hooks first, built-ins last) and runs the §3.5 fallback
//! chain under [`Limits`]: input size, zip-bomb guard, wall-clock timeout and
//! panic containment. Everything here is `Send + Sync` and free of global
//! state so the pipeline can call it from rayon workers.
//!
//! # Routing
//! A file goes to the claimants of its extension when its bytes agree; a file
//! without a claimed extension (`README`, `COPYING`, `photo.tiff`) is routed
//! by content ([`sniff`](crate) via `infer` magic bytes and `content_inspector`
//! text detection); a file whose bytes contradict its extension (a text file
//! named `.db`) is converted by content with a warning. `.gz/.bz2/.xz` are
//! inflated under the limits and converted by their inner name
//! (`changelog.Debian.gz` → text, `data.csv.gz` → dataset).
//!
//! # Outcomes
//! [`Registry::convert`] returns a [`ConvertOutcome`] whose [`Status`] tells
//! a caller how to report the file:
//! - `Converted`: a node with real content;
//! - `Stub(reason)`: a node whose body says why it has no text (`encrypted`,
//!   `no text layer`, `media`); [`SourceMeta::stub`] carries the same reason;
//! - `Skipped(reason)`: nothing to plant and nothing to fix (empty file,
//!   workbook without cells); not an error, a run with only skips is clean;
//! - `Unsupported`: nothing claims the file by extension or content;
//! - `Failed`: an error line for an operator.
//!
//! [`ConvertOutcome::suspect`] is set when the body failed the
//! [`fidelity`] check (raw roff or markup, mojibake, far too little text) and
//! no fallback converter did better; the node is still planted.
//!
//! [`ConvertOutcome::converter`] names the converter and its
//! [`Converter::version`]; [`Registry::claim`] tells which converter would
//! handle a file today, so a caller can re-try files recorded as unsupported
//! or failed when a newer converter claims them.
//!
//! # Logs and panics
//! Converters never print. Third-party parsers log through `log`; the binary
//! decides what reaches stderr. [`quiet_converter_panics`] keeps the default
//! panic hook from printing messages and backtraces of panics the registry
//! catches on its converter threads (each becomes one error line).

mod charset;
mod container;
mod docx;
mod epub;
mod error;
pub mod fidelity;
mod hook;
mod html;
mod infer;
mod json;
mod lang;
mod mail;
mod man;
mod media;
mod odf;
mod pdf;
mod pdfoutline;
mod pdftext;
mod registry;
mod rtf;
mod samplemap;
mod sheet;
mod slides;
mod sniff;
mod sqlite;
mod tabular;
mod text;
mod xml;
mod zipguard;

pub use error::ConvertError;
pub use fidelity::{SourceFacts, Suspect, SuspectReason};
pub use registry::{ConvertOutcome, Converter, ConverterId, Registry, Status};
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

/// Keep the default panic hook quiet for panics on the registry's converter
/// threads (they are caught and reported as one error line each); panics
/// anywhere else still reach the previous hook. Call once from a binary.
pub fn quiet_converter_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() != Some(registry::CONVERTER_THREAD) {
            previous(info);
        }
    }));
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
