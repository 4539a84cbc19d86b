//! Progress on stderr: an indicatif bar only when stderr is a terminal.

use forest_gardener::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A files/bytes progress bar (no-op off a terminal).
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
    bytes: AtomicU64,
    enabled: bool,
}

impl Bar {
    /// A bar that draws only on a terminal.
    pub fn new() -> Bar {
        Bar { bar: Mutex::new(None), bytes: AtomicU64::new(0), enabled: std::io::stderr().is_terminal() }
    }
}

impl Progress for Bar {
    fn start(&self, source: &str, total: u64) {
        if !self.enabled {
            return;
        }
        let pb = ProgressBar::new(total);
        if let Ok(style) =
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} files {per_sec} {msg} eta {eta}")
        {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_prefix(source.to_string());
        if let Ok(mut b) = self.bar.lock() {
            *b = Some(pb);
        }
    }

    fn file_done(&self, bytes: u64) {
        if let Ok(b) = self.bar.lock() {
            if let Some(pb) = b.as_ref() {
                pb.inc(1);
                let total = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
                let secs = pb.elapsed().as_secs_f64().max(1e-3);
                pb.set_message(format!("{:.1} MB/s", total as f64 / secs / 1e6));
            }
        }
    }

    fn finish(&self) {
        if let Ok(mut b) = self.bar.lock() {
            if let Some(pb) = b.take() {
                pb.finish_and_clear();
            }
        }
    }

    fn rows(&self, what: &str, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        let Ok(mut b) = self.bar.lock() else { return };
        let pb = b.get_or_insert_with(|| {
            let pb = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} nodes {elapsed}") {
                pb.set_style(style.progress_chars("=> "));
            }
            pb.set_prefix(what.to_string());
            pb
        });
        pb.set_position(done);
        if done >= total {
            if let Some(pb) = b.take() {
                pb.finish_and_clear();
            }
        }
    }
}
