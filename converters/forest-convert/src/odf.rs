//! OpenDocument text (ODT, OTT, flat FODT) → Markdown with zip + quick-xml,
//! and the encryption checks shared by the office converters.
//!
//! In: the package's `content.xml` (+ `meta.xml` for the title), or the flat
//! XML file. Out: headings by `text:outline-level`, paragraphs, nested lists,
//! tables as pipe tables. An encrypted package becomes a stub node.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use crate::xml::{self, Node};
use crate::zipguard;
use forest_model::slug::title_from_stem;
use std::io::Write;
use std::path::Path;

/// The OpenDocument text converter.
pub(crate) struct OdfText;

/// A stub node for an encrypted document: the body says so, and so will the summary.
pub(crate) fn encrypted_stub(title: &str, what: &str) -> Conversion {
    let body = format!("# {title}\n\nThis {what} is encrypted (password-protected); its content cannot be read.\n");
    let meta = SourceMeta { stub: Some("encrypted".into()), ..SourceMeta::default() };
    Conversion::Markdown { title: title.to_string(), body, meta }
}

/// An OOXML file (docx, xlsx, pptx) saved with a password is an OLE compound
/// file holding an `EncryptedPackage` stream instead of a zip.
pub(crate) fn ooxml_encrypted(bytes: &[u8]) -> bool {
    const CFB: [u8; 8] = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
    if !bytes.starts_with(&CFB) {
        return false;
    }
    let needle: Vec<u8> = "EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes).collect();
    bytes.windows(needle.len()).any(|w| w == needle.as_slice())
}

/// True when an ODF package's manifest declares encrypted entries.
pub(crate) fn odf_encrypted(zip: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>, limits: &Limits) -> bool {
    match zipguard::read_entry(zip, "META-INF/manifest.xml", limits) {
        Ok(Some(m)) => String::from_utf8_lossy(&m).contains("encryption-data"),
        _ => false,
    }
}

/// Re-wrap a flat ODS (one XML file) as a zipped ODS calamine opens.
pub(crate) fn wrap_flat_ods(flat: &[u8]) -> Result<Vec<u8>, ConvertError> {
    let io = |e: zip::result::ZipError| ConvertError::Zip(format!("cannot re-wrap flat ODS: {e}"));
    let mut zw = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zw.start_file("mimetype", stored).map_err(io)?;
    zw.write_all(b"application/vnd.oasis.opendocument.spreadsheet")?;
    zw.start_file("content.xml", stored).map_err(io)?;
    zw.write_all(flat)?;
    Ok(zw.finish().map_err(io)?.into_inner())
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Inline text of an ODF paragraph-like element in document order.
pub(crate) fn inline_text(n: &Node, out: &mut String) {
    for c in &n.children {
        match c.name.as_str() {
            "#text" => out.push_str(&c.text),
            "text:s" => {
                let k = c.attr("text:c").and_then(|v| v.parse::<usize>().ok()).unwrap_or(1).min(64);
                out.push_str(&" ".repeat(k));
            }
            "text:tab" | "text:line-break" => out.push(' '),
            // Footnote bodies, annotations and change-tracking records are not running text.
            "text:note" | "office:annotation" | "text:tracked-changes" | "text:bookmark-ref" => {}
            "draw:frame" | "draw:text-box" | "draw:g" => {
                out.push(' ');
                inline_text(c, out);
                out.push(' ');
            }
            "text:p" | "text:h" => {
                out.push(' ');
                inline_text(c, out);
                out.push(' ');
            }
            _ => inline_text(c, out),
        }
    }
}

fn para(n: &Node) -> String {
    let mut s = String::new();
    inline_text(n, &mut s);
    collapse(&s)
}

/// Table element → pipe table (first row as header).
pub(crate) fn odf_table(t: &Node) -> Option<String> {
    fn rows<'a>(n: &'a Node, out: &mut Vec<&'a Node>) {
        for c in &n.children {
            match c.name.as_str() {
                "table:table-row" => out.push(c),
                "table:table-header-rows" | "table:table-rows" | "table:table-row-group" => rows(c, out),
                _ => {}
            }
        }
    }
    let mut trs = Vec::new();
    rows(t, &mut trs);
    let rows: Vec<Vec<String>> = trs
        .iter()
        .map(|r| {
            let mut cells = Vec::new();
            for c in r.children.iter().filter(|c| c.name == "table:table-cell" || c.name == "table:covered-table-cell")
            {
                let rep = c.attr("table:number-columns-repeated").and_then(|v| v.parse::<usize>().ok()).unwrap_or(1);
                let text = para(c);
                // Repeated empty cells pad a row to the sheet width: keep at most one.
                for _ in 0..if text.is_empty() { rep.min(1) } else { rep.min(64) } {
                    cells.push(text.clone());
                }
            }
            while cells.last().is_some_and(String::is_empty) {
                cells.pop();
            }
            cells
        })
        .filter(|r| r.iter().any(|c| !c.is_empty()))
        .collect();
    (!rows.is_empty()).then(|| crate::tabular::pipe_table(&rows))
}

fn list(n: &Node, depth: usize, lines: &mut Vec<String>) {
    for item in n.children.iter().filter(|c| c.name == "text:list-item" || c.name == "text:list-header") {
        let mut first = true;
        for c in &item.children {
            match c.name.as_str() {
                "text:list" => list(c, depth + 1, lines),
                "text:p" | "text:h" => {
                    let t = para(c);
                    if t.is_empty() {
                        continue;
                    }
                    let indent = "  ".repeat(depth);
                    lines.push(if first { format!("{indent}- {t}") } else { format!("{indent}  {t}") });
                    first = false;
                }
                _ => {}
            }
        }
    }
}

