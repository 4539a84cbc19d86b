//! Content sniffing: which format a file's bytes are, independent of its name.
//!
//! In: the first [`HEAD`] bytes of a file. Out: a [`Sniffed`] kind. Magic bytes
//! come from the `infer` crate (images, audio, video, archives, documents);
//! text vs binary from `content_inspector` (UTF-8/UTF-16 BOMs, NUL and
//! control-byte heuristics). Touches nothing but the bytes it is given.

/// Bytes read from the start of a file for sniffing.
pub(crate) const HEAD: usize = 8192;

/// What the bytes of a file are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// Image, audio or video; the value is the real format (`TIFF`, `OGG`...).
    Media(String),
    /// A format one of our converters reads, as its canonical extension (`.pdf`).
    Format(&'static str),
    /// Readable text (UTF-8, UTF-16 or 8-bit text without control bytes).
    Text,
    /// Bytes nobody here can read.
    Binary,
}

/// Read up to [`HEAD`] bytes of `path`.
pub(crate) fn head(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(HEAD);
    std::fs::File::open(path)?.take(HEAD as u64).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Classify `head` (the first bytes of a file).
pub(crate) fn sniff(head: &[u8]) -> Sniffed {
    if head.starts_with(b"SQLite format 3\0") {
        return Sniffed::Format(".db");
    }
    if let Some(t) = infer::get(head) {
        let ext = t.extension();
        match t.matcher_type() {
            infer::MatcherType::Image | infer::MatcherType::Audio | infer::MatcherType::Video => {
                return Sniffed::Media(ext.to_uppercase());
            }
            _ => {}
        }
        let known = match ext {
            "pdf" => Some(".pdf"),
            "gz" => Some(".gz"),
            "bz2" => Some(".bz2"),
            "xz" => Some(".xz"),
            "tar" => Some(".tar"),
            "rtf" => Some(".rtf"),
            "epub" => Some(".epub"),
            "docx" => Some(".docx"),
            "xlsx" => Some(".xlsx"),
            "pptx" => Some(".pptx"),
            "odt" => Some(".odt"),
            "ods" => Some(".ods"),
            "odp" => Some(".odp"),
            "xls" => Some(".xls"),
            "zip" => Some(".zip"),
            _ => None,
        };
        if let Some(k) = known {
            return Sniffed::Format(k);
        }
    }
    if head.is_empty() {
        return Sniffed::Binary;
    }
    let kind = content_inspector::inspect(head);
    // Without a BOM, "text" only means no NUL in the first KiB.
    if kind.is_text() && (kind != content_inspector::ContentType::UTF_8 || !mostly_controls(head)) {
        if is_svg(head) {
            return Sniffed::Media("SVG".into());
        }
        if let Some(f) = text_format(head) {
            return Sniffed::Format(f);
        }
        return Sniffed::Text;
    }
    // Netpbm images have a two-byte magic `infer` does not know.
    if head.len() > 2 && head[0] == b'P' && (b'1'..=b'7').contains(&head[1]) && head[2].is_ascii_whitespace() {
        return Sniffed::Media("PNM".into());
    }
    Sniffed::Binary
}

/// More than one byte in 16 a C0 control that text does not use (tab, line
/// feed, carriage return, form feed, backspace and escape are text): random
/// or compressed bytes whose first KiB happens to hold no NUL, which
/// `content_inspector` alone would call text (about one such file in 50).
fn mostly_controls(head: &[u8]) -> bool {
    let odd = head.iter().filter(|&&b| (b < 0x20 && !b"\t\n\r\x0c\x08\x1b".contains(&b)) || b == 0x7f).count();
    odd * 16 > head.len()
}

fn is_svg(head: &[u8]) -> bool {
    let s = String::from_utf8_lossy(&head[..head.len().min(1024)]).to_ascii_lowercase();
    let s = s.trim_start_matches('\u{feff}').trim_start();
    (s.starts_with("<?xml") || s.starts_with("<svg") || s.starts_with("<!doctype svg")) && s.contains("<svg")
}

/// Text that one of our text-shaped converters reads better than plain text.
fn text_format(head: &[u8]) -> Option<&'static str> {
    let s = String::from_utf8_lossy(&head[..head.len().min(1024)]).to_ascii_lowercase();
    let s = s.trim_start_matches('\u{feff}').trim_start();
    if s.starts_with("<!doctype html") || s.starts_with("<html") {
        return Some(".html");
    }
    if s.starts_with("{\\rtf") {
        return Some(".rtf");
    }
    if crate::man::looks_like_man(&String::from_utf8_lossy(head)) {
        return Some(".man");
    }
    None
}

