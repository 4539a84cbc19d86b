//! EPUB → Markdown: chapters in spine order, each rendered by the HTML converter.
//!
//! In: the zip package (`META-INF/container.xml` → OPF: title, manifest,
//! spine). Out: one Markdown node; chapter headings are demoted one level
//! under the book title.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use crate::xml::{self, Node};
use crate::{html, zipguard};
use forest_model::slug::title_from_stem;
use std::collections::HashMap;
use std::path::Path;

/// The EPUB converter.
pub(crate) struct Epub;

fn find<'a>(n: &'a Node, local: &str, out: &mut Vec<&'a Node>) {
    for c in &n.children {
        if c.name == local || c.name.rsplit(':').next() == Some(local) {
            out.push(c);
        }
        find(c, local, out);
    }
}

fn decode_href(h: &str) -> String {
    // Manifest hrefs are URLs: percent-decode the common escapes.
    let mut out = Vec::new();
    let b = h.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(v) = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|x| u8::from_str_radix(x, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Demote Markdown headings one level (the book title owns `#`).
fn demote(md: &str) -> String {
    let mut in_code = false;
    md.lines()
        .map(|l| {
            if l.starts_with("```") {
                in_code = !in_code;
            }
            if !in_code && l.starts_with('#') && !l.starts_with("######") {
                format!("#{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Converter for Epub {
    fn name(&self) -> &str {
        "Epub"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".epub".into()]
    }
    fn convert(&self, path: &Path, limits: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let bytes = std::fs::read(path)?;
        let mut zip = zipguard::open_checked(&bytes, limits)?;
        if zipguard::read_entry(&mut zip, "META-INF/encryption.xml", limits)?
            .is_some_and(|e| String::from_utf8_lossy(&e).contains("EncryptedData"))
        {
            return Ok(crate::odf::encrypted_stub(&title_from_stem(&stem(path)), "book"));
        }
        let container = zipguard::read_entry(&mut zip, "META-INF/container.xml", limits)?
            .ok_or_else(|| schema(format!("not an EPUB (no META-INF/container.xml): {name}")))?;
        let container = xml::parse(&container, |_| false)?;
        let mut roots = Vec::new();
        find(&container, "rootfile", &mut roots);
        let opf_path = roots
            .first()
            .and_then(|r| r.attr("full-path"))
            .ok_or_else(|| schema(format!("EPUB without a package document: {name}")))?
            .to_string();
        let opf = zipguard::read_entry(&mut zip, &opf_path, limits)?
            .ok_or_else(|| schema(format!("EPUB package document missing: {opf_path}")))?;
        let opf = xml::parse(&opf, |n| n.ends_with("title"))?;
        let base = opf_path.rsplit_once('/').map(|(d, _)| format!("{d}/")).unwrap_or_default();
        let mut titles = Vec::new();
        find(&opf, "title", &mut titles);
        let title = titles
            .iter()
            .map(|t| t.text.split_whitespace().collect::<Vec<_>>().join(" "))
            .find(|t| !t.is_empty())
            .unwrap_or_else(|| title_from_stem(&stem(path)));
        let mut items = Vec::new();
        find(&opf, "item", &mut items);
        let hrefs: HashMap<&str, &str> = items.iter().filter_map(|i| Some((i.attr("id")?, i.attr("href")?))).collect();
        let mut refs = Vec::new();
        find(&opf, "itemref", &mut refs);
        let mut chapters = Vec::new();
        let mut missing = 0usize;
        for r in refs {
            let Some(href) = r.attr("idref").and_then(|id| hrefs.get(id)) else { continue };
            let part = format!("{base}{}", decode_href(href));
            match zipguard::read_entry(&mut zip, &part, limits)? {
                Some(x) => {
                    let (_, md) = html::html_content(&String::from_utf8_lossy(&x));
                    if !md.trim().is_empty() {
                        chapters.push(demote(&md));
                    }
                }
                None => missing += 1,
            }
        }
        if missing > 0 {
            warnings.push(format!("{missing} spine item(s) missing from the package"));
        }
        let body = if chapters.is_empty() {
            format!("# {title}\n")
        } else {
            format!("# {title}\n\n{}\n", chapters.join("\n\n"))
        };
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demotes_headings_outside_code() {
        assert_eq!(demote("# A\ntext\n```\n# not\n```\n## B"), "## A\ntext\n```\n# not\n```\n### B");
        assert_eq!(decode_href("ch%201.xhtml"), "ch 1.xhtml");
    }
}
