//! Every node file's frontmatter under a directory, parsed by
//! `forest_model::yaml::parse_mapping` (fast path, library fallback) and
//! by `yaml_serde` alone: how many the fast path took, whether the two
//! ever differ, and the time per file each way (one thread).
//!
//!     cargo run --release -p forest-model --example frontmatter_parse -- DIR [MAX_FILES]

use std::time::Instant;

use forest_model::yaml::{parse_mapping, Mapping, Value};

fn library(text: &str) -> Option<Mapping> {
    match yaml_serde::from_str::<Value>(text) {
        Ok(Value::Mapping(m)) => Some(m),
        _ => None,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: frontmatter_parse DIR [MAX_FILES]");
    let max: usize = args.next().map_or(usize::MAX, |m| m.parse().expect("MAX_FILES: a number"));
    let mut fronts = vec![];
    for entry in walkdir::WalkDir::new(&dir).into_iter().filter_map(Result::ok) {
        if fronts.len() >= max {
            break;
        }
        if entry.path().components().any(|c| c.as_os_str() == ".git" || c.as_os_str() == "_derived") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else { continue };
        let Some(rest) = text.strip_prefix("---") else { continue };
        let Some(end) = rest.find("\n---") else { continue };
        fronts.push(rest[..end].to_string());
    }
    // Timed apart from the comparison, each result dropped as it comes.
    let t = Instant::now();
    let ours_ok = fronts.iter().filter(|f| parse_mapping(f).is_ok()).count();
    let ours_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let lib_ok = fronts.iter().filter(|f| library(f).is_some()).count();
    let lib_s = t.elapsed().as_secs_f64();
    let fast = fronts.iter().filter(|f| forest_model::yaml::fast_path_takes(f)).count();
    let (mut differ, mut only_ours) = (0, 0);
    for f in &fronts {
        match (parse_mapping(f).ok(), library(f)) {
            (Some(a), Some(b)) if a != b => differ += 1,
            (Some(_), None) => only_ours += 1,
            _ => {}
        }
    }
    let n = fronts.len().max(1) as f64;
    println!(
        "files {} fast-path taken {} ({:.1}%) differ {} accepted-only-by-ours {}",
        fronts.len(),
        fast,
        100.0 * fast as f64 / n,
        differ,
        only_ours
    );
    println!(
        "per file: parse_mapping {:.2} us ({ours_ok} parsed), yaml_serde alone {:.2} us ({lib_ok} parsed)",
        1e6 * ours_s / n,
        1e6 * lib_s / n,
    );
    if differ > 0 || only_ours > 0 {
        std::process::exit(1);
    }
}
