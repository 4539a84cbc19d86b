//! The error envelope of every primitive (vine spec §1.4).

use forest_model::ErrorCode;
use serde_json::{json, Map, Value};

/// A primitive's refusal: a dialect code, a message, an optional hint and
/// structured data merged into the envelope (never overriding code/message/hint).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct VineError {
    /// `E_NOT_FOUND`, `E_SCHEMA`, ... (vine spec §1.4 table).
    pub code: ErrorCode,
    /// Human/model-readable message (templates are wire data).
    pub message: String,
    /// Prose for the calling model; omitted from the envelope when empty.
    pub hint: String,
    /// Extra keys (`moved_to`, `anchors`, `errors`, ...).
    pub data: Box<Map<String, Value>>,
}

impl VineError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        VineError { code, message: message.into(), hint: String::new(), data: Box::default() }
    }
    /// Attach a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }
    /// Attach one data key (first writer wins, reserved keys refused).
    pub fn with(mut self, key: &str, v: impl serde::Serialize) -> Self {
        if !["code", "message", "hint"].contains(&key) && !self.data.contains_key(key) {
            // plain data (strings, numbers, lists of them) always serializes
            self.data.insert(key.to_string(), serde_json::to_value(v).unwrap_or(Value::Null));
        }
        self
    }
    /// `E_SCHEMA`.
    pub fn schema(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Schema, message)
    }
    /// `E_NOT_FOUND`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    /// `E_INTERNAL` for an unexpected failure (never a traceback).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
    /// `E_QUERY_FORBIDDEN`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::QueryForbidden, message)
    }
    /// `E_READONLY` of a write on a read-only engine.
    pub fn readonly() -> Self {
        Self::new(ErrorCode::Readonly, "this Vine is read-only").hint("Start without --readonly to write.")
    }

    /// Its code (`E_NOT_FOUND`, ...), matched as a variant.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The wire envelope `{"error": {code, message, [hint], ...data}}`.
    pub fn envelope(&self) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), json!(self.code.as_str()));
        m.insert("message".into(), json!(self.message));
        if !self.hint.is_empty() {
            m.insert("hint".into(), json!(self.hint));
        }
        for (k, v) in self.data.iter() {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        json!({ "error": Value::Object(m) })
    }
}

impl From<forest_catalog::CatalogError> for VineError {
    fn from(e: forest_catalog::CatalogError) -> Self {
        VineError::new(e.code(), forest_model::error_chain(&e))
    }
}

impl From<rusqlite::Error> for VineError {
    fn from(e: rusqlite::Error) -> Self {
        VineError::internal(format!("sqlite: {e}"))
    }
}

impl From<forest_git::GitError> for VineError {
    fn from(e: forest_git::GitError) -> Self {
        let mut err =
            VineError::new(e.code(), forest_model::error_chain(&e).trim_start_matches("E_LOCKED: ").to_string());
        if let forest_git::GitError::Locked { pid, .. } = &e {
            err = err.hint("The lock is reclaimed automatically when the holder exits; open read-only meanwhile.");
            err = err.with("pid", pid);
        }
        err
    }
}

impl From<std::io::Error> for VineError {
    fn from(e: std::io::Error) -> Self {
        VineError::internal(format!("io: {e}"))
    }
}

impl From<serde_json::Error> for VineError {
    fn from(e: serde_json::Error) -> Self {
        VineError::internal(format!("json: {e}"))
    }
}

/// Result alias of this crate.
pub type VResult<T> = std::result::Result<T, VineError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_shape() {
        let e = VineError::not_found("node not found: x").with("code", json!("HIJACK")).with("moved_to", json!("y"));
        let v = e.envelope();
        assert_eq!(v["error"]["code"], "E_NOT_FOUND");
        assert_eq!(v["error"]["moved_to"], "y");
        assert!(v["error"].get("hint").is_none());
        let r = VineError::readonly().envelope();
        assert_eq!(r["error"]["hint"], "Start without --readonly to write.");
    }
}
