//! Manual pages (roff with the man(7) macros, and the common mdoc(7) ones)
//! → Markdown: `.SH`/`.Sh` sections become `##` headings, `.SS`/`.Ss` `###`,
//! tagged paragraphs become list items, `.nf`/`.EX` blocks code blocks; font
//! and size escapes are stripped and special characters (`\(em`, `\-`)
//! become their Unicode letters. Title: `name(section)` from `.TH`/`.Dt`.
//!
//! In: the page's bytes (after the registry inflated a `.1.gz`). Out: one
//! Markdown document. No crate parses roff into a document tree without a
//! vendored C library (libmandoc) or an unmaintained one-release parser, and
//! the man macro set that real pages use is small: this is a line renderer,
//! not a typesetter (no `.de` macro expansion, tables as plain rows).

use crate::converter::{Conversion, Converter, Limits};
use crate::error::ConvertError;
use crate::text::{decode_text, stem};
use crate::values::SourceMeta;
use forest_model::slug::title_from_stem;
use std::collections::HashMap;
use std::path::Path;

/// The manual-page converter.
pub(crate) struct Man;

/// Named special characters (`\(xx`, `\[name]`) real pages use.
fn special(name: &str) -> &'static str {
    match name {
        "em" => "—",
        "en" => "–",
        "hy" | "mi" | "-" => "-",
        "bu" => "•",
        "co" => "©",
        "rg" => "®",
        "tm" => "™",
        "aq" | "cq" | "rq'" => "'",
        "dq" => "\"",
        "lq" => "“",
        "rq" => "”",
        "oq" => "‘",
        "de" => "°",
        "mu" => "×",
        "<=" => "≤",
        ">=" => "≥",
        "->" => "→",
        "<-" => "←",
        "ha" => "^",
        "ti" => "~",
        "sl" => "/",
        "rs" => "\\",
        "ul" | "ru" => "_",
        "ba" | "or" => "|",
        "pl" => "+",
        "eq" => "=",
        "fm" => "′",
        "Fo" => "«",
        "Fc" => "»",
        _ => "",
    }
}

/// Text of a roff line with escapes resolved; `strings` holds `.ds` names.
fn unescape(line: &str, strings: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    // A name after `(` (two chars), `[` (to `]`), or one char.
    fn name(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
        match chars.next() {
            Some('(') => chars.by_ref().take(2).collect(),
            Some('[') => chars.by_ref().take_while(|&c| c != ']').collect(),
            Some(c) => c.to_string(),
            None => String::new(),
        }
    }
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            None | Some('c') => {}
            Some('"') => break,
            Some('f') | Some('F') | Some('n') | Some('k') | Some('m') => {
                name(&mut chars);
            }
            Some('s') => {
                if matches!(chars.peek(), Some('+') | Some('-')) {
                    chars.next();
                }
                if chars.peek() == Some(&'(') {
                    chars.next();
                    chars.by_ref().take(2).for_each(drop);
                } else if chars.peek() == Some(&'[') {
                    chars.by_ref().take_while(|&c| c != ']').for_each(drop);
                } else {
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                }
            }
            Some('*') => {
                let n = name(&mut chars);
                match strings.get(&n) {
                    Some(v) => out.push_str(v),
                    None => out.push_str(match n.as_str() {
                        "R" => "®",
                        "Tm" => "™",
                        "lq" => "“",
                        "rq" => "”",
                        _ => special(&n),
                    }),
                }
            }
            Some('(') => {
                let n: String = chars.by_ref().take(2).collect();
                out.push_str(special(&n));
            }
            Some('[') => {
                let n: String = chars.by_ref().take_while(|&c| c != ']').collect();
                match n.strip_prefix('u').and_then(|h| u32::from_str_radix(h, 16).ok()).and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(special(&n)),
                }
            }
            // Quoted-argument escapes: motions, widths, lines, overstrikes.
            Some('h' | 'v' | 'w' | 'l' | 'L' | 'o' | 'X' | 'Z' | 'D' | 'b' | 'x' | 'N' | 'S' | 'R' | 'A' | 'B') => {
                if let Some(q) = chars.next() {
                    chars.by_ref().take_while(|&c| c != q).for_each(drop);
                }
            }
            Some('z') | Some('&') | Some('|') | Some('^') | Some(':') | Some('%') | Some('/') | Some(',') => {}
            Some('-') => out.push('-'),
            Some(' ') | Some('0') | Some('~') => out.push(' '),
            Some('e') | Some('\\') => out.push('\\'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
        }
    }
    out
}

