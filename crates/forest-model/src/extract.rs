//! LLM-free scent from the content (issue 26): the prose of a converted
//! body without its boilerplate, and a lead-biased extractive summary of its
//! most informative sentences.
//!
//! Pure and linear: only the first [`SCAN_BYTES`] of a body are read, each
//! line is classified once (heading, setext/ASCII rule, table, code, list
//! item, changelog entry line, licence or page furniture, field header,
//! prose), and sentences are scored by position, length and how much of
//! them is words rather than punctuation or licence text.
//! Code identifiers, paths, versions and file names stay verbatim
//! (`snake_case`, `__init__`, `en_US.UTF-8`, `C++`, `*.tar.gz`): Markdown
//! emphasis is stripped only where it is emphasis.

use once_cell::sync::Lazy;
use regex::Regex;

/// Bytes of a body that scent derivation reads (the lead of a document).
pub const SCAN_BYTES: usize = 24 * 1024;

/// What a paragraph of the body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// An ATX or setext heading.
    Heading,
    /// Running text.
    Prose,
    /// A list item.
    Item,
}

/// One paragraph of the body, inline Markdown already cleaned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub kind: BlockKind,
    pub text: String,
}

static CHANGELOG_ENTRY: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"^[a-z0-9][a-z0-9.+-]* \([^)]*\) [^;]*; *urgency=").expect("static regex"));
static GNU_CHANGELOG: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"^\d{4}-\d{2}-\d{2} .*<[^>]*@[^>]*>").expect("static regex"));
static VERSION_LINE: Lazy<Regex> = Lazy::new(|| {
    Regex::new(
        r"(?i)^(version|release|changes in|\*)?\s*v?\d+(\.\d+)+[a-z0-9.+~-]*(\s*[(:,-].{0,40}|\s+of\s+[\w ,.]{0,20}\d{4})?$",
    )
    .expect("static regex")
});
static FIELD: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"^([A-Z][A-Za-z]*(-[A-Za-z]+)*):(\s+(.*))?$").expect("static regex"));
static LIST_ITEM: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"^([-*+•]|\d{1,3}[.)]|[a-z][.)])\s+(.*)$").expect("static regex"));
/// An editor's mode line: Emacs `-*- text -*-`, Vim `vim: set ts=8:`.
static MODELINE: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"-\*-.*-\*-|^(vim?|ex):\s*(set?\s|\w+=)").expect("static regex"));
static DOT_LEADER: Lazy<Regex> = Lazy::new(|| Regex::new(r"(\.\s*){4,}\d*\s*$").expect("static regex"));
static IMAGE: Lazy<Regex> = Lazy::new(|| Regex::new(r"!\[[^\]]*\]\([^)]*\)").expect("static regex"));
static LINK: Lazy<Regex> = Lazy::new(|| Regex::new(r"\[([^\]]*)\]\([^)]*\)").expect("static regex"));
static WIKILINK: Lazy<Regex> = Lazy::new(|| Regex::new(r"\[\[([^\]|]*\|)?([^\]]*)\]\]").expect("static regex"));
static URL: Lazy<Regex> = Lazy::new(|| Regex::new(r"<?(https?|ftp)://\S+>?").expect("static regex"));
static EMAIL: Lazy<Regex> = Lazy::new(|| Regex::new(r"<?[\w.+-]+@[\w-]+(\.[\w-]+)+>?").expect("static regex"));
/// A definitional sentence: "Nettle is a cryptographic library...",
/// "This package provides...", a man page's NAME line ("gzexe - compress
/// executable files in place"): what a reader (and a question) says about
/// the thing.
static DEFINITION: Lazy<Regex> = Lazy::new(|| {
    Regex::new(
        r"^(?:[\w.+#/()-]+\s+){1,5}(?:is|are)\s+(?:a|an|the|one|free|simple|small|fast|portable)\s|^(?:[\w.+#/()-]+\s+){1,4}(?:provides|implements|contains|allows|lets|enables|supports|offers)\s|^[\w.+:-]+(?:,\s*[\w.+:-]+)*\s+[-\u{2013}\u{2014}]\s+\w",
    )
    .expect("static regex")
});
static SPACE_PUNCT: Lazy<Regex> = Lazy::new(|| Regex::new(r"\s+([.,;:!?])(\s|$)").expect("static regex"));

