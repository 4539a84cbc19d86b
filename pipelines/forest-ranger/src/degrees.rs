//! Catalog degrees and rows the Ranger's passes read, through
//! `forest-catalog` (no SQL here): `(id, degree)` in id order from the
//! catalog's merged scan of the edges table, and a node's kind and summary.

use forest_catalog::Catalog;

use crate::Result;

/// Call `visit(id, degree)` for every edge endpoint, ids ascending.
pub(crate) fn scan(catalog: &Catalog, visit: impl FnMut(&str, i64) -> Result<()>) -> Result<()> {
    catalog.scan_degrees(visit)
}

/// `(kind, summary)` of a catalog row.
pub(crate) fn row_of(catalog: &Catalog, id: &str) -> Result<Option<(String, String)>> {
    Ok(catalog.kind_and_summary(id)?)
}
