//! PDF → Markdown via pdf-extract, with lopdf's text extraction as the second
//! path for pages pdf-extract cannot read (or panics on: each page is caught).
//!
//! Structure: the outline (bookmarks) becomes headings at its levels; without
//! one, long documents are grouped into sections of ten pages. Running
//! headers/footers and bare page numbers are dropped. Encrypted PDFs that do
//! not open with the empty password become stubs saying so.

use crate::error::{schema, ConvertError};
use crate::registry::Converter;
use crate::text::{file_name, stem};
use crate::{Conversion, Limits, SourceMeta};
use forest_model::slug::title_from_stem;
use pdf_extract::{Document, Object, PlainTextOutput};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// The PDF converter.
pub(crate) struct Pdf;

/// Decode a PDF text string: UTF-16BE with BOM, else byte-per-char.
fn decode_pdf_string(b: &[u8]) -> String {
    if let Some(rest) = b.strip_prefix(&[0xfe, 0xff]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        String::from_utf16_lossy(&units)
    } else if let Ok(s) = std::str::from_utf8(b) {
        s.to_string()
    } else {
        b.iter().map(|&c| char::from(c)).collect()
    }
}

/// `/Info /Title` when present and non-empty.
fn info_title(doc: &Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let (_, info) = doc.dereference(info).ok()?;
    let dict = info.as_dict().ok()?;
    let title = dict.get(b"Title").ok()?;
    let (_, title) = doc.dereference(title).ok()?;
    match title {
        Object::String(bytes, _) => {
            let t = decode_pdf_string(bytes).split_whitespace().collect::<Vec<_>>().join(" ");
            (!t.is_empty()).then_some(t)
        }
        _ => None,
    }
}

