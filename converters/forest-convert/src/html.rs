//! HTML → readable Markdown with a small tolerant tag scanner (no HTML5
//! parser crate: the subset below needs no spec-exact tree building).
//!
//! Kept: headings, paragraphs, lists, links `[text](url)`, emphasis, code,
//! pre blocks, blockquotes, tables as pipe tables. Dropped: `head`,
//! `script`, `style`, `noscript`, `template`, `svg`, images.

use crate::error::ConvertError;
use crate::registry::Converter;
use crate::text::stem;
use crate::{Conversion, Limits, SourceMeta};
use forest_model::slug::title_from_stem;
use std::path::Path;

/// The HTML converter.
pub(crate) struct Html;

/// Deepest element nesting kept; deeper elements are flattened into their parent.
const MAX_DEPTH: usize = 200;
/// Marker for an explicit `<br>` that survives whitespace collapsing.
const BR: char = '\u{1}';

const VOID: [&str; 14] =
    ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr", "param"];
const RAW: [&str; 4] = ["script", "style", "title", "textarea"];
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

/// Decode HTML character references (common named ones plus numeric).
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let semi = tail[..tail.len().min(12)].find(';');
        let decoded = semi.and_then(|j| named(&tail[1..j]).map(|c| (c, j)));
        match decoded {
            Some((c, j)) => {
                out.push(c);
                rest = &tail[j + 1..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn named(n: &str) -> Option<char> {
    Some(match n {
        "nbsp" => '\u{a0}',
        "mdash" => '—',
        "ndash" => '–',
        "hellip" => '…',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "rsquo" => '’',
        "lsquo" => '‘',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "euro" => '€',
        "middot" => '·',
        "bull" => '•',
        _ => return crate::xml::decode_entity(n),
    })
}

/// Scan tags and build a forgiving element tree.
struct Builder {
    stack: Vec<Elem>,
    /// Elements opened beyond `MAX_DEPTH` (their end tags are ignored).
    overflow: usize,
}

impl Builder {
    fn close_top(&mut self) {
        if self.stack.len() > 1 {
            if let Some(e) = self.stack.pop() {
                if let Some(p) = self.stack.last_mut() {
                    p.children.push(Child::Elem(e));
                }
            }
        }
    }

    /// Index of the nearest open `tag`, not looking past any of `stop`.
    fn find_open(&self, tags: &[&str], stop: &[&str]) -> Option<usize> {
        for (i, e) in self.stack.iter().enumerate().rev().take(MAX_DEPTH + 1) {
            if tags.contains(&e.tag.as_str()) {
                return Some(i);
            }
            if stop.contains(&e.tag.as_str()) {
                return None;
            }
        }
        None
    }

    fn close_to(&mut self, idx: usize) {
        while self.stack.len() > idx.max(1) {
            self.close_top();
        }
    }

    fn text(&mut self, t: String) {
        if let Some(top) = self.stack.last_mut() {
            top.children.push(Child::Text(t));
        }
    }

    fn start(&mut self, tag: String, attrs: Vec<(String, String)>, self_closing: bool) {
        // Implied end tags (the common cases of the HTML parsing algorithm).
        let implied: Option<(&[&str], &[&str])> = match tag.as_str() {
            "li" => Some((&["li"], &["ul", "ol"])),
            "tr" => Some((&["tr"], &["table"])),
            "td" | "th" => Some((&["td", "th"], &["tr", "table"])),
            "dt" | "dd" => Some((&["dt", "dd"], &["dl"])),
            "option" => Some((&["option"], &["select"])),
            _ => None,
        };
        if let Some((tags, stop)) = implied {
            if let Some(i) = self.find_open(tags, stop) {
                self.close_to(i);
            }
        }
        if is_block(&tag) && self.stack.last().is_some_and(|e| e.tag == "p") {
            self.close_top();
        }
        let el = Elem { tag, attrs, children: Vec::new() };
        if self_closing || VOID.contains(&el.tag.as_str()) {
            if let Some(top) = self.stack.last_mut() {
                top.children.push(Child::Elem(el));
            }
        } else if self.stack.len() > MAX_DEPTH {
            self.overflow += 1;
        } else {
            self.stack.push(el);
        }
    }

    fn end(&mut self, tag: &str) {
        if let Some(i) = self.find_open(&[tag], &[]) {
            self.close_to(i);
        } else if self.overflow > 0 {
            self.overflow -= 1;
        }
    }
}

/// Parse `<name attr=value ...>` starting after `<`; returns (name, attrs,
/// self_closing, index after `>`).
fn parse_tag(s: &str, mut i: usize) -> (String, Vec<(String, String)>, bool, usize) {
    let b = s.as_bytes();
    let start = i;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-' || b[i] == b':') {
        i += 1;
    }
    let name = s[start..i].to_ascii_lowercase();
    let mut attrs = Vec::new();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            return (name, attrs, false, i);
        }
        if b[i] == b'>' {
            return (name, attrs, false, i + 1);
        }
        if b[i] == b'/' {
            if b.get(i + 1) == Some(&b'>') {
                return (name, attrs, true, i + 2);
            }
            i += 1;
            continue;
        }
        let ks = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let key = s[ks..i].to_ascii_lowercase();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut val = String::new();
        if b.get(i) == Some(&b'=') {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if let Some(&q) = b.get(i).filter(|c| **c == b'"' || **c == b'\'') {
                let vs = i + 1;
                let ve = s[vs..].find(q as char).map_or(b.len(), |e| vs + e);
                val = unescape(&s[vs..ve]);
                i = (ve + 1).min(b.len());
            } else {
                let vs = i;
                while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                    i += 1;
                }
                val = unescape(&s[vs..i]);
            }
        }
        if !key.is_empty() {
            attrs.push((key, val));
        }
    }
}

