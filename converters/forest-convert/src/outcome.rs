//! What became of one file: the one outcome type the registry returns and
//! the Gardener carries to its report and outcome memory (a file it skips
//! or cannot read before any converter runs gets one too).
//!
//! In: a conversion or a [`ConvertError`]. Out: [`ConvertOutcome`] and its
//! [`Status`]. Touches nothing.

use crate::converter::{Conversion, ConverterId};
use crate::error::ConvertError;
use crate::fidelity::Suspect;
use forest_model::error_chain;

/// Classification of one file's outcome, for the caller's report and outcome memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// A node with the file's real content.
    Converted,
    /// A node without the file's text, with the reason its body and summary
    /// give: `encrypted`, `no text layer`, `media` (awaiting a describer).
    Stub(String),
    /// Nothing to plant and nothing to fix (empty file, workbook without
    /// cells): report as skipped with this reason, never as an error.
    Skipped(String),
    /// No converter claims the file, by extension or by content.
    Unsupported,
    /// A converter failed: the error line is for an operator.
    Failed,
}

/// What became of one file.
#[derive(Debug)]
pub struct ConvertOutcome {
    /// The file as the caller named it (report lines start with it).
    pub rel: String,
    /// The conversion, or why there is none ([`ConvertOutcome::status`]
    /// tells an error from a skip or an unsupported file;
    /// [`ConvertOutcome::error_line`] is its report line).
    pub result: Result<Conversion, ConvertError>,
    /// Fallback warnings `"<rel>: <Name> failed, falling back: <msg>"` and
    /// converter warnings `"<rel>: <msg>"`.
    pub warnings: Vec<String>,
    /// How the file fared.
    pub status: Status,
    /// The converter that produced `result` (the last one tried), `None` when unsupported.
    pub converter: Option<ConverterId>,
    /// Set when the Markdown body failed the fidelity check ([`crate::fidelity`])
    /// and no fallback converter produced a body that passes: the node is
    /// planted with the best body, but its text may be raw markup, mojibake
    /// or too little. `None` for clean bodies and for non-Markdown results.
    pub suspect: Option<Suspect>,
}

impl ConvertOutcome {
    /// A conversion: [`Status::Stub`] when its body is a stub, else
    /// [`Status::Converted`].
    pub fn converted(
        rel: &str,
        conversion: Conversion,
        warnings: Vec<String>,
        converter: Option<ConverterId>,
        suspect: Option<Suspect>,
    ) -> Self {
        let status = match &conversion {
            Conversion::Markdown { meta, .. } => meta.stub.clone().map_or(Status::Converted, Status::Stub),
            _ => Status::Converted,
        };
        ConvertOutcome { rel: rel.to_string(), result: Ok(conversion), warnings, status, converter, suspect }
    }

    /// No conversion: [`Status::Skipped`] for [`ConvertError::Skipped`],
    /// [`Status::Unsupported`] for [`ConvertError::Unsupported`], else
    /// [`Status::Failed`].
    pub fn failed(rel: &str, e: ConvertError, warnings: Vec<String>, converter: Option<ConverterId>) -> Self {
        let status = match &e {
            ConvertError::Skipped(r) => Status::Skipped(r.clone()),
            ConvertError::Unsupported => Status::Unsupported,
            _ => Status::Failed,
        };
        ConvertOutcome { rel: rel.to_string(), result: Err(e), warnings, status, converter, suspect: None }
    }

    /// No converter claims the file.
    pub fn unsupported(rel: &str, warnings: Vec<String>) -> Self {
        ConvertOutcome::failed(rel, ConvertError::Unsupported, warnings, None)
    }

    /// No converter claims the file (`status == Unsupported`).
    pub fn is_unsupported(&self) -> bool {
        self.status == Status::Unsupported
    }

    /// Left out with a reason (`status == Skipped`).
    pub fn is_skipped(&self) -> bool {
        matches!(self.status, Status::Skipped(_))
    }

    /// Why there is no conversion, causes included (`None` when converted).
    pub fn message(&self) -> Option<String> {
        self.result.as_ref().err().map(|e| error_chain(e))
    }

    /// The final report line `"<rel>: <message>"` (`None` when converted).
    pub fn error_line(&self) -> Option<String> {
        self.message().map(|m| format!("{}: {m}", self.rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_classified_by_its_error_and_reports_one_line() {
        let io = std::io::Error::other("disk gone");
        let out = ConvertOutcome::failed("a/b.pdf", ConvertError::Io(io), vec![], None);
        assert_eq!(out.status, Status::Failed);
        assert_eq!(out.error_line().as_deref(), Some("a/b.pdf: converter error: disk gone"));
        let out = ConvertOutcome::failed("e.txt", ConvertError::Skipped("empty file (0 bytes)".into()), vec![], None);
        assert!(out.is_skipped() && !out.is_unsupported());
        assert_eq!(out.message().as_deref(), Some("empty file (0 bytes)"));
        let out = ConvertOutcome::unsupported("x.bin", vec![]);
        assert!(out.is_unsupported());
        assert_eq!(out.error_line().as_deref(), Some("x.bin: unsupported file type"));
    }
}
