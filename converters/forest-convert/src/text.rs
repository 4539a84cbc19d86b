//! Markdown / text passthrough with source-frontmatter lifting.

use crate::error::ConvertError;
use crate::registry::Converter;
use crate::{Conversion, Limits, SourceMeta};
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
    let meta = SourceMeta { title, tags: string_list(map.get("tags")), aliases: string_list(map.get("aliases")) };
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
        let bytes = std::fs::read(path)?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let is_md = !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("txt"));
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
    fn h1_detection() {
        assert_eq!(first_h1("intro\n# Title here \nx"), Some("Title here".into()));
        assert_eq!(first_h1("## sub\n#nope"), None);
    }
}
