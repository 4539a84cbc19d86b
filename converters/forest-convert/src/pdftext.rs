//! Page text out of pdf-extract's glyph stream, with word breaks decided per
//! glyph (as pdftotext does) rather than per shown string.
//!
//! In: the glyphs pdf-extract's content-stream interpreter reports for one
//! page (position, advance width, font size). Out: plain text with spaces and
//! line breaks. pdf-extract's own `PlainTextOutput` looks for a gap only before
//! the first glyph of each `Tj`/`TJ` string, so producers that encode word
//! spaces as character spacing inside one string (Ghostscript's `2.5 Tc
//! [(da)250(sal)] TJ` for "d as a l…") come out as "invokedasalogin"; here
//! every glyph is checked.

use pdf_extract::content::{Content, Operation};
use pdf_extract::{Dictionary, Document, MediaBox, Object, OutputDev, OutputError, Stream, Transform};

/// A gap wider than this share of the font size is a word break (pdftotext's
/// `minWordBreakSpace` is the same 0.1).
const WORD_GAP: f64 = 0.1;

/// Collects one page's text; `text` holds the result.
#[derive(Default)]
pub(crate) struct TextDev {
    /// The page text so far.
    pub(crate) text: String,
    /// Where the last glyph ended along the baseline.
    last_end: f64,
    /// The last glyph's offset across the baseline (its line).
    last_across: f64,
    /// The last glyph's baseline direction (unit vector).
    last_dir: (f64, f64),
    started: bool,
    /// Closed lines: (largest glyph size, byte range in `text`).
    lines: Vec<(f64, usize, usize)>,
    line_start: usize,
    line_size: f64,
    /// Characters per glyph size (tenths of a point): the body size is the mode.
    sizes: std::collections::HashMap<u32, usize>,
}

impl TextDev {
    fn ends_with_space(&self) -> bool {
        self.text.chars().next_back().is_none_or(char::is_whitespace)
    }

    fn newline(&mut self) {
        self.close_line();
        self.text.push('\n');
        self.line_start = self.text.len();
    }

    fn close_line(&mut self) {
        if self.text.len() > self.line_start && !self.text[self.line_start..].trim().is_empty() {
            self.lines.push((self.line_size, self.line_start, self.text.len()));
        }
        self.line_size = 0.0;
    }

    /// The page's title line: the first run (up to three lines) set in the
    /// largest size, when that size stands out from the body text (at least
    /// 1.2 times the most common size) and reads like a title.
    pub(crate) fn title_line(&mut self) -> Option<String> {
        self.close_line();
        self.line_start = self.text.len();
        let body = self.sizes.iter().max_by_key(|(s, n)| (**n, **s)).map(|(s, _)| f64::from(*s) / 10.0)?;
        let max = self.lines.iter().map(|l| l.0).fold(0.0, f64::max);
        if max < body * 1.2 {
            return None;
        }
        let first = self.lines.iter().position(|l| l.0 >= max * 0.99)?;
        let words: Vec<&str> = self.lines[first..]
            .iter()
            .take(3)
            .take_while(|l| l.0 >= max * 0.99)
            .flat_map(|l| self.text[l.1..l.2].split_whitespace())
            .collect();
        let title = words.join(" ");
        let n = title.chars().count();
        ((2..=100).contains(&n) && title.chars().filter(|c| c.is_alphabetic()).count() >= 2).then_some(title)
    }
}

