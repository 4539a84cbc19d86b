//! Bearer tokens of the HTTP transport: a store of hashed tokens (JSON
//! lines: name, `sha256:` of the secret, scope, branches, created) that
//! `forest token create|list|revoke` manage and `forest serve` reads.
//!
//! The secret is 256 random bits (`fst_` + 64 hex), shown once at
//! creation; only its SHA-256 is stored (a 256-bit random secret needs no
//! slow hash). A presented token is hashed and compared with every stored
//! hash in constant time.
//!
//! Default store: `<forest>/.forest/tokens`, in a directory git ignores
//! (its own `.gitignore` says `*`) and `_derived/` cleaning never touches:
//! tokens are neither versioned (a clone or snapshot never carries them)
//! nor disposable. `--token-file PATH` names another file of the same
//! format, e.g. a mounted Kubernetes Secret.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::access::Access;

/// Why a token operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The store could not be read or written.
    #[error("token store {path}")]
    Io {
        /// The store.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A line of the store is not a token record.
    #[error("token store {path} line {line}: {message}")]
    Corrupt {
        /// The store.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Bad name, scope or branch.
    #[error("{0}")]
    Invalid(String),
    /// `create` of a name that exists.
    #[error("a token named '{0}' exists; revoke it first")]
    Exists(String),
    /// `revoke` of an unknown name.
    #[error("no token named '{0}'")]
    Unknown(String),
    /// No randomness from the OS.
    #[error("no randomness from the operating system: {0}")]
    Random(String),
}

impl TokenError {
    /// Stable error code.
    pub fn code(&self) -> forest_model::ErrorCode {
        match self {
            TokenError::Io { .. } => forest_model::ErrorCode::TokenIo,
            TokenError::Corrupt { .. } => forest_model::ErrorCode::TokenStore,
            TokenError::Invalid(_) => forest_model::ErrorCode::Schema,
            TokenError::Exists(_) => forest_model::ErrorCode::Exists,
            TokenError::Unknown(_) => forest_model::ErrorCode::NotFound,
            TokenError::Random(_) => forest_model::ErrorCode::Internal,
        }
    }
}

/// One stored token (never the secret).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// Unique name (who, in the audit log).
    pub name: String,
    /// `sha256:<hex>` of the secret.
    pub hash: String,
    /// `read` or `write`.
    pub scope: String,
    /// Branch prefixes; empty = the whole forest.
    #[serde(default)]
    pub branches: Vec<String>,
    /// RFC 3339 creation time.
    #[serde(default)]
    pub created: String,
}

impl TokenRecord {
    /// The access this token grants.
    pub fn access(&self) -> Access {
        Access::new(&self.name, self.scope == "write", &self.branches)
    }
}

/// `<forest>/.forest`: private, unversioned, not disposable.
pub fn private_dir(forest: &Path) -> PathBuf {
    forest.join(".forest")
}

/// `<forest>/.forest/tokens`.
pub fn default_store(forest: &Path) -> PathBuf {
    private_dir(forest).join("tokens")
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TokenError + '_ {
    move |source| TokenError::Io { path: path.to_path_buf(), source }
}

/// Read a store; a missing file is an empty store.
pub fn load(path: &Path) -> Result<Vec<TokenRecord>, TokenError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(io(path)(e)),
    };
    parse(path, &text)
}

fn parse(path: &Path, text: &str) -> Result<Vec<TokenRecord>, TokenError> {
    let mut out: Vec<TokenRecord> = vec![];
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() || l.trim_start().starts_with('#') {
            continue;
        }
        let corrupt = |message: String| TokenError::Corrupt { path: path.to_path_buf(), line: i + 1, message };
        let r: TokenRecord = serde_json::from_str(l).map_err(|e| corrupt(e.to_string()))?;
        check_record(&r).map_err(|e| corrupt(e.to_string()))?;
        if out.iter().any(|o| o.name == r.name) {
            return Err(corrupt(format!("duplicate name '{}'", r.name)));
        }
        out.push(r);
    }
    Ok(out)
}

fn check_record(r: &TokenRecord) -> Result<(), TokenError> {
    check_name(&r.name)?;
    if r.scope != "read" && r.scope != "write" {
        return Err(TokenError::Invalid(format!("scope must be read or write, got '{}'", r.scope)));
    }
    let hex = r.hash.strip_prefix("sha256:").unwrap_or("");
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(TokenError::Invalid("hash must be sha256:<64 hex>".into()));
    }
    for b in &r.branches {
        check_branch(b)?;
    }
    Ok(())
}

fn check_name(name: &str) -> Result<(), TokenError> {
    let ok =
        !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.@".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(TokenError::Invalid(format!("token name must be 1-64 of [A-Za-z0-9-_.@], got '{name}'")))
    }
}

fn check_branch(b: &str) -> Result<(), TokenError> {
    let id = crate::engine::norm_id(b);
    if id.is_empty() || id.split('/').any(|c| c.is_empty() || c == "." || c == ".." || c.contains('\0')) {
        return Err(TokenError::Invalid(format!("branch prefix must be a forest path like 'engineering/', got '{b}'")));
    }
    Ok(())
}

/// `sha256:<hex>` of a secret.
pub fn hash_secret(secret: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(secret.as_bytes())))
}

