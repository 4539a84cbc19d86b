//! Markdown / text passthrough with source-frontmatter lifting.

use crate::charset;
use crate::converter::{Conversion, Converter, Limits};
use crate::error::ConvertError;
use crate::values::SourceMeta;
use forest_model::slug::title_from_stem;
use std::path::Path;

/// `.md .markdown .txt` passthrough (dialect §3.5).
pub(crate) struct Passthrough;

/// File stem as a string (lossy).
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// File name as a string (lossy).
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Text of the first line starting with `# `, trimmed, if non-empty.
pub(crate) fn first_h1(text: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix("# ").map(|t| t.trim().to_string())).filter(|t| !t.is_empty())
}

/// Split a leading `---` frontmatter block (dialect §1.10 parser rules):
/// returns (yaml, body with leading newlines stripped).
fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---")?;
    // The opening line must be exactly `---`.
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))?;
    let (yaml, after) = if let Some(r) = rest.strip_prefix("---") {
        ("", r)
    } else {
        let end = rest.find("\n---")?;
        (&rest[..end], &rest[end + 4..])
    };
    // Drop the remainder of the closing line.
    let body = match after.find('\n') {
        Some(i) => &after[i + 1..],
        None => "",
    };
    Some((yaml, body.trim_start_matches(['\n', '\r'])))
}

fn string_list(v: Option<&yaml_serde::Value>) -> Vec<String> {
    use yaml_serde::Value;
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        Some(Value::Sequence(items)) => items
            .iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.trim().to_string()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// Parse frontmatter into [`SourceMeta`]; `None` if absent or not a mapping
/// (then the file is passed through untouched).
pub(crate) fn lift_frontmatter(text: &str) -> Option<(SourceMeta, &str)> {
    let (yaml, body) = split_frontmatter(text)?;
    let value: yaml_serde::Value = if yaml.trim().is_empty() {
        yaml_serde::Value::Mapping(Default::default())
    } else {
        yaml_serde::from_str(yaml).ok()?
    };
    let map = value.as_mapping()?;
    let title = match map.get("title") {
        Some(yaml_serde::Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    };
    let meta = SourceMeta {
        title,
        tags: string_list(map.get("tags")),
        aliases: string_list(map.get("aliases")),
        ..SourceMeta::default()
    };
    Some((meta, body))
}

impl Converter for Passthrough {
    fn name(&self) -> &str {
        "Markdown"
    }
    fn extensions(&self) -> Vec<String> {
        [".md", ".markdown", ".txt"].map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, _: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let text = decode_text(&std::fs::read(path)?);
        let text = text.as_str();
        // Only Markdown sources carry frontmatter; text routed here by content keeps its first lines.
        let is_md =
            path.extension().is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
        let (meta, body) = match is_md.then(|| lift_frontmatter(text)).flatten() {
            Some((meta, body)) => (meta, body.to_string()),
            None => {
                if is_md && text.starts_with("---\n") && text[4..].contains("\n---") {
                    warnings.push("frontmatter is not a YAML mapping; kept in the body".into());
                }
                (SourceMeta::default(), text.to_string())
            }
        };
        let title = meta.title.clone().or_else(|| first_h1(&body)).unwrap_or_else(|| title_from_stem(&stem(path)));
        Ok(Conversion::Markdown { title, body, meta })
    }
}

/// Plain-text families read as text documents: reStructuredText, AsciiDoc,
/// Org, `.text`, and any file the registry routes here by content
/// (`README`, `COPYING`, `changelog`). Titles follow each family's own
/// convention; the body is the text (UTF-8, else UTF-16 with BOM, else Latin-1).
pub(crate) struct PlainText;

/// Decode text bytes: UTF-8 (BOM stripped; 7-bit ISO-2022-JP/KR and HZ
/// recognised by their escapes), UTF-16 with BOM, else the charset
/// `chardetng` detects (Windows-1252 for Latin text, Big5, EUC-KR, Shift_JIS...).
pub(crate) fn decode_text(bytes: &[u8]) -> String {
    let (enc, bom) = encoding_rs::Encoding::for_bom(bytes).unwrap_or((encoding_rs::UTF_8, 0));
    let body = &bytes[bom..];
    if enc != encoding_rs::UTF_8 {
        return enc.decode_without_bom_handling(body).0.into_owned();
    }
    match std::str::from_utf8(body) {
        Ok(s) if bom == 0 => charset::decode_seven_bit(s).unwrap_or_else(|| s.to_string()),
        Ok(s) => s.to_string(),
        Err(_) => charset::decode_non_utf8(body),
    }
}

/// Decode non-UTF-8 bytes as the detected legacy charset even when they are
/// mostly valid UTF-8 (the registry's re-decode fallback for a body full of U+FFFD).
pub(crate) fn decode_legacy(bytes: &[u8]) -> String {
    let (enc, bom) = encoding_rs::Encoding::for_bom(bytes).unwrap_or((charset::detected(bytes), 0));
    enc.decode_without_bom_handling(&bytes[bom..]).0.into_owned()
}

/// Title by the text family's convention, if the text has one.
fn text_title(text: &str, ext: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(60).collect();
    let clean = |s: &str| {
        let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
        (!t.is_empty() && t.chars().count() <= 120).then_some(t)
    };
    match ext {
        ".adoc" | ".asciidoc" => lines.iter().find_map(|l| l.strip_prefix("= ").and_then(clean)),
        ".org" => lines.iter().find_map(|l| {
            let low = l.to_ascii_lowercase();
            low.starts_with("#+title:").then(|| clean(&l[8..])).flatten()
        }),
        _ => {
            // reStructuredText / setext: a line underlined (and maybe overlined) by = - ~ * #.
            let is_rule = |l: &str| {
                let t = l.trim_end();
                t.len() >= 3 && t.chars().all(|c| "=-~*#^".contains(c)) && t.chars().all(|c| t.starts_with(c))
            };
            (1..lines.len()).find_map(|i| {
                let cand = lines[i - 1].trim();
                (is_rule(lines[i]) && !cand.is_empty() && !is_rule(cand) && lines[i].trim().len() >= cand.len().min(3))
                    .then(|| clean(cand))
                    .flatten()
            })
        }
    }
}

impl Converter for PlainText {
    fn name(&self) -> &str {
        "PlainText"
    }
    fn extensions(&self) -> Vec<String> {
        [".rst", ".rest", ".adoc", ".asciidoc", ".org", ".text", ".textile", ".nfo"].map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let text = decode_text(&std::fs::read(path)?);
        let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy().to_lowercase())).unwrap_or_default();
        let title = text_title(&text, &ext).unwrap_or_else(|| title_from_stem(&stem(path)));
        Ok(Conversion::Markdown { title, body: text, meta: SourceMeta::default() })
    }
}