/// Header fields of Debian copyright files, mail and package metadata.
const FIELD_KEYS: [&str; 16] = [
    "format",
    "source",
    "files",
    "copyright",
    "license",
    "licence",
    "upstream-name",
    "upstream-contact",
    "files-excluded",
    "author",
    "authors",
    "maintainer",
    "homepage",
    "version",
    "date",
    "disclaimer",
];

/// Words of licence text and page furniture: a sentence carrying them is
/// boilerplate, the last choice of a summary.
const BOILERPLATE: [&str; 29] = [
    "free software",
    "provided \"as is",
    "provided ``as is",
    "provided 'as is",
    "provided as is",
    "disclaim",
    "misrepresented",
    "plainly marked",
    "distributed in the hope",
    "warranty",
    "license",
    "licence",
    "licensed",
    "copyright",
    "redistribut",
    "permission is hereby",
    "all rights reserved",
    "free software foundation",
    "merchantability",
    "gnu general public",
    "without even the implied",
    "public domain",
    "liability",
    "next:",
    "previous:",
    "up:",
    "skip to",
    "table of contents",
    "this file is part of",
];

/// A line made only of rule characters (setext underline, ASCII rule, box).
fn is_rule(l: &str) -> bool {
    l.chars().count() >= 3 && l.chars().all(|c| "=-_*~#+.:<>|/\\ ".contains(c))
}