fn build_tree(s: &str) -> Elem {
    // ASCII lowercasing keeps byte offsets, so raw-text end tags are found linearly.
    let lower = s.to_ascii_lowercase();
    let b = s.as_bytes();
    let mut bld = Builder { stack: vec![Elem { tag: "#root".into(), ..Elem::default() }], overflow: 0 };
    let mut i = 0;
    let mut text_start = 0;
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        let next = b.get(i + 1).copied().unwrap_or(0);
        let is_tag = next.is_ascii_alphabetic() || next == b'!' || next == b'?' || next == b'/';
        if !is_tag {
            i += 1;
            continue;
        }
        if text_start < i {
            bld.text(unescape(&s[text_start..i]));
        }
        if s[i..].starts_with("<!--") {
            i = s[i + 4..].find("-->").map_or(b.len(), |e| i + 4 + e + 3);
        } else if next == b'!' || next == b'?' {
            i = s[i..].find('>').map_or(b.len(), |e| i + e + 1);
        } else if next == b'/' {
            let (name, _, _, end) = parse_tag(s, i + 2);
            if !name.is_empty() {
                bld.end(&name);
            }
            i = end;
        } else {
            let (name, attrs, self_closing, end) = parse_tag(s, i + 1);
            i = end;
            if RAW.contains(&name.as_str()) && !self_closing {
                let close = format!("</{name}");
                let stop = lower[i..].find(&close).map_or(b.len(), |e| i + e);
                let content = s[i..stop].to_string();
                i = s[stop..].find('>').map_or(b.len(), |e| stop + e + 1);
                let mut el = Elem { tag: name, attrs, children: Vec::new() };
                if el.tag == "title" || el.tag == "textarea" {
                    el.children.push(Child::Text(unescape(&content)));
                }
                if let Some(top) = bld.stack.last_mut() {
                    top.children.push(Child::Elem(el));
                }
            } else {
                bld.start(name, attrs, self_closing);
            }
        }
        text_start = i;
    }
    if text_start < b.len() {
        bld.text(unescape(&s[text_start..]));
    }
    bld.close_to(1);
    bld.stack.pop().unwrap_or_default()
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

/// Convert an HTML document to (title, Markdown body).
pub(crate) fn html_to_markdown(src: &str, stem_title: &str) -> (String, String) {
    let root = build_tree(src);
    let text_of = |tag: &str| {
        find_tag(&root, tag).map(|e| {
            let mut s = String::new();
            raw_text(e, &mut s);
            s.split_whitespace().collect::<Vec<_>>().join(" ")
        })
    };
    let title = text_of("title")
        .filter(|t| !t.is_empty())
        .or_else(|| text_of("h1").filter(|t| !t.is_empty()))
        .unwrap_or_else(|| stem_title.to_string());
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
