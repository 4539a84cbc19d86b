//! Calls on behalf of a caller: [`Vine::call_as`] checks the caller's
//! [`Access`], narrows the catalog to its branches for the call (TEMP
//! views shadowing `nodes`, `edges`, `moves`; see
//! `forest_catalog::Catalog::narrow_to`) and restores the whole catalog
//! afterwards. Catalog writes of a scoped call go through
//! [`Vine::catalog_unscoped`], which lifts the views around them.

use forest_model::ErrorCode;
use serde_json::{Map, Value};

use crate::access::Access;
use crate::engine::{norm_id, Vine};
use crate::error::{VResult, VineError};

impl Vine {
    /// Run one primitive with `access`'s rights: refused calls never reach
    /// the primitive; a scoped call sees only its branches.
    pub fn call_as(&mut self, access: &Access, prim: &str, args: &Map<String, Value>) -> VResult<Value> {
        self.call_as_until(access, prim, args, None)
    }

    /// [`Vine::call_as`] under a deadline ([`Vine::call_until`]).
    pub fn call_as_until(
        &mut self,
        access: &Access,
        prim: &str,
        args: &Map<String, Value>,
        deadline: Option<std::time::Instant>,
    ) -> VResult<Value> {
        access.check(prim, args).map_err(|r| r.error)?;
        self.access = access.clone();
        let out = if access.scoped() {
            self.install_views().and_then(|_| {
                self.check_scoped_write(prim, args)?;
                self.call_until(prim, args, deadline)
            })
        } else {
            self.call_until(prim, args, deadline)
        };
        let dropped = self.drop_views();
        self.access = Access::owner();
        let out = out?;
        dropped?;
        Ok(out)
    }

    /// A file the call is about to open (payload, node directory), by its
    /// canonical path: inside the caller's branches? Always for the owner.
    pub(crate) fn file_in_scope(&self, canon: &std::path::Path) -> bool {
        if !self.access.scoped() {
            return true;
        }
        let Ok(rel) = canon.strip_prefix(&self.root) else { return false };
        self.access.visible(&rel.to_string_lossy().replace('\\', "/"))
    }

    fn install_views(&mut self) -> VResult<()> {
        self.catalog.narrow_to(&self.access.branches)?;
        self.views = true;
        Ok(())
    }

    fn drop_views(&mut self) -> VResult<()> {
        if self.views {
            self.catalog.widen()?;
            self.views = false;
        }
        Ok(())
    }

    /// Run a catalog write on the whole catalog (the views lifted), then
    /// narrow again.
    pub(crate) fn catalog_unscoped<T>(
        &mut self,
        f: impl FnOnce(&mut forest_catalog::Catalog) -> Result<T, forest_catalog::CatalogError>,
    ) -> VResult<T> {
        let was = self.views;
        self.drop_views()?;
        let out = f(&mut self.catalog);
        if was {
            self.install_views()?;
        }
        Ok(out?)
    }

    /// A scoped writer may not change what lies outside its branches: the
    /// parent index of the node it plants, prunes or moves must be its own,
    /// and prune/transplant would rewrite the links of nodes elsewhere, so
    /// they are refused while such links exist (their count is not told).
    fn check_scoped_write(&self, prim: &str, args: &Map<String, Value>) -> VResult<()> {
        let forbid = |m: String| {
            VineError::new(ErrorCode::Forbidden, m)
                .hint(format!("This token may write under: {}.", self.access.branches.join(", ")))
        };
        let mut ids: Vec<String> = vec![];
        match prim {
            "prune" | "transplant" => {
                for k in ["id", "new_id"] {
                    ids.extend(args.get(k).and_then(Value::as_str).map(norm_id));
                }
            }
            "plant" => {
                let nodes = match args.get("node") {
                    Some(Value::Array(a)) => a.clone(),
                    Some(v) => vec![v.clone()],
                    None => vec![],
                };
                ids.extend(nodes.iter().filter_map(|n| n.get("id").and_then(Value::as_str)).map(norm_id));
            }
            _ => return Ok(()),
        }
        for id in &ids {
            if let Some(p) = forest_model::ids::parent_index(id).filter(|p| !self.access.visible(p)) {
                return Err(forbid(format!("{prim}: '{id}' would change '{p}', outside this token's branches")));
            }
        }
        if prim == "prune" || prim == "transplant" {
            let id = ids.first().cloned().unwrap_or_default();
            let n = self.catalog.links_from_outside(&id, &self.access.branches)?;
            if n > 0 {
                return Err(forbid(format!("{prim}: nodes outside this token's branches link to '{id}'"))
                    .with("outside_links", true));
            }
        }
        Ok(())
    }
}
