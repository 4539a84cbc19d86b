//! Converter discovery and the guarded fallback chain (dialect §3.5, DESIGN §10).

use crate::container::{self, Codec};
use crate::converter::{Conversion, Converter, ConverterId, Limits};
use crate::error::{skipped, ConvertError};
use crate::fidelity::{self, SourceFacts, Suspect, SuspectReason};
use crate::outcome::ConvertOutcome;
use crate::sniff::{self, Sniffed};
use crate::values::SourceMeta;
use crate::{
    code, docx, epub, hook, html, json, mail, man, media, odf, pdf, rtf, sheet, slides, sqlite, tabular, text,
};
use forest_model::error_chain;
use forest_model::slug::title_from_stem;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Converters in discovery order: command hooks, then built-ins (media last).
#[derive(Clone)]
pub struct Registry {
    converters: Vec<Arc<dyn Converter>>,
}

/// Where the registry routes one file.
enum Route {
    /// Convert with the claimants of this extension (warning when it is not the file's own).
    Ext(String, Option<String>),
    /// Inflate first, then route the inner file.
    Decompress(Codec),
}

impl Registry {
    /// The built-in converters (dialect §3.5 table plus pdf, html, ods, office, mail...).
    pub fn builtin() -> Self {
        let converters: Vec<Arc<dyn Converter>> = vec![
            Arc::new(text::Passthrough),
            Arc::new(text::PlainText),
            Arc::new(tabular::Csv),
            Arc::new(tabular::JsonLines),
            Arc::new(json::Json),
            Arc::new(sqlite::SqliteAdopt),
            Arc::new(sheet::Workbook),
            Arc::new(docx::Docx),
            Arc::new(odf::OdfText),
            Arc::new(slides::Slides),
            Arc::new(html::Html),
            Arc::new(pdf::Pdf),
            Arc::new(rtf::Rtf),
            Arc::new(mail::Eml),
            Arc::new(mail::Msg),
            Arc::new(man::Man),
            Arc::new(epub::Epub),
            Arc::new(container::Archive),
            Arc::new(media::MediaStub),
            Arc::new(code::SourceCode),
        ];
        Registry { converters }
    }

    /// An empty registry (for explicit converter lists).
    pub fn empty() -> Self {
        Registry { converters: Vec::new() }
    }

    /// Append a converter after the existing ones.
    pub fn push(mut self, c: Arc<dyn Converter>) -> Self {
        self.converters.push(c);
        self
    }

    /// Put command hooks (`gardener.yaml` `converters: {".ext": "<template>"}`)
    /// ahead of everything registered so far; `timeout` bounds each command.
    pub fn with_command_hooks(mut self, hooks: &BTreeMap<String, String>, timeout: Duration) -> Self {
        let mut front: Vec<Arc<dyn Converter>> = hooks
            .iter()
            .map(|(ext, tpl)| Arc::new(hook::CommandHook::new(ext, tpl, timeout)) as Arc<dyn Converter>)
            .collect();
        front.append(&mut self.converters);
        self.converters = front;
        self
    }

    /// Every converter claiming `ext` (with or without dot, any case), in order.
    pub fn claimants(&self, ext: &str) -> Vec<&dyn Converter> {
        let ext = normalize_ext(ext);
        self.converters.iter().filter(|c| c.extensions().contains(&ext)).map(|c| c.as_ref()).collect()
    }

    fn claimed(&self, ext: &str) -> bool {
        !ext.is_empty() && self.converters.iter().any(|c| c.extensions().iter().any(|e| e == ext))
    }

    /// The converter that would handle `path` now (by extension, else by
    /// content), without converting. A caller that recorded an unsupported or
    /// failed outcome re-tries the file when this differs from what it recorded.
    pub fn claim(&self, path: &Path) -> Option<ConverterId> {
        let head = sniff::head(path).ok()?;
        match self.route(path, &head) {
            Some(Route::Ext(ext, _)) => self
                .converters
                .iter()
                .find(|c| c.extensions().contains(&ext))
                .map(|c| ConverterId { name: c.name().to_string(), version: c.version() }),
            Some(Route::Decompress(codec)) => Some(ConverterId { name: codec.name().to_string(), version: 1 }),
            None => None,
        }
    }

