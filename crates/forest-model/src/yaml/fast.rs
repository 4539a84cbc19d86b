//! A fast path for the frontmatter forest writes: block mappings and
//! sequences of one-line scalars, as [`super::emit_mapping`] and PyYAML's
//! `safe_dump` lay them out. Anything outside that narrow shape (comments,
//! flow collections other than `[]`/`{}`, block or multi-line scalars,
//! escapes, anchors, tags, duplicate keys, tabs, CR, odd characters) gives
//! `None` and the caller parses the text with `yaml_serde`, so a text this
//! path accepts parses to exactly what the library would give.
//!
//! Why: a cold rebuild parses every node's frontmatter, and `yaml_serde`
//! (a libyaml port driving a serde visitor) took 39% of the parse threads'
//! time at 10^6 nodes (docs/decisions/frontmatter-fast-path.md).
//!
//! Plain scalars resolve as `yaml_serde` resolves them: the null and bool
//! words are matched here, anything that starts like a number is handed to
//! the library alone (numbers are few: confidences, counts), and every
//! other plain scalar is a string.

use super::{Mapping, Value};

/// Nesting deeper than this goes to the library (its own depth limit
/// decides what such a text is).
const MAX_DEPTH: usize = 16;

/// Keys longer than this go to the library (libyaml's simple keys end at
/// 1,024 characters).
const MAX_KEY: usize = 128;

/// The mapping `text` holds, or `None` when the text is outside the fast
/// path's shape (not necessarily invalid: the library decides).
pub(super) fn parse(text: &str) -> Option<Mapping> {
    // The rest of a node's opening `---` line.
    let text = text.strip_prefix('\n').unwrap_or(text);
    if !text.chars().all(plain_char) {
        return None;
    }
    let mut lines = Vec::with_capacity(24);
    let mut raw = text.split('\n').peekable();
    while let Some(line) = raw.next() {
        let body = line.trim_start_matches(' ');
        if body.is_empty() {
            // One final newline is fine; blank lines elsewhere go to the library.
            if raw.peek().is_none() && line.is_empty() {
                break;
            }
            return None;
        }
        if body.starts_with('#') || body.starts_with("---") || body.starts_with("...") {
            return None;
        }
        lines.push(Line { ind: line.len() - body.len(), body });
    }
    let mut p = Parser { lines, pos: 0 };
    let m = p.map(0, 0)?;
    (p.pos == p.lines.len()).then_some(m)
}

/// Characters every scalar may hold as written: printable, no tab, no CR
/// and none of the characters YAML 1.1 readers take for line breaks.
fn plain_char(c: char) -> bool {
    match c {
        '\n' | ' '..='~' => true,
        '\u{a0}'..='\u{d7ff}' => c != '\u{2028}' && c != '\u{2029}',
        '\u{e000}'..='\u{fffd}' => c != '\u{feff}',
        _ => c >= '\u{10000}',
    }
}

#[derive(Clone, Copy)]
struct Line<'a> {
    /// Leading spaces.
    ind: usize,
    /// The rest of the line (not empty).
    body: &'a str,
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.pos).copied()
    }

    /// A block mapping whose keys start at column `ind`.
    fn map(&mut self, ind: usize, depth: usize) -> Option<Mapping> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut m = Mapping::new();
        while let Some(line) = self.peek() {
            if line.ind < ind {
                break;
            }
            if line.ind > ind || is_item(line.body) {
                return None;
            }
            let (key, rest) = split_key(line.body)?;
            self.pos += 1;
            let value = match rest {
                Some(rest) => self.scalar_lines(rest, ind)?,
                None => self.block(ind, depth)?,
            };
            // A duplicate key is the library's error to report.
            if m.insert(Value::String(key.to_string()), value).is_some() {
                return None;
            }
        }
        Some(m)
    }

    /// The value of a `key:` line at column `ind`: a sequence at the same
    /// column or deeper, a mapping deeper, or null.
    fn block(&mut self, ind: usize, depth: usize) -> Option<Value> {
        match self.peek() {
            Some(l) if l.ind >= ind && is_item(l.body) => Some(Value::Sequence(self.seq(l.ind, depth + 1)?)),
            Some(l) if l.ind > ind => Some(Value::Mapping(self.map(l.ind, depth + 1)?)),
            _ => Some(Value::Null),
        }
    }

    /// A block sequence whose `- ` markers sit at column `ind`.
    fn seq(&mut self, ind: usize, depth: usize) -> Option<Vec<Value>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut items = vec![];
        while let Some(line) = self.peek() {
            if line.ind != ind || !is_item(line.body) {
                if line.ind > ind {
                    return None;
                }
                break;
            }
            let rest = line.body.get(2..).unwrap_or_default();
            if rest.is_empty() || rest.starts_with(' ') || rest.starts_with('-') && !starts_numeric(&rest[1..]) {
                return None;
            }
            if split_key(rest).is_some() {
                // `- key: value`: a mapping whose keys start two columns in.
                self.lines[self.pos] = Line { ind: ind + 2, body: rest };
                items.push(Value::Mapping(self.map(ind + 2, depth + 1)?));
            } else {
                self.pos += 1;
                items.push(self.scalar_lines(rest, ind)?);
            }
        }
        Some(items)
    }
}

