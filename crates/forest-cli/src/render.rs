//! Human-readable text for the reports that are structured data underneath
//! (`forest health`, `forest look`). One convention for every command:
//! text on stdout by default, the versioned JSON with `--json`. Pure
//! functions of the report, so they are unit-tested without a forest.

use std::fmt::Write as _;

use forest_ranger::HealthReport;
use serde_json::Value;

/// At most this many ids of one list are printed; `--json` lists them all.
const LIST_SHOWN: usize = 10;

fn id_list(out: &mut String, label: &str, ids: &[String]) {
    let _ = writeln!(out, "{label:<18} {}", ids.len());
    for id in ids.iter().take(LIST_SHOWN) {
        let _ = writeln!(out, "    {id}");
    }
    if ids.len() > LIST_SHOWN {
        let _ = writeln!(out, "    … {} more (forest health --json lists all)", ids.len() - LIST_SHOWN);
    }
}

/// The verdict of a health report (`healthy`, `needs attention`,
/// `unhealthy`) and its causes, most serious first (`missing`: local
/// sources whose folder is gone).
pub fn health_verdict(h: &HealthReport, missing: &[String]) -> (&'static str, Vec<String>) {
    let mut causes: Vec<String> = missing.iter().map(|m| format!("source folder missing: {m}")).collect();
    let counts = [
        (h.lint.errors, "lint error(s)"),
        (h.stale_passports.len(), "stale passport(s)"),
        (h.known_problems.len(), "file(s) that could not be planted"),
        (h.suspect_conversions.len(), "suspect body(ies)"),
        (h.summary_stale.len(), "stale summary(ies)"),
        (h.needs_split.len(), "branch(es) to split"),
        (h.fat_nodes.len(), "fat node(s)"),
        (h.needs_description.len(), "node(s) without a description"),
        (h.lint.warnings, "lint warning(s)"),
    ];
    causes.extend(counts.iter().filter(|(n, _)| *n > 0).map(|(n, what)| format!("{n} {what}")));
    let verdict = if h.lint.errors > 0 || !missing.is_empty() {
        "unhealthy"
    } else if !causes.is_empty() {
        "needs attention"
    } else {
        "healthy"
    };
    (verdict, causes)
}

