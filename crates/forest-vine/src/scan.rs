//! `scan`, `coverage`, `history`, `calendar` (vine spec §2.6, §2.10–§2.12):
//! catalog listings (no node file is opened) and the git log of one node.

use crate::answers::{
    Bucket, Calendar, Counts, CoverageMap, Field, History, HistoryEntry, Range, Root, ScanItem, Scanned,
};
use std::collections::HashMap;

use forest_catalog::NodeRow;

use crate::args::ScanArgs;
use crate::budget::{shrink_items, Dropped};
use crate::engine::{coverage_of, py_list, wire_kind, ScopeSel, Vine};
use crate::error::{VResult, VineError};
use crate::read::heat_or_zero;
use crate::specs::{FilterTerm, ScanFilter};
use crate::window::{self, Window};

use crate::budget::LIST_BUDGET;

const SCAN_FIELDS: [&str; 20] = [
    "id",
    "kind",
    "type",
    "title",
    "summary",
    "tags",
    "aliases",
    "created",
    "updated",
    "confidence",
    "source",
    "entity_kind",
    "payload_type",
    "parent",
    "trail",
    "coverage",
    "body_tokens",
    "outline",
    "heat",
    "origin",
];

fn field_value(r: &NodeRow, f: &str, heat: f64) -> Option<Field> {
    Some(match f {
        "id" => Field::Str(r.id.to_string()),
        "kind" => Field::Str(wire_kind(r.kind).to_string()),
        "type" => Field::Str(r.node_type.clone()),
        "title" => Field::Str(r.title.clone()),
        "summary" => Field::Str(r.summary.clone()),
        "tags" => Field::List(r.tags.clone()),
        "aliases" => Field::List(r.aliases.clone()),
        "created" => Field::OptStr(r.created.clone()),
        "updated" => Field::OptStr(r.updated.clone()),
        "confidence" => Field::Real(r.confidence),
        "source" => Field::OptStr(r.source.clone()),
        "entity_kind" => Field::OptStr(r.entity_kind.clone()),
        "payload_type" => Field::OptStr(r.payload_type.clone()),
        "parent" => Field::OptStr(r.parent.clone()),
        "trail" => Field::List(r.trail.clone()),
        "coverage" => Field::Coverage(coverage_of(r.coverage.as_deref())?),
        "body_tokens" => Field::Int(r.body_tokens),
        "outline" => Field::List(r.outline.clone()),
        "heat" => Field::Real(heat),
        "origin" => Field::OptStr(r.origin.clone()),
        _ => return None,
    })
}

