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
                if stack.len() < 512 {
                    stack.push(top.clone());
                }
                if src.get(i + 1..i + 3) == Some(b"\\*") {
                    if let Some(g) = stack.last_mut() {
                        g.skip = true;
                    }
                }
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
                    let hex = src.get(i + 2..i + 4).and_then(|h| std::str::from_utf8(h).ok());
                    if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
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
                    if !top.skip {
                        match c {
                            b'\\' | b'{' | b'}' => target(top.title, &mut title, &mut cur).push(c as char),
                            b'~' => target(top.title, &mut title, &mut cur).push(' '),
                            b'_' => target(top.title, &mut title, &mut cur).push('-'),
                            b'\n' | b'\r' => {
                                paras.push(std::mem::take(&mut cur));
                            }
                            _ => {}
                        }
                    }
                    i += 2;
                    continue;
                }
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
                i = j;
                if SKIP.contains(&word) {
                    if let Some(g) = stack.last_mut() {
                        g.skip = true;
                    }
                    continue;
                }
                match word {
                    "title" => {
                        if let Some(g) = stack.last_mut() {
                            g.title = true;
                        }
                    }
                    "uc" => {
                        if let Some(g) = stack.last_mut() {
                            g.uc = num.unwrap_or(1).clamp(0, 8) as usize;
                        }
                    }
                    "u" if !top.skip => {
                        let n = num.unwrap_or(0);
                        let n = if n < 0 { n + 65536 } else { n };
                        target(top.title, &mut title, &mut cur).push(char::from_u32(n as u32).unwrap_or('\u{fffd}'));
                        skip_chars = top.uc;
                    }
                    "par" | "line" | "sect" | "page" if !top.skip && !top.title => {
                        paras.push(std::mem::take(&mut cur));
                    }
                    "tab" | "cell" if !top.skip => target(top.title, &mut title, &mut cur).push(' '),
                    "row" if !top.skip && !top.title => paras.push(std::mem::take(&mut cur)),
                    "emdash" if !top.skip => target(top.title, &mut title, &mut cur).push('—'),
                    "endash" if !top.skip => target(top.title, &mut title, &mut cur).push('–'),
                    "lquote" if !top.skip => target(top.title, &mut title, &mut cur).push('‘'),
                    "rquote" if !top.skip => target(top.title, &mut title, &mut cur).push('’'),
                    "ldblquote" if !top.skip => target(top.title, &mut title, &mut cur).push('“'),
                    "rdblquote" if !top.skip => target(top.title, &mut title, &mut cur).push('”'),
                    "bullet" if !top.skip => target(top.title, &mut title, &mut cur).push('•'),
                    "info" => {}
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
    let paras: Vec<String> = paras
        .into_iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    ((!title.is_empty()).then_some(title), paras)
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
