//! PDF → Markdown via pdf-extract's interpreter (glyphs to text in
//! [`pdftext`](crate::pdftext): word breaks per glyph, `%` comments and the
//! `'`/`"` operators normalised first), with lopdf's text extraction as the
//! second path for pages pdf-extract cannot read (or panics on: each page is
//! caught).
//!
//! Structure: the outline (bookmarks, [`pdfoutline`](crate::pdfoutline))
//! becomes headings at its levels; without one, long documents are grouped
//! into sections of ten pages. Running headers/footers leave the page bodies
//! and come back once at the end of each section (their words stay
//! searchable, a summary never starts with them); bare page numbers are
//! dropped. Encrypted PDFs that do not open with the empty password become
//! stubs saying so.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::ConvertError;
use crate::pdfguard;
use crate::pdfoutline::{decode_pdf_string, outline};
use crate::pdftext::{dehyphenate, normalise_content, TextDev};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use forest_model::slug::title_from_stem;
use pdf_extract::{Document, Object};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// The PDF converter.
pub(crate) struct Pdf;

/// `/Info /Title` when present and non-empty.
fn info_title(doc: &Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let (_, info) = doc.dereference(info).ok()?;
    let dict = info.as_dict().ok()?;
    let title = dict.get(b"Title").ok()?;
    let (_, title) = doc.dereference(title).ok()?;
    match title {
        Object::String(bytes, _) => usable_title(&decode_pdf_string(bytes)),
        _ => None,
    }
}

