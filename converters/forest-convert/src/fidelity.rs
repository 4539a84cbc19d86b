//! Fidelity check of a converted body (issue 34): does it still look like the
//! source format rather than text? Raw roff, leftover markup, RTF control
//! words, LaTeX commands, PDF content operators, replacement characters,
//! control bytes, long base64/hex runs, or a body far smaller than its text
//! source are signs the wrong converter (or charset) was used.
//!
//! In: the body and two facts about the source (its size, whether it is
//! text). Out: `None`, or a [`Suspect`] with a stable reason code. Pure and
//! deterministic; one linear pass over the body, no allocation per line.
//! Lines inside fenced code blocks are not counted as markup: a Markdown note
//! may quote HTML or roff on purpose.

/// Why a body looks unconverted. [`SuspectReason::code`] is stable (for
/// reports and outcome memory); the [`Suspect::message`] is for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SuspectReason {
    /// Lines start with roff requests or comments (`.TH`, `.de`, `.\"`).
    RawRoff,
    /// A high share of `<tag`/`</tag>` tokens (HTML/XML left in).
    RawMarkup,
    /// RTF: `{\rtf` or many `\word` control words.
    RawRtf,
    /// LaTeX: many `\begin{`, `\section{`... commands.
    RawLatex,
    /// PDF syntax: `BT`/`ET`/`Tj`/`TJ` operators, `obj`/`endobj`/`stream`.
    RawPdf,
    /// U+FFFD replacement characters (a wrong charset).
    ReplacementChars,
    /// C0 control bytes other than tab, newline and carriage return.
    ControlBytes,
    /// A long run without whitespace (base64, hex, binary read as text).
    BinaryRun,
    /// Far less text than a text source of this size suggests.
    TooSmall,
}

impl SuspectReason {
    /// The syntax of a source format (markup, RTF, LaTeX, PDF operators).
    /// In a body a converter made from that format, it is residue; in the
    /// verbatim text of a file written in it (an XML config, a `.tex`
    /// source), it is the file's content.
    pub fn is_source_syntax(self) -> bool {
        matches!(
            self,
            SuspectReason::RawMarkup | SuspectReason::RawRtf | SuspectReason::RawLatex | SuspectReason::RawPdf
        )
    }

    /// Stable short code: `raw_roff`, `raw_markup`, `raw_rtf`, `raw_latex`,
    /// `raw_pdf`, `replacement_chars`, `control_bytes`, `binary_run`, `too_small`.
    pub fn code(self) -> &'static str {
        match self {
            SuspectReason::RawRoff => "raw_roff",
            SuspectReason::RawMarkup => "raw_markup",
            SuspectReason::RawRtf => "raw_rtf",
            SuspectReason::RawLatex => "raw_latex",
            SuspectReason::RawPdf => "raw_pdf",
            SuspectReason::ReplacementChars => "replacement_chars",
            SuspectReason::ControlBytes => "control_bytes",
            SuspectReason::BinaryRun => "binary_run",
            SuspectReason::TooSmall => "too_small",
        }
    }
}

/// A body that failed the fidelity check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    /// Machine-readable reason.
    pub reason: SuspectReason,
    /// One human sentence with the counts that tripped the check.
    pub message: String,
}

impl std::fmt::Display for Suspect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.reason.code(), self.message)
    }
}

/// What the check knows about the source besides the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SourceFacts {
    /// Size of the (inflated) source file in bytes.
    pub bytes: u64,
    /// The source is text (so its size bounds the body's size).
    pub text: bool,
    /// The source is Markdown, where inline HTML is legitimate: `raw_markup`
    /// is not flagged.
    pub markdown: bool,
}

/// A run of non-whitespace characters longer than this is not prose.
const LONG_RUN: usize = 2000;
/// Text sources at least this large must keep 1% of their size as body.
const SMALL_SOURCE: u64 = 10 * 1024;

