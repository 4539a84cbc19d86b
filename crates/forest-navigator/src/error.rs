//! Errors of the navigator's setup (the loop itself never fails: a model or
//! tool fault becomes part of the result).

/// Why a hunt or a bench could not start.
#[derive(Debug, thiserror::Error)]
pub enum NavError {
    /// The forest could not be opened.
    #[error("cannot open the forest")]
    Forest(#[source] forest_vine::VineError),
    /// The chat endpoint could not be set up.
    #[error("chat endpoint")]
    Llm(#[source] forest_curator::CuratorError),
    /// A bad question file.
    #[error("question file {path}")]
    Questions {
        /// File.
        path: String,
        /// Parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The chunk store could not be built.
    #[error("chunk index: {0}")]
    Chunks(String),
    /// A bad option.
    #[error("{0}")]
    Usage(String),
    /// The forest server (MCP) cannot be reached or went away.
    #[error("forest server {url}: {message}")]
    Remote {
        /// The server's URL.
        url: String,
        /// Why.
        message: String,
    },
    /// The forest server went away in the middle of a run.
    #[error("the forest server went away: {0}")]
    Lost(String),
}

impl NavError {
    /// Error code.
    pub fn code(&self) -> &'static str {
        match self {
            NavError::Forest(e) => e.code.as_str(),
            NavError::Llm(e) => e.code(),
            NavError::Questions { .. } | NavError::Usage(_) => "E_SCHEMA",
            NavError::Chunks(_) => "E_INTERNAL",
            NavError::Remote { .. } | NavError::Lost(_) => "E_UNAVAILABLE",
        }
    }
}
