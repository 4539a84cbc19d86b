//! Date windows `since`/`until`/`date_field` (vine spec §1.6, C.13.1).

use chrono::{Datelike, NaiveDate};

use crate::error::{VResult, VineError};

pub use forest_catalog::Window;

/// Parse `date_field` (default `created`).
pub fn date_field(v: Option<&str>) -> VResult<String> {
    match v.unwrap_or("created") {
        f @ ("created" | "updated") => Ok(f.to_string()),
        other => Err(VineError::schema(format!("date_field must be one of ['created', 'updated'], got '{other}'"))),
    }
}

/// Parse the window arguments; `None` when neither bound is given.
pub fn parse(since: Option<&str>, until: Option<&str>, field: Option<&str>) -> VResult<Option<Window>> {
    let date_field = date_field(field)?;
    if since.is_none() && until.is_none() {
        return Ok(None);
    }
    let lo = since.map(|s| bound("since", s, false)).transpose()?;
    let hi = until.map(|s| bound("until", s, true)).transpose()?;
    if let (Some(a), Some(b)) = (&lo, &hi) {
        if a > b {
            return Err(VineError::schema(format!("since ({a}) is later than until ({b})")));
        }
    }
    Ok(Some(Window { since: lo, until: hi, date_field }))
}

fn bound(name: &str, raw: &str, upper: bool) -> VResult<String> {
    let s = raw.trim();
    let bad = || VineError::schema(format!("{name} is not a date I can read: {}", crate::engine::py_repr(raw)));
    let parts: Vec<&str> = s.split('-').collect();
    let num = |p: &str, n: usize| -> VResult<u32> {
        if p.len() == n && p.bytes().all(|b| b.is_ascii_digit()) {
            p.parse().map_err(|_| bad())
        } else {
            Err(bad())
        }
    };
    let (y, m, d) = match parts.as_slice() {
        [y] => (num(y, 4)?, None, None),
        [y, m] => (num(y, 4)?, Some(num(m, 2)?), None),
        [y, m, d] => (num(y, 4)?, Some(num(m, 2)?), Some(num(d, 2)?)),
        _ => return Err(bad()),
    };
    let y = y as i32;
    let date = match (m, d, upper) {
        (None, _, false) => NaiveDate::from_ymd_opt(y, 1, 1),
        (None, _, true) => NaiveDate::from_ymd_opt(y, 12, 31),
        (Some(m), None, false) => NaiveDate::from_ymd_opt(y, m, 1),
        (Some(m), None, true) => NaiveDate::from_ymd_opt(y, m, 1).and_then(last_of_month),
        (Some(m), Some(d), _) => NaiveDate::from_ymd_opt(y, m, d),
    }
    .ok_or_else(bad)?;
    Ok(date.format("%Y-%m-%d").to_string())
}

fn last_of_month(first: NaiveDate) -> Option<NaiveDate> {
    let (y, m) = if first.month() == 12 { (first.year() + 1, 1) } else { (first.year(), first.month() + 1) };
    NaiveDate::from_ymd_opt(y, m, 1)?.pred_opt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_bounds() {
        let w = parse(Some("2026"), Some("2024-02"), None);
        assert!(w.is_err(), "since after until");
        let w = parse(Some("2026-02"), Some("2026-02"), None).unwrap().unwrap();
        assert_eq!((w.since.as_deref(), w.until.as_deref()), (Some("2026-02-01"), Some("2026-02-28")));
        let w = parse(None, Some("2024-02"), Some("updated")).unwrap().unwrap();
        assert_eq!(w.until.as_deref(), Some("2024-02-29"));
        assert!(w.admits(Some("2024-02-29T10:00")));
        assert!(!w.admits(Some("")));
        for bad in ["last week", "19/08/2026", "2026-13", "", "2026-02-30"] {
            assert_eq!(parse(Some(bad), None, None).unwrap_err().code, "E_SCHEMA", "{bad}");
        }
        assert!(parse(None, None, Some("indexed")).unwrap_err().message.contains("'created', 'updated'"));
        assert_eq!(parse(None, None, Some("updated")).unwrap(), None);
    }
}