impl Parser<'_> {
    /// A scalar that starts with `first` and goes on over the lines
    /// indented deeper than `ind` (PyYAML wraps long scalars at 80
    /// columns): each line break between two non-empty lines folds to one
    /// space.
    fn scalar_lines(&mut self, first: &str, ind: usize) -> Option<Value> {
        let mut joined: Option<String> = None;
        while let Some(line) = self.peek().filter(|l| l.ind > ind) {
            let quoted = first.starts_with(['\'', '"']);
            if first.ends_with(' ') || line.body.ends_with(' ') || !quoted && starts_indicator(line.body) {
                return None;
            }
            let s = joined.get_or_insert_with(|| first.to_string());
            s.push(' ');
            s.push_str(line.body);
            self.pos += 1;
        }
        scalar(joined.as_deref().unwrap_or(first))
    }
}

/// A line a plain scalar's continuation should not start with (an
/// indicator to some reader): declined, the library decides.
fn starts_indicator(body: &str) -> bool {
    b"-?:,[]{}#&*!|>'\"%@`".contains(&body.as_bytes()[0])
}

fn is_item(body: &str) -> bool {
    body.starts_with("- ") || body == "-"
}

/// `key:` (value below: `None`) or `key: value` (`Some(value)`), for a
/// plain key that can only be a string.
fn split_key(body: &str) -> Option<(&str, Option<&str>)> {
    let end = body.find(':')?;
    let key = &body[..end];
    let first = *key.as_bytes().first()?;
    if key.len() > MAX_KEY
        || !(first.is_ascii_alphabetic() || first == b'_')
        || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        || resolves(key).is_some()
    {
        return None;
    }
    match &body[end + 1..] {
        "" => Some((key, None)),
        after => {
            let rest = after.strip_prefix(' ')?;
            if rest.is_empty() || rest.starts_with(' ') {
                return None;
            }
            Some((key, Some(rest)))
        }
    }
}

/// A one-line scalar as the value of a key or a sequence item.
fn scalar(s: &str) -> Option<Value> {
    if s.ends_with(' ') {
        return None;
    }
    match s.as_bytes()[0] {
        b'\'' => single_quoted(s).map(Value::String),
        b'"' => {
            let inner = s.strip_prefix('"')?.strip_suffix('"')?;
            (!inner.contains(['"', '\\'])).then(|| Value::String(inner.to_string()))
        }
        b'[' => (s == "[]").then(|| Value::Sequence(vec![])),
        b'{' => (s == "{}").then(|| Value::Mapping(Mapping::new())),
        _ => plain(s),
    }
}

fn single_quoted(s: &str) -> Option<String> {
    let inner = s.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len());
    let mut parts = inner.split('\'');
    out.push_str(parts.next()?);
    // Between two parts there was one quote: `''` leaves an empty part.
    while let Some(p) = parts.next() {
        if !p.is_empty() {
            return None;
        }
        out.push('\'');
        out.push_str(parts.next()?);
    }
    Some(out)
}

