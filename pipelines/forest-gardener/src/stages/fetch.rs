//! Fetch stage: bytes and hashes. Hashes reconcile suspects and move
//! candidates (local read or S3 download into a slot, blake3 plus sha256
//! when a stored hash or a BONE payload needs it), and downloads S3
//! windows ahead of conversion on the latency-bound I/O pool (rclone: one
//! batch download per window, see `Access::prefetch`).
//!
//! In: listed files (and hashes already known). Out: [`HashPair`]s per
//! path, or per-file error messages. Touches the source (reads) and
//! `_derived/tmp/objects` download slots only.

use crate::reconcile::HashPair;
use crate::source::{hash_file, Access, FetchError};
use crate::stages::text::{ext_of, payload_type_of};
use crate::walk::Listed;
use forest_convert::Registry;
use rayon::prelude::*;
use std::collections::HashMap;

/// Files per batch download (rclone: one process per batch).
const BATCH: usize = 64;

/// Hash listed files in parallel; `(file, sha)` asks for sha256 too
/// (a stored hash from another engine, or a move candidate that may
/// pair with one). BONE payloads always get sha256.
pub(crate) fn hash_listed(access: &Access, to_hash: &[(&Listed, bool)]) -> Vec<(String, Result<HashPair, FetchError>)> {
    let mut out = Vec::with_capacity(to_hash.len());
    for chunk in to_hash.chunks(BATCH) {
        let files: Vec<&Listed> = chunk.iter().map(|(f, _)| *f).collect();
        let fetched = access.prefetch(&files);
        out.par_extend(chunk.par_iter().map(|(f, sha)| {
            let need_sha = *sha || payload_type_of(&ext_of(&f.rel)).is_some();
            let h = if fetched.contains(&f.rel) { hash_file(&f.abs, need_sha) } else { access.hash(f, need_sha) };
            (f.rel.clone(), h)
        }));
    }
    out
}

/// What a download window needs to know: which files the convert stage
/// will read (the size limit, a converter claims the extension) and how
/// the source is reached.
pub(crate) struct Window<'a> {
    pub(crate) access: &'a Access,
    pub(crate) registry: &'a Registry,
    pub(crate) max_file_bytes: u64,
}

impl Window<'_> {
    /// Download one window of objects with many threads (files over the
    /// size limit or empty are left to the convert stage to report).
    pub(crate) fn fetch(
        &self,
        pool: &rayon::ThreadPool,
        window: &[&Listed],
        hashes: &HashMap<String, HashPair>,
    ) -> HashMap<String, HashPair> {
        let wanted: Vec<&Listed> = window
            .iter()
            .copied()
            .filter(|f| f.size > 0 && f.size <= self.max_file_bytes)
            .filter(|f| !self.registry.claimants(&ext_of(&f.rel)).is_empty())
            .collect();
        let fetched = self.access.prefetch(&wanted);
        pool.install(|| {
            wanted
                .par_iter()
                .filter_map(|f| {
                    // sha256 too: the passport records it.
                    let h = match fetched.contains(&f.rel) {
                        true => hash_file(&f.abs, true),
                        false => self.access.ensure_local(f, hashes.get(&f.rel), true),
                    };
                    Some((f.rel.clone(), h.ok()?))
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::env::testing::Fixture;
    use crate::source::hash_file;

    #[test]
    fn hashes_with_sha_only_when_asked_or_for_bone() {
        let fx = Fixture::new();
        let a = fx.write("a.md", "alpha");
        let p = fx.write("p.pdf", "%PDF-1.4 not really");
        let mut gone = fx.write("gone.md", "x");
        gone.abs = fx.source.join("never-written.md");
        let env = fx.env();
        let got = super::hash_listed(env.access, &[(&a, false), (&p, false), (&gone, true)]);
        let ha = got[0].1.as_ref().expect("hashed");
        assert_eq!(ha, &hash_file(&a.abs, false).expect("hash"));
        assert!(ha.sha256.is_empty());
        assert!(!got[1].1.as_ref().expect("hashed").sha256.is_empty(), "BONE payloads get sha256");
        assert!(got[2].1.is_err(), "an unreadable file is a per-file error");
    }
}