    /// Pick the converters for a file: its extension when claimed and its bytes
    /// agree, else what the bytes are.
    fn route(&self, path: &Path, head: &[u8]) -> Option<Route> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy().to_lowercase())).unwrap_or_default();
        let sniffed = sniff::sniff(head);
        if container::is_tarball(&name) && self.claimed(".tar") {
            return Some(Route::Ext(".tar".into(), None));
        }
        if let Some(codec) = Codec::of_ext(&ext) {
            if matches!(sniffed, Sniffed::Format(".gz" | ".bz2" | ".xz")) {
                return Some(Route::Decompress(codec));
            }
        }
        if self.claimed(&ext) {
            if sniff::expects_binary(&ext) && sniffed == Sniffed::Text {
                let w = format!("named {ext} but its content is text: converted as text");
                return Some(Route::Ext(".txt".into(), Some(w)));
            }
            return Some(Route::Ext(ext, None));
        }
        let by_content = match sniffed {
            Sniffed::Media(_) => ".png",
            Sniffed::Format(".gz") => return Some(Route::Decompress(Codec::Gzip)),
            Sniffed::Format(".bz2") => return Some(Route::Decompress(Codec::Bzip2)),
            Sniffed::Format(".xz") => return Some(Route::Decompress(Codec::Xz)),
            Sniffed::Format(f) => f,
            // A script without an extension is code when its `#!` names a language.
            Sniffed::Text => code::ext_of_shebang(head).filter(|e| self.claimed(e)).unwrap_or(".txt"),
            Sniffed::Binary => return None,
        };
        self.claimed(by_content).then(|| Route::Ext(by_content.to_string(), None))
    }

    /// Convert one file through the fallback chain, every call under `limits`.
    pub fn convert(&self, path: &Path, rel: &str, limits: &Limits) -> ConvertOutcome {
        self.convert_at(path, rel, limits, 0)
    }

    fn convert_at(&self, path: &Path, rel: &str, limits: &Limits, depth: usize) -> ConvertOutcome {
        let mut warnings = Vec::new();
        // Size first: no converter (nor hook) ever sees an oversized input.
        let size = match std::fs::metadata(path) {
            Ok(m) => m.len(),
            Err(e) => return ConvertOutcome::failed(rel, ConvertError::Io(e), warnings, None),
        };
        if size == 0 {
            return ConvertOutcome::failed(rel, skipped("empty file (0 bytes)"), warnings, None);
        }
        if size > limits.max_input_bytes {
            let e = ConvertError::TooLarge { size, limit: limits.max_input_bytes };
            return ConvertOutcome::failed(rel, e, warnings, None);
        }
        let head = match sniff::head(path) {
            Ok(h) => h,
            Err(e) => return ConvertOutcome::failed(rel, ConvertError::Io(e), warnings, None),
        };
        let (ext, note) = match self.route(path, &head) {
            None => return ConvertOutcome::unsupported(rel, warnings),
            Some(Route::Decompress(codec)) if depth == 0 => return self.convert_compressed(path, rel, limits, codec),
            Some(Route::Decompress(_)) => return ConvertOutcome::unsupported(rel, warnings),
            Some(Route::Ext(ext, note)) => (ext, note),
        };
        warnings.extend(note.map(|n| format!("{rel}: {n}")));
        let claimants = self.claimants_of(&ext);
        let last = claimants.len().saturating_sub(1);
        for (i, conv) in claimants.iter().enumerate() {
            let id = ConverterId { name: conv.name().to_string(), version: conv.version() };
            match run_guarded(conv.clone(), path, limits) {
                Ok((conversion, notes)) => {
                    warnings.extend(notes.into_iter().map(|n| format!("{rel}: {n}")));
                    let job = Job { path, rel, limits, ext: &ext, head: &head, facts: source_facts(size, &ext, &head) };
                    let (mut conversion, id, suspect) =
                        self.vet(&job, &claimants[i + 1..], conversion, id, &mut warnings);
                    finish(&mut conversion, &ext);
                    return ConvertOutcome::converted(rel, conversion, warnings, Some(id), suspect);
                }
                Err(ConvertError::OverLimit(reason)) => return over_limit(rel, &reason, warnings, id),
                Err(e) if i < last && !matches!(e, ConvertError::Skipped(_)) => {
                    warnings.push(format!("{rel}: {} failed, falling back: {}", id.name, error_chain(&e)));
                }
                Err(e) => return ConvertOutcome::failed(rel, e, warnings, Some(id)),
            }
        }
        ConvertOutcome::unsupported(rel, warnings)
    }

    fn claimants_of(&self, ext: &str) -> Vec<Arc<dyn Converter>> {
        self.converters.iter().filter(|c| c.extensions().iter().any(|e| e == ext)).cloned().collect()
    }

    /// The fidelity check after a conversion: a suspect Markdown body is
    /// replaced by the first alternative whose body passes (the remaining
    /// claimants, the sniffed format's converters, a charset re-decode, plain
    /// text); when none passes the first body stays, marked suspect.
    fn vet(
        &self,
        job: &Job<'_>,
        rest: &[Arc<dyn Converter>],
        first: Conversion,
        first_id: ConverterId,
        warnings: &mut Vec<String>,
    ) -> (Conversion, ConverterId, Option<Suspect>) {
        let Some(suspect) = suspect_of(&first, job.facts) else { return (first, first_id, None) };
        for alt in self.alternatives(job, rest, suspect.reason, &first_id.name) {
            let id = ConverterId { name: alt.name().to_string(), version: alt.version() };
            let Ok((conversion, notes)) = run_guarded(alt, job.path, job.limits) else { continue };
            if suspect_of(&conversion, job.facts).is_none() {
                let code = suspect.reason.code();
                warnings.push(format!(
                    "{}: {} output is suspect ({code}), used {} instead",
                    job.rel, first_id.name, id.name
                ));
                warnings.extend(notes.into_iter().map(|n| format!("{}: {n}", job.rel)));
                return (conversion, id, None);
            }
        }
        // A file kept as its own text (Markdown, plain text, JSON) whose
        // syntax no other converter turns into prose is faithful as it is.
        if VERBATIM.contains(&first_id.name.as_str()) && suspect.reason.is_source_syntax() {
            return (first, first_id, None);
        }
        (first, first_id, Some(suspect))
    }

    /// Converters to try after a suspect body, without the one that produced it.
    fn alternatives(
        &self,
        job: &Job<'_>,
        rest: &[Arc<dyn Converter>],
        reason: SuspectReason,
        tried: &str,
    ) -> Vec<Arc<dyn Converter>> {
        let mut alts: Vec<Arc<dyn Converter>> = rest.to_vec();
        if let Sniffed::Format(f) = sniff::sniff(job.head) {
            if f != job.ext {
                alts.extend(self.claimants_of(f));
            }
        }
        // Re-decoding helps bytes that are not UTF-8; a valid UTF-8 file whose
        // text holds U+FFFD was damaged before us, and any other charset
        // would only turn it into mojibake that passes the check.
        if reason == SuspectReason::ReplacementChars
            && std::fs::read(job.path).is_ok_and(|b| std::str::from_utf8(&b).is_err())
        {
            alts.push(Arc::new(text::Redecoded));
        }
        alts.push(Arc::new(text::PlainText));
        let mut seen = vec![tried.to_string()];
        alts.retain(|c| {
            let fresh = !seen.iter().any(|n| n == c.name());
            seen.push(c.name().to_string());
            fresh
        });
        alts
    }

    /// Inflate a `.gz/.bz2/.xz` into a temporary directory and convert the
    /// member by its inner name; the outcome keeps the caller's `rel`.
    fn convert_compressed(&self, path: &Path, rel: &str, limits: &Limits, codec: Codec) -> ConvertOutcome {
        let tmp = match tempfile::Builder::new().prefix(".forest-inflate").tempdir() {
            Ok(t) => t,
            Err(e) => return ConvertOutcome::failed(rel, ConvertError::Io(e), vec![], None),
        };
        let inner = match container::decompress(path, codec, tmp.path(), limits) {
            Ok(p) => p,
            Err(e) => {
                let id = ConverterId { name: codec.name().into(), version: 1 };
                if let ConvertError::OverLimit(reason) = e {
                    return over_limit(rel, &reason, vec![], id);
                }
                return ConvertOutcome::failed(rel, e, vec![], Some(id));
            }
        };
        let mut out = self.convert_at(&inner, rel, limits, 1);
        if let Some(c) = out.converter.as_mut() {
            c.name = format!("{}+{}", codec.name(), c.name);
        }
        out
    }
}

