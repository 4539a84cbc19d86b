//! Slide decks (PPTX, ODP) → Markdown: one `##` section per slide titled by
//! the slide title, its text and tables, then its speaker notes.
//!
//! In: the zip package (slide order from `presentation.xml` + relationships,
//! or `draw:page` order). Out: one Markdown node. Encrypted decks are stubs.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::odf::{self, encrypted_stub};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use crate::xml::{self, Node};
use crate::zipguard;
use forest_model::slug::title_from_stem;
use std::collections::HashMap;
use std::io::Cursor;
use std::path::Path;
use zip::ZipArchive;

/// The slide-deck converter.
pub(crate) struct Slides;

/// One slide's pieces.
#[derive(Debug, Default)]
struct Slide {
    title: Option<String>,
    blocks: Vec<String>,
    notes: Vec<String>,
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn descendants<'a>(n: &'a Node, name: &str, out: &mut Vec<&'a Node>) {
    for c in &n.children {
        if c.name == name {
            out.push(c);
        } else {
            descendants(c, name, out);
        }
    }
}

/// Text of a DrawingML paragraph (`a:p`): its runs' `a:t`.
fn a_para(p: &Node) -> String {
    let mut ts = Vec::new();
    descendants(p, "a:t", &mut ts);
    collapse(&ts.iter().map(|t| t.text.as_str()).collect::<String>())
}

fn a_paras(n: &Node) -> Vec<String> {
    let mut ps = Vec::new();
    descendants(n, "a:p", &mut ps);
    ps.into_iter().map(a_para).filter(|t| !t.is_empty()).collect()
}

fn placeholder(sp: &Node) -> Option<&str> {
    let nv = sp.child("p:nvSpPr")?.child("p:nvPr")?.child("p:ph")?;
    Some(nv.attr("type").unwrap_or("body"))
}

fn pptx_table(tbl: &Node) -> Option<String> {
    let rows: Vec<Vec<String>> = tbl
        .children
        .iter()
        .filter(|r| r.name == "a:tr")
        .map(|r| r.children.iter().filter(|c| c.name == "a:tc").map(|c| a_paras(c).join(" ")).collect())
        .filter(|r: &Vec<String>| r.iter().any(|c| !c.is_empty()))
        .collect();
    (!rows.is_empty()).then(|| crate::tabular::pipe_table(&rows))
}

fn pptx_shapes(tree: &Node, slide: &mut Slide) {
    fn walk(n: &Node, slide: &mut Slide, depth: usize) {
        if depth > 32 {
            return;
        }
        for c in &n.children {
            match c.name.as_str() {
                "p:sp" => {
                    let paras = c.child("p:txBody").map(a_paras).unwrap_or_default();
                    if paras.is_empty() {
                        continue;
                    }
                    match placeholder(c) {
                        Some("title" | "ctrTitle") if slide.title.is_none() => slide.title = Some(paras.join(" ")),
                        Some("sldNum" | "dt" | "ftr" | "hdr") => {}
                        _ => slide.blocks.push(paras.join("\n\n")),
                    }
                }
                "p:graphicFrame" => {
                    let mut tbls = Vec::new();
                    descendants(c, "a:tbl", &mut tbls);
                    slide.blocks.extend(tbls.into_iter().filter_map(pptx_table));
                }
                _ => walk(c, slide, depth + 1),
            }
        }
    }
    walk(tree, slide, 0);
}

/// Relationship id → target path.
type Rels = HashMap<String, String>;

/// A part's relationships (targets resolved against `base_dir`).
fn rels(zip: &mut ZipArchive<Cursor<&[u8]>>, part: &str, limits: &Limits) -> Result<Rels, ConvertError> {
    let (dir, file) = part.rsplit_once('/').unwrap_or(("", part));
    let rels_path = format!("{dir}/_rels/{file}.rels");
    let mut out = HashMap::new();
    if let Some(b) = zipguard::read_entry(zip, &rels_path, limits)? {
        let tree = xml::parse(&b, |_| false)?;
        let mut rs = Vec::new();
        descendants(&tree, "Relationship", &mut rs);
        for r in rs {
            if let (Some(id), Some(t)) = (r.attr("Id"), r.attr("Target")) {
                out.insert(id.to_string(), resolve(dir, t));
            }
        }
    }
    Ok(out)
}