/// A plain scalar, resolved as `yaml_serde` resolves it.
fn plain(s: &str) -> Option<Value> {
    let first = s.as_bytes()[0];
    if b"-?:,[]{}#&*!|>'\"%@`".contains(&first) && !(first == b'-' && starts_numeric(&s[1..])) {
        return None;
    }
    if s.ends_with(':') || s.contains(": ") || s.contains(" #") {
        return None;
    }
    if let Some(v) = resolves(s) {
        return Some(v);
    }
    if first.is_ascii_digit() || b"+-.".contains(&first) {
        // Maybe a number: the library decides, on this scalar alone.
        return match yaml_serde::from_str::<Value>(s).ok()? {
            v @ (Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)) => Some(v),
            _ => None,
        };
    }
    Some(Value::String(s.to_string()))
}

fn starts_numeric(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'.')
}

/// The words a plain scalar resolves to null or a bool by.
fn resolves(s: &str) -> Option<Value> {
    match s {
        "~" | "null" | "Null" | "NULL" => Some(Value::Null),
        "true" | "True" | "TRUE" => Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => Some(Value::Bool(false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn library(text: &str) -> Option<Mapping> {
        match yaml_serde::from_str::<Value>(text) {
            Ok(Value::Mapping(m)) => Some(m),
            _ => None,
        }
    }

    /// The fast path either declines or agrees with the library, and never
    /// accepts what the library rejects.
    fn agrees(text: &str) -> bool {
        match parse(text) {
            None => false,
            Some(fast) => {
                let lib = library(text).unwrap_or_else(|| panic!("fast path took what yaml_serde rejects:\n{text}"));
                assert_eq!(fast, lib, "\n{text}");
                true
            }
        }
    }

    #[test]
    fn takes_what_the_emitter_writes() {
        let text = "\nid: b003/n0000042\ntype: note\ntitle: Harbour ledger, draft (v2)\nsummary: 'yes'\n\
                    created: '2026-01-01'\nconfidence: 0.7\ncount: 12\nneg: -3\nnone: null\nflag: true\n\
                    url: https://example.org/a#b\ntags:\n- ledger\n- 'on'\n- São Paulo\n\
                    aliases: []\nextra: {}\nq: \"it's\"\nsq: 'it''s ''quoted'''\nlinks:\n\
                    - rel: part-of\n  target: b003/_index\n- rel: related-to\n  target: b001/n7\n  confidence: 0.3\n\
                    nested:\n  k: v\n  l:\n  - 1\n  - x\n  deeper:\n    a: b\nindented:\n  - a\n  - b\nempty:\nlast: .5\n";
        assert!(agrees(text));
        let m = parse(text).unwrap();
        assert_eq!(m.get("sq"), Some(&Value::String("it's 'quoted'".into())));
        assert_eq!(m.get("empty"), Some(&Value::Null));
        // PyYAML's wrapped scalars, quoted and plain.
        let wrapped = "summary: 'Sales by region, Jan-Mar: 600 rows with channel,\n  value and margin. It''s\n  ERP.'\n\
                       title: a long plain\n  title over\n  three lines\nlinks:\n- rel: x\n  target: a very\n    long id\n\
                       - wrapped item\n  goes on\nlast: 1\n";
        assert!(agrees(wrapped));
        let m = parse(wrapped).unwrap();
        assert_eq!(m.get("title"), Some(&Value::String("a long plain title over three lines".into())));
    }

    #[test]
    fn declines_what_it_does_not_know() {
        for text in [
            "a: 1 # comment\n",
            "# comment\na: 1\n",
            "a: |\n  block\n",
            "a: >\n  folded\n",
            "a: [x, y]\n",
            "a: {b: 1}\n",
            "a: &x 1\nb: *x\n",
            "a: !tag x\n",
            "a: \"esc\\n\"\n",
            "a: x\na: y\n",
            "a:\tx\n",
            "a: x\r\n",
            "a: one\n  - two\n",
            "a: one\n  #two\n",
            "a: one \n  two\n",
            "a: 'open\n\n  close'\n",
            "'a': 1\n",
            "? a\n: 1\n",
            "a: x\n\nb: y\n",
            "true: 1\n",
            "1: x\n",
            "a: ...\n",
            "a: ---\n",
            "a: -\n",
            "a: - x\n",
            "- a\n- b\n",
            "a:  two spaces\n",
            "a: trailing \n",
            "a:\n  - x\n  b: c\n",
            "a:\n- - x\n",
            "a:\n-\n",
            "a: b: c\n",
            "a: x\u{2028}y\n",
            "a: x\u{85}y\n",
            " a: indented\n",
            "a: -x\n",
        ] {
            assert!(parse(text).is_none(), "took {text:?}");
        }
    }

    #[test]
    fn numbers_and_words_resolve_as_the_library_resolves_them() {
        for v in [
            "0",
            "007",
            "-0",
            "+1",
            "0x1F",
            "0o17",
            "1e3",
            "1.0e-05",
            "-.inf",
            ".nan",
            ".NaN",
            ".5",
            "-2.5",
            "1_000",
            "12:30",
            "2026-01-01",
            "99999999999999999999999",
            "-99999999999999999999",
            "~",
            "Null",
            "TRUE",
            "False",
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
            "nan",
            "inf",
            "infinity",
            "Infinity",
            "+x",
            ".x",
            "1a",
            "=",
            "<<",
            "/usr/share",
            "(x)",
            "_a",
            "a'b",
            "a\"b",
            "C#",
            "a:b",
            "x,y",
            "a[0]",
            "€5",
        ] {
            let text = format!("k: {v}\n");
            // Declined only where the library fails too (a u128).
            assert!(agrees(&text) || library(&text).is_none(), "declined {v:?}");
        }
    }

    fn text_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex("[a-zA-Z0-9 :#'\"\\-.,\\[\\]{}&*!|>%@`?~+_/éΩ€\t\n]{0,12}").unwrap()
    }

    fn value_strategy() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            text_strategy().prop_map(Value::String),
            any::<i64>().prop_map(|n| Value::Number(n.into())),
            (-1e6f64..1e6).prop_map(|f| Value::Number(f.into())),
            any::<bool>().prop_map(Value::Bool),
            Just(Value::Null),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Sequence),
                proptest::collection::vec(("[a-z_][a-z0-9_-]{0,6}", inner), 0..4)
                    .prop_map(|kv| Value::Mapping(kv.into_iter().map(|(k, v)| (Value::String(k), v)).collect())),
            ]
        })
    }

    proptest::proptest! {
        /// What the emitter writes, the fast path reads as the library
        /// does (or declines); edited at random, it still never disagrees.
        #[test]
        fn agrees_with_the_library_on_emitted_and_edited_texts(
            kv in proptest::collection::vec(("[a-z_][a-z0-9_-]{0,6}", value_strategy()), 1..8),
            edits in proptest::collection::vec((0usize..400, "[ :#'\"\\-\n\t\\[{a1]{1,2}"), 0..3),
        ) {
            let m: Mapping = kv.into_iter().map(|(k, v)| (Value::String(k), v)).collect();
            let text = format!("\n{}\n", super::super::emit_mapping(&m));
            agrees(&text);
            let mut edited = text.clone();
            for (at, s) in edits {
                let mut at = at.min(edited.len());
                while !edited.is_char_boundary(at) {
                    at -= 1;
                }
                edited.insert_str(at, &s);
            }
            agrees(&edited);
        }
    }

    /// Every frontmatter of the fixture forests (hand-written and the
    /// reference engine's): read as the library reads it, and most of it
    /// by the fast path.
    #[test]
    fn agrees_on_the_fixture_forests() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures");
        let (mut taken, mut total) = (0, 0);
        for entry in walkdir::WalkDir::new(root).into_iter().filter_map(Result::ok) {
            let Ok(text) = std::fs::read_to_string(entry.path()) else { continue };
            let Some(rest) = text.strip_prefix("---") else { continue };
            let Some(end) = rest.find("\n---") else { continue };
            total += 1;
            taken += usize::from(agrees(&rest[..end]));
        }
        assert!(total > 100 && taken * 10 > total * 9, "took {taken} of {total}");
    }
}
