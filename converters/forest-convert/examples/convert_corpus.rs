//! Convert every regular file under a folder and print one TSV line per file:
//! `ext  status  converter  bytes  micros  path  detail`, then per-format
//! totals on stderr. Used by `bench/convert-corpus.sh`.
//!
//! Usage: `cargo run --release -p forest-convert --example convert_corpus -- DIR`

use forest_convert::{Limits, Registry, Status};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            walk(&e.path(), out);
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
}

fn main() {
    let Some(root) = std::env::args().nth(1) else {
        eprintln!("usage: convert_corpus DIR");
        std::process::exit(2);
    };
    // Panics the registry catches are counted in the table, not printed.
    forest_convert::quiet_converter_panics();
    let root = Path::new(&root);
    let mut files = Vec::new();
    walk(root, &mut files);
    files.sort();
    let reg = Registry::builtin();
    let limits = Limits::default();
    // ext -> (files, converted-or-stub, bytes, micros)
    let mut totals: BTreeMap<String, (usize, usize, u64, u128)> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f).to_string_lossy().into_owned();
        let ext = f.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_else(|| "(none)".into());
        let bytes = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        let t0 = Instant::now();
        let out = reg.convert(f, &rel, &limits);
        let us = t0.elapsed().as_micros();
        let (status, detail) = match &out.status {
            Status::Converted => ("converted", String::new()),
            Status::Stub(r) => ("stub", r.clone()),
            Status::Skipped(r) => ("skipped", r.clone()),
            Status::Unsupported => ("unsupported", String::new()),
            Status::Failed => ("failed", out.error_line().unwrap_or_default()),
        };
        // DUMP_DIR=<dir>: write each converted body to <dir>/<rel>.md (PDF coverage check).
        if let (Ok(dump), Ok(c)) = (std::env::var("DUMP_DIR"), &out.result) {
            let p = Path::new(&dump).join(format!("{rel}.md"));
            if let Some(d) = p.parent() {
                let _ = std::fs::create_dir_all(d);
            }
            let _ = std::fs::write(&p, c.render());
        }
        let conv = out.converter.map(|c| c.to_string()).unwrap_or_else(|| "-".into());
        println!("{ext}\t{status}\t{conv}\t{bytes}\t{us}\t{rel}\t{}", detail.replace(['\t', '\n'], " "));
        let t = totals.entry(ext).or_default();
        t.0 += 1;
        t.1 += usize::from(matches!(status, "converted" | "stub"));
        t.2 += bytes;
        t.3 += us;
    }
    eprintln!("ext\tfiles\tplanted\tshare\tfiles_per_s\tmb_per_s");
    for (ext, (n, ok, b, us)) in totals {
        let s = (us as f64 / 1e6).max(1e-9);
        eprintln!("{ext}\t{n}\t{ok}\t{:.3}\t{:.1}\t{:.2}", ok as f64 / n as f64, n as f64 / s, b as f64 / 1e6 / s);
    }
}
