//! HTML → readable Markdown: html5ever (through `scraper`) builds the tree
//! the HTML5 way (entities, implied tags, misnesting), then the main content
//! is picked and page furniture dropped before rendering.
//!
//! Kept: headings, paragraphs, lists, links `[text](url)`, emphasis, code,
//! pre blocks, blockquotes, tables as pipe tables. Dropped: `head`,
//! `script`, `style`, `noscript`, `template`, `svg`, images, and navigation:
//! `nav`/`aside`, ARIA navigation roles, generator sidebars and
//! header/footer bars, "Next:/Previous:/Up:" pagers, man2html CGI headers.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::ConvertError;
use crate::text::stem;
use crate::values::SourceMeta;
use forest_model::slug::title_from_stem;
use std::path::Path;

/// The HTML converter.
pub(crate) struct Html;

/// Deepest element nesting kept; deeper elements are flattened into their parent.
const MAX_DEPTH: usize = 200;
/// Marker for an explicit `<br>` that survives whitespace collapsing.
const BR: char = '\u{1}';

const DROP: [&str; 9] = ["head", "script", "style", "noscript", "template", "svg", "iframe", "object", "select"];
const BLOCK: [&str; 33] = [
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "nav",
    "aside",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "li",
    "table",
    "pre",
    "blockquote",
    "hr",
    "figure",
    "figcaption",
    "dl",
    "dt",
    "dd",
    "form",
    "fieldset",
    "address",
    "body",
    "html",
    "details",
];

#[derive(Debug, Default)]
struct Elem {
    tag: String,
    attrs: Vec<(String, String)>,
    children: Vec<Child>,
}

#[derive(Debug)]
enum Child {
    Elem(Elem),
    Text(String),
}

impl Elem {
    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str())
    }
}

fn is_block(tag: &str) -> bool {
    BLOCK.contains(&tag)
}

/// Class/id tokens of page furniture: navigation bars, sidebars, headers and
/// footers of documentation generators (Sphinx, texinfo, DocBook, MkDocs).
const FURNITURE: [&str; 24] = [
    "nav",
    "navbar",
    "navigation",
    "nav-panel",
    "navheader",
    "navfooter",
    "navbox",
    "menu",
    "sidebar",
    "sphinxsidebar",
    "sphinxsidebarwrapper",
    "related",
    "breadcrumb",
    "breadcrumbs",
    "footer",
    "header",
    "skip-link",
    "skiplink",
    "site-header",
    "site-footer",
    "top-bar",
    "topbar",
    "masthead",
    "cookie-banner",
];

fn is_furniture(el: &scraper::node::Element) -> bool {
    if matches!(el.name(), "nav" | "aside" | "form" | "button" | "menu") {
        return true;
    }
    if el.attr("role").is_some_and(|r| matches!(r, "navigation" | "banner" | "contentinfo" | "search")) {
        return true;
    }
    let tokens = el.attr("class").into_iter().chain(el.attr("id")).flat_map(|v| v.split_whitespace());
    tokens.map(str::to_ascii_lowercase).any(|t| FURNITURE.contains(&t.as_str()))
}

/// Text of a node with all descendants, iteratively (no recursion on deep trees).
fn node_text(node: ego_tree::NodeRef<'_, scraper::Node>) -> String {
    node.descendants().filter_map(|d| d.value().as_text().map(|t| t.to_string())).collect::<Vec<_>>().join("")
}

/// A short block made of "Next:/Previous:/Up:" links (texinfo and man2html bars).
fn is_pager(node: ego_tree::NodeRef<'_, scraper::Node>) -> bool {
    let t = node_text(node);
    let t = t.trim_start();
    t.len() < 400
        && ["Next:", "Previous:", "Prev:", "Up:", "Next ", "Previous ", "Prev "].iter().any(|p| t.starts_with(p))
        && (t.contains("Previous") || t.contains("Prev") || t.contains("Up:") || t.contains("Next"))
        && node.descendants().any(|d| d.value().as_element().is_some_and(|e| e.name() == "a"))
}