fn resolve(dir: &str, target: &str) -> String {
    if let Some(abs) = target.strip_prefix('/') {
        return abs.to_string();
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for seg in target.split('/') {
        match seg {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            s => parts.push(s),
        }
    }
    parts.join("/")
}

fn pptx(zip: &mut ZipArchive<Cursor<&[u8]>>, limits: &Limits) -> Result<(Option<String>, Vec<Slide>), ConvertError> {
    let pres = zipguard::read_entry(zip, "ppt/presentation.xml", limits)?
        .ok_or_else(|| schema("not a PPTX deck (no ppt/presentation.xml)"))?;
    let pres = xml::parse(&pres, |_| false)?;
    let pres_rels = rels(zip, "ppt/presentation.xml", limits)?;
    let mut ids = Vec::new();
    descendants(&pres, "p:sldId", &mut ids);
    let parts: Vec<String> =
        ids.iter().filter_map(|s| s.attr("r:id")).filter_map(|r| pres_rels.get(r).cloned()).collect();
    let mut slides = Vec::new();
    for part in parts {
        let Some(b) = zipguard::read_entry(zip, &part, limits)? else { continue };
        let mut slide = Slide::default();
        pptx_shapes(&xml::parse(&b, |n| n == "a:t")?, &mut slide);
        let notes_part = rels(zip, &part, limits)?.into_values().find(|t| t.contains("notesSlide"));
        if let Some(np) = notes_part {
            if let Some(nb) = zipguard::read_entry(zip, &np, limits)? {
                let tree = xml::parse(&nb, |n| n == "a:t")?;
                let mut sps = Vec::new();
                descendants(&tree, "p:sp", &mut sps);
                for sp in sps.into_iter().filter(|sp| placeholder(sp) == Some("body")) {
                    slide.notes.extend(sp.child("p:txBody").map(a_paras).unwrap_or_default());
                }
            }
        }
        slides.push(slide);
    }
    let title = match zipguard::read_entry(zip, "docProps/core.xml", limits)? {
        Some(b) => {
            let t = xml::parse(&b, |n| n == "dc:title")?;
            let mut ts = Vec::new();
            descendants(&t, "dc:title", &mut ts);
            ts.first().map(|n| collapse(&n.text)).filter(|s| !s.is_empty())
        }
        None => None,
    };
    Ok((title, slides))
}

fn odp_frame(f: &Node, slide: &mut Slide) {
    let class = f.attr("presentation:class").unwrap_or("");
    let mut blocks = Vec::new();
    let mut h1 = None;
    for c in &f.children {
        match c.name.as_str() {
            "draw:text-box" => odf::blocks(c, &mut blocks, &mut h1, 0),
            "table:table" => blocks.extend(odf::odf_table(c)),
            _ => {}
        }
    }
    if blocks.is_empty() {
        return;
    }
    match class {
        "title" if slide.title.is_none() => slide.title = Some(collapse(&blocks.join(" "))),
        "page-number" | "footer" | "date-time" | "header" => {}
        _ => slide.blocks.push(blocks.join("\n\n")),
    }
}

fn odp(tree: &Node) -> Result<Vec<Slide>, ConvertError> {
    let pres = odf::body_of(tree)
        .and_then(|b| b.child("office:presentation"))
        .ok_or_else(|| schema("not an OpenDocument presentation"))?;
    let mut slides = Vec::new();
    for page in pres.children.iter().filter(|c| c.name == "draw:page") {
        let mut slide = Slide::default();
        for c in &page.children {
            match c.name.as_str() {
                "draw:frame" | "draw:custom-shape" => odp_frame(c, &mut slide),
                "draw:g" => c.children.iter().filter(|g| g.name == "draw:frame").for_each(|g| odp_frame(g, &mut slide)),
                "presentation:notes" => {
                    for f in c.children.iter().filter(|f| f.attr("presentation:class") == Some("notes")) {
                        let mut n = Slide::default();
                        odp_frame(f, &mut n);
                        slide.notes.extend(n.blocks);
                    }
                }
                _ => {}
            }
        }
        slides.push(slide);
    }
    Ok(slides)
}

fn render(title: &str, slides: &[Slide]) -> String {
    let mut body = format!("# {title}\n");
    for (i, s) in slides.iter().enumerate() {
        let heading = s.title.clone().unwrap_or_else(|| format!("Slide {}", i + 1));
        body.push_str(&format!("\n## {heading}\n"));
        for b in &s.blocks {
            body.push_str(&format!("\n{b}\n"));
        }
        if !s.notes.is_empty() {
            body.push_str(&format!("\n### Notes\n\n{}\n", s.notes.join("\n\n")));
        }
    }
    body
}

impl Converter for Slides {
    fn name(&self) -> &str {
        "Slides"
    }
    fn extensions(&self) -> Vec<String> {
        [".pptx", ".pptm", ".ppsx", ".potx", ".odp", ".otp"].map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, limits: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let stem_title = title_from_stem(&stem(path));
        let bytes = std::fs::read(path)?;
        if odf::ooxml_encrypted(&bytes) {
            return Ok(encrypted_stub(&stem_title, "presentation"));
        }
        let mut zip = zipguard::open_checked(&bytes, limits)?;
        let (meta_title, slides) = if zip.by_name("ppt/presentation.xml").is_ok() {
            pptx(&mut zip, limits).map_err(|e| schema(format!("{name}: {}", forest_model::error_chain(&e))))?
        } else {
            if odf::odf_encrypted(&mut zip, limits) {
                return Ok(encrypted_stub(&stem_title, "presentation"));
            }
            let content = zipguard::read_entry(&mut zip, "content.xml", limits)?
                .ok_or_else(|| schema(format!("not a slide deck (no presentation.xml, no content.xml): {name}")))?;
            (None, odp(&xml::parse_mixed(&content, |_| true)?)?)
        };
        let title = meta_title.or_else(|| slides.iter().find_map(|s| s.title.clone())).unwrap_or(stem_title);
        let body = render(&title, &slides);
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relationship_targets() {
        assert_eq!(resolve("ppt", "slides/slide1.xml"), "ppt/slides/slide1.xml");
        assert_eq!(resolve("ppt/slides", "../notesSlides/n1.xml"), "ppt/notesSlides/n1.xml");
        assert_eq!(resolve("ppt", "/ppt/x.xml"), "ppt/x.xml");
    }

    #[test]
    fn renders_slides_with_notes() {
        let s = vec![
            Slide { title: Some("Intro".into()), blocks: vec!["Hello".into()], notes: vec!["say hi".into()] },
            Slide::default(),
        ];
        assert_eq!(render("Deck", &s), "# Deck\n\n## Intro\n\nHello\n\n### Notes\n\nsay hi\n\n## Slide 2\n");
    }
}