/// Strip Markdown emphasis only where it is emphasis: `*x*`, `**x**`,
/// `_a phrase_` open after a non-word and close before one, and never inside
/// an identifier (`snake_case`, `__init__`, `*.tar.gz`, `C++` stay).
pub fn strip_emphasis(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '`' {
            // Inline code: the content verbatim, the ticks dropped.
            let run = c[i..].iter().take_while(|&&x| x == '`').count();
            if let Some(end) = find_run(&c, i + run, '`', run) {
                out.extend(&c[i + run..end]);
                i = end + run;
                continue;
            }
            out.extend(&c[i..i + run]);
            i += run;
            continue;
        }
        if (ch == '*' || ch == '_') && (i == 0 || !is_word(c[i - 1])) {
            let run = c[i..].iter().take_while(|&&x| x == ch).count().min(3);
            let open = i + run;
            if open < c.len() && !c[open].is_whitespace() {
                if let Some(end) = find_run(&c, open, ch, run) {
                    let inner: String = c[open..end].iter().collect();
                    let after_ok = end + run >= c.len() || !is_word(c[end + run]);
                    let closes = !c[end - 1].is_whitespace() && after_ok;
                    // `_x_` around one word is an identifier's underscores unless it is a phrase.
                    let emphasis = closes && (ch == '*' || inner.contains(' ') || (run == 1 && !inner.contains('_')));
                    if emphasis && !inner.contains(ch) {
                        out.push_str(&inner);
                        i = end + run;
                        continue;
                    }
                }
            }
            out.extend(&c[i..open]);
            i = open;
            continue;
        }
        if ch == '\\' && i + 1 < c.len() && "*_`[]#".contains(c[i + 1]) {
            out.push(c[i + 1]);
            i += 2;
            continue;
        }
        out.push(ch);
        i += 1;
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The next run of exactly `n` `ch` at or after `from` (on the same text).
fn find_run(c: &[char], from: usize, ch: char, n: usize) -> Option<usize> {
    let mut j = from;
    while j < c.len() {
        if c[j] == ch {
            let run = c[j..].iter().take_while(|&&x| x == ch).count();
            if run == n {
                return Some(j);
            }
            j += run;
        } else {
            j += 1;
        }
    }
    None
}

/// Inline Markdown to plain text: images dropped, links to their text,
/// emphasis and code ticks stripped where they are markup, whitespace
/// collapsed, no space before punctuation.
pub fn clean_inline(s: &str) -> String {
    let s = IMAGE.replace_all(s, "");
    let s = LINK.replace_all(&s, "$1");
    let s = WIKILINK.replace_all(&s, "$2");
    let s = strip_emphasis(&s);
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    SPACE_PUNCT.replace_all(&s, "$1$2").trim().to_string()
}

/// True when a line is only an address, a mail, a version, a changelog
/// entry/trailer line or an editor's mode line: no scent in it.
fn is_furniture(l: &str) -> bool {
    let bare = URL.replace_all(l, "");
    let bare = EMAIL.replace_all(&bare, "");
    if bare.trim_matches(|c: char| !c.is_alphanumeric()).is_empty() {
        return true;
    }
    CHANGELOG_ENTRY.is_match(l)
        || GNU_CHANGELOG.is_match(l)
        || (l.starts_with("-- ") && l.contains('@'))
        || VERSION_LINE.is_match(l)
        || DOT_LEADER.is_match(l)
        || MODELINE.is_match(l)
}

/// A plain-text document's title line: its first line, standing alone
/// (a blank line after it, then more text), shaped like a title rather than a
/// sentence or a field: 2-80 characters, 2-10 words, starting with a
/// letter, no closing `.`, `,`, `;` or `:`, no markup or code characters
/// (`=`, `;`, `@`, `<`, `>`, `|`, a backtick, `{`, `[`, `#`, `"`), not a sentence, an address, a pointer ("See
/// README"), a call, a `target:` rule, a `Key: value` field, a changelog
/// entry, a mail header or other page furniture ("Patches for Vim - Vi
/// IMproved 9.0", "The .xz File Format").
/// `None` when the first line is a Markdown heading (headings are read as
/// headings) or anything else.
pub fn title_line(body: &str) -> Option<String> {
    let mut lines = lead(body, 1024).lines().skip_while(|l| l.trim().is_empty());
    let first = lines.next()?;
    // a blank line after it, then the text it is the title of
    let blank = lines.next().is_some_and(|n| n.trim().is_empty());
    if !blank || !lines.any(|n| !n.trim().is_empty()) || first.starts_with([' ', '\t']) {
        return None;
    }
    let t = first.trim();
    let words = t.split_whitespace().count();
    let shaped = (2..=80).contains(&t.chars().count())
        && t.starts_with(char::is_alphabetic)
        && !t.ends_with(['.', ',', ';', ':'])
        && !t.contains(['=', ';', '@', '<', '>', '|', '`', '{', '[', '#', '"'])
        && (2..=10).contains(&words)
        && t.split_whitespace().any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2);
    // a sentence, an address, a pointer, a call, a `target:` rule or field
    let other = t.contains(". ")
        || t.starts_with("See ")
        || t.as_bytes().windows(2).any(|w| w[1] == b'(' && (w[0].is_ascii_alphanumeric() || w[0] == b'_'))
        || t.contains("://")
        || t.split_whitespace().next().is_some_and(|w| w.ends_with(':'))
        || FIELD.is_match(t)
        || t.starts_with("From ")
        || t.to_ascii_lowercase().starts_with("copyright")
        || is_furniture(t)
        || MODELINE.is_match(t);
    (shaped && !other).then(|| t.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The source package a Debian changelog is of: the name that opens its
/// first entry line (`xz-utils (5.4.1-1) bookworm; urgency=medium`).
pub fn changelog_source(body: &str) -> Option<&str> {
    let first = lead(body, 1024).lines().find(|l| !l.trim().is_empty())?.trim();
    CHANGELOG_ENTRY.is_match(first).then(|| first.split(" (").next()).flatten()
}

/// The first at most `max` bytes of `text`, cut back to a character boundary.
pub fn lead(text: &str, max: usize) -> &str {
    let mut cut = text.len().min(max);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// Split a body into cleaned paragraphs, boilerplate lines dropped.
/// Reads at most [`SCAN_BYTES`].
pub fn blocks(markdown: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut cur: Option<(BlockKind, Vec<&str>)> = None;
    let mut fence = false;
    let mut in_field = false;
    let flush = |cur: &mut Option<(BlockKind, Vec<&str>)>, out: &mut Vec<Block>| {
        if let Some((kind, lines)) = cur.take() {
            let text = clean_inline(&lines.join(" "));
            if text.chars().any(char::is_alphanumeric) {
                out.push(Block { kind, text });
            }
        }
    };
    for raw in lead(markdown, SCAN_BYTES).lines() {
        let l = raw.trim();
        if l.starts_with("```") || l.starts_with("~~~") {
            fence = !fence;
            flush(&mut cur, &mut out);
            continue;
        }
        if fence || l.is_empty() || l == "." {
            flush(&mut cur, &mut out);
            continue;
        }
        if is_rule(l) {
            // A setext underline turns the one-line paragraph above into a heading.
            if let Some((BlockKind::Prose, lines)) = &mut cur {
                if lines.len() == 1 && (l.starts_with('=') || l.starts_with('-')) {
                    cur = Some((BlockKind::Heading, std::mem::take(lines)));
                }
            }
            flush(&mut cur, &mut out);
            continue;
        }
        if let Some(h) = l.strip_prefix('#') {
            flush(&mut cur, &mut out);
            cur = Some((BlockKind::Heading, vec![h.trim_start_matches('#').trim()]));
            flush(&mut cur, &mut out);
            continue;
        }
        if l.starts_with('|') || l.starts_with("+-") || l.starts_with("<!--") || is_furniture(l) {
            flush(&mut cur, &mut out);
            continue;
        }
        // A Debian copyright file's field value goes on over indented
        // lines (`Files:` paths, `Copyright:` holders, `License:` text).
        if in_field && raw.starts_with([' ', '\t']) {
            continue;
        }
        in_field = false;
        let l = l.trim_start_matches('>').trim();
        if let Some(m) = FIELD.captures(l) {
            let key = m[1].to_ascii_lowercase();
            if FIELD_KEYS.contains(&key.as_str()) || key == "comment" {
                flush(&mut cur, &mut out);
                in_field = key != "comment";
                if key == "comment" {
                    if let Some(v) = m.get(4) {
                        cur = Some((BlockKind::Prose, vec![v.as_str()]));
                    }
                }
                continue;
            }
        }
        if let Some(m) = LIST_ITEM.captures(l) {
            flush(&mut cur, &mut out);
            let text = m.get(2).map_or("", |x| x.as_str());
            // A list item that is only a link is a table of contents or navigation.
            let only_link = LINK.replace_all(text, "").trim().is_empty();
            if !only_link {
                cur = Some((BlockKind::Item, vec![text]));
            }
            continue;
        }
        match &mut cur {
            Some((_, lines)) => lines.push(l),
            None => cur = Some((BlockKind::Prose, vec![l])),
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// True when a sentence carries licence text or page furniture
/// ([`BOILERPLATE`]): the last choice of a summary.
pub fn is_boilerplate(sentence: &str) -> bool {
    let low = sentence.to_lowercase();
    BOILERPLATE.iter().any(|b| low.contains(b))
}

/// Phrases only a licence's terms use (not a sentence that names its
/// licence, "X is licensed under the LGPL", which also says what X is).
const LICENCE_TERMS: [&str; 12] = [
    "warrant",
    "merchantability",
    "redistribut",
    "permission is hereby",
    "all rights reserved",
    "misrepresented",
    "plainly marked",
    "liability",
    "liable",
    "disclaim",
    "without even the implied",
    "the following conditions",
];

/// True when a sentence is a licence's terms ([`LICENCE_TERMS`]): no
/// source of keyphrases ("implied-warranties", "binary-forms").
pub fn is_licence_terms(sentence: &str) -> bool {
    let low = sentence.to_lowercase();
    LICENCE_TERMS.iter().any(|b| low.contains(b))
}

/// True when `s` defines its subject ("Nettle is a cryptographic library",
/// "This package provides...").
pub fn is_definition(s: &str) -> bool {
    DEFINITION.is_match(s.trim_start())
}

/// How much a sentence says, before its position: 0 for none.
pub fn sentence_weight(s: &str, kind: BlockKind) -> f64 {
    let words: Vec<&str> = s.split_whitespace().collect();
    let n = words.len();
    if n == 0 {
        return 0.0;
    }
    let wordy = words.iter().filter(|w| w.chars().any(char::is_alphabetic)).count();
    let mut w = wordy as f64 / n as f64;
    w *= match n {
        0..=2 => 0.15,
        3..=4 => 0.5,
        5..=45 => 1.0,
        _ => 0.6,
    };
    if is_boilerplate(s) {
        w *= 0.1;
    }
    if kind == BlockKind::Item {
        w *= 0.6;
    }
    if !s.ends_with(['.', '!', '?', ':']) {
        w *= 0.8;
    }
    if DEFINITION.is_match(s) && !s.ends_with('?') {
        // "xmltodict is a Python module that ..., as in this spec:" still defines.
        w *= 1.5;
    } else if s.ends_with(':') {
        // A lead-in ("A quote from the manual:") introduces what follows.
        w *= 0.4;
    } else if s.ends_with('?') {
        // A question ("What is GNU Nettle?") announces the answer, it is not one.
        w *= 0.3;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_text_title_line_is_told_from_a_sentence_or_a_field() {
        let t = |b: &str| title_line(b);
        assert_eq!(
            t("Patches for Vim - Vi IMproved 9.0\n\nThe files in this directory...\n").as_deref(),
            Some("Patches for Vim - Vi IMproved 9.0")
        );
        assert_eq!(t("\n\nThe .xz File Format\n\nVersion 1.1.0\n").as_deref(), Some("The .xz File Format"));
        // a one-line text is its own content, not a title
        assert_eq!(t("plain text without heading"), None);
        assert_eq!(t("plain text without heading\n\n\n"), None);
        assert_eq!(
            t("XSLT support for libxml2 (XML toolkit from the GNOME project)\n\nXSLT is a language.\n").as_deref(),
            Some("XSLT support for libxml2 (XML toolkit from the GNOME project)")
        );
        // a paragraph's first line, a sentence, a field, an entry, a heading
        assert_eq!(t("This document details the changes between this version\nand the last.\n"), None);
        assert_eq!(t("The default shell has been changed to dash.\n\nMore.\n"), None);
        assert_eq!(t("Status of implementation of the XSLT 1.0 Features:\n\n"), None);
        assert_eq!(t("Upstream-Name: bzip2\n\n"), None);
        assert_eq!(t("xz-utils (5.4.1-1) bookworm-security; urgency=medium\n\n  * Fix.\n"), None);
        assert_eq!(t("From rms@gnu.org Thu Jul 22 20:37:55 1999\n\n"), None);
        assert_eq!(t("# Heading\n\ntext\n"), None);
        assert_eq!(t("3.42.2 - 2022-07-16\n\n"), None);
        assert_eq!(t("Copyright (C) 2001 Someone\n\n"), None);
        assert_eq!(t("one two three four five six seven eight nine ten eleven\n\n"), None);
        assert_eq!(t("    indented code\n\n"), None);
        assert_eq!(t("This is GNU bc version 1.07.1. (And dc version 1.4.1)\n\n"), None);
        assert_eq!(t("all:: git-credential-osxkeychain\n\n"), None);
        assert_eq!(t("See https://dejavu-fonts.github.io/Bugs.html\n\n"), None);
        assert_eq!(t("Description\n\n"), None);
        assert_eq!(t("See README.md or README.html\n\n"), None);
        assert_eq!(t("licenses(notice) Apache License 2.0\n\n"), None);
    }

    #[test]
    fn a_debian_changelog_names_its_source_package() {
        assert_eq!(
            changelog_source("xz-utils (5.4.1-1) bookworm-security; urgency=medium\n\n  * Fix.\n"),
            Some("xz-utils")
        );
        assert_eq!(
            changelog_source("\nllvm-toolchain-14 (1:14.0.6-12) unstable; urgency=medium\n"),
            Some("llvm-toolchain-14")
        );
        assert_eq!(changelog_source("Patches for Vim\n"), None);
        assert_eq!(changelog_source(""), None);
    }
    use crate::scent::derive_summary;

    #[test]
    fn identifiers_stay_verbatim() {
        let md = "# Notes\n\nCall `ffi_closure_alloc` from `__init__` in *snake_case* code; \
                  set LC_ALL=en_US.UTF-8 and build the C++ sources from *.tar.gz archives.\n";
        let s = derive_summary(md, "Notes");
        for id in ["ffi_closure_alloc", "__init__", "snake_case", "LC_ALL", "en_US.UTF-8", "C++", "*.tar.gz"] {
            assert!(s.contains(id), "{id} lost in {s:?}");
        }
        assert_eq!(strip_emphasis("a __init__ b"), "a __init__ b");
        assert_eq!(strip_emphasis("**bold** and *it* and _a phrase_ and _word_"), "bold and it and a phrase and word");
        assert_eq!(
            strip_emphasis("a * b * c, x**2, snake_case_name, `LC_ALL`"),
            "a * b * c, x**2, snake_case_name, LC_ALL"
        );
        assert_eq!(strip_emphasis(r"escaped \_x\_ and \*"), "escaped _x_ and *");
        assert_eq!(clean_inline("The *closure API* . See [docs](http://x)!"), "The closure API. See docs!");
    }

    #[test]
    fn boilerplate_lines_are_dropped() {
        let md = "This is the GNU cpio package\n============================\n\n\
                  cpio (2.13+dfsg-7.1) unstable; urgency=medium\n\n  * Non-maintainer upload.\n\n \
                  -- Jane Doe <jane@example.org>  Mon, 02 Jan 2023 13:06:21 +0100\n\n\
                  Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
                  Comment: GNU cpio copies files into or out of archives.\n\n\
                  | a | b |\n\n```\ncode here\n```\n\n- [Intro](#intro)\n\n1. Introduction ........ 3\n";
        let b = blocks(md);
        assert_eq!(b[0], Block { kind: BlockKind::Heading, text: "This is the GNU cpio package".into() });
        let texts: Vec<&str> = b.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "This is the GNU cpio package",
                "Non-maintainer upload.",
                "GNU cpio copies files into or out of archives."
            ]
        );
        assert_eq!(b[1].kind, BlockKind::Item);
    }

    #[test]
    fn summary_prefers_informative_lead_over_licence_and_changelog() {
        let md = "# cpio\n\nCopyright (C) 2020 Free Software Foundation, Inc. All rights reserved.\n\n\
                  GNU cpio copies files into or out of a cpio or tar archive. It supports many formats.\n\n\
                  This program is free software; you can redistribute it under the GNU General Public License.\n";
        let s = derive_summary(md, "cpio");
        assert!(s.starts_with("GNU cpio copies files"), "{s}");
        assert!(!s.contains("redistribute"), "{s}");
        let cl = "# changelog\n\ncpio (2.13+dfsg-7.1) unstable; urgency=medium\n\n  * Fix the build with GCC 14 on all architectures.\n\n \
                  -- A B <a@b.org>  Mon, 02 Jan 2023 13:06:21 +0100\n";
        assert_eq!(derive_summary(cl, "changelog"), "Fix the build with GCC 14 on all architectures.");
    }

    #[test]
    fn definitions_beat_questions_and_quotes() {
        let md = "# libnettle8: README\n\nWhat is GNU Nettle? A quote from the introduction in the Nettle Manual:\n\n\
                  Nettle is a cryptographic library that is designed to fit easily in more or less any context.\n\n\
                  You often have some algorithm selection process, often dictated by a protocol you want to implement.\n";
        let s = derive_summary(md, "libnettle8: README");
        assert!(s.starts_with("Nettle is a cryptographic library"), "{s}");
        assert!(!s.contains("What is GNU Nettle?"), "{s}");
        let md = "# xmltodict\n\nxmltodict is a Python module that makes working with XML feel like JSON, as in this spec:\n\n\
                  Or just cache the dicts so you don't have to parse that big XML file again.\n";
        assert!(derive_summary(md, "xmltodict").starts_with("xmltodict is a Python module"));
        assert!(is_definition("gzexe - compress executable files in place"));
        assert!(is_definition("rm, unlink \u{2013} remove files"));
        assert!(!is_definition("- a list item"));
    }

    #[test]
    fn weights() {
        assert!(sentence_weight("A plain sentence about archive formats.", BlockKind::Prose) > 0.9);
        assert!(sentence_weight("See the GNU General Public License for details.", BlockKind::Prose) < 0.2);
        assert!(sentence_weight("1.2 3.4 5.6 7 8", BlockKind::Prose) < 0.1);
        assert_eq!(sentence_weight("", BlockKind::Prose), 0.0);
    }

    #[test]
    fn a_licence_and_a_dated_version_line_do_not_push_the_introduction_down() {
        // The shape of bzip2's manual.html (Debian 12, /usr/share/doc/bzip2):
        // title, a dated version line, the licence, then the introduction.
        let mut md = String::from(
            "# bzip2 and libbzip2, version 1.0.8\n\n## A program and library for data compression\n\n\
             Version 1.0.8 of 13 July 2019\n\nCopyright 1996-2019 Julian Seward\n\n",
        );
        for clause in [
            "Redistribution and use in source and binary forms, with or without modification, are permitted.",
            "Redistributions of source code must retain the above copyright notice.",
            "The origin of this software must not be misrepresented; you must not claim that you wrote it.",
            "Altered source versions must be plainly marked as such.",
            "THIS SOFTWARE IS PROVIDED BY THE AUTHOR AS IS AND ANY EXPRESS OR IMPLIED WARRANTIES ARE DISCLAIMED.",
        ] {
            md.push_str(clause);
            md.push_str("\n\n");
        }
        md.push_str(
            "bzip2 compresses files using the Burrows-Wheeler block-sorting text compression algorithm, \
             and Huffman coding.\n",
        );
        let s = derive_summary(&md, "bzip2 and libbzip2, version 1.0.8");
        assert!(s.contains("block-sorting"), "{s}");
        assert!(!s.contains("Version 1.0.8 of") && !s.contains("misrepresented"), "{s}");
        assert!(is_furniture("Version 1.0.8 of 13 July 2019"));
        assert!(!is_furniture("Version 2.0 of the API adds streaming"));
    }

    #[test]
    fn editor_mode_lines_are_furniture() {
        // /usr/share/doc/wget/README opens with an Emacs mode line.
        let md = "                                                   -*- text -*-\nGNU Wget\n========\n\n\
                  GNU Wget is a free utility for non-interactive download of files from the Web.\n";
        let s = derive_summary(md, "wget: README");
        assert!(s.starts_with("GNU Wget is a free utility"), "{s}");
        assert!(is_furniture("vim: set ts=8 sw=4:") && is_furniture("# -*- coding: utf-8 -*-"));
        assert!(!is_furniture("Vim is a text editor."));
    }
}
