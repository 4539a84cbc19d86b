//! Branch `_index.md` bodies held parsed for the length of a batch, so an
//! entry upsert costs O(1) for a new child instead of a re-split and
//! re-join of a listing that grows with every batch. The edits give
//! exactly the text `forest_model::index::{upsert_entry, remove_entry}`
//! would, applied one after the other.

use forest_model::index;
use std::collections::HashMap;

/// A branch body as lines, with the entry ids it names.
#[derive(Debug, Clone)]
pub(crate) struct EntryBody {
    lines: Vec<String>,
    /// Entry lines per id (any section), for O(1) absence checks.
    ids: HashMap<String, usize>,
    /// Cached insertion point (heading, index) of the last fast append.
    tail: Option<(String, usize)>,
    /// The text as parsed already was in rendered form (else the first
    /// edit changes it, as the pure edits' re-join would).
    normalized: bool,
}

fn entry_id(line: &str) -> Option<&str> {
    index::entry_id(line)
}

impl EntryBody {
    /// Parse a body once.
    pub(crate) fn parse(body: &str) -> EntryBody {
        let lines: Vec<String> = body.lines().map(str::to_string).collect();
        let mut ids: HashMap<String, usize> = HashMap::new();
        for l in &lines {
            if let Some(id) = entry_id(l) {
                *ids.entry(id.to_string()).or_default() += 1;
            }
        }
        let mut b = EntryBody { lines, ids, tail: None, normalized: true };
        b.normalized = b.render() == body;
        b
    }

    /// The body text (as `index` renders it: lines joined, final newline).
    pub(crate) fn render(&self) -> String {
        let mut s = self.lines.join("\n");
        s.push('\n');
        s
    }

