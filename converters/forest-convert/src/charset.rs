//! Charset detection for text that is not UTF-8 (issue 34).
//!
//! In: a file's bytes (BOM already handled by the caller). Out: its text.
//! Invalid UTF-8 goes to `chardetng` (Firefox's detector), which names an
//! `encoding_rs` encoding: Big5 (with HKSCS), EUC-KR/CP949, EUC-JP,
//! Shift_JIS, GBK/GB18030, ISO-8859-x and Windows-125x. Seven-bit encodings
//! are valid UTF-8 and never reach the detector, so their escape sequences
//! are recognised here: ISO-2022-JP (`ESC $ B`, `ESC $ @`) is decoded by
//! `encoding_rs`; ISO-2022-KR and HZ are not in `encoding_rs` (the WHATWG
//! Encoding Standard maps them to the replacement encoding) and no maintained
//! crate decodes them, but both are thin 7-bit wrappers around EUC-KR and
//! GB2312 bytes, so each has a small hand-written unwrapper here that feeds
//! `encoding_rs` the 8-bit bytes. Johab has no decoder (left as is).

use encoding_rs::{Encoding, EUC_JP, EUC_KR, GBK, ISO_2022_JP, UTF_8};

/// Decode bytes that are not valid UTF-8: UTF-8 with a few damaged bytes
/// stays UTF-8 (lossy); anything else is decoded as the detected charset.
pub(crate) fn decode_non_utf8(bytes: &[u8]) -> String {
    let lossy = String::from_utf8_lossy(bytes);
    let (mut good, mut bad) = (0usize, 0usize);
    for c in lossy.chars() {
        if c == '\u{fffd}' {
            bad += 1;
        } else if !c.is_ascii() {
            good += 1;
        }
    }
    // Legacy CJK bytes form an occasional valid UTF-8 pair by chance, far
    // fewer than their invalid ones; real UTF-8 has far more good than bad.
    if good > 0 && good >= 4 * bad {
        return lossy.into_owned();
    }
    detected(bytes).decode_without_bom_handling(bytes).0.into_owned()
}

/// The encoding `chardetng` guesses for non-UTF-8 bytes, with two
/// corrections for short inputs: a handful of 8-bit bytes is too little to
/// tell Latin code pages apart (Windows-1252 is the most common), and Korean
/// EUC-KR without kana is not Japanese EUC-JP (both decode cleanly; chardetng
/// prefers EUC-JP on short Korean text with Hanja).
pub(crate) fn detected(bytes: &[u8]) -> &'static Encoding {
    let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    det.feed(bytes, true);
    let enc = det.guess(None, chardetng::Utf8Detection::Deny);
    if enc == UTF_8 || (enc.is_single_byte() && bytes.iter().filter(|b| !b.is_ascii()).count() < 8) {
        return encoding_rs::WINDOWS_1252;
    }
    if enc == EUC_JP && !has_kana(bytes) && strict(EUC_KR, bytes).is_some() {
        return EUC_KR;
    }
    enc
}

/// Whether EUC-JP bytes hold kana (lead byte 0xA4 hiragana, 0xA5 katakana)
/// in at least 1 of 4 double-byte characters, as Japanese prose does (40-60%;
/// Korean jamo share the 0xA4 row but are a small part of Korean text).
fn has_kana(bytes: &[u8]) -> bool {
    let (mut kana, mut pairs, mut i) = (0usize, 0usize, 0usize);
    while i + 1 < bytes.len() {
        if bytes[i] >= 0xa1 {
            pairs += 1;
            kana += usize::from(matches!(bytes[i], 0xa4 | 0xa5));
            i += 2;
        } else {
            i += 1;
        }
    }
    kana * 4 >= pairs
}