/// Macro arguments: whitespace-separated, double quotes group (`""` is a quote).
fn args(rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let Some(&first) = chars.peek() else { break };
        let mut a = String::new();
        if first == '"' {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        a.push('"');
                        continue;
                    }
                    break;
                }
                a.push(c);
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ' ' || c == '\t' {
                    break;
                }
                a.push(c);
                chars.next();
            }
        }
        out.push(a);
    }
    out
}

/// mdoc callable macros inside a line (`.Op Fl v Ar file`): dropped, except
/// `Fl`, which prefixes the next word with `-`.
fn mdoc_words(a: &[String]) -> String {
    const CALLABLE: [&str; 32] = [
        "Op", "Oo", "Oc", "Ar", "Cm", "Ic", "Pa", "Xr", "Ns", "Li", "Em", "Sy", "Va", "Ev", "Dq", "Sq", "Ql", "Pq",
        "Qq", "Aq", "Bq", "Brq", "No", "Ev", "Er", "Fn", "Fa", "Ft", "Nm", "Dv", "Ad", "Lk",
    ];
    let mut out: Vec<String> = Vec::new();
    let mut flag = false;
    for w in a {
        if w == "Fl" {
            flag = true;
            continue;
        }
        if CALLABLE.contains(&w.as_str()) {
            continue;
        }
        out.push(if flag { format!("-{w}") } else { w.clone() });
        flag = false;
    }
    if flag {
        out.push("-".into());
    }
    out.join(" ")
}

/// The renderer's state across lines.
#[derive(Default)]
struct Render {
    out: Vec<String>,
    strings: HashMap<String, String>,
    /// In `.nf`/`.EX` (a code block is open).
    literal: bool,
    /// The next text line is a `.TP` tag.
    tag_next: bool,
    /// `.TH`/`.Dt` name and section; the NAME section's first words.
    th: Option<(String, String)>,
    /// Inside a table (`.TS`..`.TE`): whether the format lines are done.
    table: Option<bool>,
    /// Skipping a `.de`/`.ig` block up to `..`.
    skip_block: bool,
    /// The previous request line ended in `\`: this line continues it.
    continued: bool,
    /// Name of the `.Nm` page (mdoc).
    nm: Option<String>,
}

impl Render {
    fn para(&mut self) {
        if self.out.last().is_some_and(|l| !l.is_empty()) {
            self.out.push(String::new());
        }
    }
    fn heading(&mut self, level: usize, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.close_literal();
        self.para();
        self.out.push(format!("{} {}", "#".repeat(level), text.trim()));
        self.out.push(String::new());
    }
    fn close_literal(&mut self) {
        if self.literal {
            self.out.push("```".into());
            self.out.push(String::new());
            self.literal = false;
        }
    }
    fn text(&mut self, t: String) {
        if self.literal {
            self.out.push(t);
            return;
        }
        let t = t.trim_end().to_string();
        if t.trim().is_empty() {
            self.para();
            return;
        }
        if std::mem::take(&mut self.tag_next) {
            self.para();
            self.out.push(format!("- **{}**", t.trim()));
            return;
        }
        // Text that starts like a roff request (`\&.profile`, `\&'none'`) joins
        // the paragraph's previous line (Markdown reads them as one line);
        // at a paragraph start it, like a Markdown heading, is escaped.
        let roffish = t.starts_with(['.', '\'']);
        if roffish && self.out.last().is_some_and(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("```")) {
            let last = self.out.last_mut().expect("checked");
            last.push(' ');
            last.push_str(&t);
            return;
        }
        self.out.push(if t.starts_with('#') || roffish { format!("\\{t}") } else { t });
    }

