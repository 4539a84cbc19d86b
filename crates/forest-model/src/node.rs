//! A node file: YAML frontmatter + Markdown body (dialect §1.4, §1.10).

use crate::yaml::{self, Mapping, Value};
use once_cell::sync::Lazy;
use regex::Regex;

/// Why a node file could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The file does not start with `---`.
    #[error("E_FRONTMATTER: missing frontmatter (file must start with '---')")]
    NoFrontmatter,
    /// No closing `---` line.
    #[error("E_FRONTMATTER: unterminated frontmatter (no closing '---')")]
    Unterminated,
    /// YAML syntax error.
    #[error("invalid YAML frontmatter: {0}")]
    Yaml(String),
}

/// A parsed node. `front` keeps key order and unknown keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Frontmatter mapping, in file order.
    pub front: Mapping,
    /// Markdown body (leading newlines stripped).
    pub body: String,
}

impl Node {
    /// Parse a node file's text.
    pub fn parse(text: &str) -> Result<Node, ParseError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let rest = text.strip_prefix("---").ok_or(ParseError::NoFrontmatter)?;
        // Frontmatter ends at the first "\n---" (dialect §1.10).
        let end = rest.find("\n---").ok_or(ParseError::Unterminated)?;
        let yaml_text = &rest[..end];
        let after = &rest[end + 4..];
        // Skip the rest of the closing line.
        let after = match after.find('\n') {
            Some(i) => &after[i + 1..],
            None => "",
        };
        let front = yaml::parse_mapping(yaml_text).map_err(|e| ParseError::Yaml(e.to_string()))?;
        let body = after.trim_start_matches(['\n', '\r']).to_string();
        Ok(Node { front, body })
    }

    /// Serialize: `---\n<yaml>\n---\n\n<body.rstrip()>\n`.
    pub fn to_text(&self) -> String {
        let y = yaml::emit_mapping(&self.front);
        let body = self.body.trim_end();
        format!("---\n{y}\n---\n\n{body}\n")
    }

    /// A string field (numbers and bools are rendered; lists are not strings).
    pub fn get_str(&self, key: &str) -> Option<String> {
        match self.front.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A list of strings (non-string items rendered; absent -> empty).
    pub fn get_list(&self, key: &str) -> Vec<String> {
        match self.front.get(key) {
            Some(Value::Sequence(s)) => s
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    Value::Bool(b) => Some(b.to_string()),
                    _ => None,
                })
                .collect(),
            _ => vec![],
        }
    }

    /// A float field.
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        match self.front.get(key)? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// Set a key, keeping its position when it exists (else appended).
    pub fn set(&mut self, key: &str, value: Value) {
        self.front.insert(Value::String(key.into()), value);
    }

    /// Set a string key.
    pub fn set_str(&mut self, key: &str, value: &str) {
        self.set(key, Value::String(value.into()));
    }

    /// Set a list-of-strings key.
    pub fn set_list(&mut self, key: &str, items: &[String]) {
        self.set(key, Value::Sequence(items.iter().map(|s| Value::String(s.clone())).collect()));
    }

    /// Remove a key.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.front.shift_remove(key)
    }

    /// Frontmatter links as (rel, target, confidence) where present.
    pub fn links(&self) -> Vec<Link> {
        match self.front.get("links") {
            Some(Value::Sequence(s)) => s.iter().filter_map(Link::from_value).collect(),
            _ => vec![],
        }
    }

    /// Title: frontmatter title, else body H1, else None.
    pub fn title(&self) -> Option<String> {
        self.get_str("title").filter(|s| !s.trim().is_empty()).or_else(|| body_h1(&self.body))
    }

    /// Summary: frontmatter summary, else first blockquote line.
    pub fn summary(&self) -> Option<String> {
        self.get_str("summary").or_else(|| body_blockquote(&self.body))
    }
}

/// One frontmatter link.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Relation name.
    pub rel: String,
    /// Target node id.
    pub target: String,
    /// Link-level confidence when present as a number.
    pub confidence: Option<f64>,
}

impl Link {
    fn from_value(v: &Value) -> Option<Link> {
        let m = v.as_mapping()?;
        let rel = m.get("rel")?.as_str()?.to_string();
        let target = m.get("target")?.as_str()?.to_string();
        let confidence = m.get("confidence").and_then(|c| c.as_f64());
        Some(Link { rel, target, confidence })
    }
}

/// First `# ` heading text of a body.
pub fn body_h1(body: &str) -> Option<String> {
    body.lines().find_map(|l| l.strip_prefix("# ").map(|t| t.trim().to_string())).filter(|t| !t.is_empty())
}

/// First `>` line before any paragraph (dialect §1.10).
pub fn body_blockquote(body: &str) -> Option<String> {
    for line in body.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(q) = t.strip_prefix('>') {
            let q = q.trim();
            return if q.is_empty() { None } else { Some(q.to_string()) };
        }
        return None;
    }
    None
}