/// Stub reason of a file over a decoder limit ([`crate::Status::Stub`]).
pub const OVER_LIMIT: &str = "over a decoder limit";

/// A file over a decoder limit ([`ConvertError::OverLimit`]: a zip, deflate
/// or XML bomb, a workbook of too many sheets): a stub naming the reason
/// (the original stays at its source) and one warning, never the memory.
fn over_limit(rel: &str, reason: &str, mut warnings: Vec<String>, id: ConverterId) -> ConvertOutcome {
    let title = title_from_stem(&text::stem(Path::new(rel)));
    warnings.push(format!("{rel}: {OVER_LIMIT}, not read: {reason}"));
    let body = format!("# {title}\n\nNot read: {OVER_LIMIT} ({reason}). The original stays at its source.\n");
    let meta = SourceMeta { stub: Some(OVER_LIMIT.into()), ..SourceMeta::default() };
    ConvertOutcome::converted(rel, Conversion::Markdown { title, body, meta }, warnings, Some(id), None)
}

/// Converters whose body is the file's own text, not a rendering of it.
const VERBATIM: [&str; 5] = ["Markdown", "PlainText", "Json", "Redecoded", "SourceCode"];

/// One file on its way through the fallback chain.
struct Job<'a> {
    path: &'a Path,
    rel: &'a str,
    limits: &'a Limits,
    /// The routed extension.
    ext: &'a str,
    /// The sniffed first bytes.
    head: &'a [u8],
    facts: SourceFacts,
}