    /// True when some line names `id` as an entry.
    pub(crate) fn has(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    /// The entry line for `id` in `heading`'s section, if any.
    pub(crate) fn entry_in(&self, heading: &str, id: &str) -> Option<&str> {
        if !self.has(id) {
            return None;
        }
        let (start, end) = self.section(heading)?;
        self.lines[start..end].iter().map(String::as_str).find(|l| l.starts_with("- [[") && entry_id(l) == Some(id))
    }

    /// Line range `[start, end)` of a section's content (as `index` finds it).
    fn section(&self, heading: &str) -> Option<(usize, usize)> {
        let start = self.lines.iter().position(|l| l.trim_end() == heading)? + 1;
        let end = self.lines[start..]
            .iter()
            .position(|l| l.starts_with("## ") || l.starts_with("# "))
            .map(|p| start + p)
            .unwrap_or(self.lines.len());
        Some((start, end))
    }

    /// `index::upsert_entry` on this body. A child the body does not name
    /// yet is appended at its section's end in O(1) (amortised).
    /// True when the text changed.
    pub(crate) fn upsert(&mut self, heading: &str, id: &str, line: &str) -> bool {
        if !self.has(id) {
            if let Some(at) = self.append_point(heading) {
                self.lines.insert(at, line.to_string());
                // Keep a blank line before the next heading.
                if at + 1 < self.lines.len() && self.lines[at + 1].starts_with('#') {
                    self.lines.insert(at + 1, String::new());
                }
                self.tail = Some((heading.to_string(), at + 1));
                self.ids.insert(id.to_string(), 1);
                return true;
            }
        }
        self.slow(|b| index::upsert_entry(b, heading, id, line))
    }

    /// Replace the body's first blockquote line (before any section) with
    /// `> summary`, keeping the scent and the body in step.
    pub(crate) fn set_blockquote(&mut self, summary: &str) -> bool {
        let Some(i) =
            self.lines.iter().take_while(|l| !l.starts_with("## ")).position(|l| l.trim_start().starts_with('>'))
        else {
            return false;
        };
        let line = format!("> {summary}");
        if self.lines[i] == line {
            return false;
        }
        self.lines[i] = line;
        self.tail = None;
        true
    }

    /// Every id some entry line names.
    pub(crate) fn entry_ids(&self) -> impl Iterator<Item = &str> {
        self.ids.keys().map(String::as_str)
    }

    /// `(id, line)` of the entry lines in `heading`'s section.
    pub(crate) fn section_entries(&self, heading: &str) -> Vec<(String, String)> {
        let Some((start, end)) = self.section(heading) else { return vec![] };
        self.lines[start..end]
            .iter()
            .filter(|l| l.starts_with("- [["))
            .filter_map(|l| Some((entry_id(l)?.to_string(), l.clone())))
            .collect()
    }

    /// `index::remove_entry` for every id of `gone` in one pass (a split
    /// moves many children at once); true when a line went.
    pub(crate) fn remove_many(&mut self, gone: &std::collections::HashSet<String>) -> bool {
        if !gone.iter().any(|id| self.has(id)) {
            return false;
        }
        let old = self.render();
        let kept: Vec<&str> = old
            .lines()
            .filter(|l| !(l.starts_with("- [[") && entry_id(l).is_some_and(|id| gone.contains(id))))
            .collect();
        let mut text = kept.join("\n");
        text.push('\n');
        *self = EntryBody::parse(&text);
        true
    }

    /// `index::remove_entry` on this body; true when a line went.
    pub(crate) fn remove(&mut self, id: &str) -> bool {
        if !self.has(id) {
            return false;
        }
        self.slow(|b| index::remove_entry(b, id).0)
    }

    /// Replace the whole text through a pure `index` edit (rare paths);
    /// true when the text changed.
    fn slow(&mut self, edit: impl FnOnce(&str) -> String) -> bool {
        let old = self.render();
        let text = edit(&old);
        if text == old {
            // The pure edit's re-join alone normalises a raw body.
            return !std::mem::replace(&mut self.normalized, true);
        }
        *self = EntryBody::parse(&text);
        true
    }

    /// Where the fast path may insert a new entry of `heading`: after the
    /// section's last non-blank line, when the section exists and holds
    /// one (the other cases go through the pure edit once).
    fn append_point(&mut self, heading: &str) -> Option<usize> {
        if let Some((h, at)) = &self.tail {
            if h == heading {
                return Some(*at);
            }
        }
        let (start, end) = self.section(heading)?;
        let mut at = end;
        while at > start && self.lines[at - 1].trim().is_empty() {
            at -= 1;
        }
        if at == start {
            return None;
        }
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forest_model::index::{branch_body, entry_line, remove_entry, upsert_entry, DIRECT_BANANAS, SUB_BRANCHES};

    /// Every edit sequence gives the text the pure `index` edits give.
    #[test]
    fn same_text_as_the_pure_edits() {
        let bodies = [
            branch_body("T", "S."),
            "# T\n\n## Direct bananas\n- [[x]] — X\n## Cross trails\n".to_string(),
            "# T\n\n> s\n".to_string(),
            "# T\n\n## Sub-branches\n\n- [[b/_index]] — B\n\n## Direct bananas\n\n- [[a]] — A\n".to_string(),
        ];
        type Op = (&'static str, &'static str, &'static str);
        let ops: [Op; 9] = [
            (DIRECT_BANANAS, "n1", "one"),
            (DIRECT_BANANAS, "n2", "two"),
            (SUB_BRANCHES, "c/_index", "sub"),
            (DIRECT_BANANAS, "n3", "three"),
            (DIRECT_BANANAS, "n1", "one again"),
            ("-", "n2", ""),
            (DIRECT_BANANAS, "a", "moved"),
            (DIRECT_BANANAS, "n2", "back"),
            ("-", "missing", ""),
        ];
        for body in &bodies {
            let mut want = body.clone();
            let mut got = EntryBody::parse(body);
            for (h, id, s) in ops {
                let before = want.clone();
                let changed = if h == "-" {
                    want = remove_entry(&want, id).0;
                    got.remove(id)
                } else {
                    want = upsert_entry(&want, h, id, &entry_line(id, s, None));
                    got.upsert(h, id, &entry_line(id, s, None))
                };
                assert_eq!(got.render(), want, "after {h} {id} on {body:?}");
                assert_eq!(changed, before != want);
            }
            assert_eq!(got.entry_in(DIRECT_BANANAS, "n2"), Some(entry_line("n2", "back", None).as_str()));
            // One-pass removal gives the text of removals one after the other.
            let gone: std::collections::HashSet<String> =
                ["n1", "a", "missing"].iter().map(|s| s.to_string()).collect();
            for id in &gone {
                want = remove_entry(&want, id).0;
            }
            got.remove_many(&gone);
            assert_eq!(got.render(), want);
            assert!(!got.remove_many(&gone));
        }
    }
}
