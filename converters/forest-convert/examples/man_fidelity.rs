//! Convert every regular file under `<root>/man1` .. `<root>/man8` (the
//! English manual pages; symlinks are skipped) and count pages whose body or
//! derived summary still begins a line with a roff request or comment: `.` or
//! `'` followed by an ASCII letter or by `\"` (issue 34), in all lines and
//! outside fenced code blocks (a page's own examples). Also counts outcomes
//! marked suspect and times `fidelity::check` alone. Prints totals, the
//! converters used, and the first offending pages with their line.
//!
//! Usage: `cargo run --release -p forest-convert --example man_fidelity -- [ROOT] [--list N] [--suspects]`
//! (ROOT defaults to `/usr/share/man`).

use forest_convert::{Conversion, Limits, Registry, SourceFacts};
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
    let (mut body_leaks, mut summary_leaks, mut failed, mut outside_code) = (0usize, 0usize, 0usize, 0usize);
    let mut converters: BTreeMap<String, usize> = BTreeMap::new();
    let mut shown = 0;
    let (mut check, mut body_bytes, mut suspects) = (std::time::Duration::ZERO, 0usize, 0usize);
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    let t0 = Instant::now();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f).to_string_lossy().into_owned();
        let out = reg.convert(f, &rel, &limits);
        *converters.entry(out.converter.as_ref().map_or("-".into(), |c| c.name.clone())).or_default() += 1;
        let Ok(Conversion::Markdown { title, body, .. }) = &out.result else {
            failed += 1;
            continue;
        };
        let t = Instant::now();
        let facts = SourceFacts { bytes: body.len() as u64, text: true, markdown: false };
        std::hint::black_box(forest_convert::fidelity::check(body, facts));
        check += t.elapsed();
        body_bytes += body.len();
        if let Some(s) = &out.suspect {
            suspects += 1;
            *reasons.entry(s.reason.code()).or_default() += 1;
            if args.iter().any(|a| a == "--suspects") {
                println!("SUSPECT {rel}: {s}");
            }
        }
        let bad = body.lines().find(|l| roffish(l));
        let mut fenced = false;
        let outside = body.lines().any(|l| {
            fenced ^= l.starts_with("```");
            !fenced && roffish(l)
        });
        outside_code += usize::from(outside);
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
        "pages {}  not converted {failed}  body roff leaks {body_leaks} ({outside_code} outside code blocks)  \
         summary roff leaks {summary_leaks}  suspect {suspects}",
        files.len()
    );
    println!("converters {converters:?}");
    println!("suspect reasons {reasons:?}");
    println!(
        "wall {secs:.1} s; fidelity::check alone over all {} MB of bodies: {:.3} s",
        body_bytes / 1_000_000,
        check.as_secs_f64()
    );
}
