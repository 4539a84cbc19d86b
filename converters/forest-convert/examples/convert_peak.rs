//! Convert one file and print its transient memory: one TSV line
//! `ext  status  bytes  peak_kib  path` where `peak_kib` is this process's
//! peak RSS (VmHWM) after the conversion. Used by `bench/convert-peak.sh`,
//! which runs it once per file (a fresh process each, so the peak is that
//! file's alone).
//!
//! Usage: `cargo run --release -p forest-convert --example convert_peak -- FILE`

use forest_convert::{Limits, Registry, Status};
use std::path::Path;

fn vm_hwm_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let Some(file) = std::env::args().nth(1) else {
        eprintln!("usage: convert_peak FILE");
        std::process::exit(2);
    };
    forest_convert::quiet_converter_panics();
    let f = Path::new(&file);
    let ext = f.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_else(|| "(none)".into());
    let bytes = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
    let out = Registry::builtin().convert(f, &file, &Limits::default());
    let status = match &out.status {
        Status::Converted => "converted".to_string(),
        Status::Stub(r) => format!("stub:{r}"),
        Status::Skipped(_) => "skipped".into(),
        Status::Unsupported => "unsupported".into(),
        Status::Failed => "failed".into(),
    };
    println!("{ext}\t{status}\t{bytes}\t{}\t{file}", vm_hwm_kib());
}