/// Counters gathered in the single pass.
#[derive(Debug, Default)]
struct Counts {
    chars: usize,
    words: usize,
    lines: usize,
    roff_lines: usize,
    tags: usize,
    backslash_words: usize,
    latex: usize,
    pdf_ops: usize,
    pdf_objects: usize,
    rtf_header: bool,
    fffd: usize,
    controls: usize,
    longest_run: usize,
    text_bytes: usize,
}

/// Request and macro names whose line-start use marks raw roff.
fn roff_request(name: &str) -> bool {
    const NAMES: [&str; 64] = [
        "TH", "SH", "SS", "PP", "LP", "TP", "IP", "HP", "TQ", "B", "I", "BR", "BI", "IB", "IR", "RB", "RI", "SM", "SB",
        "nf", "fi", "br", "sp", "de", "ds", "nr", "if", "ie", "el", "ft", "in", "ti", "ne", "na", "ad", "nh", "hy",
        "so", "tr", "IX", "Sh", "Ss", "Pp", "Nm", "Nd", "Dt", "Dd", "Os", "Bl", "El", "It", "Fl", "Ar", "Op", "Xr",
        "RS", "RE", "EX", "EE", "TS", "TE", "ig", "rr", "Vb",
    ];
    NAMES.contains(&name)
}

/// Whether a line is a roff request (`.TH x`, `'br`) or comment (`.\"`).
pub(crate) fn is_roff_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('.').or_else(|| line.strip_prefix('\'')) else { return false };
    let rest = rest.trim_start_matches([' ', '\t']);
    if rest.starts_with("\\\"") {
        return true;
    }
    let name = rest.split([' ', '\t', '\\']).next().unwrap_or("");
    roff_request(name)
}

/// After a `<`: `name` or `/name` (ASCII letter, then letters, digits,
/// `-`, `:`) followed by whitespace, `>`, `/>` or the line end. C headers
/// (`<stdio.h>`, `<sys/types.h>`) and `a <b` comparisons with text after are
/// not tags.
fn is_tag(after: &[u8]) -> bool {
    let after = after.strip_prefix(b"/").unwrap_or(after);
    if !after.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    let n = after.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b':')).count();
    match after.get(n) {
        None | Some(b'>' | b' ' | b'\t') => true,
        Some(b'/') => after.get(n + 1) == Some(&b'>'),
        _ => false,
    }
}

const PDF_OPS: [&str; 10] = ["BT", "ET", "Tj", "TJ", "Tf", "Td", "TD", "Tm", "re", "cm"];
const PDF_OBJECTS: [&str; 6] = ["obj", "endobj", "stream", "endstream", "xref", "trailer"];

impl Counts {
    fn line(&mut self, line: &str, in_code: bool) {
        self.lines += 1;
        if !in_code && is_roff_line(line) {
            self.roff_lines += 1;
        }
        if !in_code && line.trim_start().starts_with("{\\rtf") {
            self.rtf_header = true;
        }
        let bytes = line.as_bytes();
        // Start of the current word (a run of non-whitespace), in bytes.
        let mut word: Option<usize> = None;
        let mut run = 0usize;
        for (i, c) in line.char_indices() {
            self.chars += 1;
            if c.is_whitespace() {
                if let Some(start) = word.take() {
                    self.word(&line[start..i], run, in_code);
                }
                run = 0;
                continue;
            }
            word.get_or_insert(i);
            run += 1;
            match c {
                '\u{fffd}' => self.fffd += 1,
                c if (c as u32) < 0x20 => self.controls += 1,
                '<' if !in_code && is_tag(&bytes[i + 1..]) => self.tags += 1,
                '\\' if !in_code => self.backslash(&bytes[i + 1..]),
                _ => {}
            }
        }
        if let Some(start) = word {
            self.word(&line[start..], run, in_code);
        }
        self.text_bytes += line.trim().len();
    }