/// What the fidelity check knows of a source: its size, and whether it is
/// text (plain, HTML or roff by content, not a binary format by name).
fn source_facts(size: u64, ext: &str, head: &[u8]) -> SourceFacts {
    let text =
        !sniff::expects_binary(ext) && matches!(sniff::sniff(head), Sniffed::Text | Sniffed::Format(".html" | ".man"));
    SourceFacts { bytes: size, text, markdown: matches!(ext, ".md" | ".markdown") }
}

/// The fidelity verdict on a Markdown body that is not a stub.
fn suspect_of(conversion: &Conversion, facts: SourceFacts) -> Option<Suspect> {
    match conversion {
        Conversion::Markdown { body, meta, .. } if meta.stub.is_none() => fidelity::check(body, facts),
        _ => None,
    }
}

/// Post-process a converted text body: `[[`/`]]` that the source did not mean
/// as wikilinks are broken up (`[\\[`, `]\\]`, which Markdown renders as the
/// same brackets), and the language is detected. Markdown sources keep their
/// wikilinks: their authors wrote them for this dialect.
fn finish(conversion: &mut Conversion, ext: &str) {
    if let Conversion::Markdown { body, meta, .. } = conversion {
        // Control bytes (texinfo's \x1f separators, form feeds, NULs in damaged text) are
        // not text and make git and grep treat the passport as binary.
        if body.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')) {
            body.retain(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\r'));
        }
        if !matches!(ext, ".md" | ".markdown") && (body.contains("[[") || body.contains("]]")) {
            *body = escape_wikilinks(body);
        }
        if meta.lang.is_none() && meta.stub.is_none() {
            meta.lang = crate::lang::detect(body);
        }
    }
}

