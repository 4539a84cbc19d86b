//! forest-prepared: the shared store between the workers of a distributed
//! ingest and its committer (issue 16).
//!
//! A [`PreparedStore`] holds one object per key. Keys are content hashes of
//! what decides a result ([`key_of`]: the source bytes' hash, converter id
//! and version, prompt version, model), so a key never names two different
//! right answers. Objects are written once: on a directory by a temp file
//! hard-linked into place (`link` fails if the name exists), on S3 by a
//! conditional put (`If-None-Match: *`). Two workers, or a retried pod, can
//! therefore never tear or replace an object. Every object carries the
//! sha256 of its payload and its own key in a header line; a truncated,
//! tampered or misplaced object reads as [`Lookup::Corrupt`] and is redone
//! (and replaced through [`PreparedStore::replace`]), never served.
//!
//! In: payload bytes (the caller's format). Out: verified payload bytes.
//! Touches only the store (a directory or an `s3://` prefix).
//!
//! Invariant: [`PreparedStore::get`] returns bytes only when they hash to
//! the sha256 recorded beside them under the key that was asked for.

mod dir;
mod s3;

use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::Arc;

/// First bytes of every object's header line.
pub const MAGIC: &str = "forest-prepared/1";

/// Failures of the store itself (a corrupt object is not one: see [`Lookup`]).
#[derive(Debug, thiserror::Error)]
pub enum PreparedError {
    /// A store URI that cannot be used.
    #[error("invalid store uri {uri:?}: {reason}")]
    InvalidUri {
        /// The text given.
        uri: String,
        /// Why it was refused.
        reason: String,
    },
    /// Object-store failure.
    #[error(transparent)]
    Storage(#[from] forest_storage::StorageError),
    /// Local filesystem failure, naming the path.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// Result of a lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// A verified payload.
    Hit(Vec<u8>),
    /// No object under the key.
    Miss,
    /// An object exists but fails verification (why): redo and replace it.
    Corrupt(String),
}

/// Result of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    /// This call wrote the object.
    Written,
    /// An object was already there (first writer wins; nothing changed).
    Exists,
}

