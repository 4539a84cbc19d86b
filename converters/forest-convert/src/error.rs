//! The library error type and the outcome classification callers record.

/// Why a file has no conversion (or a dataset write failed). `Display` is
/// the variant's own message; the cause is its `#[source]`, and
/// [`forest_model::error_chain`] of it is the message placed after
/// `"<rel>: "` in report lines.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// Content-level refusal (the reference's `E_SCHEMA` VineError).
    #[error("{0}")]
    Schema(String),
    /// Nothing to adopt and nothing an operator can fix (an empty file, a
    /// workbook without cells): the caller reports it as skipped, not failed.
    #[error("{0}")]
    Skipped(String),
    /// The input is larger than `Limits::max_input_bytes`.
    #[error("input too large: {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Size of the file.
        size: u64,
        /// The configured limit.
        limit: u64,
    },
    /// A zip container failed the central-directory guard.
    #[error("zip container rejected: {0}")]
    Zip(String),
    /// The input is over a decoder limit ([`crate::Limits`]: inflated size,
    /// sheet count, ...): the registry turns it into a stub naming the reason.
    #[error("over a decoder limit: {0}")]
    OverLimit(String),
    /// The converter panicked (caught).
    #[error("converter panicked")]
    Panicked,
    /// The converter exceeded its wall-clock budget.
    #[error("conversion timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// Filesystem failure.
    #[error("converter error")]
    Io(#[from] std::io::Error),
    /// SQLite failure.
    #[error("converter error: sqlite")]
    Sqlite(#[from] rusqlite::Error),
    /// No converter claims the file, by extension or by content.
    #[error("unsupported file type")]
    Unsupported,
    /// The caller could not read the file (a download, a hash pass): its
    /// own error, displayed as it is.
    #[error(transparent)]
    Read(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// No converter has run yet: the caller's placeholder for a file it
    /// leaves to another process or to a later run (never reported).
    #[error("not converted")]
    Pending,
}

/// Shorthand for a schema-level error.
pub(crate) fn schema(msg: impl Into<String>) -> ConvertError {
    ConvertError::Schema(msg.into())
}

/// Shorthand for a skip with a reason.
pub(crate) fn skipped(msg: impl Into<String>) -> ConvertError {
    ConvertError::Skipped(msg.into())
}
