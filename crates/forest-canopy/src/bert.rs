//! The BERT forward pass, as candle's `BertModel` runs it, with one
//! difference: the word-embedding table (30522 × 384 float32, half of
//! all-MiniLM-L6-v2's 90 MB) stays in the memory-mapped safetensors file
//! and only the rows of the tokens at hand are read, where `BertModel`
//! copies the whole table onto the heap at load. A fresh `forest locate
//! --hybrid` process thus copies half the bytes before its first query.
//!
//! The arithmetic is `BertModel::forward`'s, op for op (word + token type
//! embeddings, plus the position embeddings, layer norm; the additive
//! attention mask `(1 - mask) × f32::MIN`; candle's `BertEncoder`), so the
//! vectors are the same bit for bit.

use std::path::Path;

use candle_core::safetensors::MmapedSafetensors;
use candle_core::{DType, Device, Tensor};
use candle_nn::{Embedding, LayerNorm, Module, VarBuilder};
use candle_transformers::models::bert::{BertEncoder, Config};

/// Where the word vectors come from.
enum Words {
    /// A float32 table read in place from the mapped file.
    Mapped { file: MmapedSafetensors, name: String, rows: usize },
    /// Any other dtype: loaded (and converted) as candle loads it.
    Loaded(Embedding),
}

/// A BERT encoder with its embeddings.
pub(crate) struct Bert {
    words: Words,
    positions: Embedding,
    token_types: Embedding,
    layer_norm: LayerNorm,
    encoder: BertEncoder,
    hidden: usize,
}

fn err(what: String) -> candle_core::Error {
    candle_core::Error::Msg(what)
}

impl Bert {
    /// Load from `model.safetensors` with `config` (tensors named
    /// `embeddings.*` / `encoder.*`, or under a `bert.` prefix).
    pub(crate) fn load(st: &Path, config: &Config) -> candle_core::Result<Bert> {
        // SAFETY: the file is mapped read-only; a concurrent rewrite of the
        // model directory is outside what we support (as for any mmap).
        let file = unsafe { MmapedSafetensors::new(st)? };
        let prefix = if file.get("embeddings.word_embeddings.weight").is_ok() { "" } else { "bert." };
        // SAFETY: as above.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[st], DType::F32, &Device::Cpu)? };
        let vb = if prefix.is_empty() { vb } else { vb.pp("bert") };
        let (h, e) = (config.hidden_size, vb.pp("embeddings"));
        let name = format!("{prefix}embeddings.word_embeddings.weight");
        let view = file.get(&name)?;
        let words = if matches!(DType::try_from(view.dtype()), Ok(DType::F32)) && view.shape() == [config.vocab_size, h]
        {
            Words::Mapped { name, rows: config.vocab_size, file }
        } else {
            Words::Loaded(candle_nn::embedding(config.vocab_size, h, e.pp("word_embeddings"))?)
        };
        Ok(Bert {
            words,
            positions: candle_nn::embedding(config.max_position_embeddings, h, e.pp("position_embeddings"))?,
            token_types: candle_nn::embedding(config.type_vocab_size, h, e.pp("token_type_embeddings"))?,
            layer_norm: candle_nn::layer_norm(h, config.layer_norm_eps, e.pp("LayerNorm"))?,
            encoder: BertEncoder::load(vb.pp("encoder"), config)?,
            hidden: h,
        })
    }

    /// The word vectors of `ids` (rows × width), as `Embedding::forward`
    /// gives them.
    fn word_vectors(&self, ids: &[u32], rows: usize, width: usize) -> candle_core::Result<Tensor> {
        let (file, name, vocab) = match &self.words {
            Words::Loaded(e) => return e.forward(&Tensor::from_slice(ids, (rows, width), &Device::Cpu)?),
            Words::Mapped { file, name, rows } => (file, name, *rows),
        };
        let view = file.get(name)?;
        let data = view.data();
        let row_bytes = 4 * self.hidden;
        let mut out = Vec::with_capacity(ids.len() * self.hidden);
        for &id in ids {
            let id = id as usize;
            if id >= vocab {
                return Err(err(format!("token id {id} is outside the vocabulary ({vocab})")));
            }
            let row = &data[id * row_bytes..(id + 1) * row_bytes];
            out.extend(row.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
        }
        Tensor::from_vec(out, (rows, width, self.hidden), &Device::Cpu)
    }

    /// The last hidden states (rows, width, hidden) of `ids`, `types` and
    /// `mask` (each rows × width, row-major).
    pub(crate) fn forward(
        &self,
        ids: &[u32],
        types: Tensor,
        mask: &Tensor,
        rows: usize,
        width: usize,
    ) -> candle_core::Result<Tensor> {
        let dev = &Device::Cpu;
        // BertEmbeddings::forward
        let words = self.word_vectors(ids, rows, width)?;
        let mut x = (&words + self.token_types.forward(&types)?)?;
        let positions = Tensor::new(&(0..width as u32).collect::<Vec<_>>()[..], dev)?;
        x = x.broadcast_add(&self.positions.forward(&positions)?)?;
        let x = self.layer_norm.forward(&x)?;
        // get_extended_attention_mask
        let m = mask.unsqueeze(1)?.unsqueeze(1)?.to_dtype(DType::F32)?;
        let m = (m.ones_like()? - &m)?.broadcast_mul(&Tensor::try_from(f32::MIN)?.to_device(dev)?)?;
        self.encoder.forward(&x, &m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our forward pass equals candle's `BertModel` on the real model
    /// (`FOREST_EMBED_MODEL`; nothing to compare without it).
    #[test]
    fn same_hidden_states_as_candles_bert_model() {
        let Some(dir) = std::env::var_os(crate::embed::MODEL_VAR).filter(|d| !d.is_empty()) else { return };
        let dir = std::path::PathBuf::from(dir);
        let config: Config = serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
        let st = dir.join("model.safetensors");
        let ours = Bert::load(&st, &config).unwrap();
        // SAFETY: read-only map of the test model.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&st], DType::F32, &Device::Cpu) }.unwrap();
        let theirs = candle_transformers::models::bert::BertModel::load(vb, &config).unwrap();
        // two rows, the second padded under the mask
        let ids: Vec<u32> = vec![101, 2073, 2024, 1996, 6823, 8264, 102, 101, 1062, 2497, 102, 0, 0, 0];
        let mask: Vec<u32> = vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0];
        let dev = &Device::Cpu;
        let t = |v: &[u32]| Tensor::from_slice(v, (2, 7), dev).unwrap();
        let a = ours.forward(&ids, t(&[0; 14]), &t(&mask), 2, 7).unwrap();
        let b = theirs.forward(&t(&ids), &t(&[0; 14]), Some(&t(&mask))).unwrap();
        let d = (a - b).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap();
        assert_eq!(d, 0.0, "hidden states differ by {d}");
    }
}
