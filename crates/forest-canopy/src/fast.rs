//! The fast encoder: a static distillation of the sentence-transformer
//! (the model2vec recipe). Each vocabulary token is embedded once by the
//! full model (`[CLS] token [SEP]`, pooled as the model pools, unit
//! length), the table centred and stripped of its top principal directions
//! (`abtt.rs`), and each row weighted by its rarity (`ln(2 + rank)`, the
//! WordPiece vocabulary being ordered by frequency from its first word on);
//! a text's vector is the normalised sum of its tokens' rows. No attention at query
//! or build time: tens of thousands of texts a second on one core, where
//! the full model embeds 50-90 scents a second on two.
//!
//! The table (vocabulary × dimension float32, 47 MB for all-MiniLM-L6-v2)
//! is distilled on first use and kept beside the model
//! (`forest-static2-<digest>.f32`), or in the temporary directory when the
//! model's directory is read-only; its identity is the model's plus
//! [`STATIC_SUFFIX`], so a canopy records which encoder made it.

use std::io::Write;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use tokenizers::Tokenizer;

use crate::embed::{normalize, Embedder, LocalEmbedder};
use crate::error::{CanopyError, Result};

/// Appended to the model's identity for canopies the fast encoder built.
pub const STATIC_SUFFIX: &str = "+static2";

/// What every fast encoder's identity carries, whatever its recipe: a
/// canopy recorded with an older one is a fast canopy to build again.
pub const STATIC_MARK: &str = "+static";

/// The cache file's magic (recipe 2: the top directions removed).
const MAGIC: &[u8; 8] = b"FSTATIC2";

/// Tokens per text at most (scent texts are far shorter).
const MAX_TOKENS: usize = 512;

/// Token rows per forward pass while distilling.
const DISTILL_ROWS: usize = 512;

/// A static token table and the tokenizer that indexes it.
pub struct StaticEmbedder {
    table: Table,
    dim: usize,
    tokenizer: Tokenizer,
    name: String,
}

/// The weighted token rows: the cache file mapped in place (a query's
/// process reads the few rows it needs, not 47 MB), or the rows a
/// distillation just computed.
enum Table {
    Mapped(memmap2::Mmap),
    Owned(Vec<f32>),
}

impl Table {
    /// Add row `id` (of width `dim`) into `acc`; false past the table.
    fn add_row(&self, id: usize, dim: usize, acc: &mut [f32]) -> bool {
        match self {
            Table::Owned(t) => match t.get(id * dim..(id + 1) * dim) {
                Some(row) => {
                    acc.iter_mut().zip(row).for_each(|(a, b)| *a += b);
                    true
                }
                None => false,
            },
            Table::Mapped(m) => match m.get(HEADER + id * dim * 4..HEADER + (id + 1) * dim * 4) {
                Some(row) => {
                    for (a, c) in acc.iter_mut().zip(row.chunks_exact(4)) {
                        *a += f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                    true
                }
                None => false,
            },
        }
    }
}

/// Bytes before the rows in the cache file: magic, vocabulary, width.
const HEADER: usize = 16;

/// The rarity weight of vocabulary entry `id` (WordPiece: entries below
/// the first word, 1996 in BERT's uncased vocabulary, are characters,
/// punctuation and reserved slots, weighted as the most frequent word).
pub(crate) fn weight(id: usize, first_word: usize) -> f32 {
    ((2 + id.saturating_sub(first_word)) as f32).ln()
}

impl StaticEmbedder {
    /// The fast encoder of the model in `dir` (whose identity is
    /// `identity`): its cached table, mapped, or a distillation of the full
    /// model (`full` loads it, only then) written to the cache.
    pub fn load(
        dir: &Path,
        identity: &str,
        full: impl FnOnce() -> Result<std::sync::Arc<LocalEmbedder>>,
    ) -> Result<StaticEmbedder> {
        let name = format!("{identity}{STATIC_SUFFIX}");
        let mut tokenizer = crate::tokfile::load(&dir.join("tokenizer.json"))
            .map_err(|e| CanopyError::Tokenizer(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| CanopyError::Tokenizer(e.to_string()))?;
        let vocab = tokenizer.get_vocab_size(true);
        let cached = cache_paths(dir, identity).into_iter().find_map(|p| map_table(&p, vocab));
        let (table, dim) = match cached {
            Some((m, dim)) => (Table::Mapped(m), dim),
            None => {
                let (t, dim) = distill(full()?.as_ref(), &tokenizer, vocab)?;
                save_table(dir, identity, &t, vocab, dim);
                (Table::Owned(t), dim)
            }
        };
        Ok(StaticEmbedder { table, dim, tokenizer, name })
    }

    /// Vector width.
    pub fn dim(&self) -> usize {
        self.dim
    }
}

impl Embedder for StaticEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let inputs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let enc = self.tokenizer.encode_batch(inputs, false).map_err(|e| CanopyError::Tokenizer(e.to_string()))?;
        Ok(enc
            .iter()
            .map(|e| {
                let mut v = vec![0f32; self.dim];
                for &id in e.get_ids() {
                    self.table.add_row(id as usize, self.dim, &mut v);
                }
                normalize(&mut v);
                v
            })
            .collect())
    }
}

