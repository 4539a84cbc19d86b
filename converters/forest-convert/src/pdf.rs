//! PDF → Markdown via pdf-extract (text per page under `## Page N`).
//!
//! pdf-extract can panic on malformed files; the registry's `catch_unwind`
//! turns that into an error line.

use crate::error::{schema, ConvertError};
use crate::registry::Converter;
use crate::text::{file_name, stem};
use crate::{Conversion, Limits, SourceMeta};
use forest_model::slug::title_from_stem;
use pdf_extract::{Document, Object, PlainTextOutput};
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

/// Tidy extracted page text: trim line ends, at most one blank line in a row.
fn tidy(text: &str) -> String {
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

fn no_text(title: &str, reason: &str, warnings: &mut Vec<String>) -> Conversion {
    warnings.push(format!("no extractable text: {reason}"));
    let body = format!("# {title}\n\nNo extractable text: {reason}.\n");
    Conversion::Markdown { title: title.to_string(), body, meta: SourceMeta::default() }
}

impl Converter for Pdf {
    fn name(&self) -> &str {
        "Pdf"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".pdf".into()]
    }
    fn convert(&self, path: &Path, _: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let bytes = std::fs::read(path)?;
        let mut doc = Document::load_mem(&bytes).map_err(|e| schema(format!("not a readable PDF: {name}: {e}")))?;
        let stem_title = title_from_stem(&stem(path));
        if doc.is_encrypted() && doc.decrypt("").is_err() {
            return Ok(no_text(&stem_title, "the PDF is encrypted", warnings));
        }
        let title = info_title(&doc).unwrap_or(stem_title);
        let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
        let mut sections = Vec::new();
        let mut failed = 0usize;
        for n in &pages {
            let mut s = String::new();
            let ok = pdf_extract::output_doc_page(&doc, &mut PlainTextOutput::new(&mut s), *n).is_ok();
            if !ok {
                failed += 1;
            }
            let text = tidy(&s);
            if !text.is_empty() {
                sections.push(format!("## Page {n}\n\n{text}"));
            }
        }
        if failed > 0 {
            warnings.push(format!("{failed} of {} page(s) could not be read", pages.len()));
        }
        if sections.is_empty() {
            let reason =
                if pages.is_empty() { "the PDF has no pages" } else { "no text layer (scanned or image-only PDF)" };
            return Ok(no_text(&title, reason, warnings));
        }
        let body = format!("# {title}\n\n{}\n", sections.join("\n\n"));
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("\n\n a  \n\n\n\nb\n\n"), " a\n\nb");
    }

    #[test]
    fn decodes_utf16_titles() {
        assert_eq!(decode_pdf_string(&[0xfe, 0xff, 0, b'H', 0, b'i']), "Hi");
        assert_eq!(decode_pdf_string(b"Plain"), "Plain");
    }
}