/// Break every `[[` and `]]` so no reader sees a wikilink.
pub(crate) fn escape_wikilinks(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev = '\0';
    for c in s.chars() {
        if (c == '[' || c == ']') && prev == c {
            // Every bracket after the first of a run is escaped: `[[[` → `[\[\[`.
            out.push('\\');
            out.push(c);
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

fn normalize_ext(ext: &str) -> String {
    let e = ext.trim().to_lowercase();
    if e.starts_with('.') {
        e
    } else {
        format!(".{e}")
    }
}

/// Name of the threads converters run on (the quiet panic hook keys on it).
pub(crate) const CONVERTER_THREAD: &str = "forest-convert";

type Guarded = Result<(Conversion, Vec<String>), ConvertError>;

/// Run one converter on its own thread with panic capture and a deadline.
///
/// On timeout the worker thread is abandoned (leaked): Rust cannot kill a
/// thread, and a stuck parser holds only its own input. The leak is bounded
/// by the number of timed-out files; hooks kill their child process
/// themselves before their budget runs out.
fn run_guarded(conv: Arc<dyn Converter>, path: &Path, limits: &Limits) -> Guarded {
    let (tx, rx) = mpsc::channel::<Guarded>();
    let budget = conv.time_budget(limits);
    let path = path.to_path_buf();
    let lim = limits.clone();
    let spawned =
        std::thread::Builder::new().name(CONVERTER_THREAD.into()).stack_size(8 * 1024 * 1024).spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| {
                let mut warnings = Vec::new();
                conv.convert(&path, &lim, &mut warnings).map(|c| (c, warnings))
            }));
            let _ = tx.send(r.unwrap_or(Err(ConvertError::Panicked)));
        });
    if let Err(e) = spawned {
        return Err(ConvertError::Io(e));
    }
    match rx.recv_timeout(budget) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(ConvertError::Timeout(budget)),
        // The sender vanished without sending: only possible if the thread died.
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(ConvertError::Panicked),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Status;

    struct Boom;
    impl Converter for Boom {
        fn name(&self) -> &str {
            "Boom"
        }
        fn extensions(&self) -> Vec<String> {
            vec![".md".into()]
        }
        fn convert(&self, _: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
            panic!("boom")
        }
    }

    struct Sleepy;
    impl Converter for Sleepy {
        fn name(&self) -> &str {
            "Sleepy"
        }
        fn extensions(&self) -> Vec<String> {
            vec![".md".into()]
        }
        fn convert(&self, _: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
            std::thread::sleep(Duration::from_secs(5));
            Err(ConvertError::Schema("late".into()))
        }
    }

    fn md_file() -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a-note.md");
        std::fs::write(&p, "# Hello\n\nbody\n").unwrap();
        (d, p)
    }

    #[test]
    fn panic_falls_back_to_next_claimant() {
        let (_d, p) = md_file();
        let reg = Registry::empty().push(Arc::new(Boom)).push(Arc::new(text::Passthrough));
        let out = reg.convert(&p, "x/a-note.md", &Limits::default());
        assert_eq!(out.result.unwrap().title(), "Hello");
        assert_eq!(out.warnings, vec!["x/a-note.md: Boom failed, falling back: converter panicked"]);
    }

    #[test]
    fn last_claimant_error_is_final_and_timeout_applies() {
        let (_d, p) = md_file();
        let reg = Registry::empty().push(Arc::new(Sleepy));
        let limits = Limits { timeout: Duration::from_millis(100), ..Limits::default() };
        let t0 = std::time::Instant::now();
        let out = reg.convert(&p, "a-note.md", &limits);
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert_eq!(out.error_line().unwrap(), "a-note.md: conversion timed out after 100ms");
        assert!(!out.is_unsupported());
    }

    #[test]
    fn registry_is_shareable_across_workers() {
        fn assert_send_sync<T: Send + Sync>(_: &T) {}
        assert_send_sync(&Registry::builtin());
        let reg = Registry::builtin();
        let names: Vec<usize> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2).map(|_| s.spawn(|| reg.claimants(".csv").len())).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(names, vec![1, 1]);
    }

    #[test]
    fn unknown_binary_is_unsupported_unknown_text_is_text() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.weird");
        std::fs::write(&p, b"\0\x01\x02\x03\xff\xfe\0\x07\x08").unwrap();
        let out = Registry::builtin().convert(&p, "x.weird", &Limits::default());
        assert!(out.is_unsupported());
        assert_eq!(out.status, Status::Unsupported);
        assert!(out.result.is_err());
        let t = d.path().join("README");
        std::fs::write(&t, "Read me first.\n").unwrap();
        let out = Registry::builtin().convert(&t, "README", &Limits::default());
        assert_eq!(out.status, Status::Converted);
        assert_eq!(out.converter.unwrap().name, "Markdown");
    }

    #[test]
    fn wikilink_brackets_are_broken() {
        assert_eq!(escape_wikilinks("see [[1]] and [x]"), "see [\\[1]\\] and [x]");
        assert_eq!(escape_wikilinks("[[[a]]]"), "[\\[\\[a]\\]\\]");
        assert!(forest_model::node::wikilinks(&escape_wikilinks("[[a]] [[[b]]]")).is_empty());
    }

    #[test]
    fn control_bytes_leave_text_bodies() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("gzip.info");
        std::fs::write(&p, "File: gzip.info\n\x1f\nNode: Top\x0c\tok\n").unwrap();
        let out = Registry::builtin().convert(&p, "gzip.info", &Limits::default());
        let Ok(Conversion::Markdown { body, .. }) = out.result else { panic!("not text") };
        assert_eq!(body, "File: gzip.info\n\nNode: Top\tok\n");
    }

    #[test]
    fn suspect_bodies_fall_back_to_the_sniffed_format() {
        let d = tempfile::tempdir().unwrap();
        // A manual page saved as .txt: passthrough keeps raw roff, the man renderer does not.
        let p = d.path().join("page.txt");
        std::fs::write(
            &p,
            ".\\\" generated\n.de Sp\n.sp\n..\n.TH LS 1\n.SH NAME\nls \\- list\n.SH SEE ALSO\n.BR dir (1)\n",
        )
        .unwrap();
        let out = Registry::builtin().convert(&p, "page.txt", &Limits::default());
        assert_eq!(out.converter.unwrap().name, "Man");
        assert_eq!(out.suspect, None);
        assert_eq!(out.warnings, vec!["page.txt: Markdown output is suspect (raw_roff), used Man instead"]);
        assert_eq!(out.result.unwrap().title(), "ls(1)");
    }

    #[test]
    fn suspect_body_is_kept_and_marked_when_nothing_passes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("blob.txt");
        std::fs::write(&p, format!("key:\n{}\n", "QUJD".repeat(1000))).unwrap();
        let out = Registry::builtin().convert(&p, "blob.txt", &Limits::default());
        assert_eq!(out.status, Status::Converted);
        assert_eq!(out.converter.unwrap().name, "Markdown");
        let suspect = out.suspect.unwrap();
        assert_eq!(suspect.reason, SuspectReason::BinaryRun);
        assert_eq!(suspect.message, "a run of 4000 characters without whitespace");
        assert!(out.warnings.is_empty());
    }

    #[test]
    fn valid_utf8_with_replacement_chars_stays_suspect_instead_of_mojibake() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("damaged.txt");
        std::fs::write(
            &p,
            format!("Quarterly report\n{}", "\u{fffd}\u{fffd}\u{fffd} word \u{fffd}\u{fffd}\n".repeat(80)),
        )
        .unwrap();
        let out = Registry::builtin().convert(&p, "damaged.txt", &Limits::default());
        assert_eq!(out.suspect.map(|s| s.reason), Some(SuspectReason::ReplacementChars));
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        let Ok(Conversion::Markdown { body, .. }) = out.result else { panic!("converted") };
        assert!(body.contains("\u{fffd}\u{fffd}\u{fffd} word"), "the text stays as written");
    }

    #[test]
    fn a_file_written_in_markup_is_its_own_faithful_text() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sign1-res.xml");
        let xml = "<?xml version=\"1.0\"?>\n<Envelope xmlns=\"urn:envelope\">\n  <Data>Hello, World!</Data>\n  <Signature><SignedInfo><Reference URI=\"\"><DigestValue>x</DigestValue></Reference></SignedInfo></Signature>\n</Envelope>\n";
        std::fs::write(&p, xml).unwrap();
        let out = Registry::builtin().convert(&p, "sign1-res.xml", &Limits::default());
        assert_eq!(out.suspect, None);
        let Ok(Conversion::Markdown { body, .. }) = out.result else { panic!("converted") };
        assert!(body.contains("<DigestValue>x</DigestValue>"), "the XML is kept as written: {body}");
    }

    #[test]
    fn empty_file_is_skipped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("empty.csv");
        std::fs::write(&p, "").unwrap();
        let out = Registry::builtin().convert(&p, "empty.csv", &Limits::default());
        assert_eq!(out.status, Status::Skipped("empty file (0 bytes)".into()));
    }

    #[test]
    fn claimants_order_and_hooks_first() {
        let mut hooks = BTreeMap::new();
        hooks.insert(".pdf".to_string(), "cat {input}".to_string());
        let reg = Registry::builtin().with_command_hooks(&hooks, Duration::from_secs(5));
        let names: Vec<&str> = reg.claimants("PDF").iter().map(|c| c.name()).collect();
        assert_eq!(names, vec!["CommandHook(.pdf)", "Pdf"]);
        assert!(reg.claimants(".nope").is_empty());
    }
}
