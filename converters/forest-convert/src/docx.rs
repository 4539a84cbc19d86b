//! DOCX → Markdown with zip + quick-xml (dialect §3.5, G.2.1).

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use crate::xml::{self, Node};
use crate::zipguard;
use forest_model::slug::title_from_stem;
use std::collections::HashMap;
use std::path::Path;

/// The DOCX converter.
pub(crate) struct Docx;

/// Style id → style name from `word/styles.xml`.
fn style_names(styles: &Node) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if let Some(root) = styles.child("w:styles") {
        for s in root.children.iter().filter(|c| c.name == "w:style") {
            if let Some(id) = s.attr("w:styleId") {
                let name = s.child("w:name").and_then(|n| n.attr("w:val")).unwrap_or(id);
                out.insert(id.to_string(), name.to_string());
            }
        }
    }
    out
}

/// `Title` → 1, `Heading N` → N (matched on style id and on style name).
fn heading_level(id: &str, styles: &HashMap<String, String>) -> Option<usize> {
    let candidates = [Some(id), styles.get(id).map(String::as_str)];
    candidates.into_iter().flatten().find_map(|s| {
        let norm: String = s.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_lowercase();
        if norm == "title" {
            return Some(1);
        }
        norm.strip_prefix("heading").and_then(|n| n.parse::<usize>().ok()).filter(|n| (1..=9).contains(n))
    })
}

/// Concatenate all descendant `w:t` texts. `mc:Fallback` is skipped: it
/// repeats the `mc:Choice` text box (VML copy of the DrawingML one).
fn gather(node: &Node, out: &mut String) {
    for c in &node.children {
        match c.name.as_str() {
            "w:t" => out.push_str(&c.text),
            "mc:Fallback" => {}
            // Nested paragraphs (text boxes, table cells) stay separate words.
            "w:p" => {
                out.push(' ');
                gather(c, out);
                out.push(' ');
            }
            _ => gather(c, out),
        }
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn paragraph_text(p: &Node) -> String {
    let mut s = String::new();
    gather(p, &mut s);
    collapse(&s)
}

fn render_table(tbl: &Node) -> Option<String> {
    let mut rows: Vec<Vec<String>> = tbl
        .children
        .iter()
        .filter(|c| c.name == "w:tr")
        .map(|tr| {
            tr.children
                .iter()
                .filter(|c| c.name == "w:tc")
                .map(|tc| paragraph_text(tc).replace('|', "\\|"))
                .collect::<Vec<_>>()
        })
        .filter(|r| r.iter().any(|c| !c.is_empty()))
        .collect();
    let width = rows.iter().map(Vec::len).max()?;
    for r in &mut rows {
        r.resize(width, String::new());
    }
    let mut out = Vec::with_capacity(rows.len() + 1);
    for (i, r) in rows.iter().enumerate() {
        out.push(format!("| {} |", r.join(" | ")));
        if i == 0 {
            out.push(format!("|{}", " --- |".repeat(width)));
        }
    }
    Some(out.join("\n"))
}

/// Convert a `word/document.xml` (+ optional styles) into (title, body).
pub(crate) fn render_document(doc: &Node, styles: &HashMap<String, String>, stem_title: &str) -> (String, String) {
    let body = doc.child("w:document").and_then(|d| d.child("w:body"));
    let mut blocks = Vec::new();
    let mut title: Option<String> = None;
    for el in body.map(|b| b.children.as_slice()).unwrap_or(&[]) {
        match el.name.as_str() {
            "w:p" => {
                let text = paragraph_text(el);
                if text.is_empty() {
                    continue;
                }
                let style = el.child("w:pPr").and_then(|p| p.child("w:pStyle")).and_then(|s| s.attr("w:val"));
                match style.and_then(|s| heading_level(s, styles)) {
                    Some(level) => {
                        if level == 1 && title.is_none() {
                            title = Some(text.clone());
                        }
                        blocks.push(format!("{} {text}", "#".repeat((level + 1).min(6))));
                    }
                    None => blocks.push(text),
                }
            }
            "w:tbl" => blocks.extend(render_table(el)),
            _ => {}
        }
    }
    let title = title.unwrap_or_else(|| stem_title.to_string());
    let body =
        if blocks.is_empty() { format!("# {title}\n") } else { format!("# {title}\n\n{}\n", blocks.join("\n\n")) };
    (title, body)
}

impl Converter for Docx {
    fn name(&self) -> &str {
        "Docx"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".docx".into()]
    }
    fn convert(&self, path: &Path, limits: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let bytes = std::fs::read(path)?;
        let mut zip = zipguard::open_checked(&bytes, limits)?;
        let doc = zipguard::read_entry(&mut zip, "word/document.xml", limits)?
            .ok_or_else(|| schema(format!("not a DOCX document (no word/document.xml): {}", file_name(path))))?;
        let styles = match zipguard::read_entry(&mut zip, "word/styles.xml", limits)? {
            Some(s) => style_names(&xml::parse(&s, |_| false)?),
            None => HashMap::new(),
        };
        let tree = xml::parse(&doc, |n| n == "w:t")?;
        let (title, body) = render_document(&tree, &styles, &title_from_stem(&stem(path)));
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_tables_and_text_boxes() {
        let x = br#"<w:document><w:body>
<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Big </w:t></w:r><w:r><w:t>Doc</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="H2x"/></w:pPr><w:r><w:t>Part</w:t></w:r></w:p>
<w:p/>
<w:p><w:r><w:t>Intro</w:t></w:r><w:r><mc:AlternateContent><mc:Choice><w:txbxContent><w:p><w:r><w:t>boxed</w:t></w:r></w:p></w:txbxContent></mc:Choice><mc:Fallback><w:t>boxed</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>a|b</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p/></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>1</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
</w:body></w:document>"#;
        let tree = xml::parse(x, |n| n == "w:t").unwrap();
        let mut styles = HashMap::new();
        styles.insert("H2x".to_string(), "heading 2".to_string());
        let (title, body) = render_document(&tree, &styles, "stem");
        assert_eq!(title, "Big Doc");
        assert_eq!(
            body,
            "# Big Doc\n\n## Big Doc\n\n### Part\n\nIntro boxed\n\n| a\\|b | c |\n| --- | --- |\n| 1 |  |\n"
        );
    }

    #[test]
    fn empty_document_has_title_only() {
        let tree = xml::parse(b"<w:document><w:body/></w:document>", |_| false).unwrap();
        assert_eq!(render_document(&tree, &HashMap::new(), "my doc").1, "# my doc\n");
    }
}
