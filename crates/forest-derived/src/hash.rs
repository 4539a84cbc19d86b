//! Content hashes of source files: blake3 (ours) and sha256 (the dialect's
//! `source_hash`, and what another engine wrote; DESIGN §2).

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// Fresh hashes of one file: blake3 (ours) and sha256 (to compare with
/// hashes written by another engine, DESIGN §2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashPair {
    /// `blake3:<hex>`.
    pub blake3: String,
    /// sha256 hex (computed only when needed; empty otherwise).
    pub sha256: String,
}

impl HashPair {
    /// Does a stored hash name this content?
    pub fn matches(&self, stored: &str) -> bool {
        if stored.starts_with("blake3:") {
            stored == self.blake3
        } else {
            !self.sha256.is_empty() && stored.eq_ignore_ascii_case(&self.sha256)
        }
    }
}

/// blake3 (and sha256 when asked) of a local file in one read pass.
pub fn hash_file(path: &Path, with_sha: bool) -> std::io::Result<HashPair> {
    let mut f = std::fs::File::open(path)?;
    let mut b3 = blake3::Hasher::new();
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        b3.update(&buf[..n]);
        if with_sha {
            sha.update(&buf[..n]);
        }
    }
    Ok(HashPair {
        blake3: format!("blake3:{}", b3.finalize().to_hex()),
        sha256: if with_sha { hex::encode(sha.finalize()) } else { String::new() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_matches_either_stored_spelling() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        std::fs::write(&p, b"abc").unwrap();
        let h = hash_file(&p, true).unwrap();
        assert!(h.matches("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        assert!(h.matches("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
        assert!(h.matches(&h.blake3.clone()));
        assert!(!hash_file(&p, false)
            .unwrap()
            .matches("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        assert!(hash_file(&d.path().join("missing"), true).is_err());
    }
}