/// `forest health` as text: the verdict and its causes first, then one
/// line per check with its count and the first few ids.
pub fn health(h: &HealthReport, missing: &[String]) -> String {
    let mut out = String::new();
    let (verdict, causes) = health_verdict(h, missing);
    if causes.is_empty() {
        let _ = writeln!(out, "forest health: {verdict}");
    } else {
        let _ = writeln!(out, "forest health: {verdict} ({})", causes.join("; "));
    }
    let _ = writeln!(out, "{:<18} {} error(s), {} warning(s)", "lint", h.lint.errors, h.lint.warnings);
    let passports: usize = h.sources.values().sum();
    let per_source: Vec<String> = h.sources.iter().map(|(s, n)| format!("{s} {n}")).collect();
    let _ = writeln!(
        out,
        "{:<18} {passports}{}",
        "passports",
        if per_source.is_empty() { String::new() } else { format!(" ({})", per_source.join(", ")) }
    );
    let _ = writeln!(
        out,
        "{:<18} {} curated, {} derived ({} pending curation)",
        "leaf scent", h.scent.curated, h.scent.derived, h.scent.pending
    );
    id_list(&mut out, "needs_split", &h.needs_split);
    id_list(&mut out, "fat_nodes", &h.fat_nodes);
    id_list(&mut out, "stale_passports", &h.stale_passports);
    id_list(&mut out, "needs_description", &h.needs_description);
    id_list(&mut out, "summary_stale", &h.summary_stale);
    let _ = writeln!(out, "{:<18} {}", "known_problems", h.known_problems.len());
    for p in h.known_problems.iter().take(LIST_SHOWN) {
        let kind = serde_json::to_value(p.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let _ = writeln!(out, "    {kind} {}:{} — {} (since {})", p.source, p.path, p.reason, p.since);
    }
    if h.known_problems.len() > LIST_SHOWN {
        let _ = writeln!(out, "    … {} more (forest health --json lists all)", h.known_problems.len() - LIST_SHOWN);
    }
    let _ = writeln!(out, "{:<18} {}", "suspect bodies", h.suspect_conversions.len());
    for n in h.suspect_conversions.iter().take(LIST_SHOWN) {
        let _ = writeln!(out, "    {} — {}", n.id, n.reason);
    }
    if h.suspect_conversions.len() > LIST_SHOWN {
        let _ =
            writeln!(out, "    … {} more (forest health --json lists all)", h.suspect_conversions.len() - LIST_SHOWN);
    }
    let links: Vec<String> = h.uncertain_links.iter().map(|(c, n)| format!("{c}: {n}")).collect();
    let _ = writeln!(
        out,
        "{:<18} {}",
        "managed links",
        if links.is_empty() { "none".to_string() } else { links.join(", ") }
    );
    let _ = writeln!(out, "{:<18} {} row(s), max {:.4}, mean {:.4}", "heat", h.heat.rows, h.heat.max, h.heat.mean);
    if let Some(e) = &h.sources_error {
        let _ = writeln!(out, "sources: {e}");
    }
    out
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// One `look` digest as text: title line, summary, facts, edges, then the
/// children (branch) or outline (leaf).
fn digest(out: &mut String, d: &Value) {
    let _ = writeln!(out, "{}  [{}]  {}", s(d, "id"), s(d, "type"), s(d, "title"));
    if !s(d, "summary").is_empty() {
        let _ = writeln!(out, "  {}", s(d, "summary"));
    }
    let tags: Vec<&str> = list(d, "tags").iter().filter_map(Value::as_str).collect();
    if !tags.is_empty() {
        let _ = writeln!(out, "  tags: {}", tags.join(", "));
    }
    let aliases: Vec<&str> = list(d, "aliases").iter().filter_map(Value::as_str).collect();
    if !aliases.is_empty() {
        let _ = writeln!(out, "  aliases: {}", aliases.join(", "));
    }
    let mut facts = Vec::new();
    for k in ["source", "created", "updated", "confidence"] {
        match d.get(k) {
            Some(Value::String(x)) if !x.is_empty() => facts.push(format!("{k} {x}")),
            Some(Value::Number(n)) => facts.push(format!("{k} {n}")),
            _ => {}
        }
    }
    if let Some(st) = d.get("stats") {
        for k in ["body_tokens", "degree", "heat"] {
            if let Some(n) = st.get(k).filter(|n| n.is_number()) {
                facts.push(format!("{} {n}", k.replace('_', " ")));
            }
        }
    }
    if !facts.is_empty() {
        let _ = writeln!(out, "  {}", facts.join(" · "));
    }
    match d.get("coverage") {
        Some(Value::String(c)) => {
            let _ = writeln!(out, "  coverage: {c}");
        }
        Some(c @ Value::Object(_)) => {
            let n = |k: &str| c.get(k).and_then(Value::as_i64).unwrap_or(0);
            let _ = writeln!(out, "  coverage: {} note(s), {} sub-branch(es)", n("notes"), n("branches"));
        }
        _ => {}
    }
    for e in list(d, "edges_out") {
        let _ = writeln!(out, "  -> {} {}  {}", s(e, "rel"), s(e, "target"), s(e, "target_summary"));
    }
    for e in list(d, "edges_in") {
        let _ = writeln!(out, "  <- {} {}", s(e, "rel"), s(e, "source"));
    }
    let children = list(d, "children");
    if !children.is_empty() {
        let _ = writeln!(out, "  children:");
        for c in children {
            let _ = writeln!(out, "    {}  {}", s(c, "id"), s(c, "summary"));
        }
    }
    for t in list(d, "cross_trails") {
        let _ = writeln!(out, "  cross trail: {}", t.as_str().unwrap_or(""));
    }
    let outline: Vec<&str> = list(d, "outline").iter().filter_map(Value::as_str).collect();
    if !outline.is_empty() {
        let _ = writeln!(out, "  outline: {}", outline.join(" | "));
    }
    if let Some(qm) = d.get("query_manual").and_then(|q| q.get("tables")).and_then(Value::as_object) {
        for (t, cols) in qm {
            let cols: Vec<&str> =
                cols.as_array().map(|c| c.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            let _ = writeln!(out, "  table {t}({})", cols.join(", "));
        }
    }
    if d.get("truncated") == Some(&Value::Bool(true)) {
        let cut: Vec<&str> = list(d, "truncated_fields").iter().filter_map(Value::as_str).collect();
        let _ = writeln!(out, "  (cut to the 500-token budget: {}; forest scan lists every child)", cut.join(", "));
    }
}

/// `forest look` as text: one digest, or each digest of a batch followed by
/// the ids that were missing or dropped.
pub fn look(v: &Value) -> String {
    let mut out = String::new();
    match v.get("nodes").and_then(Value::as_array) {
        Some(nodes) => {
            for (i, d) in nodes.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                digest(&mut out, d);
            }
            for (key, what) in [("missing", "not found"), ("dropped", "dropped (batch over 2000 tokens)")] {
                let ids: Vec<&str> = list(v, key).iter().filter_map(Value::as_str).collect();
                if !ids.is_empty() {
                    let _ = writeln!(out, "{what}: {}", ids.join(", "));
                }
            }
        }
        None => digest(&mut out, v),
    }
    out
}

/// `forest pick` of sections or of a batch as text: each node's heading,
/// then its body or each picked section under its own heading.
pub fn pick(v: &Value) -> String {
    let mut out = String::new();
    let nodes: Vec<&Value> = match v.get("nodes").and_then(Value::as_array) {
        Some(n) => n.iter().collect(),
        None => vec![v],
    };
    for (i, n) in nodes.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "== {}  {}", s(n, "id"), s(n, "title"));
        if let Some(b) = n.get("body").and_then(Value::as_str) {
            out.push_str(b);
            if !b.ends_with('\n') {
                out.push('\n');
            }
        }
        for sec in list(n, "sections") {
            let _ = writeln!(out, "-- {}", s(sec, "section"));
            let b = s(sec, "body");
            out.push_str(b);
            if !b.is_empty() && !b.ends_with('\n') {
                out.push('\n');
            }
        }
        let missing: Vec<&str> = list(n, "missing").iter().filter_map(Value::as_str).collect();
        if !missing.is_empty() {
            let _ = writeln!(out, "sections not found: {}", missing.join(", "));
        }
        if !s(n, "hint").is_empty() {
            let _ = writeln!(out, "hint: {}", cli_hint(s(n, "hint")));
        }
    }
    for (key, what) in [("missing", "not found"), ("dropped", "dropped (batch over the budget)")] {
        let ids: Vec<&str> = list(v, key).iter().filter_map(Value::as_str).collect();
        if v.get("nodes").is_some() && !ids.is_empty() {
            let _ = writeln!(out, "{what}: {}", ids.join(", "));
        }
    }
    out
}