    fn request(&mut self, name: &str, rest: &str) {
        let a: Vec<String> = args(rest).iter().map(|x| unescape(x, &self.strings)).collect();
        let joined = a.join(" ");
        match name {
            "TH" | "Dt" => {
                if let Some(n) = a.first() {
                    self.th = Some((n.clone(), a.get(1).cloned().unwrap_or_default()));
                }
            }
            "SH" | "Sh" if a.is_empty() => self.tag_next = false,
            "SH" | "Sh" => self.heading(2, &joined),
            "SS" | "Ss" => self.heading(3, &joined),
            "PP" | "P" | "LP" | "Pp" | "sp" | "Lp" => {
                self.tag_next = false;
                self.para();
            }
            "br" => {}
            // `.HP` (hanging paragraph) is used like `.TP` by help2man pages.
            "TP" | "TQ" | "HP" => self.tag_next = true,
            "IP" | "It" => {
                self.para();
                let tag = if name == "It" { mdoc_words(&a) } else { a.first().cloned().unwrap_or_default() };
                match tag.trim() {
                    // No tag: an indented paragraph of the item above.
                    "" => {}
                    "•" | "-" | "*" | "o" => self.out.push("- ".into()),
                    t => self.out.push(format!("- **{t}**")),
                }
            }
            "nf" | "EX" | "Bd" if !self.literal => {
                self.para();
                self.out.push("```".into());
                self.literal = true;
            }
            "fi" | "EE" | "Ed" => self.close_literal(),
            "B" | "I" | "SM" | "SB" | "UR" | "MT" => self.text(joined),
            "BR" | "RB" | "BI" | "IB" | "IR" | "RI" => self.text(a.concat()),
            "Nm" => {
                let n = if a.is_empty() { self.nm.clone().unwrap_or_default() } else { mdoc_words(&a) };
                if self.nm.is_none() && !a.is_empty() {
                    self.nm = Some(n.clone());
                }
                self.text(n);
            }
            "Nd" => self.text(format!("— {}", mdoc_words(&a))),
            "ds" => {
                if let Some(n) = a.first() {
                    let v = rest.trim_start().split_once(char::is_whitespace).map_or("", |(_, v)| v.trim_start());
                    let v = unescape(v.strip_prefix('"').unwrap_or(v), &self.strings);
                    self.strings.insert(n.clone(), v);
                }
            }
            "de" | "de1" | "am" | "ig" => self.skip_block = true,
            "TS" => self.table = Some(false),
            "TE" => self.table = None,
            "so" => self.text(format!("(see {joined})")),
            // mdoc lines whose words are the text (`.Op Fl v`, `.Xr ls 1`).
            "Op" | "Fl" | "Ar" | "Cm" | "Ic" | "Pa" | "Xr" | "Li" | "Em" | "Sy" | "Va" | "Ev" | "Dq" | "Sq" | "Ql"
            | "Pq" | "Qq" | "Aq" | "Er" | "Fn" | "Fa" | "Ft" | "Dv" | "Ad" | "No" | "An" | "Lk" | "Mt" | "St"
            | "Bx" | "At" | "Ux" | "Tn" => {
                let mut words = a.clone();
                if name == "Fl" {
                    words.insert(0, "Fl".into());
                }
                self.text(mdoc_words(&words));
            }
            // Layout, fonts, conditionals, registers and unknown macros: no text.
            _ => {}
        }
    }

    fn line(&mut self, raw: &str) {
        if self.continued {
            self.continued = ends_with_escape(raw);
            return;
        }
        if self.skip_block {
            if ends_block(raw) {
                self.skip_block = false;
            }
            return;
        }
        if let Some(done) = self.table {
            let t = raw.trim_end();
            if t.starts_with(".TE") {
                self.table = None;
                return;
            }
            if !done {
                // Options and format lines end with `.`; rows follow.
                if t.ends_with('.') {
                    self.table = Some(true);
                }
                return;
            }
            if t.starts_with('.') || t == "_" || t == "=" {
                return;
            }
            let cells: Vec<String> = t
                .split('\t')
                .map(|c| unescape(c.trim_start_matches("T{").trim_end_matches("T}"), &self.strings))
                .collect();
            self.text(cells.join(" | "));
            return;
        }
        if is_comment(raw) {
            return;
        }
        let Some(first) = raw.chars().next() else {
            self.text(String::new());
            return;
        };
        if first == '.' || first == '\'' {
            let body = raw[1..].trim_start();
            if body.starts_with("\\\"") || body.is_empty() {
                return;
            }
            let (name, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
            self.continued = ends_with_escape(raw);
            self.request(name, rest);
            return;
        }
        let t = unescape(raw, &self.strings);
        self.text(t);
    }
}

/// Whether a request line continues on the next one: it ends in an escaped
/// newline (an odd run of backslashes), except after `\{` (a conditional
/// block whose next line is read as a line of its own).
fn ends_with_escape(line: &str) -> bool {
    line.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1 && !line.ends_with("\\{\\")
}

/// The end of a `.de`/`.am`/`.ig` block: `..`, also written `.  .`
/// (util-linux's Asciidoctor pages).
fn ends_block(line: &str) -> bool {
    line.strip_prefix('.').is_some_and(|r| r.trim() == ".")
}

/// A whole-line comment without a request dot: `\"` or groff's `\#`.
fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("\\\"") || t.starts_with("\\#")
}

