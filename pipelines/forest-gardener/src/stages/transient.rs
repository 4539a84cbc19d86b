//! What a conversion holds while it runs, and the gate that keeps the sum
//! of it under a budget.
//!
//! The batch budget (`RunOptions::batch_bytes`) counts what conversions
//! *leave* in memory (their bodies); a converter's *transient* memory (a
//! parsed PDF, an HTML DOM, an inflated workbook) is gone once it returns,
//! but several converters run beside each other on the CPU pool. Each
//! conversion first takes its expected transient cost ([`transient_bytes`],
//! per format, measured by `bench/convert-peak.sh`, table in bench/README.md)
//! from a [`Gate`]; it waits while others hold so much that its own would
//! pass the budget. A conversion always runs when nothing else holds the
//! gate, so one file dearer than the whole budget still converts, alone.

use std::sync::{Condvar, Mutex};

/// Expected transient bytes of converting a file of `size` bytes named
/// `rel`: a fixed part plus a multiple of its size, by format family (peak
/// RSS of one conversion, measured per file by `bench/convert-peak.sh`).
pub(crate) fn transient_bytes(rel: &str, size: u64) -> u64 {
    let name = rel.rsplit('/').next().unwrap_or(rel).as_bytes();
    let ends = |e: &str| name.len() >= e.len() && name[name.len() - e.len()..].eq_ignore_ascii_case(e.as_bytes());
    let (base, factor) = if ends(".pdf") {
        (PDF.0, PDF.1)
    } else if [".html", ".htm", ".xhtml"].iter().any(|e| ends(e)) {
        (MARKUP.0, MARKUP.1)
    } else if [".docx", ".xlsx", ".xlsm", ".pptx", ".odt", ".ods", ".odp", ".epub", ".xls", ".doc"]
        .iter()
        .any(|e| ends(e))
    {
        (OFFICE.0, OFFICE.1)
    } else if [".gz", ".tgz", ".bz2", ".xz", ".txz", ".tbz2"].iter().any(|e| ends(e)) {
        (COMPRESSED.0, COMPRESSED.1)
    } else {
        (OTHER.0, OTHER.1)
    };
    base.saturating_add(size.saturating_mul(factor))
}

/// (fixed bytes, multiple of the file size) per format family: the peak
/// of one conversion above the process floor, rounded up (bench/README.md,
/// "Transient memory per format"). PDF: median 5 MiB, a 1.2 MB content
/// stream 73 MiB, files of 1 MB and more at most 16.3 times their size;
/// HTML (a DOM): 21.6 times for `all.html`; gzip: up to 39.8 times (the
/// text inflated, then converted). Office files and plain text had no
/// large sample: their factors are estimates (inflated XML ~10x, text
/// held as file, body and node text).
const PDF: (u64, u64) = (16 << 20, 16);
const MARKUP: (u64, u64) = (8 << 20, 24);
const OFFICE: (u64, u64) = (8 << 20, 12);
const COMPRESSED: (u64, u64) = (8 << 20, 40);
const OTHER: (u64, u64) = (1 << 20, 3);

/// A byte budget shared by the conversions running beside each other.
pub(crate) struct Gate {
    budget: u64,
    held: Mutex<u64>,
    freed: Condvar,
}

/// A conversion's share of the gate, given back when dropped.
pub(crate) struct Permit<'a> {
    gate: &'a Gate,
    bytes: u64,
}

impl Gate {
    pub(crate) fn new(budget: u64) -> Gate {
        Gate { budget: budget.max(1), held: Mutex::new(0), freed: Condvar::new() }
    }

    /// Take `bytes` (at most the whole budget), waiting while others hold
    /// so much that this would pass the budget.
    pub(crate) fn take(&self, bytes: u64) -> Permit<'_> {
        let bytes = bytes.min(self.budget);
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        while *held > 0 && *held + bytes > self.budget {
            held = self.freed.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        *held += bytes;
        Permit { gate: self, bytes }
    }

    #[cfg(test)]
    fn held(&self) -> u64 {
        *self.held.lock().unwrap()
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut held = self.gate.held.lock().unwrap_or_else(|p| p.into_inner());
        *held -= self.bytes;
        self.gate.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn costs_follow_the_format_table() {
        let cost = |(base, factor): (u64, u64), size: u64| base + factor * size;
        assert_eq!(transient_bytes("a/Report.PDF", 1 << 20), cost(PDF, 1 << 20));
        assert_eq!(transient_bytes("a/all.html", 100), cost(MARKUP, 100));
        assert_eq!(transient_bytes("a/plan.docx", 10), cost(OFFICE, 10));
        assert_eq!(transient_bytes("a/changelog.gz", 10), cost(COMPRESSED, 10));
        assert_eq!(transient_bytes("a/readme.md", 10), cost(OTHER, 10));
        assert_eq!(transient_bytes("a.pdf/readme", 10), cost(OTHER, 10), "only the file name counts");
        // An 8 MB PDF is dearer than the default budget: it converts alone.
        assert!(transient_bytes("big.pdf", 8_000_000) > crate::DEFAULT_CONVERT_BYTES);
    }

    #[test]
    fn the_gate_never_lets_holders_pass_the_budget() {
        let gate = Gate::new(100);
        let (now, most) = (AtomicU64::new(0), AtomicU64::new(0));
        let costs = [60u64, 60, 30, 30, 30, 100, 500, 10, 90, 40];
        std::thread::scope(|s| {
            for c in costs {
                let (gate, now, most) = (&gate, &now, &most);
                s.spawn(move || {
                    let p = gate.take(c);
                    let n = now.fetch_add(p.bytes, Ordering::SeqCst) + p.bytes;
                    most.fetch_max(n, Ordering::SeqCst);
                    std::thread::yield_now();
                    now.fetch_sub(p.bytes, Ordering::SeqCst);
                });
            }
        });
        assert!(most.load(Ordering::SeqCst) <= 100, "{}", most.load(Ordering::SeqCst));
        assert_eq!(gate.held(), 0, "every permit given back");
        // One file dearer than the budget takes the whole gate, alone.
        assert_eq!(gate.take(500).bytes, 100);
    }
}