/// A title as a reader would want it, or `None` for a placeholder: the
/// word processor's "Microsoft Word - report.docx" becomes "report",
/// "Untitled" and tables of contents are no titles.
fn usable_title(raw: &str) -> Option<String> {
    let t = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = t.strip_prefix("Microsoft Word - ").unwrap_or(&t);
    let t = [".docx", ".doc", ".odt", ".rtf"].iter().find_map(|e| t.strip_suffix(e)).unwrap_or(t);
    let t = t.trim_start_matches(|c: char| !c.is_alphanumeric() && c != '(' && c != '"' && c != '‘').trim();
    let placeholder = matches!(
        t.to_lowercase().as_str(),
        "" | "untitled" | "untitled document" | "contents" | "table of contents" | "toc" | "index"
    );
    (!placeholder).then(|| t.to_string())
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

/// Tidy extracted page text: ligatures expanded, line ends trimmed, words
/// hyphenated across line ends joined, at most one blank line in a row.
fn tidy(text: &str) -> String {
    let text = expand_ligatures(text);
    let mut out: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(if line.trim().is_empty() { String::new() } else { line.to_string() });
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    dehyphenate(&mut out);
    out.join("\n")
}

fn no_text(title: &str, reason: &str, stub: &str, warnings: &mut Vec<String>) -> Conversion {
    warnings.push(format!("no extractable text: {reason}"));
    let body = format!("# {title}\n\nNo extractable text: {reason}.\n");
    let meta = SourceMeta { stub: Some(stub.into()), ..SourceMeta::default() };
    Conversion::Markdown { title: title.to_string(), body, meta }
}

/// Text of one page: pdf-extract first (layout-aware spacing); when it fails
/// or panics, lopdf's own content-stream text extraction. Also whether the
/// first path worked, and the page's title line (largest type) if any.
fn page_text(doc: &Document, n: u32) -> (String, bool, Option<String>) {
    let primary = catch_unwind(AssertUnwindSafe(|| {
        let mut dev = TextDev::default();
        pdf_extract::output_doc_page(doc, &mut dev, n).map(|_| {
            let title = dev.title_line();
            (dev.text, title)
        })
    }));
    let primary_ok = matches!(primary, Ok(Ok(_)));
    if let Ok(Ok((s, title))) = primary {
        if !s.trim().is_empty() {
            return (s, true, title);
        }
    }
    let second = catch_unwind(AssertUnwindSafe(|| doc.extract_text(&[n])));
    match second {
        Ok(Ok(s)) => (s, primary_ok, None),
        _ => (String::new(), primary_ok, None),
    }
}

/// Title when the metadata has none: the first page's title line, else the
/// first outline entry that is not a table of contents.
fn derived_title(first_page_title: Option<String>, toc: &[(usize, String, u32)]) -> Option<String> {
    first_page_title
        .and_then(|t| usable_title(&expand_ligatures(&t)))
        .or_else(|| toc.iter().find_map(|e| usable_title(&e.1)))
}

/// Normalised form of a running header/footer line (page numbers vary).
/// A digit run is one `#`, so "Page 9" and "Page 10" share a key.
fn furniture_key(line: &str) -> String {
    let mut key = String::with_capacity(line.len());
    for c in line.trim().chars() {
        if !c.is_ascii_digit() {
            key.push(c);
        } else if !key.ends_with('#') {
            key.push('#');
        }
    }
    key
}

/// One page: its body text and the running headers/footers taken out of it.
#[derive(Debug, Clone, PartialEq)]
struct Page {
    n: u32,
    text: String,
    furniture: Vec<String>,
}

/// Take running headers and footers (first/last lines repeated on many
/// pages) out of the page bodies, and drop bare page numbers. The headers
/// and footers are returned per page so a section can keep them once.
fn strip_running_lines(pages: Vec<(u32, String)>) -> Vec<Page> {
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
    for (_, p) in &pages {
        for k in edge(p) {
            *counts.entry(k).or_default() += 1;
        }
    }
    let threshold = (pages.len() / 2).max(3);
    pages
        .into_iter()
        .map(|(n, p)| {
            let keys = edge(&p);
            let (mut kept, mut furniture) = (Vec::new(), Vec::new());
            for l in p.lines() {
                let t = l.trim();
                let page_no = !t.is_empty() && t.len() <= 4 && t.chars().all(|c| c.is_ascii_digit());
                let k = furniture_key(l);
                if page_no {
                    continue;
                }
                if !t.is_empty() && keys.contains(&k) && counts.get(&k).copied().unwrap_or(0) >= threshold {
                    furniture.push(t.to_string());
                } else {
                    kept.push(l);
                }
            }
            Page { n, text: kept.join("\n").trim_matches('\n').to_string(), furniture }
        })
        .collect()
}

/// Pages per section when the PDF has no outline.
const PAGES_PER_SECTION: usize = 10;

/// Running headers/footers of a section, each kept once, in first-seen order.
#[derive(Default)]
struct Furniture {
    lines: Vec<String>,
    keys: std::collections::HashSet<String>,
}

impl Furniture {
    fn add(&mut self, page: &Page) {
        for l in &page.furniture {
            if self.keys.insert(furniture_key(l)) {
                self.lines.push(l.clone());
            }
        }
    }
    /// Close a section: its headers/footers as one paragraph at its end
    /// (never before the body, so a summary starts at real text).
    fn flush(&mut self, out: &mut Vec<String>) {
        if !self.lines.is_empty() {
            out.push(std::mem::take(&mut self.lines).join("\n"));
        }
        self.keys.clear();
    }
}

/// Lay out page texts under the outline's headings, or in groups of pages;
/// each section ends with its running headers/footers, once.
fn sections(pages: &[Page], toc: &[(usize, String, u32)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut furniture = Furniture::default();
    if toc.is_empty() {
        let groups: Vec<&[Page]> =
            if pages.len() <= PAGES_PER_SECTION { vec![pages] } else { pages.chunks(PAGES_PER_SECTION).collect() };
        for chunk in groups {
            let body: Vec<&str> = chunk.iter().map(|p| p.text.as_str()).filter(|t| !t.is_empty()).collect();
            chunk.iter().for_each(|p| furniture.add(p));
            if body.is_empty() && furniture.lines.is_empty() {
                continue;
            }
            if pages.len() > PAGES_PER_SECTION {
                let (a, b) = (chunk[0].n, chunk[chunk.len() - 1].n);
                out.push(format!("## Pages {a}–{b}"));
            }
            out.extend(body.iter().map(|t| t.to_string()));
            furniture.flush(&mut out);
        }
        return out;
    }
    let mut entries = toc.to_vec();
    entries.sort_by_key(|e| e.2);
    let mut ei = 0;
    for page in pages {
        while ei < entries.len() && entries[ei].2 <= page.n {
            furniture.flush(&mut out);
            let (level, title, _) = &entries[ei];
            out.push(format!("{} {title}", "#".repeat((level + 1).min(6))));
            ei += 1;
        }
        if !page.text.is_empty() {
            out.push(page.text.clone());
        }
        furniture.add(page);
    }
    furniture.flush(&mut out);
    out
}

impl Converter for Pdf {
    fn name(&self) -> &str {
        "Pdf"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".pdf".into()]
    }
    fn version(&self) -> u32 {
        4
    }
    fn convert(&self, path: &Path, limits: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let bytes = std::fs::read(path)?;
        let mut doc = pdfguard::load(&bytes, &name, limits)?;
        drop(bytes);
        let stem_title = title_from_stem(&stem(path));
        if doc.is_encrypted() && doc.decrypt("").is_err() {
            let body =
                format!("# {stem_title}\n\nThis PDF is encrypted (password-protected); its text cannot be read.\n");
            let meta = SourceMeta { stub: Some("encrypted".into()), ..SourceMeta::default() };
            return Ok(Conversion::Markdown { title: stem_title, body, meta });
        }
        normalise_content(&mut doc);
        let page_ids = doc.get_pages();
        let numbers: Vec<u32> = page_ids.keys().copied().collect();
        let mut failed = 0usize;
        let mut first_title: Option<Option<String>> = None;
        let texts: Vec<String> = numbers
            .iter()
            .map(|n| {
                let size = pdfguard::page_content_bytes(&doc, page_ids[n]);
                if size > limits.max_page_content_bytes {
                    let max = limits.max_page_content_bytes;
                    warnings.push(format!(
                        "page {n} left out: its content inflates to {size} bytes, over the limit of {max}"
                    ));
                    return String::new();
                }
                let (t, primary_ok, title) = page_text(&doc, *n);
                if !primary_ok {
                    failed += 1;
                }
                // The title line of the first page that has text.
                if first_title.is_none() && !t.trim().is_empty() {
                    first_title = Some(title);
                }
                tidy(&t)
            })
            .collect();
        let toc = outline(&doc);
        let title = info_title(&doc).or_else(|| derived_title(first_title.flatten(), &toc)).unwrap_or(stem_title);
        if failed > 0 {
            warnings.push(format!("{failed} of {} page(s) read by the fallback extractor (lopdf)", numbers.len()));
        }
        if texts.iter().all(|t| t.trim().is_empty()) {
            let reason =
                if numbers.is_empty() { "the PDF has no pages" } else { "no text layer (scanned or image-only PDF)" };
            return Ok(no_text(&title, reason, "no text layer", warnings));
        }
        let pages = strip_running_lines(numbers.into_iter().zip(texts).collect());
        let body = format!("# {title}\n\n{}\n", sections(&pages, &toc).join("\n\n"));
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_from_the_first_page_else_the_outline() {
        let toc = vec![(1, "Contents".to_string(), 1), (1, "Getting started".to_string(), 2)];
        assert_eq!(derived_title(Some("The ﬁrst Report".into()), &toc).as_deref(), Some("The first Report"));
        assert_eq!(derived_title(None, &toc).as_deref(), Some("Getting started"));
        assert_eq!(derived_title(None, &[]), None);
        assert_eq!(derived_title(Some("Contents".into()), &toc).as_deref(), Some("Getting started"));
        assert_eq!(usable_title("Microsoft Word - Q3 report.docx").as_deref(), Some("Q3 report"));
        assert_eq!(usable_title("- Text und Bedeutung").as_deref(), Some("Text und Bedeutung"));
        assert_eq!(usable_title(" Untitled "), None);
    }

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("\n\n a  \n\n\n\nb\n\n"), " a\n\nb");
        assert_eq!(tidy("a ﬁle, ﬄuent"), "a file, ffluent");
    }

    fn page(n: u32, text: &str, furniture: &[&str]) -> Page {
        Page { n, text: text.to_string(), furniture: furniture.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn outline_headings_and_page_groups() {
        let pages: Vec<Page> = (1..=3).map(|n| page(n, &format!("text {n}"), &[])).collect();
        let toc = vec![(1, "Intro".to_string(), 1), (2, "Detail".to_string(), 2), (1, "End".to_string(), 3)];
        assert_eq!(sections(&pages, &toc), vec!["## Intro", "text 1", "### Detail", "text 2", "## End", "text 3"]);
        let many: Vec<Page> = (1..=12).map(|n| page(n, &format!("p{n}"), &[])).collect();
        let s = sections(&many, &[]);
        assert_eq!(s.len(), 14);
        assert_eq!(s[11..], ["## Pages 11–12", "p11", "p12"]);
    }

    #[test]
    fn running_headers_leave_the_body_and_come_back_once_per_section() {
        let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
        let pages: Vec<(u32, String)> =
            words.iter().enumerate().map(|(n, w)| (n as u32 + 1, format!("ACME Manual {n}\n{w} text\n{n}"))).collect();
        let pages = strip_running_lines(pages);
        assert_eq!(pages[2], page(3, "gamma text", &["ACME Manual 2"]));
        assert_eq!(
            furniture_key("GNU Bash 5.2 2022 September 19 10"),
            furniture_key("GNU Bash 5.2 2022 September 19 9")
        );
        let toc = vec![(1, "One".to_string(), 1), (1, "Two".to_string(), 4)];
        let s = sections(&pages, &toc);
        assert_eq!(s[..5], ["## One", "alpha text", "beta text", "gamma text", "ACME Manual 0"]);
        assert_eq!(s[5..], ["## Two", "delta text", "epsilon text", "zeta text", "ACME Manual 3"]);
    }
}