/// Extensions whose format has binary magic bytes: such a file whose bytes are
/// text is named wrong (a text file called `.db`) and is read as text.
pub(crate) fn expects_binary(ext: &str) -> bool {
    matches!(
        ext,
        ".db"
            | ".sqlite"
            | ".sqlite3"
            | ".pdf"
            | ".xlsx"
            | ".xlsm"
            | ".xlsb"
            | ".xls"
            | ".ods"
            | ".ots"
            | ".docx"
            | ".odt"
            | ".ott"
            | ".odp"
            | ".pptx"
            | ".epub"
            | ".msg"
            | ".zip"
            | ".gz"
            | ".bz2"
            | ".xz"
            | ".png"
            | ".jpg"
            | ".jpeg"
            | ".gif"
            | ".webp"
            | ".mp3"
            | ".m4a"
            | ".flac"
            | ".mp4"
            | ".mov"
            | ".mkv"
            | ".webm"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes_and_text() {
        assert_eq!(sniff(b"II*\0\x08\0\0\0rest"), Sniffed::Media("TIF".into()));
        assert_eq!(sniff(b"BM\x36\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0"), Sniffed::Media("BMP".into()));
        assert_eq!(sniff(b"%PDF-1.4\n"), Sniffed::Format(".pdf"));
        assert_eq!(sniff(b"\x1f\x8b\x08\0\0\0\0\0"), Sniffed::Format(".gz"));
        assert_eq!(sniff(b"This is README text.\n"), Sniffed::Text);
        assert_eq!(sniff("<?xml version='1.0'?>\n<svg xmlns='x'/>".as_bytes()), Sniffed::Media("SVG".into()));
        assert_eq!(sniff(b"P6\n2 2\n255\n\x00\x01\x02"), Sniffed::Media("PNM".into()));
        assert_eq!(sniff(b"\0\x01\x02\x03\x04\xff\xfe\0\0"), Sniffed::Binary);
        assert_eq!(sniff(b"<!DOCTYPE html><html>"), Sniffed::Format(".html"));
        assert_eq!(sniff(b".\\\" page\n.TH LS 1\n.SH NAME\n"), Sniffed::Format(".man"));
    }

    #[test]
    fn random_bytes_without_an_early_nul_are_binary() {
        // Pseudo-random bytes (xorshift) with no NUL in the first KiB, the
        // head `content_inspector` alone calls text.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let head: Vec<u8> = (0..HEAD)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let b = (x >> 24) as u8;
                if i < 1024 && b == 0 {
                    1
                } else {
                    b
                }
            })
            .collect();
        assert!(content_inspector::inspect(&head).is_text());
        assert_eq!(sniff(&head), Sniffed::Binary);
        let legacy = "Résumé des réunions, café à 10h.\r\n".repeat(200);
        let latin1: Vec<u8> = legacy.chars().map(|c| c as u32 as u8).collect();
        assert_eq!(sniff(&latin1), Sniffed::Text, "8-bit text stays text");
        assert_eq!(sniff(b"\x1b[1mbold\x1b[0m log line\n\tindented\x0c"), Sniffed::Text);
        let utf16: Vec<u8> =
            [0xff, 0xfe].into_iter().chain("Meeting notes\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
        assert_eq!(sniff(&utf16), Sniffed::Text, "UTF-16 with its BOM stays text");
    }
}
