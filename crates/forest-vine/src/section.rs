//! Sections and blocks of a Markdown body: the pure text functions behind
//! `pick`'s sections and pages and the dataset digest's manual and notes.
//!
//! In: body text. Out: slices and matched sections. Touches nothing.

/// Header lines `(level, text, line index)` of a body (H1–H6).
fn headers(lines: &[&str]) -> Vec<(usize, String, usize)> {
    let mut out = vec![];
    for (i, l) in lines.iter().enumerate() {
        let hashes = l.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && l[hashes..].starts_with([' ', '\t']) {
            out.push((hashes, l[hashes..].trim().to_string(), i));
        }
    }
    out
}

/// `extract_section`: case-insensitive exact header match first, then
/// prefix; content runs to the next header of the same or higher level.
/// Returns `(matched header text, content right-trimmed)`.
pub fn extract_section(body: &str, wanted: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = body.split('\n').collect();
    let hs = headers(&lines);
    let w = wanted.trim().to_lowercase();
    let found = hs
        .iter()
        .position(|h| h.1.to_lowercase() == w)
        .or_else(|| hs.iter().position(|h| h.1.to_lowercase().starts_with(&w)))?;
    let (level, text, start) = &hs[found];
    let end = hs[found + 1..].iter().find(|h| h.0 <= *level).map(|h| h.2).unwrap_or(lines.len());
    let content = lines[start + 1..end].join("\n");
    Some((text.clone(), content.trim_end().to_string()))
}

/// Blocks of a body: split after every run of ≥2 `\n`, each block keeping
/// its trailing newlines, so the blocks concatenate to the body.
pub fn blocks(body: &str) -> Vec<&str> {
    let bytes = body.as_bytes();
    let mut out = vec![];
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            let mut j = i;
            while j < bytes.len() && bytes[j] == b'\n' {
                j += 1;
            }
            if j - i >= 2 {
                out.push(&body[start..j]);
                start = j;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    if start < body.len() {
        out.push(&body[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_reassemble() {
        let b = "# T\n\npara one\nline\n\n\n## S\ntext\n\nlast";
        let bl = blocks(b);
        assert_eq!(bl.concat(), b);
        assert_eq!(bl.len(), 4);
    }

    #[test]
    fn sections_exact_then_prefix() {
        let b = "# T\n\n## Experiment 07\nseven\n### Sub\ns\n## Experiment 070\nx\n## Other\no";
        assert_eq!(extract_section(b, "experiment 07").unwrap().1, "seven\n### Sub\ns");
        assert_eq!(extract_section(b, "Oth").unwrap(), ("Other".to_string(), "o".to_string()));
        assert!(extract_section(b, "nope").is_none());
    }
}