/// Lines of a body outside fenced code blocks (fence lines excluded).
fn unfenced_lines(body: &str) -> impl Iterator<Item = &str> {
    let mut fence = false;
    body.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            return false;
        }
        !fence
    })
}

/// H2/H3 headings of a body (`## X` -> `X`).
pub fn outline(body: &str) -> Vec<String> {
    unfenced_lines(body)
        .filter_map(|line| line.strip_prefix("## ").or_else(|| line.strip_prefix("### ")))
        .map(|h| h.trim().to_string())
        .collect()
}

/// Words of a body's lead (what the fast canopy embeds beside the scent).
pub const LEAD_WORDS: usize = 48;

/// Bytes a lead may take (a "word" may be a whole base64 blob).
pub const LEAD_MAX_BYTES: usize = 512;

/// The first [`LEAD_WORDS`] words of a body as plain text: Markdown's marks
/// (`# * ` > | _ [ ] ( ) -`) separate words like whitespace; words are
/// joined by one space, at most [`LEAD_MAX_BYTES`] in all (cut at a char
/// boundary). Pure.
pub fn body_lead(body: &str) -> String {
    let mark =
        |c: char| c.is_whitespace() || matches!(c, '#' | '*' | '`' | '>' | '|' | '_' | '[' | ']' | '(' | ')' | '-');
    let mut out = String::new();
    for w in body.split(mark).filter(|w| !w.is_empty()).take(LEAD_WORDS) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
        if out.len() >= LEAD_MAX_BYTES {
            let mut end = LEAD_MAX_BYTES;
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            out.truncate(end);
            break;
        }
    }
    out
}

static WIKILINK: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"\[\[([^\]\|#\n]+)(?:#[^\]\|\n]*)?(?:\|[^\]\n]*)?\]\]").expect("static regex"));

/// Wikilink targets in a body (`[[id]]`, `[[id|text]]`, `[[id#anchor]]`),
/// skipping fenced and inline code.
pub fn wikilinks(body: &str) -> Vec<String> {
    let mut out = vec![];
    for line in unfenced_lines(body).filter(|l| l.contains("[[")) {
        // Drop inline code spans before matching.
        let mut clean = String::with_capacity(line.len());
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
                continue;
            }
            if !in_code {
                clean.push(c);
            }
        }
        for c in WIKILINK.captures_iter(&clean) {
            out.push(c[1].trim().to_string());
        }
    }
    out
}

/// Today's date as `YYYY-MM-DD` (UTC), or `FOREST_TODAY` when set (tests,
/// reproducible runs).
pub fn today() -> String {
    if let Ok(t) = std::env::var("FOREST_TODAY") {
        if !t.is_empty() {
            return t;
        }
    }
    chrono::Utc::now().format("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_lead_is_its_first_words_without_markdown_marks() {
        let body = "\n# Title\n\n> Quoted *words* and [a link](x-y) | cell |\n\n```\nfn code_here()\n```\n";
        assert_eq!(body_lead(body), "Title Quoted words and a link x y cell fn code here");
        let long: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(body_lead(&long).split(' ').count(), LEAD_WORDS);
        let blob = "é".repeat(2000);
        let lead = body_lead(&blob);
        assert!(lead.len() <= LEAD_MAX_BYTES && lead.chars().all(|c| c == 'é'));
        assert_eq!(body_lead("  \n--- ## "), "");
    }

    #[test]
    fn parse_and_serialize() {
        let n = Node::parse("---\nid: a\ntitle: A\n---\n\n\n# A\n\nBody [[b/c|x]] `[[no]]`\n\n## S\n").unwrap();
        assert_eq!(n.get_str("id").unwrap(), "a");
        assert!(n.body.starts_with("# A"));
        assert_eq!(wikilinks(&n.body), vec!["b/c"]);
        assert_eq!(outline(&n.body), vec!["S"]);
        let again = Node::parse(&n.to_text()).unwrap();
        assert_eq!(again, n);
        assert_eq!(n.to_text(), "---\nid: a\ntitle: A\n---\n\n# A\n\nBody [[b/c|x]] `[[no]]`\n\n## S\n");
    }

    #[test]
    fn errors() {
        assert_eq!(Node::parse("# no fm"), Err(ParseError::NoFrontmatter));
        assert_eq!(Node::parse("---\nid: a\n"), Err(ParseError::Unterminated));
        assert!(matches!(Node::parse("---\nid: [a\n---\n"), Err(ParseError::Yaml(_))));
    }

    #[test]
    fn blockquote_fallback() {
        assert_eq!(body_blockquote("# T\n\n> the scent\n\ntext").unwrap(), "the scent");
        assert!(body_blockquote("# T\n\npara\n> late").is_none());
    }
}
