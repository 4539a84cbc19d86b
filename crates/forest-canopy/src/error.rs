//! Errors of the Canopy, with stable codes.

use std::path::PathBuf;

/// Result of this crate.
pub type Result<T> = std::result::Result<T, CanopyError>;

/// What can go wrong building, maintaining or searching a canopy.
#[derive(Debug, thiserror::Error)]
pub enum CanopyError {
    /// The model directory is missing a file or holds one we cannot read.
    #[error("embedding model{}: {what}", at(dir))]
    Model {
        /// The model directory.
        dir: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The inference itself failed.
    #[error("embedding failed")]
    Inference(#[source] candle_core::Error),
    /// The tokenizer refused a text.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A background embedding ended without an answer (it panicked).
    #[error("the query embedding ended without a vector")]
    Lost,
    /// A canopy file is damaged or does not match its siblings.
    #[error("canopy at {dir} is damaged: {what} (rebuild it with `forest canopy build`)")]
    Damaged {
        /// The canopy directory.
        dir: PathBuf,
        /// What does not add up.
        what: String,
    },
    /// The canopy was built by another model than the one loaded.
    #[error("canopy was built with model '{index}', the loaded model is '{query}' (a different model needs `forest canopy build`)")]
    ModelMismatch {
        /// Model recorded with the canopy.
        index: String,
        /// Model loaded now.
        query: String,
    },
    /// Reading the catalog's scent rows.
    #[error("catalog")]
    Catalog(#[source] forest_catalog::CatalogError),
    /// The catalog's rows did not come in id order (a refresh merges by id).
    #[error("catalog: rows out of id order at '{0}'")]
    RowOrder(String),
    /// Reading or writing a file.
    #[error("{path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file of the canopy.
    #[error("{path}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
}

impl CanopyError {
    /// Stable error code.
    pub fn code(&self) -> &'static str {
        match self {
            CanopyError::Model { .. } => "E_EMBED_MODEL",
            CanopyError::Inference(_) | CanopyError::Tokenizer(_) | CanopyError::Lost => "E_EMBED",
            CanopyError::Damaged { .. } => "E_CANOPY_DAMAGED",
            CanopyError::ModelMismatch { .. } => "E_CANOPY_MODEL",
            CanopyError::Catalog(_) | CanopyError::RowOrder(_) => "E_CATALOG",
            CanopyError::Io { .. } | CanopyError::Json { .. } => "E_IO",
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        CanopyError::Io { path: path.to_path_buf(), source }
    }
}

/// " at DIR", or nothing when the error is about a setting, not a directory.
fn at(dir: &std::path::Path) -> String {
    if dir.as_os_str().is_empty() {
        String::new()
    } else {
        format!(" at {}", dir.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_error_names_no_directory() {
        let e = CanopyError::Model { dir: PathBuf::new(), what: "FOREST_EMBED_MODEL is unset".into() };
        assert_eq!(e.to_string(), "embedding model: FOREST_EMBED_MODEL is unset");
        let e = CanopyError::Model { dir: PathBuf::from("/m"), what: "no tokenizer.json".into() };
        assert_eq!(e.to_string(), "embedding model at /m: no tokenizer.json");
        assert_eq!(e.code(), "E_EMBED_MODEL");
    }
}