    /// One whitespace-separated word of `run` characters.
    fn word(&mut self, w: &str, run: usize, in_code: bool) {
        self.words += 1;
        self.longest_run = self.longest_run.max(run);
        if in_code {
            return;
        }
        if PDF_OPS.contains(&w) {
            self.pdf_ops += 1;
        } else if PDF_OBJECTS.contains(&w) {
            self.pdf_objects += 1;
        }
    }

    /// A backslash followed by letters: an RTF control word or a LaTeX command.
    fn backslash(&mut self, after: &[u8]) {
        let n = after.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        if n < 2 {
            return;
        }
        self.backslash_words += 1;
        let word = &after[..n];
        let latex = [&b"begin"[..], b"end", b"section", b"subsection", b"documentclass", b"usepackage", b"chapter"];
        if after.get(n) == Some(&b'{') && latex.contains(&word) {
            self.latex += 1;
        }
    }

    fn verdict(&self, source: SourceFacts) -> Option<Suspect> {
        let s = |reason, message: String| Some(Suspect { reason, message });
        let words = self.words.max(1);
        if self.roff_lines >= 3 && self.roff_lines * 20 >= self.lines.max(1) {
            return s(SuspectReason::RawRoff, format!("{} of {} lines are roff requests", self.roff_lines, self.lines));
        }
        if self.latex >= 5 && self.latex * 50 >= words {
            return s(SuspectReason::RawLatex, format!("{} LaTeX environment/section commands", self.latex));
        }
        if self.rtf_header || (self.backslash_words >= 20 && self.backslash_words * 5 >= words) {
            return s(
                SuspectReason::RawRtf,
                format!("{} RTF control words in {} words", self.backslash_words, self.words),
            );
        }
        if !source.markdown && self.tags >= 10 && self.tags * 10 >= words {
            return s(SuspectReason::RawMarkup, format!("{} markup tags in {} words", self.tags, self.words));
        }
        let pdf = self.pdf_ops + self.pdf_objects;
        if pdf >= 20 && pdf * 10 >= words {
            return s(SuspectReason::RawPdf, format!("{pdf} PDF operators/objects in {} words", self.words));
        }
        if self.fffd >= 4 && self.fffd * 200 >= self.chars {
            return s(SuspectReason::ReplacementChars, format!("{} U+FFFD in {} characters", self.fffd, self.chars));
        }
        if self.controls >= 4 && self.controls * 100 >= self.chars {
            return s(
                SuspectReason::ControlBytes,
                format!("{} control bytes in {} characters", self.controls, self.chars),
            );
        }
        if self.longest_run > LONG_RUN {
            return s(SuspectReason::BinaryRun, format!("a run of {} characters without whitespace", self.longest_run));
        }
        if source.text && source.bytes >= SMALL_SOURCE && (self.text_bytes as u64) * 100 < source.bytes {
            let m = format!("{} bytes of text from a {}-byte text source", self.text_bytes, source.bytes);
            return s(SuspectReason::TooSmall, m);
        }
        None
    }
}