/// Render an `office:text`-like container into Markdown blocks; `h1` gets the
/// first level-1 heading.
pub(crate) fn blocks(n: &Node, out: &mut Vec<String>, h1: &mut Option<String>, depth: usize) {
    if depth > 64 {
        return;
    }
    for c in &n.children {
        match c.name.as_str() {
            "text:h" => {
                let t = para(c);
                if t.is_empty() {
                    continue;
                }
                let level = c.attr("text:outline-level").and_then(|v| v.parse::<usize>().ok()).unwrap_or(1).clamp(1, 9);
                if level == 1 && h1.is_none() {
                    *h1 = Some(t.clone());
                }
                out.push(format!("{} {t}", "#".repeat((level + 1).min(6))));
            }
            "text:p" => {
                let t = para(c);
                if !t.is_empty() {
                    out.push(t);
                }
            }
            "text:list" => {
                let mut lines = Vec::new();
                list(c, 0, &mut lines);
                if !lines.is_empty() {
                    out.push(lines.join("\n"));
                }
            }
            "table:table" => out.extend(odf_table(c)),
            "text:section" | "text:index-body" | "text:table-of-content" | "office:text" | "office:body" => {
                blocks(c, out, h1, depth + 1)
            }
            _ => {}
        }
    }
}

/// `dc:title` from a meta tree (zipped `meta.xml` or a flat document).
fn meta_title(root: &Node) -> Option<String> {
    fn find<'a>(n: &'a Node, name: &str, depth: usize) -> Option<&'a Node> {
        if depth > 4 {
            return None;
        }
        n.children.iter().find(|c| c.name == name).or_else(|| n.children.iter().find_map(|c| find(c, name, depth + 1)))
    }
    let t = find(root, "dc:title", 0)?;
    let mut s = String::new();
    inline_text(t, &mut s);
    let s = collapse(&s);
    (!s.is_empty()).then_some(s)
}

/// The `office:body` of a content or flat document tree.
pub(crate) fn body_of(root: &Node) -> Option<&Node> {
    let doc = root.children.iter().find(|c| c.name == "office:document-content" || c.name == "office:document")?;
    doc.child("office:body")
}

impl Converter for OdfText {
    fn name(&self) -> &str {
        "OdfText"
    }
    fn extensions(&self) -> Vec<String> {
        [".odt", ".ott", ".fodt"].map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, limits: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let stem_title = title_from_stem(&stem(path));
        let bytes = std::fs::read(path)?;
        let (content, meta) = if bytes.starts_with(b"PK") {
            let mut zip = zipguard::open_checked(&bytes, limits)?;
            if odf_encrypted(&mut zip, limits) {
                return Ok(encrypted_stub(&stem_title, "document"));
            }
            let content = zipguard::read_entry(&mut zip, "content.xml", limits)?
                .ok_or_else(|| schema(format!("not an OpenDocument file (no content.xml): {name}")))?;
            let meta = zipguard::read_entry(&mut zip, "meta.xml", limits)?;
            (content, meta)
        } else {
            (bytes, None)
        };
        let tree = xml::parse_mixed(&content, |_| true)?;
        let text = body_of(&tree)
            .and_then(|b| b.child("office:text"))
            .ok_or_else(|| schema(format!("not an OpenDocument text: {name}")))?;
        let title_meta = match &meta {
            Some(m) => meta_title(&xml::parse_mixed(m, |_| true)?),
            None => meta_title(&tree),
        };
        let mut out = Vec::new();
        let mut h1 = None;
        blocks(text, &mut out, &mut h1, 0);
        let title = title_meta.or(h1).unwrap_or(stem_title);
        let body = if out.is_empty() { format!("# {title}\n") } else { format!("# {title}\n\n{}\n", out.join("\n\n")) };
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_lists_tables_in_order() {
        let x = br#"<office:document-content><office:body><office:text>
<text:h text:outline-level="1">Report</text:h>
<text:p>Hello <text:span>big</text:span><text:s text:c="2"/>world<text:note><text:p>fn</text:p></text:note>.</text:p>
<text:list><text:list-item><text:p>one</text:p><text:list><text:list-item><text:p>inner</text:p></text:list-item></text:list></text:list-item></text:list>
<table:table><table:table-row><table:table-cell><text:p>a|b</text:p></table:table-cell><table:table-cell table:number-columns-repeated="3"/></table:table-row>
<table:table-row><table:table-cell><text:p>1</text:p></table:table-cell><table:table-cell><text:p>2</text:p></table:table-cell></table:table-row></table:table>
</office:text></office:body></office:document-content>"#;
        let tree = xml::parse_mixed(x, |_| true).unwrap();
        let mut out = Vec::new();
        let mut h1 = None;
        blocks(body_of(&tree).unwrap().child("office:text").unwrap(), &mut out, &mut h1, 0);
        assert_eq!(h1.as_deref(), Some("Report"));
        assert_eq!(
            out.join("\n\n"),
            "## Report\n\nHello big world.\n\n- one\n  - inner\n\n| a\\|b |  |\n| --- | --- |\n| 1 | 2 |"
        );
    }

    #[test]
    fn detects_encrypted_ooxml() {
        let mut b = vec![0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0];
        b.extend("EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes));
        assert!(ooxml_encrypted(&b));
        assert!(!ooxml_encrypted(b"PK\x03\x04"));
    }
}