/// Convert the html5ever tree under `node` into our element tree, dropping
/// page furniture; deeper than `MAX_DEPTH` the text is kept flat.
fn convert_node(node: ego_tree::NodeRef<'_, scraper::Node>, depth: usize) -> Option<Child> {
    match node.value() {
        scraper::Node::Text(t) => Some(Child::Text(t.to_string())),
        scraper::Node::Element(el) => {
            let tag = el.name().to_string();
            if DROP.contains(&tag.as_str()) || is_furniture(el) {
                return None;
            }
            if matches!(tag.as_str(), "div" | "p" | "table" | "ul") && is_pager(node) {
                return None;
            }
            let attrs: Vec<(String, String)> = ["href", "id", "class"]
                .iter()
                .filter_map(|k| el.attr(k).map(|v| ((*k).to_string(), v.to_string())))
                .collect();
            let children = if depth >= MAX_DEPTH {
                vec![Child::Text(node_text(node))]
            } else {
                node.children().filter_map(|c| convert_node(c, depth + 1)).collect()
            };
            Some(Child::Elem(Elem { tag, attrs, children }))
        }
        _ => None,
    }
}

/// The main content element: `main`, `[role=main]`, a lone `article`, or the
/// usual content containers of documentation generators; else `body`.
fn main_content(doc: &scraper::Html) -> Option<ego_tree::NodeRef<'_, scraper::Node>> {
    const SELECTORS: [&str; 8] =
        ["main", "[role=main]", "article", "div#content", "div.body", "div#main-content", "div.document", "div#main"];
    for sel in SELECTORS {
        let Ok(s) = scraper::Selector::parse(sel) else { continue };
        let mut hits = doc.select(&s);
        if let Some(first) = hits.next() {
            if sel == "article" && hits.next().is_some() {
                continue;
            }
            // A tiny "main" (a skip target) is not the content.
            if node_text(*first).split_whitespace().count() >= 20 {
                return Some(*first);
            }
        }
    }
    let body = scraper::Selector::parse("body").ok()?;
    doc.select(&body).next().map(|e| *e)
}

/// Deepest tag nesting handed to html5ever, whose scope checks are linear in
/// the depth of open elements (quadratic on hostile nesting).
const MAX_PARSE_DEPTH: usize = 4096;

/// Approximate nesting depth: start tags minus end tags, running maximum.
fn nesting_exceeds(s: &str, limit: usize) -> bool {
    let b = s.as_bytes();
    let mut depth: isize = 0;
    for i in 0..b.len().saturating_sub(1) {
        if b[i] == b'<' {
            match b[i + 1] {
                b'/' => depth -= 1,
                c if c.is_ascii_alphabetic() => {
                    depth += 1;
                    if depth > limit as isize {
                        return true;
                    }
                }
                _ => {}
            }
        }
    }
    false
}

/// Parse with html5ever (via `scraper`) and keep the main content.
fn build_tree(s: &str) -> (Elem, Option<String>) {
    if nesting_exceeds(s, MAX_PARSE_DEPTH) {
        // Hostile nesting: keep the text, drop the tags (entities still decoded by the parser).
        static TAG: once_cell::sync::Lazy<regex::Regex> =
            once_cell::sync::Lazy::new(|| regex::Regex::new(r"<[^>]*>").expect("static regex"));
        let flat = TAG.replace_all(s, " ");
        let doc = scraper::Html::parse_document(&flat);
        let text = node_text(doc.tree.root());
        return (Elem { tag: "#root".into(), attrs: vec![], children: vec![Child::Text(text)] }, None);
    }
    let doc = scraper::Html::parse_document(s);
    let title = scraper::Selector::parse("title")
        .ok()
        .and_then(|sel| doc.select(&sel).next().map(|t| t.text().collect::<Vec<_>>().join(" ")))
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty());
    let mut root = Elem { tag: "#root".into(), ..Elem::default() };
    if let Some(main) = main_content(&doc) {
        root.children = main.children().filter_map(|c| convert_node(c, 1)).collect();
    }
    // man2html prints a CGI header as page text; it is never content.
    while let Some(Child::Text(t)) = root.children.first() {
        if t.trim().is_empty() || t.trim_start().to_ascii_lowercase().starts_with("content-type:") {
            root.children.remove(0);
        } else {
            break;
        }
    }
    (root, title)
}

