//! A tiny element tree over quick-xml events (for DOCX parts).

use crate::error::{schema, ConvertError};
use quick_xml::events::Event;
use quick_xml::Reader;

/// Deepest element nesting accepted (bounds recursion on hostile input).
const MAX_DEPTH: usize = 256;

/// One XML element; text is kept only where a caller asks for it.
#[derive(Debug, Default)]
pub(crate) struct Node {
    /// Qualified name as written (`w:p`).
    pub name: String,
    /// Attributes (qualified name, unescaped value).
    pub attrs: Vec<(String, String)>,
    /// Child elements.
    pub children: Vec<Node>,
    /// Concatenated direct text content.
    pub text: String,
}

impl Node {
    /// Attribute by qualified name.
    pub(crate) fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// First direct child with this name.
    pub(crate) fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }
}

/// Parse `bytes` into a tree rooted at a synthetic node. Text is recorded
/// only inside elements for which `keep_text(name)` is true.
pub(crate) fn parse(bytes: &[u8], keep_text: impl Fn(&str) -> bool) -> Result<Node, ConvertError> {
    parse_with(bytes, keep_text, false)
}

/// Like [`parse`], but kept text becomes `#text` child nodes in document
/// order, so mixed content (`a <span>b</span> c`) keeps its order (ODF).
pub(crate) fn parse_mixed(bytes: &[u8], keep_text: impl Fn(&str) -> bool) -> Result<Node, ConvertError> {
    parse_with(bytes, keep_text, true)
}

fn push_text(top: &mut Node, t: &str, mixed: bool) {
    if !mixed {
        top.text.push_str(t);
    } else if let Some(last) = top.children.last_mut().filter(|c| c.name == "#text") {
        last.text.push_str(t);
    } else {
        top.children.push(Node { name: "#text".into(), text: t.to_string(), ..Node::default() });
    }
}

fn parse_with(bytes: &[u8], keep_text: impl Fn(&str) -> bool, mixed: bool) -> Result<Node, ConvertError> {
    let mut reader = Reader::from_reader(bytes);
    let mut stack: Vec<Node> = vec![Node::default()];
    let mut buf = Vec::new();
    let bad = |e: &dyn std::fmt::Display| schema(format!("malformed XML: {e}"));
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => {
                if stack.len() > MAX_DEPTH {
                    return Err(schema("XML nesting too deep"));
                }
                stack.push(element(&e));
            }
            Ok(Event::Empty(e)) => {
                let node = element(&e);
                if let Some(top) = stack.last_mut() {
                    top.children.push(node);
                }
            }
            Ok(Event::End(_)) => {
                if stack.len() > 1 {
                    if let Some(node) = stack.pop() {
                        if let Some(parent) = stack.last_mut() {
                            parent.children.push(node);
                        }
                    }
                }
            }
            Ok(Event::Text(t)) => {
                if let Some(top) = stack.last_mut() {
                    if keep_text(&top.name) {
                        push_text(top, &unescape(&t), mixed);
                    }
                }
            }
            Ok(Event::GeneralRef(r)) => {
                if let Some(top) = stack.last_mut() {
                    if keep_text(&top.name) {
                        push_text(top, &unescape(&format!("&{};", &*r)), mixed);
                    }
                }
            }
            Ok(Event::CData(t)) => {
                if let Some(top) = stack.last_mut() {
                    if keep_text(&top.name) {
                        push_text(top, &t.into_inner(), mixed);
                    }
                }
            }
            // Office parts never declare a DTD; one that declares entities
            // is a billion-laughs attempt (entities are never expanded here).
            Ok(Event::DocType(d)) => {
                if d.into_inner().as_bytes().windows(8).any(|w| w.eq_ignore_ascii_case(b"<!ENTITY")) {
                    return Err(ConvertError::OverLimit("XML part declares entities in a DTD (entity bomb)".into()));
                }
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => return Err(bad(&e)),
        }
        buf.clear();
    }
    // Close anything left open (truncated parts still yield their text).
    while stack.len() > 1 {
        if let Some(node) = stack.pop() {
            if let Some(parent) = stack.last_mut() {
                parent.children.push(node);
            }
        }
    }
    Ok(stack.pop().unwrap_or_default())
}

fn element(e: &quick_xml::events::BytesStart<'_>) -> Node {
    let name = e.name().0.to_string();
    let attrs = e
        .attributes()
        .flatten()
        .map(|a| {
            let k = a.key.0.to_string();
            let v = unescape(&a.value);
            (k, v)
        })
        .collect();
    Node { name, attrs, ..Node::default() }
}

/// Decode the XML predefined entities and numeric character references.
pub(crate) fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let semi = tail[..tail.len().min(12)].find(';');
        let decoded = semi.and_then(|j| decode_entity(&tail[1..j]).map(|c| (c, j)));
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

pub(crate) fn decode_entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(h) => u32::from_str_radix(h, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_tree_and_unescapes() {
        let x = br#"<a><b k="v&amp;w">x &lt;y&gt; &#65;</b><c/></a>"#;
        let root = parse(x, |n| n == "b").unwrap();
        let a = &root.children[0];
        assert_eq!(a.name, "a");
        let b = a.child("b").unwrap();
        assert_eq!(b.text, "x <y> A");
        assert_eq!(b.attr("k"), Some("v&w"));
        assert!(a.child("c").is_some());
    }

    #[test]
    fn deep_nesting_is_refused() {
        let x = "<a>".repeat(1000);
        assert!(parse(x.as_bytes(), |_| false).is_err());
    }
}
