//! Convert every regular file under `<root>/man1` .. `<root>/man8` (the
//! English manual pages; symlinks are skipped) and count pages whose body or
//! derived summary still begins a line with a roff request or comment: `.` or
//! `'` followed by an ASCII letter or by `\"` (issue 34). Prints totals, the
//! converters used, and the first offending pages with their line.
//!
//! Usage: `cargo run --release -p forest-convert --example man_fidelity -- [ROOT] [--list N]`
//! (ROOT defaults to `/usr/share/man`).

use forest_convert::{Conversion, Limits, Registry};
use forest_model::scent::derive_summary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A line a roff reader would take as a request or comment.
fn roffish(line: &str) -> bool {
    let mut b = line.bytes();
    match b.next() {
        Some(b'.' | b'\'') => {}
        _ => return false,
    }
    match b.next() {
        Some(c) if c.is_ascii_alphabetic() => true,
        Some(b'\\') => b.next() == Some(b'"'),
        _ => false,
    }
}

fn pages(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for s in 1..=8 {
        let Ok(rd) = std::fs::read_dir(root.join(format!("man{s}"))) else { continue };
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let list: usize = args.iter().position(|a| a == "--list").and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(10);
    let root =
        args.iter().find(|a| !a.starts_with("--") && a.parse::<usize>().is_err()).map_or("/usr/share/man", |s| s);
    forest_convert::quiet_converter_panics();
    let files = pages(Path::new(root));
    let reg = Registry::builtin();
    let limits = Limits::default();
    let (mut body_leaks, mut summary_leaks, mut failed) = (0usize, 0usize, 0usize);
    let mut converters: BTreeMap<String, usize> = BTreeMap::new();
    let mut shown = 0;
    let t0 = Instant::now();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f).to_string_lossy().into_owned();
        let out = reg.convert(f, &rel, &limits);
        *converters.entry(out.converter.as_ref().map_or("-".into(), |c| c.name.clone())).or_default() += 1;
        let Ok(Conversion::Markdown { title, body, .. }) = &out.result else {
            failed += 1;
            continue;
        };
        let bad = body.lines().find(|l| roffish(l));
        let summary = derive_summary(body, title);
        if bad.is_some() {
            body_leaks += 1;
        }
        if roffish(&summary) {
            summary_leaks += 1;
        }
        if (bad.is_some() || roffish(&summary)) && shown < list {
            shown += 1;
            println!(
                "LEAK {rel}: {:?} | summary {:?}",
                bad.unwrap_or(""),
                summary.chars().take(60).collect::<String>()
            );
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "pages {}  not converted {failed}  body roff leaks {body_leaks}  summary roff leaks {summary_leaks}",
        files.len()
    );
    println!("converters {converters:?}");
    println!("wall {secs:.1} s");
}
