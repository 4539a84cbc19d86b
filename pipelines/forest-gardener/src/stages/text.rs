//! Pure text helpers shared by the stages: extensions, body normalisation,
//! `## Notes` preservation, dataset map sections, coverage suffixes.

use crate::options::DraftLink;
use forest_model::index;
use forest_model::slug::slugify;
use forest_model::yaml::Value;

pub(crate) const MEDIA_EXTS: [&str; 14] = [
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".mp3", ".wav", ".m4a", ".ogg", ".flac", ".mp4", ".mov", ".mkv", ".webm",
];
pub(crate) const TEXT_EXTS: [&str; 3] = [".md", ".markdown", ".txt"];

/// The dialect's `payload_type` of an original, by extension (§1.8).
pub(crate) fn payload_type_of(ext: &str) -> Option<&'static str> {
    match ext {
        ".pdf" => Some("pdf"),
        ".docx" => Some("docx"),
        ".png" | ".jpg" | ".jpeg" | ".gif" | ".webp" => Some("image"),
        ".mp3" | ".wav" | ".m4a" | ".ogg" | ".flac" => Some("audio"),
        _ => None,
    }
}

pub(crate) fn ext_of(rel: &str) -> String {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    match file.rfind('.') {
        Some(i) if i > 0 => file[i..].to_lowercase(),
        _ => String::new(),
    }
}

pub(crate) fn stem_of(rel: &str) -> String {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    match file.rfind('.') {
        Some(i) if i > 0 => file[..i].to_string(),
        _ => file.to_string(),
    }
}

/// Empty -> `# title`; not starting with `#` -> `# title` prepended, so a
/// headingless text gets the same H1 on adopt and every sync.
pub(crate) fn normalize_body(body: &str, title: &str) -> String {
    let b = body.trim_start_matches(['\n', '\r']).trim_end();
    if b.is_empty() {
        format!("# {title}\n")
    } else if !b.starts_with('#') {
        format!("# {title}\n\n{b}\n")
    } else {
        format!("{b}\n")
    }
}

pub(crate) fn clean_tag(t: &str) -> String {
    slugify(t).replace('.', "-").trim_matches('-').to_string()
}

/// Append the config's default tags (cleaned, not yet present), then drop
/// duplicates keeping first occurrences.
pub(crate) fn with_default_tags(tags: &mut Vec<String>, defaults: &[String]) {
    for t in defaults {
        let t = clean_tag(t);
        if !t.is_empty() && !tags.contains(&t) {
            tags.push(t);
        }
    }
    let mut seen = std::collections::HashSet::new();
    tags.retain(|t| seen.insert(t.clone()));
}
/// The `N bananas, M sub-branches` suffix an entry line carries, if any.
pub(crate) fn coverage_suffix(line: &str) -> Option<String> {
    let t = line.trim_end().trim_end_matches('.');
    let i = t.rfind(['.', '!', '?'])?;
    let tail = t[i + 1..].trim();
    index::parse_coverage(tail).map(|_| tail.to_string())
}

/// Replace a body's content while keeping a hand-written `## Notes` section.
pub(crate) fn keep_notes(old: &str, fresh: &str) -> String {
    let notes = section_text(old, "## Notes");
    match notes {
        Some(n) if section_text(fresh, "## Notes").is_none() => {
            format!("{}\n\n{}\n", fresh.trim_end(), n.trim_end())
        }
        _ => fresh.to_string(),
    }
}

/// A whole `## X` section (heading included) up to the next H1/H2.
pub(crate) fn section_text(body: &str, heading: &str) -> Option<String> {
    let lines: Vec<&str> = body.lines().collect();
    let s = lines.iter().position(|l| l.trim_end() == heading)?;
    let e = lines[s + 1..]
        .iter()
        .position(|l| l.starts_with("## ") || l.starts_with("# "))
        .map(|p| s + 1 + p)
        .unwrap_or(lines.len());
    Some(lines[s..e].join("\n"))
}

/// Rewrite only `## Query manual` and `## Sample rows` (appended if missing).
pub(crate) fn replace_map_sections(old: &str, rendered: &str) -> String {
    let mut body = old.to_string();
    for h in ["## Query manual", "## Sample rows"] {
        let Some(new_sec) = section_text(rendered, h) else {
            continue;
        };
        match section_text(&body, h) {
            Some(old_sec) => body = body.replacen(&old_sec, new_sec.trim_end(), 1),
            None => body = format!("{}\n\n{}\n", body.trim_end(), new_sec.trim_end()),
        }
    }
    body
}

/// Drafted links as a `links:` frontmatter value.
pub(crate) fn links_value(links: &[DraftLink]) -> Value {
    Value::Sequence(
        links
            .iter()
            .map(|l| {
                let mut m = forest_model::yaml::Mapping::new();
                m.insert("rel".into(), l.rel.clone().into());
                m.insert("target".into(), l.target.clone().into());
                if l.confidence < 1.0 {
                    m.insert("confidence".into(), Value::from(l.confidence));
                }
                if let Some(n) = l.note.as_ref().filter(|n| !n.trim().is_empty()) {
                    m.insert("note".into(), n.clone().into());
                }
                Value::Mapping(m)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_normalisation() {
        assert_eq!(normalize_body("", "T"), "# T\n");
        assert_eq!(normalize_body("text", "T"), "# T\n\ntext\n");
        assert_eq!(normalize_body("# H\nx", "T"), "# H\nx\n");
    }

    #[test]
    fn notes_survive() {
        let old = "# T\n\nold\n\n## Notes\n\nmine\n";
        assert_eq!(keep_notes(old, "# T\n\nnew\n"), "# T\n\nnew\n\n## Notes\n\nmine\n");
        let ds = "# D\n\n## Query manual\n\nold manual\n\n## Sample rows\n\nold rows\n\n## Notes\n\nkeep\n";
        let r = replace_map_sections(ds, "# D\n\n## Query manual\n\nnew manual\n\n## Sample rows\n\nnew rows\n");
        assert!(r.contains("new manual") && r.contains("new rows") && r.contains("## Notes\n\nkeep"));
        assert!(!r.contains("old"));
    }

    #[test]
    fn coverage_suffix_parse() {
        assert_eq!(
            coverage_suffix("- [[a/_index]] — Region. 2 bananas, 0 sub-branches.").as_deref(),
            Some("2 bananas, 0 sub-branches")
        );
        assert_eq!(coverage_suffix("- [[a]] — Plain summary."), None);
    }
}