/// Check a converted Markdown body; `None` when it reads like text.
pub fn check(body: &str, source: SourceFacts) -> Option<Suspect> {
    let mut counts = Counts::default();
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let t = line.trim_start();
        let marker = if t.starts_with("```") {
            Some("```")
        } else if t.starts_with("~~~") {
            Some("~~~")
        } else {
            None
        };
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                counts.lines += 1;
            }
            (Some(f), Some(m)) if f == m => {
                fence = None;
                counts.lines += 1;
            }
            _ => counts.line(line, fence.is_some()),
        }
    }
    counts.verdict(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> Option<&'static str> {
        check(body, SourceFacts::default()).map(|s| s.reason.code())
    }

    fn prose(n: usize) -> String {
        "The quick brown fox jumps over the lazy dog near the river bank.\n".repeat(n)
    }

    #[test]
    fn clean_text_passes() {
        assert_eq!(code(&prose(50)), None);
        assert_eq!(code("# Title\n\nA note about `.TH` and <b> in passing.\n"), None);
        assert_eq!(code(""), None);
        // Quoted source in a fenced block is intended.
        let quoted = format!("{}```\n.TH LS 1\n.SH NAME\n.de XX\n..\n<div><p>x</p></div>\n```\n", prose(2));
        assert_eq!(code(&quoted), None);
    }

    #[test]
    fn raw_roff_is_flagged() {
        let page = ".\\\" generated\n.de Sp\n.if t .sp .5v\n..\n.TH CPAN 1\n.SH NAME\ncpan \\- interact\n";
        let s = check(page, SourceFacts::default()).unwrap();
        assert_eq!(s.reason, SuspectReason::RawRoff);
        assert_eq!(s.to_string(), "raw_roff: 5 of 7 lines are roff requests");
        // Words that merely start with a dot are text.
        assert_eq!(code(".bashrc is read first.\n.profile next.\n.NET too.\n"), None);
        assert!(is_roff_line("'br\\}") && is_roff_line(". if n .ad l") && !is_roff_line("...and more"));
    }

    #[test]
    fn markup_rtf_latex_pdf_are_flagged() {
        let html = "<div class=\"a\"><p>Hi <b>there</b></p><span>x</span></div>\n".repeat(5);
        assert_eq!(code(&html), Some("raw_markup"));
        assert_eq!(check(&html, SourceFacts { markdown: true, ..SourceFacts::default() }), None);
        // C headers in a manual page are not markup.
        assert_eq!(code(&"#include <stddef.h> and <sys/types.h> x\n".repeat(10)), None);
        assert!(is_tag(b"br/>") && is_tag(b"/div>") && is_tag(b"a href") && !is_tag(b"stdio.h>"));
        assert_eq!(code("{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}} hello\\par }"), Some("raw_rtf"));
        let rtf = "\\pard\\plain\\f1\\fs20 word \\b bold\\b0 \\par\n".repeat(5);
        assert_eq!(code(&rtf), Some("raw_rtf"));
        let tex = "\\section{A}\n\\begin{itemize}\n\\item x\n\\end{itemize}\n\\subsection{B}\n\\begin{x}\\end{x}\n";
        assert_eq!(code(tex), Some("raw_latex"));
        let pdf = "BT /F1 12 Tf 72 712 Td (Hello) Tj ET\n".repeat(6);
        assert_eq!(code(&pdf), Some("raw_pdf"));
        assert_eq!(
            code("1 0 obj << /Type /Page >> endobj 2 0 obj stream x endstream endobj\n".repeat(4).as_str()),
            Some("raw_pdf")
        );
    }

    #[test]
    fn charset_and_binary_damage_is_flagged() {
        assert_eq!(code(&format!("{}caf\u{fffd} \u{fffd}\u{fffd}\u{fffd}\n", prose(1))), Some("replacement_chars"));
        // One stray U+FFFD in a long text is tolerated.
        assert_eq!(code(&format!("{}\u{fffd}\n", prose(40))), None);
        assert_eq!(code("a\x01b\x02c\x03d\x04e\x05\n"), Some("control_bytes"));
        assert_eq!(code(&format!("intro\n{}\n", "QUJD".repeat(600))), Some("binary_run"));
        assert_eq!(code(&format!("intro\n{}\n", "QUJD".repeat(400))), None);
    }

    #[test]
    fn tiny_body_from_large_text_source() {
        let small = "# Title\n\nshort\n";
        assert_eq!(
            check(small, SourceFacts { bytes: 50_000, text: true, markdown: false }).unwrap().reason.code(),
            "too_small"
        );
        assert_eq!(check(small, SourceFacts { bytes: 50_000, text: false, markdown: false }), None);
        assert_eq!(check(small, SourceFacts { bytes: 5_000, text: true, markdown: false }), None);
        assert_eq!(check(&prose(10), SourceFacts { bytes: 50_000, text: true, markdown: false }), None);
    }
}