fn passes(v: &Vine, r: &NodeRow, filter: &ScanFilter) -> VResult<bool> {
    let on_or_after = |have: &Option<String>, w: &str| have.as_deref().is_some_and(|u| !u.is_empty() && u >= w);
    let on_or_before = |have: &Option<String>, w: &str| have.as_deref().is_some_and(|u| !u.is_empty() && u <= w);
    for term in &filter.0 {
        let ok = match term {
            FilterTerm::TagsAny(w) => r.tags.iter().any(|t| w.contains(t)),
            FilterTerm::UpdatedAfter(w) => on_or_after(&r.updated, w),
            FilterTerm::CreatedAfter(w) => on_or_after(&r.created, w),
            FilterTerm::UpdatedBefore(w) => on_or_before(&r.updated, w),
            FilterTerm::CreatedBefore(w) => on_or_before(&r.created, w),
            FilterTerm::MinConfidence(m) => m.is_some_and(|m| r.confidence >= m),
            FilterTerm::OriginPrefix(w) => r.origin.as_deref().is_some_and(|o| o.starts_with(w.as_str())),
            FilterTerm::Kind(w) => wire_kind(r.kind) == w.as_str(),
            FilterTerm::Lang(w) => v.node_lang(&r.id).as_deref() == Some(w.as_str()),
            FilterTerm::Column(other, want) => column_equals(r, other, want)?,
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A catalog column by equality (a scan field, or a payload/hash column);
/// `E_SCHEMA` for a column the catalog does not have.
fn column_equals(r: &NodeRow, column: &str, want: &str) -> VResult<bool> {
    if let Some(have) = field_value(r, column, 0.0) {
        return Ok(have.text() == want);
    }
    let have = match column {
        "payload" => r.payload.clone(),
        "payload_hash" => r.payload_hash.clone(),
        "body_hash" => Some(r.body_hash.clone()),
        _ => return Err(VineError::schema(format!("unknown scan filter: {column}"))),
    };
    Ok(have.as_deref() == Some(want))
}

/// One listed node: its id, the fields asked for, `system` for `_meta`.
fn scan_item(r: &NodeRow, fields: &[String], heat: &HashMap<String, f64>) -> ScanItem {
    let h = heat_or_zero(heat, &r.id);
    let fields = fields
        .iter()
        .filter(|f| f.as_str() != "id")
        .filter_map(|f| field_value(r, f, h).map(|v| (f.clone(), v)))
        .collect();
    ScanItem { id: r.id.clone(), fields, system: forest_model::ids::is_meta(&r.id) }
}

/// The message a scoped caller sees for a commit that also changed nodes
/// outside its branches (its message may name or count them).
pub const HIDDEN_COMMIT: &str = "(withheld: this commit also changed nodes outside this token's branches)";

impl Vine {
    fn all_rows(&self) -> VResult<Vec<NodeRow>> {
        Ok(self.catalog.dump()?.nodes)
    }

    /// The rows of `ids`, read one by one under the caller's deadline.
    fn rows_of(&self, ids: Vec<String>) -> VResult<Vec<NodeRow>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            self.check_deadline("scan")?;
            if let Some(r) = self.catalog.get(&id)? {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// `scan(parent_id, ...)`: a catalog listing of a branch's children.
    pub fn scan(&mut self, a: &ScanArgs) -> VResult<Scanned> {
        let parent = self.row(&a.parent_id)?;
        let win = window::parse(a.since.as_deref(), a.until.as_deref(), a.date_field.as_deref())?;
        let fields: Vec<String> = match &a.fields {
            Some(f) if !f.is_empty() => f.clone(),
            _ => ["id", "type", "summary", "body_tokens"].iter().map(|s| s.to_string()).collect(),
        };
        if let Some(bad) = fields.iter().find(|f| !SCAN_FIELDS.contains(&f.as_str())) {
            let mut sorted: Vec<String> = SCAN_FIELDS.iter().map(|s| s.to_string()).collect();
            sorted.sort();
            return Err(VineError::schema(format!("fields accepts {}; got '{bad}'", py_list(&sorted))));
        }
        let limit = a.limit.unwrap_or(50).clamp(1, 50) as usize;
        let cands = if !parent.kind.is_branch() {
            vec![]
        } else if a.recursive {
            if parent.id == "_index" {
                self.all_rows()?.into_iter().filter(|r| r.id != "_index").collect()
            } else {
                let prefix = format!("{}/", forest_model::ids::folder_of(&parent.id));
                self.rows_of(self.catalog.ids_under(&prefix)?)?.into_iter().filter(|r| r.id != parent.id).collect()
            }
        } else {
            self.rows_of(self.catalog.child_ids(&parent.id)?)?
        };
        let empty = ScanFilter::default();
        let filter = a.filter.as_ref().unwrap_or(&empty);
        let mut kept = vec![];
        for r in cands {
            self.check_deadline("scan")?;
            if passes(self, &r, filter)? && in_window(&r, win.as_ref()) {
                kept.push(r);
            }
        }
        let total = kept.len();
        let ids: Vec<String> = kept.iter().map(|r| r.id.to_string()).collect();
        let heat = self.heat_of(&ids)?;
        match &a.after {
            Some(after) => {
                kept.retain(|r| r.id.as_str() > after.as_str());
                kept.sort_by(|x, y| x.id.cmp(&y.id));
            }
            None => kept.sort_by(|x, y| heat_or_zero(&heat, &y.id).total_cmp(&heat_or_zero(&heat, &x.id))),
        }
        let remaining = kept.len();
        let items: Vec<ScanItem> = kept.iter().take(limit).map(|r| scan_item(r, &fields, &heat)).collect();
        // The cursor is sized at its longest while the budget is applied.
        let longest = a
            .after
            .as_ref()
            .map(|_| kept.iter().map(|r| r.id.clone()).max_by_key(|s| s.chars().count()).unwrap_or_default());
        let mut out = Scanned {
            nodes: items,
            truncated: remaining > limit,
            window: win,
            total,
            returned: 0,
            next: longest,
            dropped: Dropped::default(),
        };
        shrink_items(&mut out, LIST_BUDGET, |o| (&mut o.nodes, &mut o.truncated, &mut o.dropped), |i| i.id.to_string());
        let returned = out.nodes.len();
        out.returned = returned;
        if a.after.is_some() {
            out.next = out.nodes.last().filter(|_| returned < remaining).map(|i| i.id.clone());
            // In cursor mode the dropped names are the next page, not a loss.
            out.dropped = Dropped::default();
        }
        Ok(out)
    }

    /// `coverage(scope, date_field)`: what the forest holds, per root.
    pub fn coverage(&mut self, scope: Option<&str>, date_field: Option<&str>) -> VResult<CoverageMap> {
        let df = window::date_field(date_field)?;
        let sel = self.scope(scope)?;
        let listing = match &sel {
            ScopeSel::All => "_index".to_string(),
            ScopeSel::Prefix(p) => format!("{p}_index"),
            ScopeSel::Leaf(l) => forest_model::ids::parent_index(l).unwrap_or_else(|| "_index".into()),
        };
        let rows: Vec<NodeRow> = self.all_rows()?.into_iter().filter(|r| sel.admits(&r.id)).collect();
        let date = |r: &NodeRow| if df == "created" { r.created.clone() } else { r.updated.clone() };
        let mut roots = vec![];
        for child in rows.iter().filter(|r| r.parent.as_deref() == Some(listing.as_str())) {
            let sub: Vec<&NodeRow> = if child.kind.is_branch() {
                let p = format!("{}/", forest_model::ids::folder_of(&child.id));
                rows.iter().filter(|r| r.id.starts_with(&p)).collect()
            } else {
                vec![child]
            };
            if sub.is_empty() {
                continue;
            }
            let dates: Vec<String> = sub.iter().filter_map(|r| date(r)).filter(|d| !d.is_empty()).collect();
            let origins: Vec<String> = sub.iter().filter_map(|r| r.origin.clone()).filter(|o| !o.is_empty()).collect();
            let span = dates.iter().min().zip(dates.iter().max());
            let without = sub.len() - origins.len();
            let e = Root {
                id: child.id.to_string(),
                title: child.title.clone(),
                kind: wire_kind(child.kind).to_string(),
                nodes: sub.len(),
                branches: sub.iter().filter(|r| r.kind.is_branch()).count(),
                first: span.map(|s| s.0.clone()),
                last: span.map(|s| s.1.clone()),
                origin: common_origin(&origins),
                without_origin: (without > 0 && !origins.is_empty()).then_some(without),
            };
            roots.push((sub.len(), child.id.clone(), e));
        }
        roots.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        let count_by = |f: &dyn Fn(&NodeRow) -> Option<String>| {
            let mut m: HashMap<String, usize> = HashMap::new();
            for r in &rows {
                if let Some(v) = f(r).filter(|v| !v.is_empty()) {
                    *m.entry(v).or_default() += 1;
                }
            }
            let mut v: Vec<(String, usize)> = m.into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            Counts(v)
        };
        let mut out = CoverageMap {
            date_field: df.clone(),
            roots: roots.into_iter().map(|r| r.2).collect(),
            total: rows.len(),
            types: count_by(&|r| Some(r.node_type.clone())),
            sources: count_by(&|r| r.source.clone()),
            undated: rows.iter().filter(|r| date(r).is_none_or(|d| d.is_empty())).count(),
            system: rows.iter().filter(|r| forest_model::ids::is_meta(&r.id)).count(),
            scope: (sel != ScopeSel::All).then(|| scope.map(crate::engine::norm_id)),
            truncated: false,
            dropped: Dropped::default(),
        };
        shrink_items(&mut out, LIST_BUDGET, |c| (&mut c.roots, &mut c.truncated, &mut c.dropped), |r| r.id.clone());
        Ok(out)
    }

    /// The commits among `commits` that touched a path outside the
    /// caller's branches (one `git diff-tree --stdin`); every commit when
    /// git cannot say (withheld rather than shown).
    fn commits_outside_scope(&self, commits: &[&str]) -> std::collections::HashSet<String> {
        use std::io::Write as _;
        let all = || commits.iter().map(|c| c.trim().to_string()).collect();
        let child = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(["diff-tree", "--stdin", "-r", "--root", "--name-only"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn();
        let Ok(mut child) = child else { return all() };
        if let Some(mut stdin) = child.stdin.take() {
            let list: String = commits.iter().map(|c| format!("{}\n", c.trim())).collect();
            if stdin.write_all(list.as_bytes()).is_err() {
                return all();
            }
        }
        let Ok(out) = child.wait_with_output() else { return all() };
        if !out.status.success() {
            return all();
        }
        let wanted: std::collections::HashSet<&str> = commits.iter().map(|c| c.trim()).collect();
        let mut hidden = std::collections::HashSet::new();
        let mut current: Option<&str> = None;
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(c) = wanted.get(line) {
                current = Some(c);
            } else if let Some(c) = current {
                if !self.access.visible(line.strip_suffix(".md").unwrap_or(line)) {
                    hidden.insert(c.to_string());
                }
            }
        }
        hidden
    }

    /// `history(id, limit)`: the node's commits, newest first. The
    /// reference runs `git log --follow`, whose rename detection costs
    /// seconds at 10^6 nodes; the forest records every transplant (the
    /// catalog's waymarks), so the node's file and the files it was
    /// moved from are named instead (a transplanted node's past still
    /// includes its plant). Paths are literal (no pathspec magic).
    /// A scoped caller sees the message only of commits that touched
    /// nothing outside its branches ([`HIDDEN_COMMIT`] otherwise).
    pub fn history(&mut self, id: &str, limit: Option<i64>) -> VResult<History> {
        let row = self.row(id)?;
        let limit = limit.unwrap_or(20).clamp(1, 50) as usize;
        let mut files = vec![format!("{}.md", row.id)];
        files.extend(self.catalog.moved_from(row.id.as_str())?.into_iter().map(|old| format!("{old}.md")));
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(["--literal-pathspecs", "log", &format!("-n{}", limit + 1), "--format=%H%x1f%aI%x1f%B%x1e", "--"])
            .args(&files)
            .output();
        let text = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).to_string(),
            _ => String::new(),
        };
        let records: Vec<&str> = text.split('\u{1e}').map(str::trim).filter(|r| !r.is_empty()).collect();
        // A scoped caller sees the message only of commits that touched
        // nothing outside its branches (an adopt of the whole drive names
        // and counts hidden nodes).
        let hidden: std::collections::HashSet<String> = if self.access.scoped() {
            let commits: Vec<&str> = records.iter().filter_map(|r| r.split('\u{1f}').next()).collect();
            self.commits_outside_scope(&commits)
        } else {
            Default::default()
        };
        let mut entries = vec![];
        for rec in records {
            let mut parts = rec.splitn(3, '\u{1f}');
            let (Some(commit), Some(at), Some(msg)) = (parts.next(), parts.next(), parts.next()) else { continue };
            let msg = if hidden.contains(commit.trim()) { HIDDEN_COMMIT } else { msg };
            let subject = msg.lines().next().unwrap_or("").to_string();
            let by = msg.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim().eq_ignore_ascii_case("station-principal")).then(|| v.trim().to_string())
            });
            let head = subject.split('(').next().unwrap_or("").trim();
            let action = if !head.is_empty() && !head.contains(' ') && subject.contains('(') {
                head.to_string()
            } else {
                subject.clone()
            };
            let (subject, action) = crate::access::redact_subject(&self.access, subject, action);
            let commit = commit.trim().to_string();
            entries.push(HistoryEntry { commit, at: at.to_string(), message: subject, by, action });
        }
        let truncated = entries.len() > limit;
        entries.truncate(limit);
        let mut out =
            History { id: row.id, entries, returned: 0, truncated, dropped: Dropped::default(), oldest: None };
        shrink_items(
            &mut out,
            LIST_BUDGET,
            |h| (&mut h.entries, &mut h.truncated, &mut h.dropped),
            |e| e.commit.clone(),
        );
        out.returned = out.entries.len();
        out.oldest = out.entries.last().map(|e| e.commit.clone());
        Ok(out)
    }

    /// `calendar(scope, date_field, granularity, since, until, limit)`.
    pub fn calendar(
        &mut self,
        scope: Option<&str>,
        date_field: Option<&str>,
        granularity: Option<&str>,
        since: Option<&str>,
        until: Option<&str>,
        limit: Option<i64>,
    ) -> VResult<Calendar> {
        let df = window::date_field(date_field)?;
        let win = window::parse(since, until, Some(&df))?;
        let sel = self.scope(scope)?;
        let g = granularity.unwrap_or("month");
        if !["day", "week", "month", "year"].contains(&g) {
            return Err(VineError::schema(format!(
                "granularity must be one of ['day', 'week', 'month', 'year'], got '{g}'"
            )));
        }
        let limit = limit.unwrap_or(24).clamp(1, 120) as usize;
        let rows: Vec<NodeRow> = self.all_rows()?.into_iter().filter(|r| sel.admits(&r.id)).collect();
        let date = |r: &NodeRow| if df == "created" { r.created.clone() } else { r.updated.clone() };
        let undated = rows.iter().filter(|r| date(r).is_none_or(|d| d.is_empty())).count();
        let mut buckets: std::collections::BTreeMap<String, (String, String, usize)> = Default::default();
        let mut dated = vec![];
        for r in &rows {
            let Some(d) = date(r).filter(|d| !d.is_empty()) else { continue };
            if !in_window(r, win.as_ref()) && win.is_some() {
                continue;
            }
            let Ok(day) = chrono::NaiveDate::parse_from_str(&d.chars().take(10).collect::<String>(), "%Y-%m-%d") else {
                continue;
            };
            dated.push(day);
            let (label, lo, hi) = period(day, g);
            let e = buckets.entry(lo.clone()).or_insert((label, hi, 0));
            e.2 += 1;
        }
        let mut list: Vec<Bucket> = buckets
            .into_iter()
            .rev()
            .map(|(since, (period, until, nodes))| Bucket { period, since, until, nodes })
            .collect();
        let truncated = list.len() > limit;
        list.truncate(limit);
        let range = Range {
            first: dated.iter().min().map(|d| d.format("%Y-%m-%d").to_string()),
            last: dated.iter().max().map(|d| d.format("%Y-%m-%d").to_string()),
            nodes: dated.len(),
        };
        let mut out = Calendar {
            date_field: df,
            granularity: g.to_string(),
            range,
            buckets: list,
            truncated,
            undated,
            scope: (sel != ScopeSel::All).then(|| scope.map(crate::engine::norm_id)),
            window: win,
            dropped: Dropped::default(),
        };
        shrink_items(
            &mut out,
            LIST_BUDGET,
            |c| (&mut c.buckets, &mut c.truncated, &mut c.dropped),
            |b| b.period.clone(),
        );
        Ok(out)
    }
}