/// The Vine's hints name its API (`locate()`, `pick('_meta/schema')`) for
/// agents; on the command line they name the command to type instead.
pub fn cli_hint(hint: &str) -> String {
    static CALL: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
        regex::Regex::new(
            r"\b(locate|look|move|pick|sniff|scan|harvest|query|plant|graft|tend|prune|transplant)\((?:'([^']*)')?\)",
        )
        .expect("static regex")
    });
    CALL.replace_all(hint, |c: &regex::Captures<'_>| {
        let verb = &c[1];
        let arg = c.get(2).map(|m| m.as_str().to_string());
        let usage = match (verb, arg) {
            (v, Some(a)) => format!("`forest {v} {a}`"),
            ("locate", None) => "`forest locate WORDS...`".to_string(),
            ("query", None) => "`forest query ID SQL`".to_string(),
            ("sniff", None) => "`forest sniff TERM...`".to_string(),
            ("harvest", None) => "`forest harvest QUESTION`".to_string(),
            ("scan", None) => "`forest scan PARENT`".to_string(),
            ("look" | "move" | "pick", None) => format!("`forest {verb} ID`"),
            (v, None) => format!("the `{v}` tool of `forest serve`"),
        };
        usage
    })
    .replace("locate searches", "`forest locate` searches")
    .replace("sniff searches", "`forest sniff` searches")
}

/// An error and its causes on one line, `: `-joined (every library error
/// displays its own message and leaves its cause to `#[source]`):
/// [`forest_model::error_chain`].
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    forest_model::error_chain(e)
}

#[cfg(test)]
mod tests {
    #[derive(Debug, thiserror::Error)]
    #[error("read {path}")]
    struct Reading {
        path: String,
        #[source]
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("sync failed")]
    struct Wrapping(#[source] Reading);

    #[test]
    fn each_cause_is_printed_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = Wrapping(Reading { path: "/x".into(), source: io });
        assert_eq!(super::error_chain(&e), "sync failed: read /x: no such file");
        let any = anyhow::Error::new(e).context("adopt");
        assert_eq!(super::error_chain(any.as_ref()), "adopt: sync failed: read /x: no such file");
        // Each error prints its own message only, so anyhow's `{:#}` agrees.
        assert_eq!(format!("{any:#}"), super::error_chain(any.as_ref()));
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn hints_name_the_command() {
        assert_eq!(
            cli_hint("Use locate() to find entry points; ids are canonical paths."),
            "Use `forest locate WORDS...` to find entry points; ids are canonical paths."
        );
        assert_eq!(
            cli_hint("pick('_meta/schema') lists this forest's types."),
            "`forest pick _meta/schema` lists this forest's types."
        );
        assert_eq!(
            cli_hint("Use transplant() to move a node."),
            "Use the `transplant` tool of `forest serve` to move a node."
        );
        assert_eq!(cli_hint("Run `forest sync` first."), "Run `forest sync` first.");
    }

    #[test]
    fn look_batch_lists_missing() {
        let v = json!({"nodes": [{"id": "a", "type": "note", "title": "A", "summary": "S.", "stats": {"body_tokens": 3, "degree": 0, "heat": 0.0}, "outline": ["Intro"]}], "missing": ["b"], "dropped": []});
        assert_eq!(
            look(&v),
            "a  [note]  A\n  S.\n  body tokens 3 · degree 0 · heat 0.0\n  outline: Intro\nnot found: b\n"
        );
    }
}