/// Collapse whitespace, keeping `<br>` markers as newlines.
fn clean(s: &str) -> String {
    s.split(BR)
        .map(|seg| seg.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

fn raw_text(e: &Elem, out: &mut String) {
    for c in &e.children {
        match c {
            Child::Text(t) => out.push_str(t),
            Child::Elem(el) if el.tag == "br" => out.push('\n'),
            Child::Elem(el) if !DROP.contains(&el.tag.as_str()) => raw_text(el, out),
            Child::Elem(_) => {}
        }
    }
}

fn inline(e: &Elem, out: &mut String) {
    for c in &e.children {
        match c {
            Child::Text(t) => out.push_str(t),
            Child::Elem(el) => inline_elem(el, out),
        }
    }
}

fn inline_elem(el: &Elem, out: &mut String) {
    let tag = el.tag.as_str();
    if DROP.contains(&tag) || tag == "title" || tag == "img" {
        return;
    }
    let inner = || {
        let mut s = String::new();
        inline(el, &mut s);
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    match tag {
        "br" => out.push(BR),
        "a" => {
            let text = inner();
            match el.attr("href").map(str::trim) {
                Some(h) if !h.is_empty() && !text.is_empty() && !h.to_ascii_lowercase().starts_with("javascript:") => {
                    out.push_str(&format!("[{text}]({})", h.replace(' ', "%20")));
                }
                _ => out.push_str(&text),
            }
        }
        "strong" | "b" | "em" | "i" | "code" => {
            let text = inner();
            if text.is_empty() {
                return;
            }
            let mark = match tag {
                "strong" | "b" => "**",
                "code" => "`",
                _ => "*",
            };
            // Keep word separation around the emphasised run.
            out.push_str(&format!(" {mark}{text}{mark} "));
        }
        _ if is_block(tag) => {
            out.push(' ');
            inline(el, out);
            out.push(' ');
        }
        _ => inline(el, out),
    }
}

fn table(el: &Elem) -> Option<String> {
    fn rows_of<'a>(e: &'a Elem, out: &mut Vec<&'a Elem>) {
        for c in &e.children {
            if let Child::Elem(x) = c {
                match x.tag.as_str() {
                    "tr" => out.push(x),
                    "thead" | "tbody" | "tfoot" => rows_of(x, out),
                    _ => {}
                }
            }
        }
    }
    let mut trs = Vec::new();
    rows_of(el, &mut trs);
    let mut rows: Vec<Vec<String>> = trs
        .iter()
        .map(|tr| {
            tr.children
                .iter()
                .filter_map(|c| match c {
                    Child::Elem(x) if x.tag == "td" || x.tag == "th" => {
                        let mut s = String::new();
                        inline(x, &mut s);
                        Some(s.replace(BR, " ").split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|"))
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .filter(|r| r.iter().any(|c| !c.is_empty()))
        .collect();
    let width = rows.iter().map(Vec::len).max()?;
    for r in &mut rows {
        r.resize(width, String::new());
    }
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        out.push(format!("| {} |", r.join(" | ")));
        if i == 0 {
            out.push(format!("|{}", " --- |".repeat(width)));
        }
    }
    Some(out.join("\n"))
}

fn list(el: &Elem, depth: usize, lines: &mut Vec<String>) {
    let ordered = el.tag == "ol";
    let indent = "  ".repeat(depth);
    let mut n = 0;
    for c in &el.children {
        let Child::Elem(li) = c else { continue };
        if li.tag == "ul" || li.tag == "ol" {
            list(li, depth + 1, lines);
            continue;
        }
        n += 1;
        let mut text = String::new();
        let mut nested = Vec::new();
        for cc in &li.children {
            match cc {
                Child::Elem(x) if x.tag == "ul" || x.tag == "ol" => nested.push(x),
                Child::Elem(x) => inline_elem(x, &mut text),
                Child::Text(t) => text.push_str(t),
            }
        }
        let marker = if ordered { format!("{n}.") } else { "-".to_string() };
        lines.push(format!("{indent}{marker} {}", clean(&text).replace('\n', " ")));
        for x in nested {
            list(x, depth + 1, lines);
        }
    }
}

/// Render block-level content of `e` into Markdown blocks.
fn blocks(e: &Elem, out: &mut Vec<String>, h1_seen: &mut bool) {
    let mut buf = String::new();
    let flush = |buf: &mut String, out: &mut Vec<String>| {
        let t = clean(buf);
        if !t.is_empty() {
            out.push(t);
        }
        buf.clear();
    };
    for c in &e.children {
        let el = match c {
            Child::Text(t) => {
                buf.push_str(t);
                continue;
            }
            Child::Elem(el) => el,
        };
        let tag = el.tag.as_str();
        if !is_block(tag) {
            inline_elem(el, &mut buf);
            continue;
        }
        flush(&mut buf, out);
        match tag {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let mut s = String::new();
                inline(el, &mut s);
                let text = clean(&s).replace('\n', " ");
                if !text.is_empty() {
                    let level = usize::from(tag.as_bytes()[1] - b'0');
                    *h1_seen |= level == 1;
                    out.push(format!("{} {text}", "#".repeat(level)));
                }
            }
            "ul" | "ol" => {
                let mut lines = Vec::new();
                list(el, 0, &mut lines);
                if !lines.is_empty() {
                    out.push(lines.join("\n"));
                }
            }
            "table" => out.extend(table(el)),
            "pre" => {
                let mut s = String::new();
                raw_text(el, &mut s);
                let s = s.trim_matches('\n');
                if !s.trim().is_empty() {
                    out.push(format!("```\n{s}\n```"));
                }
            }
            "blockquote" => {
                let mut inner = Vec::new();
                blocks(el, &mut inner, h1_seen);
                if !inner.is_empty() {
                    let q: Vec<String> = inner
                        .join("\n\n")
                        .lines()
                        .map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") })
                        .collect();
                    out.push(q.join("\n"));
                }
            }
            "hr" => out.push("---".into()),
            _ => blocks(el, out, h1_seen),
        }
    }
    flush(&mut buf, out);
}

fn find_tag<'a>(e: &'a Elem, tag: &str) -> Option<&'a Elem> {
    e.children.iter().find_map(|c| match c {
        Child::Elem(x) if x.tag == tag => Some(x),
        Child::Elem(x) => find_tag(x, tag),
        Child::Text(_) => None,
    })
}

/// Main content of an HTML document as Markdown blocks (no title line), and
/// its `<title>` or first `<h1>`.
pub(crate) fn html_content(src: &str) -> (Option<String>, String) {
    let (root, head_title) = build_tree(src);
    let h1 = find_tag(&root, "h1").map(|e| {
        let mut s = String::new();
        raw_text(e, &mut s);
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    });
    let mut out = Vec::new();
    let mut h1_seen = false;
    blocks(&root, &mut out, &mut h1_seen);
    (head_title.or(h1.filter(|t| !t.is_empty())), out.join("\n\n"))
}

/// Convert an HTML document to (title, Markdown body).
pub(crate) fn html_to_markdown(src: &str, stem_title: &str) -> (String, String) {
    let (root, head_title) = build_tree(src);
    let text_of = |tag: &str| {
        find_tag(&root, tag).map(|e| {
            let mut s = String::new();
            raw_text(e, &mut s);
            s.split_whitespace().collect::<Vec<_>>().join(" ")
        })
    };
    let title =
        head_title.or_else(|| text_of("h1").filter(|t| !t.is_empty())).unwrap_or_else(|| stem_title.to_string());
    let mut out = Vec::new();
    let mut h1_seen = false;
    blocks(&root, &mut out, &mut h1_seen);
    let content = out.join("\n\n");
    let body = match (h1_seen, content.is_empty()) {
        (true, _) => format!("{content}\n"),
        (false, true) => format!("# {title}\n"),
        (false, false) => format!("# {title}\n\n{content}\n"),
    };
    (title, body)
}

impl Converter for Html {
    fn name(&self) -> &str {
        "Html"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".html".into(), ".htm".into()]
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let bytes = std::fs::read(path)?;
        let text = String::from_utf8_lossy(&bytes);
        let (title, body) = html_to_markdown(&text, &title_from_stem(&stem(path)));
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_common_structure() {
        let h = r#"<html><head><title>T</title><style>p{}</style></head><body>
<h1>Main</h1><p>Hello <a href="https://x.io/a">link</a> &amp; <b>bold</b><br>next
<ul><li>one<li>two<ol><li>inner</ol></ul>
<table><tr><th>a</th><th>b|c</th></tr><tr><td>1<td>2</table>
<script>var x = "<p>no</p>";</script></body></html>"#;
        let (title, body) = html_to_markdown(h, "stem");
        assert_eq!(title, "T");
        assert_eq!(
            body,
            "# Main\n\nHello [link](https://x.io/a) & **bold**\nnext\n\n- one\n- two\n  1. inner\n\n| a | b\\|c |\n| --- | --- |\n| 1 | 2 |\n"
        );
    }

    #[test]
    fn tolerates_garbage_and_deep_nesting() {
        let deep = "<div>".repeat(10_000) + "x" + &"</div>".repeat(10_000);
        let (_, body) = html_to_markdown(&deep, "deep");
        assert_eq!(body, "# deep\n\nx\n");
        let (_, body) = html_to_markdown("<<a <p x='unterminated", "g");
        assert!(body.starts_with("# g"));
    }
}