/// Lines and bytes [`looks_like_man`] reads before giving up.
const SCAN_LINES: usize = 1000;
const SCAN_BYTES: usize = 64 * 1024;

/// Name of a roff request or macro line (`.TH x`, `'br`, `.  ds x`).
fn request_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('.').or_else(|| line.strip_prefix('\''))?;
    let rest = rest.trim_start_matches([' ', '\t']);
    rest.split([' ', '\t']).next()
}

/// Whether text looks like a roff manual page: a `.TH`/`.Dt`/`.SH`/`.Sh`
/// within the first 40 lines, or after a preamble of nothing but roff
/// requests, comments, macro definitions and blank lines (Pod::Man,
/// help2man and DocBook pages open with up to ~100 such lines), read for at
/// most [`SCAN_LINES`] lines / [`SCAN_BYTES`] bytes. Linear in what it reads.
pub(crate) fn looks_like_man(head: &str) -> bool {
    if head.starts_with(".so ") && head.lines().count() <= 2 {
        return true;
    }
    let (mut bytes, mut in_block, mut text_seen, mut continued) = (0usize, false, false, false);
    for (n, line) in head.lines().enumerate() {
        bytes += line.len() + 1;
        if n >= SCAN_LINES || bytes > SCAN_BYTES || (text_seen && n >= 40) {
            return false;
        }
        if in_block {
            in_block = !ends_block(line);
            continue;
        }
        if continued {
            continued = ends_with_escape(line);
            continue;
        }
        match request_name(line) {
            Some("TH" | "Dt" | "SH" | "Sh") => return true,
            Some("de" | "de1" | "am" | "ig") => in_block = true,
            Some(_) => continued = ends_with_escape(line),
            None if line.trim().is_empty() || is_comment(line) => {}
            None => text_seen = true,
        }
    }
    false
}

/// Render a manual page; returns (title, Markdown body).
pub(crate) fn render(text: &str, fallback_title: &str) -> (String, String) {
    let mut r = Render::default();
    for raw in text.lines() {
        r.line(raw);
    }
    r.close_literal();
    while r.out.last().is_some_and(|l| l.is_empty()) {
        r.out.pop();
    }
    let title = match &r.th {
        Some((n, s)) if !s.is_empty() => format!("{}({s})", n.to_lowercase()),
        Some((n, _)) => n.to_lowercase(),
        None => fallback_title.to_string(),
    };
    let mut body = format!("# {title}\n\n");
    for l in &r.out {
        body.push_str(l);
        body.push('\n');
    }
    (title, body)
}

