//! `_index.md` editing (dialect §1.6): entry lines, sections, coverage.

/// Section holding sub-branch entries.
pub const SUB_BRANCHES: &str = "## Sub-branches";
/// Section holding leaf entries.
pub const DIRECT_BANANAS: &str = "## Direct bananas";
/// Section for hand-written cross trails.
pub const CROSS_TRAILS: &str = "## Cross trails";
/// Master-only section maintained by the Ranger.
pub const LANDMARKS: &str = "## Landmarks";

/// `- [[id]] — summary` (plus an optional coverage suffix).
pub fn entry_line(id: &str, summary: &str, coverage: Option<&str>) -> String {
    let summary = summary.split_whitespace().collect::<Vec<_>>().join(" ");
    match coverage {
        Some(c) if !c.is_empty() => format!("- [[{id}]] — {summary} {c}."),
        _ => format!("- [[{id}]] — {summary}"),
    }
}

fn is_entry_for(line: &str, id: &str) -> bool {
    let Some(rest) = line.strip_prefix("- [[") else {
        return false;
    };
    let Some(rest) = rest.strip_prefix(id) else {
        return false;
    };
    rest.starts_with("]]") || rest.starts_with('|')
}

/// Id named by an entry line (`- [[id]]…` or `- [[id|alias]]…`).
pub fn entry_id(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("- [[")?;
    let end = rest.find([']', '|'])?;
    Some(&rest[..end])
}

/// Line range `[start, end)` of a section's content (after its heading line).
fn section_range(lines: &[String], heading: &str) -> Option<(usize, usize)> {
    let start = lines.iter().position(|l| l.trim_end() == heading)?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("## ") || l.starts_with("# "))
        .map(|p| start + 1 + p)
        .unwrap_or(lines.len());
    Some((start + 1, end))
}

/// Remove every entry line for `id` anywhere in the entry sections; true if any.
pub fn remove_entry(body: &str, id: &str) -> (String, bool) {
    let mut removed = false;
    let kept: Vec<&str> = body
        .lines()
        .filter(|l| {
            let hit = is_entry_for(l, id);
            removed |= hit;
            !hit
        })
        .collect();
    (join(kept.iter().map(|s| s.to_string()).collect()), removed)
}

fn join(lines: Vec<String>) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// Put `line` for `id` into `heading`'s section: an existing line for the id
/// is replaced in place; otherwise the line is appended at the section's end
/// (the section is appended to the body when missing).
pub fn upsert_entry(body: &str, heading: &str, id: &str, line: &str) -> String {
    let mut lines: Vec<String> = body.lines().map(|s| s.to_string()).collect();
    // Replace in place when the entry already sits in this section.
    if let Some((s, e)) = section_range(&lines, heading) {
        if let Some(p) = (s..e).find(|&i| is_entry_for(&lines[i], id)) {
            lines[p] = line.to_string();
            // Drop duplicates elsewhere.
            let keep: Vec<String> = lines
                .into_iter()
                .enumerate()
                .filter(|(i, l)| *i == p || !is_entry_for(l, id))
                .map(|(_, l)| l)
                .collect();
            return join(keep);
        }
    }
    lines.retain(|l| !is_entry_for(l, id));
    if section_range(&lines, heading).is_none() {
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        lines.push(String::new());
        lines.push(heading.to_string());
        lines.push(String::new());
    }
    let (s, e) = section_range(&lines, heading).unwrap_or((lines.len(), lines.len()));
    // Insert after the last non-blank line of the section.
    let mut at = e;
    while at > s && lines[at - 1].trim().is_empty() {
        at -= 1;
    }
    if at == s {
        // Empty section: keep one blank line after the heading.
        if s < lines.len() && lines[s].trim().is_empty() {
            at = s + 1;
        } else {
            lines.insert(s, String::new());
            at = s + 1;
        }
    }
    lines.insert(at, line.to_string());
    // Keep a blank line before the next heading.
    if at + 1 < lines.len() && lines[at + 1].starts_with('#') {
        lines.insert(at + 1, String::new());
    }
    join(lines)
}