fn new_secret() -> Result<String, TokenError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| TokenError::Random(e.to_string()))?;
    Ok(format!("fst_{}", hex::encode(b)))
}

/// Add a token; returns the secret (shown once, never stored).
pub fn create(path: &Path, name: &str, write: bool, branches: &[String]) -> Result<String, TokenError> {
    let mut all = load(path)?;
    if all.iter().any(|r| r.name == name) {
        return Err(TokenError::Exists(name.to_string()));
    }
    let secret = new_secret()?;
    let mut branches: Vec<String> = branches.iter().map(|b| format!("{}/", crate::engine::norm_id(b))).collect();
    branches.sort();
    branches.dedup();
    let rec = TokenRecord {
        name: name.to_string(),
        hash: hash_secret(&secret),
        scope: if write { "write" } else { "read" }.into(),
        branches,
        created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    check_record(&rec)?;
    all.push(rec);
    save(path, &all)?;
    Ok(secret)
}

/// Remove a token by name.
pub fn revoke(path: &Path, name: &str) -> Result<(), TokenError> {
    let mut all = load(path)?;
    let before = all.len();
    all.retain(|r| r.name != name);
    if all.len() == before {
        return Err(TokenError::Unknown(name.to_string()));
    }
    save(path, &all)
}

fn save(path: &Path, all: &[TokenRecord]) -> Result<(), TokenError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        private(dir).map_err(io(dir))?;
    }
    let mut text = String::new();
    for r in all {
        text.push_str(&serde_json::to_string(r).unwrap_or_default());
        text.push('\n');
    }
    forest_fs::atomic_write(path, text.as_bytes()).map_err(io(path))?;
    restrict(path, 0o600).map_err(io(path))
}

/// Create `dir` (0700); a `.forest` directory also gets a `.gitignore`
/// of `*`, so `git add -A` never picks up a token.
pub(crate) fn private(dir: &Path) -> std::io::Result<()> {
    if !dir.exists() {
        std::fs::create_dir_all(dir)?;
        restrict(dir, 0o700)?;
    }
    if dir.file_name().is_some_and(|n| n == ".forest") {
        let gi = dir.join(".gitignore");
        if !gi.exists() {
            std::fs::write(gi, "*\n")?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn restrict(p: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn restrict(_p: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// The tokens a server accepts.
#[derive(Debug, Clone, Default)]
pub struct TokenSet {
    records: Vec<TokenRecord>,
}

impl TokenSet {
    /// From loaded records.
    pub fn new(records: Vec<TokenRecord>) -> TokenSet {
        TokenSet { records }
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when no token is configured.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The access of the token whose secret this is, comparing the hash
    /// with every record in constant time.
    pub fn authenticate(&self, presented: &str) -> Option<Access> {
        let h = hash_secret(presented.trim());
        let mut found: Option<&TokenRecord> = None;
        for r in &self.records {
            if bool::from(r.hash.as_bytes().ct_eq(h.as_bytes())) {
                found = Some(r);
            }
        }
        found.map(TokenRecord::access)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_authenticate_revoke() {
        let dir = tempfile::tempdir().unwrap();
        let store = default_store(dir.path());
        let s = create(&store, "eng", false, &["engineering".into()]).unwrap();
        assert!(s.starts_with("fst_") && s.len() == 68);
        let text = std::fs::read_to_string(&store).unwrap();
        assert!(!text.contains(&s[4..]), "the secret is never stored");
        assert!(dir.path().join(".forest/.gitignore").is_file());
        assert!(matches!(create(&store, "eng", true, &[]), Err(TokenError::Exists(_))));
        let w = create(&store, "ops", true, &[]).unwrap();
        let set = TokenSet::new(load(&store).unwrap());
        let a = set.authenticate(&s).unwrap();
        assert_eq!((a.name.as_str(), a.write, a.branches.clone()), ("eng", false, vec!["engineering/".to_string()]));
        assert!(set.authenticate(&w).unwrap().write);
        assert!(set.authenticate("garbage").is_none());
        assert!(set.authenticate("").is_none());
        revoke(&store, "eng").unwrap();
        assert!(TokenSet::new(load(&store).unwrap()).authenticate(&s).is_none());
        assert_eq!(revoke(&store, "eng").unwrap_err().code(), "E_NOT_FOUND");
    }

    #[test]
    fn hostile_stores_and_names_are_refused() {
        let p = Path::new("t");
        assert!(parse(p, "{\"name\":\"a\",\"hash\":\"md5:x\",\"scope\":\"read\"}").is_err());
        assert!(parse(p, "not json").is_err());
        let h = hash_secret("x");
        let line = format!("{{\"name\":\"a\",\"hash\":\"{h}\",\"scope\":\"admin\"}}");
        assert!(parse(p, &line).is_err());
        let line = format!("{{\"name\":\"a\",\"hash\":\"{h}\",\"scope\":\"read\",\"branches\":[\"../hr\"]}}");
        assert!(parse(p, &line).is_err());
        let ok = format!("# comment\n{{\"name\":\"a\",\"hash\":\"{h}\",\"scope\":\"read\"}}\n");
        assert_eq!(parse(p, &ok).unwrap().len(), 1);
        assert!(parse(p, &format!("{ok}{ok}")).is_err(), "duplicate names");
        assert!(check_name("a b").is_err());
    }
}