/// Decode valid UTF-8 that is really a 7-bit CJK encoding (ISO-2022-JP,
/// ISO-2022-KR, HZ); `None` when it is not one (or does not decode cleanly).
pub(crate) fn decode_seven_bit(text: &str) -> Option<String> {
    let b = text.as_bytes();
    if b.contains(&0x1b) {
        if contains(b, b"\x1b$)C") {
            return iso2022_kr(b);
        }
        if contains(b, b"\x1b$B") || contains(b, b"\x1b$@") {
            let (s, had_errors) = ISO_2022_JP.decode_without_bom_handling(b);
            return (!had_errors).then(|| s.into_owned());
        }
        return None;
    }
    if contains(b, b"~{") && contains(b, b"~}") && b.is_ascii() {
        return hz(b);
    }
    None
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Decode bytes with `enc`, `None` on any malformed sequence.
fn strict(enc: &'static Encoding, bytes: &[u8]) -> Option<String> {
    enc.decode_without_bom_handling_and_without_replacement(bytes).map(|s| s.into_owned())
}

/// A 7-bit double-byte pair (both bytes 0x21..=0x7E) with the high bits set.
fn pair(b: &[u8], i: usize) -> Option<[u8; 2]> {
    let (x, y) = (*b.get(i)?, *b.get(i + 1)?);
    ((0x21..=0x7e).contains(&x) && (0x21..=0x7e).contains(&y)).then_some([x | 0x80, y | 0x80])
}

/// ISO-2022-KR (RFC 1557): after the `ESC $ ) C` designator, SO (0x0E)
/// shifts to KS X 1001 pairs (EUC-KR with the high bits cleared), SI (0x0F)
/// back to ASCII; every line starts in ASCII.
fn iso2022_kr(b: &[u8]) -> Option<String> {
    let mut euc = Vec::with_capacity(b.len());
    let (mut i, mut shifted) = (0, false);
    while i < b.len() {
        match b[i] {
            0x1b if b[i..].starts_with(b"\x1b$)C") => i += 4,
            0x0e => (shifted, i) = (true, i + 1),
            0x0f => (shifted, i) = (false, i + 1),
            c @ (b'\n' | b'\r') => {
                shifted = false;
                euc.push(c);
                i += 1;
            }
            b' ' | b'\t' if shifted => {
                euc.push(b[i]);
                i += 1;
            }
            _ if shifted => {
                euc.extend_from_slice(&pair(b, i)?);
                i += 2;
            }
            c if c.is_ascii() && c != 0x1b => {
                euc.push(c);
                i += 1;
            }
            _ => return None,
        }
    }
    strict(EUC_KR, &euc)
}

/// HZ (RFC 1843): `~{` shifts to GB2312 pairs with the high bits cleared,
/// `~}` back to ASCII; `~~` is a tilde and `~` + newline a line continuation.
fn hz(b: &[u8]) -> Option<String> {
    let mut gb = Vec::with_capacity(b.len());
    let (mut i, mut shifted) = (0, false);
    while i < b.len() {
        match (shifted, b[i], b.get(i + 1).copied()) {
            (false, b'~', Some(b'~')) => gb.push(b'~'),
            (false, b'~', Some(b'{')) => shifted = true,
            (false, b'~', Some(b'\n')) => {}
            (false, c, _) => {
                gb.push(c);
                i += 1;
                continue;
            }
            (true, b'~', Some(b'}')) => shifted = false,
            (true, _, _) => gb.extend_from_slice(&pair(b, i)?),
        }
        i += 2;
    }
    if shifted {
        return None;
    }
    strict(GBK, &gb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hz_and_iso2022_kr_unwrap() {
        let hz_text = "ASCII ~~ then ~{<:Ky2;S{#,NpJ)l6HK!#~}Bye.\n";
        assert_eq!(decode_seven_bit(hz_text).unwrap(), "ASCII ~ then 己所不欲，勿施於人。Bye.\n");
        // An unterminated or odd shift is not HZ.
        assert_eq!(decode_seven_bit("a ~{ b ~} c"), None);
        assert_eq!(decode_seven_bit("x ~{<:"), None);
        let kr = "\x1b$)C\x0e!]\x0f (Python)\n";
        assert_eq!(decode_seven_bit(kr).unwrap(), "◎ (Python)\n");
    }

    #[test]
    fn terminal_escapes_are_not_iso2022() {
        assert_eq!(decode_seven_bit("\x1b(B\x1b[mok\n"), None);
        assert_eq!(decode_seven_bit("plain ~ text"), None);
    }

    #[test]
    fn mostly_utf8_stays_utf8() {
        assert_eq!(
            decode_non_utf8(
                "héllo wörld ça va \u{e9}".as_bytes().iter().copied().chain([0xff]).collect::<Vec<_>>().as_slice()
            ),
            "héllo wörld ça va é\u{fffd}"
        );
        assert_eq!(decode_non_utf8(b"caf\xe9"), "café");
    }
}