/// Entry lines (`- [[`) in a section.
pub fn section_entries(body: &str, heading: &str) -> Vec<String> {
    let lines: Vec<String> = body.lines().map(|s| s.to_string()).collect();
    match section_range(&lines, heading) {
        Some((s, e)) => lines[s..e].iter().filter(|l| l.starts_with("- [[")).cloned().collect(),
        None => vec![],
    }
}

/// Replace a section's content with `new_lines` (section appended if missing).
pub fn replace_section(body: &str, heading: &str, new_lines: &[String]) -> String {
    let mut lines: Vec<String> = body.lines().map(|s| s.to_string()).collect();
    if section_range(&lines, heading).is_none() {
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        lines.push(String::new());
        lines.push(heading.to_string());
    }
    let (s, e) = section_range(&lines, heading).unwrap_or((lines.len(), lines.len()));
    let mut content = vec![String::new()];
    content.extend(new_lines.iter().cloned());
    if e < lines.len() {
        content.push(String::new());
    }
    lines.splice(s..e, content);
    join(lines)
}

/// `"<b> bananas, <s> sub-branches"` from the body's two entry sections.
pub fn coverage_of(body: &str) -> String {
    let b = section_entries(body, DIRECT_BANANAS).len();
    let s = section_entries(body, SUB_BRANCHES).len();
    format!("{b} bananas, {s} sub-branches")
}

/// Parse a coverage string (`1 banana, 2 sub-branches.`) into (notes, branches).
pub fn parse_coverage(c: &str) -> Option<(u64, u64)> {
    let c = c.trim().trim_end_matches('.');
    let (a, b) = c.split_once(',')?;
    let mut a = a.split_whitespace();
    let mut b = b.split_whitespace();
    let n: u64 = a.next()?.parse().ok()?;
    let an = a.next()?;
    let s: u64 = b.next()?.parse().ok()?;
    let bn = b.next()?;
    if !(an == "banana" || an == "bananas") || !(bn == "sub-branch" || bn == "sub-branches") {
        return None;
    }
    Some((n, s))
}

/// Body of a new branch (dialect §3.4).
pub fn branch_body(title: &str, summary: &str) -> String {
    format!("# {title}\n\n> {summary}\n\n{SUB_BRANCHES}\n\n{DIRECT_BANANAS}\n\n{CROSS_TRAILS}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_and_coverage() {
        let body = branch_body("Sales", "Docs.");
        let b = upsert_entry(&body, DIRECT_BANANAS, "s/a", &entry_line("s/a", "A.", None));
        let b = upsert_entry(&b, DIRECT_BANANAS, "s/b", &entry_line("s/b", "B.", None));
        let b = upsert_entry(
            &b,
            SUB_BRANCHES,
            "s/x/_index",
            &entry_line("s/x/_index", "X.", Some("1 bananas, 0 sub-branches")),
        );
        let b = upsert_entry(&b, DIRECT_BANANAS, "s/a", &entry_line("s/a", "A2.", None));
        assert_eq!(coverage_of(&b), "2 bananas, 1 sub-branches");
        assert!(b.contains("- [[s/a]] — A2.\n- [[s/b]] — B."));
        assert!(b.contains("- [[s/x/_index]] — X. 1 bananas, 0 sub-branches."));
        assert!(b.contains("## Direct bananas\n\n- [[s/a]]"));
        assert!(b.contains("B.\n\n## Cross trails"));
        let (b2, removed) = remove_entry(&b, "s/b");
        assert!(removed);
        assert_eq!(coverage_of(&b2), "1 bananas, 1 sub-branches");
        assert_eq!(parse_coverage("1 banana, 2 sub-branches."), Some((1, 2)));
        assert_eq!(parse_coverage("junk"), None);
    }

    #[test]
    fn missing_section_is_appended() {
        let b = upsert_entry("# T\n", DIRECT_BANANAS, "a", "- [[a]] — x");
        assert_eq!(b, "# T\n\n## Direct bananas\n\n- [[a]] — x\n");
        let r = replace_section(&b, LANDMARKS, &["- [[a]] — x".into()]);
        assert!(r.ends_with("## Landmarks\n\n- [[a]] — x\n"));
    }
}
