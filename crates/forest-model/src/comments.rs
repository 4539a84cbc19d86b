//! The prose a code or configuration body carries in its comments (issue
//! 26): a source file, a script or a `.conf` whose body has no running text
//! still says what it is in its leading comment ("This file is read by
//! gpgconf(1) to setup defaults for all or specified users and groups.").
//! [`comment_prose`] lifts that text out as plain paragraphs, so
//! `derive_summary` can fall back to it instead of a placeholder.
//!
//! Pure and linear over the first [`SCAN_BYTES`] of the body. Read inside
//! fenced code blocks: `/* */` and `/** */` blocks (leading `*` dropped),
//! `//`, `///`, `//!`, `#`, `--`, `;`, `%` line comments, Python
//! triple-quoted strings; a body with no fence counts as code when most of
//! its lines are `#` lines (a configuration file converted as text, whose
//! comments Markdown would read as headings). Shebangs, C preprocessor
//! lines (`#` then a lower-case letter), rules (`#----`) and code lines end
//! a paragraph.

use crate::extract::{lead, SCAN_BYTES};

/// Line-comment leaders, longest first.
const LINE_COMMENTS: [&str; 9] = ["///", "//!", "//", "##", "#", "--", ";;", ";", "%"];

/// Whether a body without fences reads as a `#`-commented file: at least 3
/// non-blank lines, more than half of them starting with `#`.
fn hash_commented(text: &str) -> bool {
    let (mut lines, mut hashes) = (0usize, 0usize);
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        lines += 1;
        hashes += usize::from(l.starts_with('#'));
    }
    lines >= 3 && hashes * 2 > lines
}

struct Out {
    text: String,
    open: bool,
}

impl Out {
    /// Append one comment line; a line with no word ends the paragraph.
    fn line(&mut self, s: &str) {
        let s = s.trim();
        if s.chars().any(char::is_alphanumeric) {
            self.text.push_str(s);
            self.text.push('\n');
            self.open = true;
        } else {
            self.end();
        }
    }

    fn end(&mut self) {
        if self.open {
            self.text.push('\n');
            self.open = false;
        }
    }
}

/// The comment text of `markdown`'s code, as paragraphs separated by blank
/// lines (empty when there is none).
pub fn comment_prose(markdown: &str) -> String {
    let text = lead(markdown, SCAN_BYTES);
    let mut in_code = !text.lines().any(|l| l.trim_start().starts_with("```")) && hash_commented(text);
    let unfenced = in_code;
    let mut out = Out { text: String::new(), open: false };
    let mut block = false; // inside /* ... */
    let mut quote: Option<&str> = None; // inside a triple-quoted string
    for raw in text.lines() {
        let l = raw.trim();
        if !unfenced && (l.starts_with("```") || l.starts_with("~~~")) {
            in_code = !in_code;
            out.end();
            continue;
        }
        if !in_code {
            continue;
        }
        if block {
            match l.find("*/") {
                Some(i) => {
                    out.line(l[..i].trim_start_matches('*'));
                    block = false;
                    out.end();
                }
                None => out.line(l.trim_start_matches('*')),
            }
            continue;
        }
        if let Some(q) = quote {
            match l.find(q) {
                Some(i) => {
                    out.line(&l[..i]);
                    quote = None;
                    out.end();
                }
                None => out.line(l),
            }
            continue;
        }
        if let Some(rest) = l.strip_prefix("/*") {
            let rest = rest.trim_start_matches(['*', '!']);
            match rest.find("*/") {
                Some(i) => {
                    out.line(&rest[..i]);
                    out.end();
                }
                None => {
                    out.line(rest);
                    block = true;
                }
            }
            continue;
        }
        let opened = ["\"\"\"", "'''"].into_iter().find_map(|q| {
            let rest = l.trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B']);
            rest.strip_prefix(q).map(|r| (q, r))
        });
        if let Some((q, rest)) = opened {
            match rest.find(q) {
                Some(i) => {
                    out.line(&rest[..i]);
                    out.end();
                }
                None => {
                    out.line(rest);
                    quote = Some(q);
                }
            }
            continue;
        }
        // A shebang, or a C preprocessor line (`#include`, `#define`): code.
        if l.starts_with("#!") || l.strip_prefix('#').is_some_and(|r| r.starts_with(|c: char| c.is_ascii_lowercase())) {
            out.end();
            continue;
        }
        match LINE_COMMENTS.iter().find(|p| l.starts_with(*p)) {
            Some(p) => out.line(&l[p.len()..]),
            None => out.end(),
        }
    }
    out.text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scent::derive_summary;

    #[test]
    fn a_config_file_converted_as_text_is_read_from_its_comments() {
        // /usr/share/doc/gpgconf/examples/gpgconf.conf, as the Gardener plants it.
        let md = "# gpgconf.conf - configuration for gpgconf\n\
                  #----------------------------------------------------------------------\n\
                  # This file is read by gpgconf(1) to setup defaults for all or\n\
                  # specified users and groups.  It may be used to change the hardwired\n\
                  # defaults in gpgconf and to enforce certain values for the various\n\
                  # GnuPG related configuration files.\n\
                  #\n\
                  # NOTE: This is a legacy mechanism.\n";
        let prose = comment_prose(md);
        assert!(prose.starts_with("gpgconf.conf - configuration for gpgconf\n\nThis file is read by"), "{prose}");
        let s = derive_summary(md, "gpgconf");
        assert!(s.contains("This file is read by gpgconf(1) to setup defaults"), "{s}");
    }

    #[test]
    fn block_line_and_docstring_comments_in_fences() {
        let c = "# ex\n\n```c\n/*\n * ex.c -- a tiny example of the Nettle hash interface.\n *\n * Reads stdin.\n */\n\
                 #include <stdio.h>\nint main(void) { return 0; } // done\n```\n";
        assert_eq!(comment_prose(c), "ex.c -- a tiny example of the Nettle hash interface.\n\nReads stdin.\n\n");
        let py =
            "```python\n#!/usr/bin/env python3\n\"\"\"Parse the release notes\nof a package.\"\"\"\nimport os\n```\n";
        assert_eq!(comment_prose(py), "Parse the release notes\nof a package.\n\n");
        let one = "```js\n/** Draws the chart. */\nlet x = 1;\n// Second note.\n```";
        assert_eq!(comment_prose(one), "Draws the chart.\n\nSecond note.\n\n");
        // Prose outside fences is not comment text; Markdown headings are not comments.
        assert_eq!(comment_prose("# Title\n\nSome text.\n\n## More\n\nText.\n"), "");
    }

    #[test]
    fn a_code_body_without_prose_gets_its_comment_as_summary() {
        let md = "# ucf helper\n\n```bash\n#!/bin/bash\n# Check that a locally changed configuration file is kept \
                  across upgrades.\nhandle_all_ucf_files $PKGDIR\n```\n";
        let s = derive_summary(md, "ucf helper");
        assert_eq!(s, "Check that a locally changed configuration file is kept across upgrades.");
        // Nothing but code: still the placeholder.
        let bare = "# x\n\n```json\n{\"a\": 1}\n```\n";
        assert_eq!(derive_summary(bare, "x"), crate::scent::pending_summary("x"));
    }

    #[test]
    fn hostile_input_is_bounded_and_safe() {
        let long = format!("```c\n/*{}", "word ".repeat(200_000));
        assert!(comment_prose(&long).len() <= SCAN_BYTES + 2);
        for s in ["", "```", "/*", "\"\"\"", "#\n#\n#", "```\n*/\n'''\n```"] {
            let _ = comment_prose(s);
            let _ = derive_summary(s, "t");
        }
    }
}