/// Hex blake3 of length-framed parts: `("ab","c")` and `("a","bc")` differ.
pub fn key_of(parts: &[&str]) -> String {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// A key is 64 lowercase hex digits (it becomes a file or object name).
pub fn valid_key(key: &str) -> bool {
    key.len() == 64 && key.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The stored form of `payload` under `key`: header line, then the bytes.
pub fn encode(key: &str, payload: &[u8]) -> Vec<u8> {
    let sha = hex::encode(Sha256::digest(payload));
    let mut out = format!("{MAGIC} {key} {sha} {}\n", payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out
}

/// Verify a stored object against the key it was read under.
pub fn decode(key: &str, bytes: &[u8]) -> Lookup {
    let Some(nl) = bytes.iter().position(|&b| b == b'\n') else {
        return Lookup::Corrupt("no header line (truncated?)".into());
    };
    let header = String::from_utf8_lossy(&bytes[..nl]);
    let payload = &bytes[nl + 1..];
    let parts: Vec<&str> = header.split(' ').collect();
    let [magic, k, sha, len] = parts.as_slice() else {
        return Lookup::Corrupt(format!("malformed header {header:?}"));
    };
    if *magic != MAGIC {
        return Lookup::Corrupt(format!("not a prepared object (header {magic:?})"));
    }
    if *k != key {
        return Lookup::Corrupt(format!("object names key {k}, read under {key}"));
    }
    if len.parse::<usize>().ok() != Some(payload.len()) {
        return Lookup::Corrupt(format!("payload is {} bytes, header says {len} (truncated?)", payload.len()));
    }
    if hex::encode(Sha256::digest(payload)) != *sha {
        return Lookup::Corrupt("payload does not hash to its recorded sha256 (tampered?)".into());
    }
    Lookup::Hit(payload.to_vec())
}

/// Where prepared objects live.
#[derive(Clone)]
pub enum PreparedStore {
    /// A directory (a shared volume).
    Dir(PathBuf),
    /// An `s3://bucket/prefix` through forest-storage.
    S3 {
        /// Shared client.
        client: Arc<forest_storage::S3Client>,
        /// Bucket and prefix (ends in `/` or is empty).
        loc: forest_storage::S3Location,
    },
}

impl std::fmt::Debug for PreparedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PreparedStore({})", self.uri())
    }
}

impl PreparedStore {
    /// Open `uri`: `s3://bucket/prefix` (AWS environment, `AWS_ENDPOINT_URL`
    /// for S3-compatible servers, path-style then), `file://DIR` or a
    /// directory path (created when missing).
    pub fn open(uri: &str) -> Result<PreparedStore, PreparedError> {
        let uri = uri.trim();
        if uri.starts_with("s3://") {
            let mut loc = forest_storage::S3Location::parse(uri)?;
            if !loc.prefix.is_empty() && !loc.prefix.ends_with('/') {
                loc.prefix.push('/');
            }
            let mut opts = forest_storage::S3Options::from_env();
            if opts.endpoint_url.is_some() {
                opts.path_style = true;
            }
            let client = forest_storage::S3Client::new(&opts)?;
            return Ok(PreparedStore::S3 { client: Arc::new(client), loc });
        }
        let path = uri.strip_prefix("file://").unwrap_or(uri);
        if path.is_empty() || uri.contains("://") && !uri.starts_with("file://") {
            return Err(PreparedError::InvalidUri {
                uri: uri.into(),
                reason: "expected s3://, file:// or a path".into(),
            });
        }
        let dir = PathBuf::from(path);
        std::fs::create_dir_all(&dir)
            .map_err(|source| PreparedError::Io { context: format!("create {}", dir.display()), source })?;
        Ok(PreparedStore::Dir(dir))
    }

    /// The store's URI.
    pub fn uri(&self) -> String {
        match self {
            PreparedStore::Dir(d) => d.display().to_string(),
            PreparedStore::S3 { loc, .. } => format!("s3://{}/{}", loc.bucket, loc.prefix),
        }
    }

    /// Object name of `key` relative to the store (two-level fan-out).
    pub fn object_name(key: &str) -> String {
        format!("objects/{}/{key}", &key[..2.min(key.len())])
    }

    /// Read and verify the object under `key`.
    pub fn get(&self, key: &str) -> Result<Lookup, PreparedError> {
        if !valid_key(key) {
            return Err(PreparedError::InvalidUri { uri: key.into(), reason: "not a 64-hex key".into() });
        }
        let raw = match self {
            PreparedStore::Dir(d) => dir::read(d, key)?,
            PreparedStore::S3 { client, loc } => s3::read(client, loc, key)?,
        };
        Ok(match raw {
            None => Lookup::Miss,
            Some(bytes) => decode(key, &bytes),
        })
    }

    /// Write `payload` under `key` unless an object is already there.
    pub fn put(&self, key: &str, payload: &[u8]) -> Result<Put, PreparedError> {
        if !valid_key(key) {
            return Err(PreparedError::InvalidUri { uri: key.into(), reason: "not a 64-hex key".into() });
        }
        let bytes = encode(key, payload);
        match self {
            PreparedStore::Dir(d) => dir::write_once(d, key, &bytes),
            PreparedStore::S3 { client, loc } => s3::write_once(client, loc, key, &bytes),
        }
    }

    /// Replace an object found [`Lookup::Corrupt`]: removed, then written
    /// once again (a concurrent writer of the good object may win; both
    /// are verified on the next read).
    pub fn replace(&self, key: &str, payload: &[u8]) -> Result<Put, PreparedError> {
        if !valid_key(key) {
            return Err(PreparedError::InvalidUri { uri: key.into(), reason: "not a 64-hex key".into() });
        }
        if let Lookup::Hit(_) = self.get(key)? {
            return Ok(Put::Exists);
        }
        match self {
            PreparedStore::Dir(d) => dir::remove(d, key)?,
            PreparedStore::S3 { client, loc } => s3::remove(client, loc, key)?,
        }
        self.put(key, payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_framed_and_objects_verify_themselves() {
        assert_ne!(key_of(&["ab", "c"]), key_of(&["a", "bc"]));
        let k = key_of(&["sha", "conv@1", "p1", "m"]);
        assert!(valid_key(&k) && !valid_key("../x") && !valid_key(&k[..63]));
        let obj = encode(&k, b"{\"body\":\"hello\"}");
        assert_eq!(decode(&k, &obj), Lookup::Hit(b"{\"body\":\"hello\"}".to_vec()));
        // Truncated anywhere: header or payload.
        for cut in [5, obj.len() - 3] {
            assert!(matches!(decode(&k, &obj[..cut]), Lookup::Corrupt(_)), "cut at {cut}");
        }
        // Tampered payload of the same length.
        let mut bad = obj.clone();
        let last = bad.len() - 2;
        bad[last] ^= 0x20;
        assert!(matches!(decode(&k, &bad), Lookup::Corrupt(m) if m.contains("sha256")));
        // A valid object copied under another key is refused.
        let other = key_of(&["other"]);
        assert!(matches!(decode(&other, &obj), Lookup::Corrupt(m) if m.contains("names key")));
    }

    #[test]
    fn directory_store_is_write_once_and_redoes_corrupt_objects() {
        let d = tempfile::tempdir().unwrap();
        let store = PreparedStore::open(d.path().join("store").to_str().unwrap()).unwrap();
        let k = key_of(&["a"]);
        assert_eq!(store.get(&k).unwrap(), Lookup::Miss);
        assert_eq!(store.put(&k, b"first").unwrap(), Put::Written);
        assert_eq!(store.put(&k, b"second").unwrap(), Put::Exists, "first writer wins");
        assert_eq!(store.get(&k).unwrap(), Lookup::Hit(b"first".to_vec()));
        assert_eq!(store.replace(&k, b"third").unwrap(), Put::Exists, "a good object is never replaced");
        // Truncate it behind the store's back.
        let path = d.path().join("store").join(PreparedStore::object_name(&k));
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 2]).unwrap();
        assert!(matches!(store.get(&k).unwrap(), Lookup::Corrupt(_)));
        assert_eq!(store.put(&k, b"again").unwrap(), Put::Exists, "put never overwrites, even a bad object");
        assert_eq!(store.replace(&k, b"redone").unwrap(), Put::Written);
        assert_eq!(store.get(&k).unwrap(), Lookup::Hit(b"redone".to_vec()));
        // No temp file is left beside the objects.
        let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec![k.clone()]);
        assert!(store.get("../../etc/passwd").is_err(), "keys are checked before any path is built");
    }

    #[test]
    fn concurrent_writers_of_one_key_leave_one_whole_object() {
        let d = tempfile::tempdir().unwrap();
        let store = PreparedStore::open(d.path().to_str().unwrap()).unwrap();
        let k = key_of(&["race"]);
        let written: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|i| {
                    let store = &store;
                    let k = &k;
                    s.spawn(move || store.put(k, format!("writer {i} ").repeat(10_000).as_bytes()).unwrap())
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).filter(|p| *p == Put::Written).count()
        });
        assert_eq!(written, 1);
        assert!(matches!(store.get(&k).unwrap(), Lookup::Hit(b) if b.starts_with(b"writer ")));
    }
}
