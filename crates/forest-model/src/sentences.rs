//! Sentences of a text: split after `.`, `!`, `?` followed by whitespace,
//! except after an initial or a common abbreviation. Pure; used by the
//! scent contract, the Debian copyright summary and the Curator's input.

use once_cell::sync::Lazy;
use regex::Regex;

static SENTENCE_END: Lazy<Regex> = Lazy::new(|| Regex::new(r"[.!?]\s+").expect("static regex"));

/// Abbreviations after which a full stop does not end a sentence.
const ABBREVIATIONS: [&str; 6] = ["e.g", "i.e", "cf", "vs", "mr", "dr"];

/// True when the full stop at `dot` closes an initial ("Steve M. Robbins")
/// or an abbreviation ("e.g. zlib"), not a sentence.
fn is_abbreviation(text: &str, dot: usize) -> bool {
    if text.as_bytes().get(dot) != Some(&b'.') {
        return false;
    }
    let word = text[..dot].rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    let initial = word.len() == 1 && word.chars().all(|c| c.is_ascii_uppercase());
    initial || ABBREVIATIONS.contains(&word.to_ascii_lowercase().as_str())
}

/// Split after `.`, `!`, `?` followed by whitespace (not after an initial
/// or an abbreviation such as "e.g."); pieces keep their punctuation and
/// are trimmed.
pub fn split_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    for m in SENTENCE_END.find_iter(text) {
        if is_abbreviation(text, m.start()) {
            continue;
        }
        let end = m.start() + 1;
        let s = text[start..end].trim();
        if !s.is_empty() {
            out.push(s.to_string());
        }
        start = m.end();
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}
