//! RTF → Markdown paragraphs with a control-word tokenizer (no maintained
//! RTF crate reads `\uN` escapes, code pages and ignorable destinations
//! together; the grammar needed for text is small).
//!
//! In: RTF bytes. Out: paragraphs (`\par`), the `\title` of the info group as
//! node title. Font/colour/style tables, pictures, objects and `{\*...}`
//! destinations are skipped.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use forest_model::slug::title_from_stem;
use std::path::Path;

/// The RTF converter.
pub(crate) struct Rtf;

/// Destinations whose content is not running text.
const SKIP: [&str; 16] = [
    "fonttbl",
    "colortbl",
    "stylesheet",
    "pict",
    "object",
    "header",
    "footer",
    "headerl",
    "headerr",
    "footerl",
    "footerr",
    "listtable",
    "listoverridetable",
    "rsidtbl",
    "generator",
    "xmlnstbl",
];

#[derive(Clone)]
struct Group {
    skip: bool,
    title: bool,
    uc: usize,
}

fn target<'a>(is_title: bool, title: &'a mut String, cur: &'a mut String) -> &'a mut String {
    if is_title {
        title
    } else {
        cur
    }
}

/// Extract (title, paragraphs) from RTF source.
pub(crate) fn rtf_text(src: &[u8]) -> (Option<String>, Vec<String>) {
    let mut stack = vec![Group { skip: false, title: false, uc: 1 }];
    let mut paras = Vec::new();
    let mut cur = String::new();
    let mut title = String::new();
    let mut pending_bytes: Vec<u8> = Vec::new();
    let mut skip_chars = 0usize;
    let mut i = 0;
    let flush_bytes = |pb: &mut Vec<u8>, out: &mut String| {
        if !pb.is_empty() {
            out.push_str(&encoding_rs::WINDOWS_1252.decode(pb).0);
            pb.clear();
        }
    };
    while i < src.len() {
        let top = stack.last().cloned().unwrap_or(Group { skip: false, title: false, uc: 1 });
        match src[i] {
            b'{' => {
                flush_bytes(&mut pending_bytes, target(top.title, &mut title, &mut cur));
                open_group(&mut stack, &top, src.get(i + 1..i + 3) == Some(b"\\*"));
                i += 1;
            }
            b'}' => {
                flush_bytes(&mut pending_bytes, target(top.title, &mut title, &mut cur));
                if stack.len() > 1 {
                    stack.pop();
                }
                i += 1;
            }
            b'\\' => {
                let c = src.get(i + 1).copied().unwrap_or(b' ');
                if c == b'\'' {
                    if let Some(b) = hex_byte(src, i) {
                        if skip_chars > 0 {
                            skip_chars -= 1;
                        } else if !top.skip {
                            pending_bytes.push(b);
                        }
                    }
                    i += 4;
                    continue;
                }
                flush_bytes(&mut pending_bytes, target(top.title, &mut title, &mut cur));
                if !c.is_ascii_alphabetic() {
                    if !top.skip && matches!(c, b'\n' | b'\r') {
                        paras.push(std::mem::take(&mut cur));
                    } else if let Some(ch) = escaped_char(c).filter(|_| !top.skip) {
                        target(top.title, &mut title, &mut cur).push(ch);
                    }
                    i += 2;
                    continue;
                }
                let (word, num, next) = control_word(src, i);
                i = next;
                if set_group_flag(&mut stack, word, num) {
                    continue;
                }
                match word {
                    "u" if !top.skip => {
                        let n = num.unwrap_or(0);
                        let n = if n < 0 { n + 65536 } else { n };
                        target(top.title, &mut title, &mut cur).push(char::from_u32(n as u32).unwrap_or('\u{fffd}'));
                        skip_chars = top.uc;
                    }
                    "par" | "line" | "sect" | "page" if !top.skip && !top.title => {
                        paras.push(std::mem::take(&mut cur));
                    }
                    "row" if !top.skip && !top.title => paras.push(std::mem::take(&mut cur)),
                    w if !top.skip => {
                        if let Some(ch) = symbol_of(w) {
                            target(top.title, &mut title, &mut cur).push(ch);
                        }
                    }
                    _ => {}
                }
            }
            b'\r' | b'\n' => i += 1,
            b => {
                if skip_chars > 0 {
                    skip_chars -= 1;
                } else if !top.skip {
                    pending_bytes.push(b);
                }
                i += 1;
            }
        }
    }
    flush_bytes(&mut pending_bytes, &mut cur);
    paras.push(cur);
    tidy(&title, paras)
}

