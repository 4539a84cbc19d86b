//! Fetch stage: bytes and hashes. Hashes reconcile suspects and move
//! candidates (local read or S3 download into a slot, blake3 plus sha256
//! when a stored hash or a BONE payload needs it), and downloads S3
//! windows ahead of conversion on the latency-bound I/O pool.
//!
//! In: listed files (and hashes already known). Out: [`HashPair`]s per
//! path, or per-file error messages. Touches the source (reads) and
//! `_derived/tmp/objects` download slots only.

use crate::pipeline::SourceRun;
use crate::reconcile::{HashPair, ManifestEntry};
use crate::stages::text::{ext_of, payload_type_of};
use crate::walk::Listed;
use rayon::prelude::*;
use std::collections::HashMap;

impl SourceRun<'_> {
    /// Hash `to_hash` in parallel. sha256 too when the stored hash is not
    /// ours (another engine's), when unknown paths might pair with such an
    /// entry (`want_sha_moves`), or for BONE payloads.
    pub(crate) fn hash_paths(
        &self,
        to_hash: &[String],
        entries: &HashMap<String, ManifestEntry>,
        by_rel: &HashMap<&str, &Listed>,
        want_sha_moves: bool,
    ) -> Vec<(String, Result<HashPair, String>)> {
        let access = &self.access;
        to_hash
            .par_iter()
            .map(|rel| {
                let need_sha = entries.get(rel).map(|e| !e.hash.starts_with("blake3:")).unwrap_or(want_sha_moves)
                    || payload_type_of(&ext_of(rel)).is_some();
                let res = by_rel
                    .get(rel.as_str())
                    .ok_or_else(|| "vanished".to_string())
                    .and_then(|f| access.hash(f, need_sha));
                (rel.clone(), res)
            })
            .collect()
    }

    /// Download one window of objects with many threads (files over the
    /// size limit or empty are left to the convert stage to report).
    pub(crate) fn fetch_window(
        &self,
        pool: &rayon::ThreadPool,
        window: &[&Listed],
        hashes: &HashMap<String, HashPair>,
    ) -> HashMap<String, HashPair> {
        pool.install(|| {
            window
                .par_iter()
                .filter(|f| f.size > 0 && f.size <= self.config.max_file_bytes)
                .filter(|f| !self.registry.claimants(&ext_of(&f.rel)).is_empty())
                .filter_map(|f| {
                    // sha256 too: the passport records it.
                    let h = self.access.ensure_local(f, hashes.get(&f.rel), true).ok()?;
                    Some((f.rel.clone(), h))
                })
                .collect()
        })
    }
}
