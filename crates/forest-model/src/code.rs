//! The dialect's error codes, one enum for every crate that prints one
//! (the Vine's envelopes, the catalog, git, the token store, ...). A code
//! is matched as a variant, never compared as text; [`ErrorCode::as_str`]
//! is its wire spelling (`E_NOT_FOUND`).
//!
//! In: nothing. Out: the enum. Touches nothing.

use serde::{Serialize, Serializer};

macro_rules! codes {
    ($($(#[$doc:meta])* $v:ident = $s:literal,)*) => {
        /// A dialect error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* $v,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$v,)*];

            /// The wire spelling (`E_...`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$v => $s,)*
                }
            }
        }
    };
}

codes! {
    /// A move anchor refuses the change (inbound links).
    Anchored = "E_ANCHORED",
    /// The server is at its limit of calls in flight.
    Busy = "E_BUSY",
    /// The canopy's files are damaged.
    CanopyDamaged = "E_CANOPY_DAMAGED",
    /// The canopy was built with another model.
    CanopyModel = "E_CANOPY_MODEL",
    /// The catalog failed under the canopy.
    Catalog = "E_CATALOG",
    /// A configuration file is wrong.
    Config = "E_CONFIG",
    /// A file is damaged.
    Damaged = "E_DAMAGED",
    /// The derived layer failed.
    Derived = "E_DERIVED",
    /// Embedding failed.
    Embed = "E_EMBED",
    /// The embedding model is missing or unreadable.
    EmbedModel = "E_EMBED_MODEL",
    /// The thing to create exists.
    Exists = "E_EXISTS",
    /// The caller may not do this.
    Forbidden = "E_FORBIDDEN",
    /// A node's frontmatter breaks the dialect.
    Frontmatter = "E_FRONTMATTER",
    /// git failed.
    Git = "E_GIT",
    /// An unexpected failure (never a traceback).
    Internal = "E_INTERNAL",
    /// A filesystem operation failed.
    Io = "E_IO",
    /// The LLM server failed.
    Llm = "E_LLM",
    /// Another writer holds the forest's lock.
    Locked = "E_LOCKED",
    /// The node moved (`moved_to` says where).
    Moved = "E_MOVED",
    /// The directory is not a forest.
    NotAForest = "E_NOT_A_FOREST",
    /// The file is not a snapshot.
    NotASnapshot = "E_NOT_A_SNAPSHOT",
    /// No such thing.
    NotFound = "E_NOT_FOUND",
    /// The snapshot carries no bundle.
    NoBundle = "E_NO_BUNDLE",
    /// Past a size ceiling.
    OverCeiling = "E_OVER_CEILING",
    /// A peer broke the protocol.
    Protocol = "E_PROTOCOL",
    /// The SQL is not allowed.
    QueryForbidden = "E_QUERY_FORBIDDEN",
    /// The SQL does not run.
    QueryInvalid = "E_QUERY_INVALID",
    /// A write on a read-only engine.
    Readonly = "E_READONLY",
    /// A snapshot member is refused.
    RefusedMember = "E_REFUSED_MEMBER",
    /// A remote failed.
    Remote = "E_REMOTE",
    /// Arguments outside the accepted set.
    Schema = "E_SCHEMA",
    /// Object storage failed.
    Storage = "E_STORAGE",
    /// A restore target is not empty.
    TargetNotEmpty = "E_TARGET_NOT_EMPTY",
    /// The call ran past its deadline.
    Timeout = "E_TIMEOUT",
    /// The token store could not be read or written.
    TokenIo = "E_TOKEN_IO",
    /// The token store is corrupt.
    TokenStore = "E_TOKEN_STORE",
    /// No or a wrong token.
    Unauthorized = "E_UNAUTHORIZED",
    /// A service is unavailable.
    Unavailable = "E_UNAVAILABLE",
    /// A ZIP container failed.
    Zip = "E_ZIP",
}

impl ErrorCode {
    /// The code of a wire spelling, `None` for an unknown one.
    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == s)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A code equals its wire spelling (what a test or a log line holds).
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            assert!(c.as_str().starts_with("E_"));
            assert!(seen.insert(c.as_str()), "{c}");
            assert_eq!(ErrorCode::parse(c.as_str()), Some(*c));
        }
        assert_eq!(ErrorCode::parse("E_NOPE"), None);
        assert_eq!(serde_json::to_string(&ErrorCode::NotFound).unwrap(), "\"E_NOT_FOUND\"");
    }
}