/// Expand typographic ligatures (TeX fonts emit `ﬁ` for "fi"), as pdftotext does,
/// so words are searchable.
fn expand_ligatures(text: &str) -> std::borrow::Cow<'_, str> {
    const LIGS: [(char, &str); 7] =
        [('ﬀ', "ff"), ('ﬁ', "fi"), ('ﬂ', "fl"), ('ﬃ', "ffi"), ('ﬄ', "ffl"), ('ﬅ', "st"), ('ﬆ', "st")];
    if !text.chars().any(|c| ('\u{fb00}'..='\u{fb06}').contains(&c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match LIGS.iter().find(|(l, _)| *l == c) {
            Some((_, r)) => out.push_str(r),
            None => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Tidy extracted page text: ligatures expanded, line ends trimmed, at most
/// one blank line in a row.
fn tidy(text: &str) -> String {
    let text = expand_ligatures(text);
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(if line.trim().is_empty() { "" } else { line });
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

fn no_text(title: &str, reason: &str, stub: &str, warnings: &mut Vec<String>) -> Conversion {
    warnings.push(format!("no extractable text: {reason}"));
    let body = format!("# {title}\n\nNo extractable text: {reason}.\n");
    let meta = SourceMeta { stub: Some(stub.into()), ..SourceMeta::default() };
    Conversion::Markdown { title: title.to_string(), body, meta }
}

/// Text of one page: pdf-extract first (layout-aware spacing); when it fails
/// or panics, lopdf's own content-stream text extraction.
fn page_text(doc: &Document, n: u32) -> (String, bool) {
    let primary = catch_unwind(AssertUnwindSafe(|| {
        let mut s = String::new();
        pdf_extract::output_doc_page(doc, &mut PlainTextOutput::new(&mut s), n).map(|_| s)
    }));
    let primary_ok = matches!(primary, Ok(Ok(_)));
    if let Ok(Ok(s)) = primary {
        if !s.trim().is_empty() {
            return (s, true);
        }
    }
    let second = catch_unwind(AssertUnwindSafe(|| doc.extract_text(&[n])));
    match second {
        Ok(Ok(s)) => (s, primary_ok),
        _ => (String::new(), primary_ok),
    }
}

/// Normalised form of a running header/footer line (page numbers vary).
fn furniture_key(line: &str) -> String {
    line.trim().chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect()
}

/// Drop running headers and footers: first/last lines repeated on many pages,
/// and bare page numbers.
fn strip_running_lines(pages: &mut [String]) {
    use std::collections::HashMap;
    let edge = |p: &str| -> Vec<String> {
        let lines: Vec<&str> = p.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut v: Vec<String> = lines.iter().take(2).map(|l| furniture_key(l)).collect();
        v.extend(lines.iter().rev().take(2).map(|l| furniture_key(l)));
        v.sort();
        v.dedup();
        v
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for p in pages.iter() {
        for k in edge(p) {
            *counts.entry(k).or_default() += 1;
        }
    }
    let threshold = (pages.len() / 2).max(3);
    for p in pages.iter_mut() {
        let keys = edge(p);
        let kept: Vec<&str> = p
            .lines()
            .filter(|l| {
                let k = furniture_key(l);
                let t = l.trim();
                let page_no = !t.is_empty() && t.len() <= 4 && t.chars().all(|c| c.is_ascii_digit());
                !(page_no || (keys.contains(&k) && counts.get(&k).copied().unwrap_or(0) >= threshold && !t.is_empty()))
            })
            .collect();
        *p = kept.join("\n");
    }
}

/// Pages per section when the PDF has no outline.
const PAGES_PER_SECTION: usize = 10;

/// Lay out page texts under the outline's headings, or in groups of pages.
fn sections(pages: &[(u32, String)], toc: &[(usize, String, u32)]) -> Vec<String> {
    let mut out = Vec::new();
    if toc.is_empty() {
        let texts: Vec<&(u32, String)> = pages.iter().filter(|(_, t)| !t.is_empty()).collect();
        if pages.len() <= PAGES_PER_SECTION {
            out.extend(texts.iter().map(|(_, t)| t.clone()));
            return out;
        }
        for chunk in pages.chunks(PAGES_PER_SECTION) {
            let body: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).filter(|t| !t.is_empty()).collect();
            if body.is_empty() {
                continue;
            }
            let (a, b) = (chunk[0].0, chunk[chunk.len() - 1].0);
            out.push(format!("## Pages {a}–{b}\n\n{}", body.join("\n\n")));
        }
        return out;
    }
    let mut entries = toc.to_vec();
    entries.sort_by_key(|e| e.2);
    let mut ei = 0;
    for (n, text) in pages {
        while ei < entries.len() && entries[ei].2 <= *n {
            let (level, title, _) = &entries[ei];
            out.push(format!("{} {title}", "#".repeat((level + 1).min(6))));
            ei += 1;
        }
        if !text.is_empty() {
            out.push(text.clone());
        }
    }
    out
}

/// Outline entries as (level, title, page); empty when there is none.
fn outline(doc: &Document) -> Vec<(usize, String, u32)> {
    let toc = catch_unwind(AssertUnwindSafe(|| doc.get_toc()));
    match toc {
        Ok(Ok(t)) => t
            .toc
            .into_iter()
            .map(|e| (e.level.max(1), e.title.split_whitespace().collect::<Vec<_>>().join(" "), e.page as u32))
            .filter(|e| !e.1.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

impl Converter for Pdf {
    fn name(&self) -> &str {
        "Pdf"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".pdf".into()]
    }
    fn version(&self) -> u32 {
        2
    }
    fn convert(&self, path: &Path, _: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let bytes = std::fs::read(path)?;
        let mut doc = Document::load_mem(&bytes).map_err(|e| schema(format!("not a readable PDF: {name}: {e}")))?;
        let stem_title = title_from_stem(&stem(path));
        if doc.is_encrypted() && doc.decrypt("").is_err() {
            let body =
                format!("# {stem_title}\n\nThis PDF is encrypted (password-protected); its text cannot be read.\n");
            let meta = SourceMeta { stub: Some("encrypted".into()), ..SourceMeta::default() };
            return Ok(Conversion::Markdown { title: stem_title, body, meta });
        }
        let title = info_title(&doc).unwrap_or(stem_title);
        let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
        let mut failed = 0usize;
        let mut texts: Vec<String> = numbers
            .iter()
            .map(|n| {
                let (t, primary_ok) = page_text(&doc, *n);
                if !primary_ok {
                    failed += 1;
                }
                tidy(&t)
            })
            .collect();
        if failed > 0 {
            warnings.push(format!("{failed} of {} page(s) read by the fallback extractor (lopdf)", numbers.len()));
        }
        if texts.iter().all(|t| t.trim().is_empty()) {
            let reason =
                if numbers.is_empty() { "the PDF has no pages" } else { "no text layer (scanned or image-only PDF)" };
            return Ok(no_text(&title, reason, "no text layer", warnings));
        }
        strip_running_lines(&mut texts);
        let pages: Vec<(u32, String)> = numbers.into_iter().zip(texts).collect();
        let toc = outline(&doc);
        let body = format!("# {title}\n\n{}\n", sections(&pages, &toc).join("\n\n"));
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("\n\n a  \n\n\n\nb\n\n"), " a\n\nb");
        assert_eq!(tidy("a ﬁle, ﬄuent"), "a file, ffluent");
    }

    #[test]
    fn outline_headings_and_page_groups() {
        let pages: Vec<(u32, String)> = (1..=3).map(|n| (n, format!("text {n}"))).collect();
        let toc = vec![(1, "Intro".to_string(), 1), (2, "Detail".to_string(), 2), (1, "End".to_string(), 3)];
        assert_eq!(sections(&pages, &toc), vec!["## Intro", "text 1", "### Detail", "text 2", "## End", "text 3"]);
        let many: Vec<(u32, String)> = (1..=12).map(|n| (n, format!("p{n}"))).collect();
        let s = sections(&many, &[]);
        assert_eq!(s.len(), 2);
        assert!(s[1].starts_with("## Pages 11–12\n\np11"));
    }

    #[test]
    fn running_headers_and_page_numbers_go() {
        let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
        let mut pages: Vec<String> =
            words.iter().enumerate().map(|(n, w)| format!("ACME Manual\n{w} text\n{n}")).collect();
        strip_running_lines(&mut pages);
        assert_eq!(pages[2], "gamma text");
    }

    #[test]
    fn decodes_utf16_titles() {
        assert_eq!(decode_pdf_string(&[0xfe, 0xff, 0, b'H', 0, b'i']), "Hi");
        assert_eq!(decode_pdf_string(b"Plain"), "Plain");
    }
}
