//! `tokenizer.json` read the short way for a WordPiece model.
//!
//! `tokenizers::Tokenizer::from_file` reads the model section through an
//! untagged enum: the whole section (30,522 vocabulary entries for the
//! MiniLM model) is buffered as a generic JSON value and then walked again
//! for each model kind, 13-15 ms of a fresh `locate` process's 50 ms. A
//! WordPiece model's own `Deserialize` streams its vocabulary straight into
//! its map, so [`load`] reads the file into the library's own typed parts
//! (normalizer, pre-tokenizer, WordPiece model, post-processor, decoder,
//! added tokens, truncation, padding) and builds the same tokenizer as the
//! library does (a test holds both to the same serialization and the same
//! encodings). Any other file (another model kind, another version) is
//! read by `Tokenizer::from_file`.

use std::path::Path;

use serde::Deserialize;

use crate::error::{CanopyError, Result};
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::models::ModelWrapper;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{AddedToken, PaddingParams, Tokenizer, TokenizerBuilder, TruncationParams};

/// An entry of `added_tokens` (its id is the vocabulary's, as the library
/// reads it: only the token is kept).
#[derive(Deserialize)]
struct AddedEntry {
    #[serde(flatten)]
    token: AddedToken,
}

/// The parts of a `tokenizer.json` whose model is WordPiece.
#[derive(Deserialize)]
struct WordPieceFile {
    version: String,
    truncation: Option<TruncationParams>,
    padding: Option<PaddingParams>,
    #[serde(default)]
    added_tokens: Vec<AddedEntry>,
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    model: WordPiece,
    post_processor: Option<PostProcessorWrapper>,
    decoder: Option<DecoderWrapper>,
}

/// The tokenizer in the file at `path`, as `Tokenizer::from_file` reads it.
pub(crate) fn load(path: &Path) -> Result<Tokenizer> {
    let text = std::fs::read_to_string(path).map_err(|e| CanopyError::io(path, e))?;
    match wordpiece(&text) {
        Some(t) => Ok(t),
        None => text.parse::<Tokenizer>().map_err(|e| CanopyError::Tokenizer(e.to_string())),
    }
}

/// The short way, or `None` when the file is not a version 1.0 WordPiece
/// tokenizer (the caller then asks the library).
fn wordpiece(text: &str) -> Option<Tokenizer> {
    let f: WordPieceFile = serde_json::from_str(text).ok()?;
    if f.version != "1.0" {
        return None;
    }
    let built = TokenizerBuilder::new()
        .with_model(ModelWrapper::WordPiece(f.model))
        .with_normalizer(f.normalizer)
        .with_pre_tokenizer(f.pre_tokenizer)
        .with_post_processor(f.post_processor)
        .with_decoder(f.decoder)
        .with_truncation(f.truncation)
        .with_padding(f.padding)
        .build()
        .ok()?;
    let mut tokenizer = Tokenizer::from(built);
    let added: Vec<AddedToken> = f.added_tokens.into_iter().map(|a| a.token).collect();
    tokenizer.add_tokens(&added);
    Some(tokenizer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small WordPiece tokenizer in the library's own file format.
    const SMALL: &str = r###"{"version":"1.0","truncation":null,"padding":null,
      "added_tokens":[{"id":0,"content":"[UNK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
      "normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},
      "pre_tokenizer":{"type":"BertPreTokenizer"},
      "post_processor":null,"decoder":{"type":"WordPiece","prefix":"##","cleanup":true},
      "model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,
        "vocab":{"[UNK]":0,"forest":1,"##s":2,"tree":3,"\"":4,"é":5}}}"###;

    #[test]
    fn a_wordpiece_file_reads_as_the_library_reads_it() {
        let short = wordpiece(SMALL).expect("a WordPiece file takes the short way");
        let library: Tokenizer = SMALL.parse().unwrap();
        assert_eq!(short.to_string(false).unwrap(), library.to_string(false).unwrap());
        for text in ["Forests tree", "\"é\" [UNK] unknown", "", "TREES"] {
            let (a, b) = (short.encode(text, false).unwrap(), library.encode(text, false).unwrap());
            assert_eq!(a.get_ids(), b.get_ids(), "{text}");
            assert_eq!(a.get_offsets(), b.get_offsets(), "{text}");
        }
    }

    #[test]
    fn the_real_models_file_reads_as_the_library_reads_it() {
        let Some(dir) = std::env::var_os("FOREST_EMBED_MODEL").filter(|d| !d.is_empty()) else {
            forest_testkit::skip("FOREST_EMBED_MODEL unset (bash ops/embed/install.sh)");
            return;
        };
        let path = std::path::Path::new(&dir).join("tokenizer.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed: serde_json::Result<WordPieceFile> = serde_json::from_str(&text);
        assert!(parsed.is_ok(), "{:?}", parsed.err());
        let short = wordpiece(&text).expect("the model's file takes the short way");
        let library = Tokenizer::from_file(&path).unwrap();
        assert_eq!(short.to_string(false).unwrap(), library.to_string(false).unwrap());
        let long_word = "x".repeat(150);
        let texts = [
            "Pager program similar to more",
            "The little ASGI library that shines.",
            "naïve café — Ünïcödé, 日本語のテキスト, emoji 🌲 and [CLS] [SEP] [MASK] [PAD] [UNK] literals",
            "snake_case CamelCase kebab-case 3.14 v2.0.1 user@example.com https://example.org/a?b=c",
            "\t tabs\tand\nnewlines\r\n and \u{0} nulls \u{200b} zero width",
            long_word.as_str(),
            "",
        ];
        for text in texts {
            for special in [false, true] {
                let (a, b) = (short.encode(text, special).unwrap(), library.encode(text, special).unwrap());
                assert_eq!(a.get_ids(), b.get_ids(), "{text}");
                assert_eq!(a.get_offsets(), b.get_offsets(), "{text}");
            }
        }
    }

    #[test]
    fn other_files_are_left_to_the_library() {
        let bpe = r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,
          "pre_tokenizer":null,"post_processor":null,"decoder":null,
          "model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,
            "end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,
            "vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}"#;
        assert!(wordpiece(bpe).is_none());
        assert!(wordpiece(&SMALL.replace("\"1.0\"", "\"2.0\"")).is_none());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tokenizer.json");
        std::fs::write(&p, bpe).unwrap();
        assert_eq!(load(&p).unwrap().get_vocab_size(false), 3);
        std::fs::write(&p, "{").unwrap();
        assert!(load(&p).is_err());
    }
}
