//! Converter discovery and the guarded fallback chain (dialect §3.5, DESIGN §10).

use crate::error::ConvertError;
use crate::{docx, hook, html, json, media, pdf, sheet, sqlite, tabular, text, Conversion, Limits};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// A converter: claims extensions and turns one file into a [`Conversion`].
pub trait Converter: Send + Sync {
    /// Display name used in fallback warnings.
    fn name(&self) -> &str;
    /// Claimed extensions, lowercase with the leading dot.
    fn extensions(&self) -> Vec<String>;
    /// Convert `path`; non-fatal findings go to `warnings` (without the
    /// `<rel>: ` prefix, which the registry adds).
    fn convert(&self, path: &Path, limits: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError>;
    /// Wall-clock budget for one call; hooks override it with their own timeout.
    fn time_budget(&self, limits: &Limits) -> Duration {
        limits.timeout
    }
}

/// What became of one file.
#[derive(Debug)]
pub struct ConvertOutcome {
    /// The conversion, or the final error line `"<rel>: <msg>"`.
    pub result: Result<Conversion, String>,
    /// Fallback warnings `"<rel>: <Name> failed, falling back: <msg>"` and
    /// converter warnings `"<rel>: <msg>"`.
    pub warnings: Vec<String>,
    /// True when no converter claims the extension.
    pub unsupported: bool,
}

/// Converters in discovery order: command hooks, then built-ins (media last).
#[derive(Clone)]
pub struct Registry {
    converters: Vec<Arc<dyn Converter>>,
}

impl Registry {
    /// The built-in converters (dialect §3.5 table plus pdf, html, ods).
    pub fn builtin() -> Self {
        let converters: Vec<Arc<dyn Converter>> = vec![
            Arc::new(text::Passthrough),
            Arc::new(tabular::Csv),
            Arc::new(json::Json),
            Arc::new(sqlite::SqliteAdopt),
            Arc::new(sheet::Workbook),
            Arc::new(docx::Docx),
            Arc::new(html::Html),
            Arc::new(pdf::Pdf),
            Arc::new(media::MediaStub),
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

    /// Convert one file through the fallback chain, every call under `limits`.
    pub fn convert(&self, path: &Path, rel: &str, limits: &Limits) -> ConvertOutcome {
        let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy().to_lowercase())).unwrap_or_default();
        let claimants: Vec<Arc<dyn Converter>> =
            self.converters.iter().filter(|c| !ext.is_empty() && c.extensions().contains(&ext)).cloned().collect();
        let mut warnings = Vec::new();
        if claimants.is_empty() {
            return ConvertOutcome {
                result: Err(format!("{rel}: unsupported file type")),
                warnings,
                unsupported: true,
            };
        }
        // Size first: no converter (nor hook) ever sees an oversized input.
        let size = match std::fs::metadata(path) {
            Ok(m) => m.len(),
            Err(e) => {
                return ConvertOutcome {
                    result: Err(format!("{rel}: {}", ConvertError::Io(e))),
                    warnings,
                    unsupported: false,
                }
            }
        };
        if size > limits.max_input_bytes {
            let e = ConvertError::TooLarge { size, limit: limits.max_input_bytes };
            return ConvertOutcome { result: Err(format!("{rel}: {e}")), warnings, unsupported: false };
        }
        let last = claimants.len() - 1;
        for (i, conv) in claimants.into_iter().enumerate() {
            let name = conv.name().to_string();
            match run_guarded(conv, path, limits) {
                Ok((conversion, notes)) => {
                    warnings.extend(notes.into_iter().map(|n| format!("{rel}: {n}")));
                    return ConvertOutcome { result: Ok(conversion), warnings, unsupported: false };
                }
                Err(e) if i < last => {
                    warnings.push(format!("{rel}: {name} failed, falling back: {e}"));
                }
                Err(e) => return ConvertOutcome { result: Err(format!("{rel}: {e}")), warnings, unsupported: false },
            }
        }
        // Unreachable in practice: the last claimant always returns above.
        ConvertOutcome { result: Err(format!("{rel}: no converter ran")), warnings, unsupported: false }
    }
}

fn normalize_ext(ext: &str) -> String {
    let e = ext.trim().to_lowercase();
    if e.starts_with('.') {
        e
    } else {
        format!(".{e}")
    }
}

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
        std::thread::Builder::new().name("forest-convert".into()).stack_size(8 * 1024 * 1024).spawn(move || {
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
        assert_eq!(out.result.unwrap_err(), "a-note.md: conversion timed out after 100ms");
        assert!(!out.unsupported);
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
    fn unknown_extension_is_unsupported() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.weird");
        std::fs::write(&p, "x").unwrap();
        let out = Registry::builtin().convert(&p, "x.weird", &Limits::default());
        assert!(out.unsupported);
        assert!(out.result.is_err());
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