/// Embed every vocabulary entry with the full model and weight it.
fn distill(full: &LocalEmbedder, tok: &Tokenizer, vocab: usize) -> Result<(Vec<f32>, usize)> {
    let id = |t: &str| tok.token_to_id(t);
    let (cls, sep) = (id("[CLS]").unwrap_or(101), id("[SEP]").unwrap_or(102));
    let first_word = id("the").map_or(0, |i| i as usize);
    tracing::info!(target: "forest_canopy", event = "canopy.distill", vocab, "distilling the fast encoder");
    let mut table: Vec<f32> = Vec::new();
    let mut dim = 0;
    for start in (0..vocab).step_by(DISTILL_ROWS) {
        let rows: Vec<[u32; 3]> = (start..vocab.min(start + DISTILL_ROWS)).map(|t| [cls, t as u32, sep]).collect();
        for mut v in full.forward_ids(&rows)? {
            dim = v.len();
            normalize(&mut v);
            table.extend(v);
        }
    }
    center_and_weigh(&mut table, dim, first_word);
    Ok((table, dim))
}

/// Remove what every token row shares (the `[CLS]`/`[SEP]` context: the
/// mean row, then the top principal directions), renormalise, and weigh
/// each row by rarity.
fn center_and_weigh(table: &mut [f32], dim: usize, first_word: usize) {
    center(table, dim);
    crate::abtt::drop_top_directions(table, dim, crate::abtt::TOP_DIRECTIONS);
    for (i, row) in table.chunks_exact_mut(dim.max(1)).enumerate() {
        let w = weight(i, first_word);
        row.iter_mut().for_each(|x| *x *= w);
    }
}

/// Subtract the mean row and renormalise each row.
fn center(table: &mut [f32], dim: usize) {
    if dim == 0 {
        return;
    }
    let rows = table.len() / dim;
    let mut mean = vec![0f64; dim];
    for row in table.chunks_exact(dim) {
        mean.iter_mut().zip(row).for_each(|(m, x)| *m += f64::from(*x));
    }
    mean.iter_mut().for_each(|m| *m /= rows.max(1) as f64);
    for row in table.chunks_exact_mut(dim) {
        row.iter_mut().zip(&mean).for_each(|(x, m)| *x = (f64::from(*x) - m) as f32);
        normalize(row);
    }
}

/// Where a table may be kept: beside the model, else the temporary dir.
fn cache_paths(dir: &Path, identity: &str) -> Vec<PathBuf> {
    let digest = identity.rsplit('@').next().unwrap_or(identity);
    let name = format!("forest-static2-{digest}.f32");
    vec![dir.join(&name), std::env::temp_dir().join(name)]
}

