//! A caller's rights: token name, read or write, the branch prefixes it
//! may see. The engine carries one; [`crate::access`] checks calls against it.
//!
//! In: a token's grant. Out: [`Access`]. Touches nothing.

use crate::ids::norm_id;

/// A caller's rights. `branches` empty = the whole forest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Token name (`local` for stdio and tokenless loopback HTTP).
    pub name: String,
    /// May write (plant, graft, tend, prune, transplant) and deposit
    /// shared heat.
    pub write: bool,
    /// Branch prefixes, each ending in `/` (`engineering/`); empty = all.
    pub branches: Vec<String>,
}

impl Access {
    /// The owner of the process (stdio, tokenless loopback): everything.
    pub fn owner() -> Access {
        Access { name: "local".into(), write: true, branches: vec![] }
    }

    /// A token's access; prefixes are normalised to `a/b/`.
    pub fn new(name: &str, write: bool, branches: &[String]) -> Access {
        let mut b: Vec<String> = branches.iter().map(|p| norm_prefix(p)).filter(|p| !p.is_empty()).collect();
        b.sort();
        b.dedup();
        Access { name: name.to_string(), write, branches: b }
    }

    /// True when the token sees only some branches.
    pub fn scoped(&self) -> bool {
        !self.branches.is_empty()
    }

    /// True when `id` lies under one of the branches (or the token is
    /// unscoped). Decided from the string alone.
    pub fn visible(&self, id: &str) -> bool {
        if !self.scoped() {
            return true;
        }
        let id = norm_id(id);
        self.branches.iter().any(|p| id.starts_with(p.as_str()))
    }

    /// May this caller's session heat reach the shared trails?
    pub fn may_write_heat(&self) -> bool {
        self.write
    }
}

/// `engineering` / `/engineering/` -> `engineering/`.
fn norm_prefix(p: &str) -> String {
    let p = norm_id(p);
    if p.is_empty() {
        p
    } else {
        format!("{p}/")
    }
}
