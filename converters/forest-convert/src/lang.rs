//! Language of a converted body via `whatlang` (trigram model, no data files):
//! a tag only when the text is long and the detector calls it reliable.

/// Fewest letters of prose before a guess is attempted.
const MIN_LETTERS: usize = 400;
/// Prose examined (the start of a body is representative and bounds the cost).
const SAMPLE_BYTES: usize = 16 * 1024;

/// ISO 639-1 where one exists (BCP-47 prefers it), else the 639-3 code.
fn bcp47(l: whatlang::Lang) -> &'static str {
    use whatlang::Lang::*;
    match l {
        Eng => "en",
        Rus => "ru",
        Cmn => "zh",
        Spa => "es",
        Por => "pt",
        Ita => "it",
        Ben => "bn",
        Fra => "fr",
        Deu => "de",
        Ukr => "uk",
        Kat => "ka",
        Ara => "ar",
        Hin => "hi",
        Jpn => "ja",
        Heb => "he",
        Yid => "yi",
        Pol => "pl",
        Amh => "am",
        Jav => "jv",
        Kor => "ko",
        Nob => "nb",
        Dan => "da",
        Swe => "sv",
        Fin => "fi",
        Tur => "tr",
        Nld => "nl",
        Hun => "hu",
        Ces => "cs",
        Ell => "el",
        Bul => "bg",
        Bel => "be",
        Mar => "mr",
        Kan => "kn",
        Ron => "ro",
        Slv => "sl",
        Hrv => "hr",
        Srp => "sr",
        Mkd => "mk",
        Lit => "lt",
        Lav => "lv",
        Est => "et",
        Tam => "ta",
        Vie => "vi",
        Urd => "ur",
        Tha => "th",
        Guj => "gu",
        Uzb => "uz",
        Pan => "pa",
        Aze => "az",
        Ind => "id",
        Tel => "te",
        Pes => "fa",
        Mal => "ml",
        Ori => "or",
        Mya => "my",
        Nep => "ne",
        Sin => "si",
        Khm => "km",
        Tuk => "tk",
        Aka => "ak",
        Zul => "zu",
        Sna => "sn",
        Afr => "af",
        Lat => "la",
        Slk => "sk",
        Cat => "ca",
        Tgl => "tl",
        Hye => "hy",
        Epo => "eo",
    }
}

/// Detect the language of `body` (Markdown), or `None` when unsure.
pub(crate) fn detect(body: &str) -> Option<String> {
    let mut end = body.len().min(SAMPLE_BYTES);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    // Prose only: code blocks, tables and link targets are not language.
    let mut prose = String::new();
    let mut in_code = false;
    for line in body[..end].lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || line.starts_with('|') || line.starts_with("    ") {
            continue;
        }
        prose.push_str(line);
        prose.push('\n');
    }
    if prose.chars().filter(|c| c.is_alphabetic()).count() < MIN_LETTERS {
        return None;
    }
    let info = whatlang::detect(&prose)?;
    (info.is_reliable() && info.confidence() >= 0.9).then(|| bcp47(info.lang()).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confident_on_long_prose_only() {
        let en = "The quick brown fox jumps over the lazy dog while the farmer watches from the porch. ".repeat(8);
        assert_eq!(detect(&en).as_deref(), Some("en"));
        let pt = "O rato roeu a roupa do rei de Roma e a rainha ficou muito zangada com ele naquele dia. ".repeat(8);
        assert_eq!(detect(&pt).as_deref(), Some("pt"));
        assert_eq!(detect("Short text here."), None);
    }
}
