//! Errors of the Curator's setup (configuration, HTTP client, cache).
//!
//! Curation itself never fails: a model problem becomes a fallback outcome
//! plus stats (dialect §4.3 "ingest never blocks on the model").

/// Why a Curator or its cache could not be built or used.
#[derive(Debug, thiserror::Error)]
pub enum CuratorError {
    /// No endpoint configured (dialect §4.7, `E_SCHEMA`).
    #[error(
        "curation needs MONKEYLLM_LLM_ENDPOINT (or OPENAI_BASE_URL): the base URL of an \
         OpenAI-compatible /v1 API"
    )]
    MissingEndpoint,
    /// An environment setting has an unusable value.
    #[error("invalid {var}: {value:?} ({reason})")]
    InvalidSetting {
        /// Variable name.
        var: String,
        /// Value found.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// A chat request failed in transport after its retries.
    #[error("LLM request failed: {0}")]
    Transport(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The SQLite curation cache failed.
    #[error("curation cache {path}")]
    Cache {
        /// Cache file.
        path: String,
        /// Underlying error.
        #[source]
        source: rusqlite::Error,
    },
    /// The cache's directory could not be created.
    #[error("curation cache directory {path}")]
    CacheDir {
        /// Directory.
        path: String,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl CuratorError {
    /// Dialect error code (§2.7 envelope).
    pub fn code(&self) -> &'static str {
        match self {
            CuratorError::MissingEndpoint | CuratorError::InvalidSetting { .. } => "E_SCHEMA",
            CuratorError::Transport(_) => "E_LLM",
            CuratorError::Client(_) | CuratorError::Cache { .. } | CuratorError::CacheDir { .. } => "E_IO",
        }
    }

    /// A short hint for the operator.
    pub fn hint(&self) -> &'static str {
        match self {
            CuratorError::MissingEndpoint => {
                "export MONKEYLLM_LLM_ENDPOINT=http://127.0.0.1:18080/v1 (ops/llm/start.sh prints one)"
            }
            CuratorError::InvalidSetting { .. } => "fix or unset the variable",
            CuratorError::Client(_) => "check the TLS/proxy environment",
            CuratorError::Transport(_) => {
                "is the LLM server running and reachable? (ops/llm/start.sh starts a local one)"
            }
            CuratorError::Cache { .. } | CuratorError::CacheDir { .. } => {
                "delete the cache file: it only saves model calls"
            }
        }
    }
}