fn in_window(r: &NodeRow, w: Option<&Window>) -> bool {
    match w {
        None => true,
        Some(w) => w.admits(if w.date_field == "created" { r.created.as_deref() } else { r.updated.as_deref() }),
    }
}

fn period(d: chrono::NaiveDate, g: &str) -> (String, String, String) {
    use chrono::{Datelike, Duration};
    let f = |d: chrono::NaiveDate| d.format("%Y-%m-%d").to_string();
    match g {
        "day" => (f(d), f(d), f(d)),
        "week" => {
            let mon = d - Duration::days(d.weekday().num_days_from_monday() as i64);
            let iso = mon.iso_week();
            (format!("{}-W{:02}", iso.year(), iso.week()), f(mon), f(mon + Duration::days(6)))
        }
        "year" => (format!("{}", d.year()), format!("{}-01-01", d.year()), format!("{}-12-31", d.year())),
        _ => {
            let first = d.with_day(1).unwrap_or(d);
            let next = if d.month() == 12 {
                chrono::NaiveDate::from_ymd_opt(d.year() + 1, 1, 1)
            } else {
                chrono::NaiveDate::from_ymd_opt(d.year(), d.month() + 1, 1)
            };
            let last = next.and_then(|n| n.pred_opt()).unwrap_or(d);
            (first.format("%Y-%m").to_string(), f(first), f(last))
        }
    }
}

/// Longest common prefix of the extreme origins, cut after the last `/`.
fn common_origin(origins: &[String]) -> Option<String> {
    let lo = origins.iter().min()?;
    let hi = origins.iter().max()?;
    if lo == hi {
        return Some(lo.clone());
    }
    let n = lo.chars().zip(hi.chars()).take_while(|(a, b)| a == b).count();
    let p: String = lo.chars().take(n).collect();
    let cut = p.rfind('/')?;
    (cut > 0).then(|| p[..=cut].to_string())
}
