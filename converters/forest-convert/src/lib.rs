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
mod code;
mod container;
mod converter;
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
mod outcome;
mod pdf;
mod pdfguard;
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
mod values;
mod xml;
mod zipguard;

pub use converter::{Conversion, Converter, ConverterId, Limits};
pub use error::ConvertError;
pub use fidelity::{SourceFacts, Suspect, SuspectReason};
pub use outcome::{ConvertOutcome, Status};
pub use registry::Registry;
pub use samplemap::{dataset_summary, python_float_repr, render_cell, render_sample_map, MapTable};
pub use sqlite::write_dataset_db;
pub use values::{Cell, ColType, PayloadTable, SourceMeta, Table};

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
