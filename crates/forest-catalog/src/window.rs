//! Date windows over the catalog (vine spec §1.6): inclusive day bounds on
//! one date column, and the SQL that selects the nodes inside. Parsing the
//! caller's words into a [`Window`] is the caller's edge (the Vine's
//! `window::parse`); the catalog only reads a normalised window.

use serde::Serialize;

use crate::{Catalog, Result};

/// A normalised window: inclusive day bounds on one date column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Window {
    /// Lower bound `YYYY-MM-DD`, inclusive.
    pub since: Option<String>,
    /// Upper bound `YYYY-MM-DD`, inclusive.
    pub until: Option<String>,
    /// `created` or `updated` (the only two columns a window may name).
    pub date_field: String,
}

impl Window {
    /// True when a node's date value (first 10 chars compared) lies inside.
    pub fn admits(&self, value: Option<&str>) -> bool {
        let Some(v) = value.filter(|v| !v.is_empty()) else { return false };
        let day: String = v.chars().take(10).collect();
        self.since.as_ref().is_none_or(|s| day.as_str() >= s.as_str())
            && self.until.as_ref().is_none_or(|u| day.as_str() <= u.as_str())
    }

    /// The date column, checked against the two a window may name (the
    /// column is spliced into SQL, so nothing else ever reaches it).
    pub fn column(&self) -> &'static str {
        if self.date_field == "updated" {
            "updated"
        } else {
            "created"
        }
    }

    /// SQL predicate of the window on column prefix `p` (`""` or `n2.`),
    /// with its arguments in order.
    pub fn sql(&self, p: &str) -> (String, Vec<String>) {
        let col = format!("{p}{}", self.column());
        let mut pred = format!("{col} != '' AND {col} IS NOT NULL");
        let mut args = vec![];
        if let Some(s) = &self.since {
            pred.push_str(&format!(" AND {col} >= ?"));
            args.push(s.clone());
        }
        if let Some(u) = &self.until {
            // `< until + 1 day` so timestamps on the last day are inside.
            let next = chrono::NaiveDate::parse_from_str(u, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.succ_opt())
                .map(|d| d.format("%Y-%m-%d").to_string())
                .unwrap_or_else(|| u.clone());
            pred.push_str(&format!(" AND {col} < ?"));
            args.push(next);
        }
        (pred, args)
    }
}

/// What an empty windowed answer tells its caller about the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowCounts {
    /// Nodes without a value in the window's column.
    pub undated: i64,
    /// Nodes inside the window.
    pub matched: i64,
    /// Nodes with a value in the column.
    pub dated: i64,
    /// Earliest day in the column (`YYYY-MM-DD`).
    pub first: Option<String>,
    /// Latest day in the column.
    pub last: Option<String>,
}

impl Catalog {
    /// Nodes without a value in `w`'s column.
    pub fn undated(&self, w: &Window) -> Result<i64> {
        let col = w.column();
        Ok(self.connection().query_row(
            &format!("SELECT COUNT(*) FROM nodes WHERE {col} IS NULL OR {col} = ''"),
            [],
            |r| r.get(0),
        )?)
    }

    /// The counts behind an empty windowed answer's hint.
    pub fn window_counts(&self, w: &Window) -> Result<WindowCounts> {
        let conn = self.connection();
        let col = w.column();
        let (pred, args) = w.sql("");
        let matched: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM nodes WHERE {pred}"),
            rusqlite::params_from_iter(args.iter()),
            |r| r.get(0),
        )?;
        let (dated, first, last) = conn.query_row(
            &format!("SELECT COUNT(*), MIN(substr({col},1,10)), MAX(substr({col},1,10)) FROM nodes WHERE {col} != ''"),
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        Ok(WindowCounts { undated: self.undated(w)?, matched, dated, first, last })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_and_sql() {
        let w =
            Window { since: Some("2024-02-01".into()), until: Some("2024-02-29".into()), date_field: "updated".into() };
        assert!(w.admits(Some("2024-02-29T10:00")));
        assert!(!w.admits(Some("2024-03-01")));
        assert!(!w.admits(Some("")));
        assert!(!w.admits(None));
        let (pred, args) = w.sql("n2.");
        assert_eq!(pred, "n2.updated != '' AND n2.updated IS NOT NULL AND n2.updated >= ? AND n2.updated < ?");
        assert_eq!(args, ["2024-02-01", "2024-03-01"]);
        let odd = Window { since: None, until: None, date_field: "1; DROP TABLE nodes".into() };
        assert_eq!(odd.column(), "created");
    }
}
