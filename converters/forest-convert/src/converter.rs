//! The converter contract: the [`Converter`] trait every converter
//! implements, the [`Limits`] it runs under and the [`Conversion`] it
//! returns. Converters depend on this module; the registry (which lists
//! the converters) depends on them and on this, never the other way round.

use crate::error::ConvertError;
use crate::samplemap::{render_sample_map, MapTable};
use crate::values::{PayloadTable, SourceMeta, Table};
use std::path::Path;
use std::time::Duration;

/// A converter: claims extensions and turns one file into a [`Conversion`].
pub trait Converter: Send + Sync {
    /// Display name used in fallback warnings.
    fn name(&self) -> &str;
    /// Claimed extensions, lowercase with the leading dot.
    fn extensions(&self) -> Vec<String>;
    /// Convert `path`; non-fatal findings go to `warnings` (without the
    /// `<rel>: ` prefix, which the registry adds).
    fn convert(&self, path: &Path, limits: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError>;
    /// Wall-clock budget for one call; hooks override it with their own timeout.
    fn time_budget(&self, limits: &Limits) -> Duration {
        limits.timeout
    }
    /// Version of this converter's output. Bumped whenever it reads more files
    /// or reads them better, so a caller that recorded an outcome with an older
    /// version may re-try the file.
    fn version(&self) -> u32 {
        1
    }
}

/// Which converter (and which version of it) produced an outcome.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConverterId {
    /// [`Converter::name`], prefixed by the codec for compressed files (`Gzip+Csv`).
    pub name: String,
    /// [`Converter::version`] of the converter that ran last.
    pub version: u32,
}

impl std::fmt::Display for ConverterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.name, self.version)
    }
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
    /// Largest total uncompressed size a zip container (or a `.gz`/`.bz2`/
    /// `.xz` file) may declare or inflate to.
    pub max_unzipped_bytes: u64,
    /// Largest size one PDF stream may inflate to (a deflate bomb); the PDF
    /// converter never inflates image data at all.
    pub max_inflated_bytes: u64,
    /// Largest inflated content of one PDF page whose text is read: a page
    /// over it (a vector drawing) is left out with a warning.
    pub max_page_content_bytes: u64,
    /// Most sheets (tables) one workbook may hold.
    pub max_sheets: usize,
    /// Wall-clock budget of one converter call.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: 256 * 1024 * 1024,
            max_zip_entries: 10_000,
            max_unzipped_bytes: 256 * 1024 * 1024,
            max_inflated_bytes: 32 * 1024 * 1024,
            max_page_content_bytes: 4 * 1024 * 1024,
            max_sheets: 1000,
            timeout: Duration::from_secs(60),
        }
    }
}