/// Whitespace collapsed; empty paragraphs and an empty title dropped.
fn tidy(title: &str, paras: Vec<String>) -> (Option<String>, Vec<String>) {
    let paras: Vec<String> = paras
        .into_iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    ((!title.is_empty()).then_some(title), paras)
}

/// A `{` opens a group that inherits its parent's state (at most 512
/// deep); `{\*` starts an ignorable destination.
fn open_group(stack: &mut Vec<Group>, top: &Group, ignorable: bool) {
    if stack.len() < 512 {
        stack.push(top.clone());
    }
    if ignorable {
        if let Some(g) = stack.last_mut() {
            g.skip = true;
        }
    }
}

/// The byte of a `\'hh` escape at `src[i]`.
fn hex_byte(src: &[u8], i: usize) -> Option<u8> {
    let hex = src.get(i + 2..i + 4).and_then(|h| std::str::from_utf8(h).ok());
    hex.and_then(|h| u8::from_str_radix(h, 16).ok())
}

/// The character a control symbol (`\` and one non-letter) stands for.
fn escaped_char(c: u8) -> Option<char> {
    match c {
        b'\\' | b'{' | b'}' => Some(c as char),
        b'~' => Some(' '),
        b'_' => Some('-'),
        _ => None,
    }
}

/// The control word whose backslash is `src[i]`: its letters, its numeric
/// parameter, and where the next token starts (a delimiting space is part
/// of the word).
fn control_word(src: &[u8], i: usize) -> (&str, Option<i64>, usize) {
    let ws = i + 1;
    let mut j = ws;
    while j < src.len() && src[j].is_ascii_alphabetic() {
        j += 1;
    }
    let word = std::str::from_utf8(&src[ws..j]).unwrap_or("");
    let ns = j;
    if j < src.len() && (src[j] == b'-' || src[j].is_ascii_digit()) {
        j += 1;
        while j < src.len() && src[j].is_ascii_digit() {
            j += 1;
        }
    }
    let num: Option<i64> = std::str::from_utf8(&src[ns..j]).ok().and_then(|s| s.parse().ok());
    if j < src.len() && src[j] == b' ' {
        j += 1;
    }
    (word, num, j)
}

/// Apply a control word that sets the current group's state (a skipped
/// destination, `\title`, `\ucN`); true for a skipped destination, whose
/// word has nothing more to say.
fn set_group_flag(stack: &mut [Group], word: &str, num: Option<i64>) -> bool {
    let Some(g) = stack.last_mut() else { return SKIP.contains(&word) };
    match word {
        w if SKIP.contains(&w) => {
            g.skip = true;
            return true;
        }
        "title" => g.title = true,
        "uc" => g.uc = num.unwrap_or(1).clamp(0, 8) as usize,
        _ => {}
    }
    false
}

/// The character a symbol control word stands for (`\tab`, `\emdash`, ...).
fn symbol_of(word: &str) -> Option<char> {
    Some(match word {
        "tab" | "cell" => ' ',
        "emdash" => '—',
        "endash" => '–',
        "lquote" => '‘',
        "rquote" => '’',
        "ldblquote" => '“',
        "rdblquote" => '”',
        "bullet" => '•',
        _ => return None,
    })
}

impl Converter for Rtf {
    fn name(&self) -> &str {
        "Rtf"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".rtf".into()]
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let bytes = std::fs::read(path)?;
        if !bytes.starts_with(b"{\\rtf") {
            return Err(schema(format!("not an RTF document: {}", file_name(path))));
        }
        let (title, paras) = rtf_text(&bytes);
        let title = title.unwrap_or_else(|| title_from_stem(&stem(path)));
        let body =
            if paras.is_empty() { format!("# {title}\n") } else { format!("# {title}\n\n{}\n", paras.join("\n\n")) };
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_unicode_and_skipped_groups() {
        let src = br"{\rtf1\ansi{\fonttbl{\f0 Times;}}{\info{\title My Memo}}{\*\generator x;}Hello \b world\b0 .\par caf\'e9 \u8364? done{\pict 0102}\par}";
        let (title, paras) = rtf_text(src);
        assert_eq!(title.as_deref(), Some("My Memo"));
        assert_eq!(paras, vec!["Hello world.", "café € done"]);
    }
}