/// The cache file mapped, when it is a whole table of `vocab` rows.
fn map_table(path: &Path, vocab: usize) -> Option<(memmap2::Mmap, usize)> {
    let f = std::fs::File::open(path).ok()?;
    // SAFETY: the file is written once to a temporary name and renamed into
    // place; it is never modified in place while mapped.
    let m = unsafe { memmap2::Mmap::map(&f) }.ok()?;
    let head = m.get(..HEADER)?;
    let rows = u32::from_le_bytes(head[8..12].try_into().ok()?) as usize;
    let dim = u32::from_le_bytes(head[12..16].try_into().ok()?) as usize;
    if &head[..8] != MAGIC || rows != vocab || dim == 0 || dim > 8192 || m.len() != HEADER + rows * dim * 4 {
        return None;
    }
    Some((m, dim))
}

/// Keep the table for the next process (best effort: a read-only model
/// directory falls back to the temporary directory, and a failure only
/// means the next process distills again).
fn save_table(dir: &Path, identity: &str, table: &[f32], vocab: usize, dim: usize) {
    let mut bytes = Vec::with_capacity(16 + table.len() * 4);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(vocab as u32).to_le_bytes());
    bytes.extend_from_slice(&(dim as u32).to_le_bytes());
    table.iter().for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
    for path in cache_paths(dir, identity) {
        let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
        let ok = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(&bytes)).is_ok()
            && std::fs::rename(&tmp, &path).is_ok();
        let _ = std::fs::remove_file(&tmp);
        if ok {
            return;
        }
    }
    tracing::warn!(target: "forest_canopy", event = "canopy.distill_unsaved", "the fast encoder's table could not be kept");
}

impl LocalEmbedder {
    /// Pooled (not yet normalised) vectors of rows of token ids, all of
    /// one width and fully attended (the distillation's `[CLS] t [SEP]`).
    pub(crate) fn forward_ids(&self, rows: &[[u32; 3]]) -> Result<Vec<Vec<f32>>> {
        let (n, width) = (rows.len(), 3);
        let ids: Vec<u32> = rows.iter().flatten().copied().collect();
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let dev = &Device::Cpu;
            let types = Tensor::zeros((n, width), DType::U32, dev)?;
            let mask = Tensor::ones((n, width), DType::U32, dev)?;
            let out = self.bert().forward(&ids, types, &mask, n, width)?;
            let pooled = if self.cls_pooled() { out.narrow(1, 0, 1)?.squeeze(1)? } else { out.mean(1)? };
            pooled.to_vec2::<f32>()
        };
        run().map_err(CanopyError::Inference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rarer_tokens_weigh_more_and_reserved_ones_least() {
        assert!(weight(1996, 1996) < weight(2500, 1996));
        assert!(weight(2500, 1996) < weight(30_000, 1996));
        assert_eq!(weight(5, 1996), weight(1996, 1996), "characters and reserved slots weigh as 'the'");
        assert!(weight(1996, 1996) > 0.0, "no token is weighted to nothing");
    }

    #[test]
    fn centering_removes_the_shared_part() {
        // two rows sharing a large common component: after centring they
        // point apart, each of length weight(row)
        let mut t = vec![1.0, 0.1, 1.0, -0.1];
        center_and_weigh(&mut t, 2, 0);
        assert!(t[0].abs() < 1e-6 && t[2].abs() < 1e-6, "{t:?}");
        assert!((t[1] - weight(0, 0)).abs() < 1e-6 && (t[3] + weight(1, 0)).abs() < 1e-6, "{t:?}");
    }

    #[test]
    fn a_table_round_trips_and_a_wrong_one_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let table: Vec<f32> = (0..12).map(|i| i as f32 * 0.5).collect();
        save_table(d.path(), "m@abc", &table, 4, 3);
        let p = d.path().join("forest-static2-abc.f32");
        let (m, dim) = map_table(&p, 4).unwrap();
        assert_eq!(dim, 3);
        let mapped = Table::Mapped(m);
        for id in 0..4 {
            let mut acc = vec![0f32; 3];
            assert!(mapped.add_row(id, 3, &mut acc));
            assert_eq!(acc, table[id * 3..id * 3 + 3], "row {id}");
        }
        assert!(!mapped.add_row(4, 3, &mut [0f32; 3]), "past the table");
        assert!(map_table(&p, 5).is_none(), "another vocabulary");
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.truncate(bytes.len() - 4);
        std::fs::write(&p, &bytes).unwrap();
        assert!(map_table(&p, 4).is_none(), "a short file");
    }
}