impl OutputDev for TextDev {
    fn begin_page(&mut self, _: u32, _: &MediaBox, _: Option<(f64, f64, f64, f64)>) -> Result<(), OutputError> {
        self.started = false;
        Ok(())
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        ch: &str,
    ) -> Result<(), OutputError> {
        // Device-space font size: |det| is rotation-proof (pdf-extract's
        // product of the transformed vector's components is negative, hence
        // NaN, for text turned by 90°).
        let size = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt() * font_size;
        // Work along the baseline and across it, so rotated pages (text
        // running down the page) read like upright ones.
        let norm = trm.m11.hypot(trm.m12);
        let dir = if norm > 0.0 { (trm.m11 / norm, trm.m12 / norm) } else { (1.0, 0.0) };
        let along = trm.m31 * dir.0 + trm.m32 * dir.1;
        let across = trm.m32 * dir.0 - trm.m31 * dir.1;
        if self.started {
            let turned = dir.0 * self.last_dir.0 + dir.1 * self.last_dir.1 < 0.9;
            let d = (across - self.last_across).abs();
            if d > size * 1.5 {
                self.newline();
            }
            if turned || (d > size * 0.5 && (along < self.last_end || d > size * 1.5)) {
                // Left and down: a new line (after a big jump, a blank one).
                self.newline();
            } else if (along > self.last_end + size * WORD_GAP || along < self.last_end - size)
                && !self.ends_with_space()
                && !ch.starts_with(char::is_whitespace)
            {
                // A gap (also on a step up or down that is no line break: a
                // table cell; a superscript touching its word is no gap), or
                // a jump back of more than an em (out-of-order runs).
                self.text.push(' ');
            }
        }
        self.text.push_str(ch);
        if !ch.trim().is_empty() {
            self.line_size = self.line_size.max(size);
            *self.sizes.entry((size * 10.0).round() as u32).or_default() += ch.chars().count();
        }
        self.started = true;
        self.last_across = across;
        self.last_dir = dir;
        // The advance scales with the baseline vector, which differs from
        // `size` under a non-uniform scale (squeezed figure labels).
        self.last_end = along + width * font_size * norm;
        Ok(())
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// Content-stream text without `%` comments, or `None` when it holds an
/// inline image (binary data a lexer cannot walk) or no comment at all.
/// lopdf's content parser stops at the first comment, so everything after
/// one was lost ("Hello PDF" in pypdf's `Sample_Td-matrix.pdf`).
fn strip_comments(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len());
    let (mut i, mut stripped) = (0, false);
    while i < b.len() {
        match b[i] {
            b'(' => {
                // Literal string: balanced parentheses, backslash escapes.
                let start = i;
                let mut depth = 0usize;
                while i < b.len() {
                    match b[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                out.extend_from_slice(&b[start..i]);
                continue;
            }
            b'%' => {
                while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                    i += 1;
                }
                stripped = true;
                continue;
            }
            b'I' if b.get(i + 1) == Some(&b'D')
                && i.checked_sub(1).is_none_or(|p| b[p].is_ascii_whitespace())
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
            {
                return None;
            }
            c => out.push(c),
        }
        i += 1;
    }
    stripped.then_some(out)
}

/// Whether a content stream has `'`/`"` operators and `%` comments: bytes
/// outside literal strings (text with apostrophes is the common case and
/// must not cost a second parse of the page).
fn operators_outside_strings(b: &[u8]) -> (bool, bool) {
    let (mut quotes, mut comments) = (false, false);
    let (mut depth, mut i) = (0usize, 0usize);
    while i < b.len() && !(quotes && comments) {
        match (b[i], depth) {
            (b'\\', d) if d > 0 => i += 1,
            (b'(', d) => depth = d + 1,
            (b')', d) if d > 0 => depth = d - 1,
            (b'\'' | b'"', 0) => quotes = true,
            (b'%', 0) => comments = true,
            _ => {}
        }
        i += 1;
    }
    (quotes, comments)
}

/// Make page content streams readable by pdf-extract's interpreter: drop
/// `%` comments (lopdf's parser stops at them) and rewrite the `'` and `"`
/// text operators (next line and show text), which the interpreter skips,
/// into the `T*`/`Tw`/`Tc`/`Tj` sequence they stand for (Ghostscript-era PDFs
/// such as SQLite's copyright release set whole paragraphs with `'`). Pages
/// that need neither are left untouched and cost one byte scan.
pub(crate) fn normalise_content(doc: &mut Document) {
    for (_, page_id) in doc.get_pages() {
        let Ok(bytes) = doc.get_page_content(page_id) else { continue };
        let (quotes, comments) = operators_outside_strings(&bytes);
        let stripped = if comments { strip_comments(&bytes) } else { None };
        if !quotes && stripped.is_none() {
            continue;
        }
        let Ok(content) = Content::decode(stripped.as_deref().unwrap_or(&bytes)) else { continue };
        if stripped.is_none() && !content.operations.iter().any(|o| o.operator == "'" || o.operator == "\"") {
            continue;
        }
        let mut ops = Vec::with_capacity(content.operations.len() + 64);
        for op in content.operations {
            match (op.operator.as_str(), op.operands.len()) {
                ("'", 1) => {
                    ops.push(Operation::new("T*", vec![]));
                    ops.push(Operation::new("Tj", op.operands));
                }
                ("\"", 3) => {
                    let mut o = op.operands.into_iter();
                    let (aw, ac, s) = (o.next(), o.next(), o.next());
                    ops.extend(aw.map(|aw| Operation::new("Tw", vec![aw])));
                    ops.extend(ac.map(|ac| Operation::new("Tc", vec![ac])));
                    ops.push(Operation::new("T*", vec![]));
                    ops.extend(s.map(|s| Operation::new("Tj", vec![s])));
                }
                _ => ops.push(op),
            }
        }
        let Ok(encoded) = (Content { operations: ops }).encode() else { continue };
        let id = doc.add_object(Stream::new(Dictionary::new(), encoded));
        if let Ok(page) = doc.get_object_mut(page_id).and_then(Object::as_dict_mut) {
            page.set("Contents", id);
        }
    }
}

/// Join words hyphenated across a line end ("includ-" + "ing ..." becomes
/// "including" on the first line), as pdftotext does: only a lowercase letter
/// before the hyphen and a lowercase letter starting the next line.
pub(crate) fn dehyphenate(lines: &mut Vec<String>) {
    let mut i = 0;
    while i + 1 < lines.len() {
        let ends_hyphen = {
            let l = lines[i].trim_end();
            let mut rev = l.chars().rev();
            rev.next() == Some('-') && rev.next().is_some_and(|c| c.is_lowercase())
        };
        let next_lower = lines[i + 1].trim_start().chars().next().is_some_and(|c| c.is_lowercase());
        if ends_hyphen && next_lower {
            let next = lines[i + 1].trim_start().to_string();
            let (word, rest) = match next.find(char::is_whitespace) {
                Some(k) => (&next[..k], next[k..].trim_start()),
                None => (next.as_str(), ""),
            };
            let cur = lines[i].trim_end();
            let joined = format!("{}{word}", &cur[..cur.len() - 1]);
            lines[i] = joined;
            if rest.is_empty() {
                lines.remove(i + 1);
                continue;
            }
            lines[i + 1] = rest.to_string();
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::Transform;

    fn at(x: f64, y: f64) -> Transform {
        Transform::row_major(1., 0., 0., 1., x, y)
    }

    #[test]
    fn gaps_inside_one_string_break_words() {
        let mut d = TextDev::default();
        // "d" at 0 (width 0.5 em of 10 pt), "a" after a 2.5 pt gap, "s" touching.
        for (x, c) in [(0.0, "d"), (7.5, "a"), (12.5, "s")] {
            d.output_character(&at(x, 700.0), 0.5, 0.0, 10.0, c).unwrap();
        }
        assert_eq!(d.text, "d as");
        // Next line, left and down; then a paragraph gap.
        d.output_character(&at(0.0, 688.0), 0.5, 0.0, 10.0, "x").unwrap();
        d.output_character(&at(0.0, 650.0), 0.5, 0.0, 10.0, "y").unwrap();
        assert_eq!(d.text, "d as\nx\n\ny");
    }

    #[test]
    fn the_title_is_the_first_run_in_the_largest_size() {
        let mut d = TextDev::default();
        let put = |d: &mut TextDev, x: f64, y: f64, size: f64, s: &str| {
            for (i, c) in s.chars().enumerate() {
                let t = Transform::row_major(size, 0., 0., size, x + i as f64 * size * 0.5, y);
                d.output_character(&t, 0.5, 0.0, 1.0, &c.to_string()).unwrap();
            }
        };
        put(&mut d, 0.0, 760.0, 9.0, "Journal 12");
        put(&mut d, 0.0, 720.0, 20.0, "Annual");
        put(&mut d, 0.0, 696.0, 20.0, "Report");
        put(&mut d, 0.0, 650.0, 10.0, "The body text of the page is set in ten point.");
        put(&mut d, 0.0, 638.0, 10.0, "More body text.");
        assert_eq!(d.title_line().as_deref(), Some("Annual Report"));
        let mut flat = TextDev::default();
        put(&mut flat, 0.0, 700.0, 10.0, "Only body text here.");
        assert_eq!(flat.title_line(), None);
    }

    #[test]
    fn text_running_down_the_page_reads_like_upright_text() {
        let mut d = TextDev::default();
        // Baseline pointing down (-y); lines step in +x... here -x, like a
        // page turned by 90°.
        let rot = |x: f64, y: f64| Transform::row_major(0., -1., 1., 0., x, y);
        for (x, y, c) in [(100.0, 500.0, "a"), (100.0, 495.0, "b"), (100.0, 487.5, "c"), (88.0, 500.0, "d")] {
            d.output_character(&rot(x, y), 0.5, 0.0, 10.0, c).unwrap();
        }
        assert_eq!(d.text, "ab c\nd");
    }

    #[test]
    fn comments_go_and_quote_operators_become_next_line_and_show() {
        use pdf_extract::dictionary;
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
        let text = b"BT /F1 10 Tf 11 TL 72 700 Td (first line) Tj % a comment (not text)\n(second line)' 1 0 (third %line)\" ET".to_vec();
        let content = doc.add_object(Stream::new(dictionary! {}, text));
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1 }),
        );
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog);
        normalise_content(&mut doc);
        let mut dev = TextDev::default();
        pdf_extract::output_doc_page(&doc, &mut dev, 1).unwrap();
        assert_eq!(dev.text, "first line\nsecond line\nthird %line");
    }

    #[test]
    fn hyphenated_line_ends_join() {
        let mut l: Vec<String> =
            ["includ-", "ing the option", "well-", "Known", "com-", "mand"].iter().map(|s| s.to_string()).collect();
        dehyphenate(&mut l);
        assert_eq!(l, vec!["including", "the option", "well-", "Known", "command"]);
    }
}

#[cfg(test)]
mod strip_tests {
    use super::strip_comments;

    #[test]
    fn operator_scan_ignores_string_contents() {
        use super::operators_outside_strings as scan;
        assert_eq!(scan(b"BT (don't 100%) Tj ET"), (false, false));
        assert_eq!(scan(b"BT (a) Tj (b)' ET % c"), (true, true));
        assert_eq!(scan(b"BT (a\\) ') Tj ET"), (false, false));
    }

    #[test]
    fn comments_outside_strings_only() {
        assert_eq!(
            strip_comments(b"BT % move\n(50% \\) (x)) Tj ET").as_deref(),
            Some(&b"BT \n(50% \\) (x)) Tj ET"[..])
        );
        assert_eq!(strip_comments(b"BT (no comment) Tj ET"), None);
        assert_eq!(strip_comments(b"BI /W 1 ID %\x00 EI % c"), None);
    }
}