impl Converter for Man {
    fn name(&self) -> &str {
        "Man"
    }
    fn extensions(&self) -> Vec<String> {
        [".1", ".2", ".3", ".4", ".5", ".6", ".7", ".8", ".9", ".man", ".1p", ".3p", ".3pm", ".1ssl", ".3ssl", ".n"]
            .map(String::from)
            .to_vec()
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let text = decode_text(&std::fs::read(path)?);
        let fallback = title_from_stem(&stem(path));
        if !looks_like_man(&text) {
            // A numbered backup or log (`notes.1`) is text, not a manual.
            return Ok(Conversion::Markdown { title: fallback, body: text, meta: SourceMeta::default() });
        }
        let (title, body) = render(&text, &fallback);
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn man_macros_become_markdown() {
        let page = r#".\" comment
.TH GZEXE 1 "2024" "gzip"
.SH NAME
gzexe \- compress executable files in place
.SH SYNOPSIS
.B gzexe
.I "name .\|.\|."
.SH DESCRIPTION
The
.B gzexe
utility allows you to \fBcompress\fP executables \(em in place.
.nf
    -rwxr-xr-x  1 root root /usr/bin/gdb
.fi
.SH OPTIONS
.TP
.B \-d
Decompress the given executables.
.SH "SEE ALSO"
.BR gzip (1)
"#;
        let (title, body) = render(page, "x");
        assert_eq!(title, "gzexe(1)");
        let want = "# gzexe(1)\n\n## NAME\n\ngzexe - compress executable files in place\n\n## SYNOPSIS\n\ngzexe\nname ...\n\n\
## DESCRIPTION\n\nThe\ngzexe\nutility allows you to compress executables — in place.\n\n```\n    -rwxr-xr-x  1 root root /usr/bin/gdb\n```\n\n\
## OPTIONS\n\n- **-d**\nDecompress the given executables.\n\n## SEE ALSO\n\ngzip(1)\n";
        assert_eq!(body, want);
    }

    #[test]
    fn mdoc_and_strings_and_tables() {
        let page = ".Dd May 1\n.Dt LS 1\n.Sh NAME\n.Nm ls\n.Nd list directory\n.Sh SYNOPSIS\n.Nm\n.Op Fl a\n\
.ds Vr 1.2\nVersion \\*(Vr \\[u00E9]t\\[e\u{301}]\n.TS\nl l.\nA\tB\n.TE\n.de XX\nhidden\n..\nend\n";
        let (title, body) = render(page, "x");
        assert_eq!(title, "ls(1)");
        assert!(body.contains("## NAME\n\nls\n— list directory\n"), "{body}");
        assert!(body.contains("## SYNOPSIS\n\nls\n-a\nVersion 1.2 ét\nA | B\nend\n"), "{body}");
        assert!(!body.contains("hidden"));
    }

    #[test]
    fn indented_block_end_closes_a_macro() {
        let page = ".TH DMESG 1\n.if \\n[.g] \\{\\\n.  am URL\n.    ad l\n.  .\n.\\}\n.SH NAME\ndmesg \\- print\n";
        assert_eq!(render(page, "x").1, "# dmesg(1)\n\n## NAME\n\ndmesg - print\n");
    }

    #[test]
    fn continued_requests_and_dotted_text_leave_no_roff() {
        let page =
            ".TH A 1\n.SH FILES\n.if \\n(.H>23 \\\n\\{\\\n.\\}\nReads\n\\&.profile first.\n.PP\n\\&'none' is quiet.\n";
        let (_, body) = render(page, "x");
        assert_eq!(body, "# a(1)\n\n## FILES\n\nReads .profile first.\n\n\\'none' is quiet.\n");
    }

    #[test]
    fn args_and_detection() {
        assert_eq!(args(r#"a "b c" "d ""e""""#), vec!["a", "b c", "d \"e\""]);
        assert!(looks_like_man(".\\\" x\n.TH A 1\n"));
        assert!(!looks_like_man("1.5 release notes\n- fixed\n"));
        // A page that only includes another.
        assert!(looks_like_man(".so man7/system_data_types.7\n"));
        // A Pod::Man preamble of 70+ lines, macro bodies included, before `.TH`.
        let pod =
            format!(".\\\" Pod::Man\n.de Vb\n\\\\$1 text in a macro\n..\n{}.TH CPAN 1\n", ".if n .ds x y\n".repeat(80));
        assert!(looks_like_man(&pod));
        // procps' top(1) comments with groff's `\#` before its `.TH`.
        assert!(looks_like_man(&format!("{}.TH TOP 1\n", "\\# setup\n.ds Em x\n".repeat(30))));
        // binutils' Pod::Man preamble continues a request on the next line.
        assert!(looks_like_man(&format!(
            "{}.if \\n(.H>23 .if \\n(.V>19 \\\n\\{{\\\n.  ds : e\n.\\}}\n.TH A 1\n",
            ".\\\" c\n".repeat(50)
        )));
        // Text after 40 lines of prose is not a page; neither is a `.TH` past the scan limit.
        assert!(!looks_like_man(&format!("{}.TH A 1\n", "prose\n".repeat(50))));
        assert!(!looks_like_man(&format!("{}.TH A 1\n", ".\\\" c\n".repeat(SCAN_LINES))));
    }
}