/// The registry's charset fallback, never claimed by extension: the file as
/// plain text in the charset `chardetng` detects, for a body that the first
/// decoding filled with U+FFFD.
pub(crate) struct Redecoded;

impl Converter for Redecoded {
    fn name(&self) -> &str {
        "Redecoded"
    }
    fn extensions(&self) -> Vec<String> {
        Vec::new()
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let text = decode_legacy(&std::fs::read(path)?);
        let title = first_h1(&text).unwrap_or_else(|| title_from_stem(&stem(path)));
        Ok(Conversion::Markdown { title, body: text, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_split_and_meta() {
        let t = "---\ntitle: Fancy\ntags: [a, b]\naliases: X-1\n---\n\n# H\n\nbody\n";
        let (meta, body) = lift_frontmatter(t).unwrap();
        assert_eq!(meta.title.as_deref(), Some("Fancy"));
        assert_eq!(meta.tags, vec!["a", "b"]);
        assert_eq!(meta.aliases, vec!["X-1"]);
        assert_eq!(body, "# H\n\nbody\n");
    }

    #[test]
    fn non_mapping_or_unclosed_frontmatter_is_kept() {
        assert!(lift_frontmatter("---\n- a\n---\nx").is_none());
        assert!(lift_frontmatter("---\ntitle: x\nno close").is_none());
        assert!(lift_frontmatter("# just text").is_none());
    }

    #[test]
    fn text_family_titles_and_decoding() {
        assert_eq!(text_title("=====\nThe Guide\n=====\n\nbody", ".rst"), Some("The Guide".into()));
        assert_eq!(text_title("Intro\n-----\n", ".rst"), Some("Intro".into()));
        assert_eq!(text_title("= Asciidoc Book\n", ".adoc"), Some("Asciidoc Book".into()));
        assert_eq!(text_title("#+TITLE: Org notes\n* a", ".org"), Some("Org notes".into()));
        assert_eq!(text_title("just text\n", ".text"), None);
        assert_eq!(decode_text(b"caf\xe9"), "café");
        assert_eq!(decode_text(b"\xff\xfeh\0i\0"), "hi");
    }

    #[test]
    fn h1_detection() {
        assert_eq!(first_h1("intro\n# Title here \nx"), Some("Title here".into()));
        assert_eq!(first_h1("## sub\n#nope"), None);
    }
}
