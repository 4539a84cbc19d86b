//! Errors of the storage layer. Messages name the bucket/key or URI involved
//! and never carry credentials (SDK errors are reduced to code + message).

use std::io;

/// Every failure of this crate.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A URI or location string that cannot be used.
    #[error("invalid location {uri:?}: {reason}")]
    InvalidUri {
        /// The offending text.
        uri: String,
        /// Why it was refused.
        reason: String,
    },
    /// A payload URI whose scheme has no fetcher (dialect §8 wording).
    #[error("unsupported payload scheme: {scheme}://")]
    UnsupportedScheme {
        /// The scheme without `://`.
        scheme: String,
    },
    /// The object, bucket or file does not exist.
    #[error("{what} not found: {target}")]
    NotFound {
        /// Kind of thing: "S3 object", "S3 bucket", "remote payload".
        what: &'static str,
        /// `s3://bucket/key` or the URI.
        target: String,
    },
    /// Fetched bytes do not hash to the expected sha256 (dialect §8 wording).
    /// Nothing was served and nothing was left in the cache.
    #[error("remote payload hash mismatch: {uri}")]
    HashMismatch {
        /// The payload URI.
        uri: String,
        /// Expected sha256 (hex).
        expected: String,
        /// sha256 (hex) of what was fetched.
        actual: String,
    },
    /// Any other S3 failure (network, auth, server error, truncated body).
    #[error("S3 {op} {target}: {message}")]
    S3 {
        /// Operation name, e.g. "GetObject".
        op: &'static str,
        /// `s3://bucket/key` (or `s3://bucket/prefix` for listings).
        target: String,
        /// Error code and message from the server or the transport.
        message: String,
    },
    /// The rclone binary could not be started.
    #[error("rclone is not installed or not executable ({bin}); install rclone or set FOREST_RCLONE")]
    RcloneMissing {
        /// The binary that was tried.
        bin: String,
    },
    /// rclone ran and failed (unknown remote, expired token, network).
    #[error("rclone {op} {target}: {message}")]
    Rclone {
        /// The rclone command (`lsjson`, `cat`, ...).
        op: &'static str,
        /// rclone's name of what was asked (`REMOTE:path`).
        target: String,
        /// rclone's exit code.
        code: Option<i32>,
        /// rclone's last error line, without its timestamp.
        message: String,
    },
    /// Building the client (runtime, configuration) failed.
    #[error("S3 client setup: {0}")]
    Config(String),
    /// Local filesystem failure.
    #[error("{context}")]
    Io {
        /// What was being done, naming the path.
        context: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl StorageError {
    /// Wrap an I/O error with a context naming the path.
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        StorageError::Io { context: context.into(), source }
    }

    /// True for [`StorageError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, StorageError::NotFound { .. })
    }
}
