//! What a scoped caller is served, and what a scoped writer records, must
//! lie in its branches wherever it really is: not only the node's id, but
//! the node file (a symlink is resolved, see [`Vine::node_path`]), the
//! source file a `content: reference` body is read from, and a payload.
//!
//! The storage keys are `content`, `source_path`, `source_name`, `payload`
//! and `tier`. A scoped writer may set `content` to `inline`, `cached` or
//! `reference`; `source_path`/`source_name` only to a source file that maps
//! ([`forest_model::scope::source_home`]) inside its branches, and for a
//! reference at or below the node's own folder; `payload` only to a
//! relative path inside its branches; never `tier`. Unscoped writers are
//! bound only by the forest-wide rules of `write::confine_paths`.

use forest_derived::config::GardenerConfig;
use forest_model::node::Node;
use forest_model::scope::{payload_path, reference_in_scope};
use forest_model::ErrorCode;

use crate::engine::{norm_id, Vine};
use crate::error::{VResult, VineError};

/// Frontmatter keys that say where a node's body or bones are stored.
pub const STORAGE_KEYS: [&str; 5] = ["content", "source_path", "source_name", "payload", "tier"];

/// Why a reference or payload is not in a caller's scope (pure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outside {
    /// The source is not configured or the path climbs out of it.
    Unmapped,
    /// It maps to this forest folder, outside the node's folder or the
    /// caller's branches.
    At(String),
}

impl Vine {
    /// The forest folder a node's source file maps to, checked against
    /// the node's folder and the caller's branches.
    fn reference_check(&self, id: &str, node: &Node) -> Result<(), Outside> {
        let sp = node.get_str("source_path").unwrap_or_default();
        let config = GardenerConfig::load(&self.root).map_err(|_| Outside::Unmapped)?;
        let home = config.source_home(node.get_str("source_name").as_deref(), &sp).ok_or(Outside::Unmapped)?;
        let reference = node.get_str("content").as_deref() == Some("reference");
        let visible = self.access.visible(&format!("{home}/_index"));
        if !visible || (reference && !reference_in_scope(id, &home)) {
            return Err(Outside::At(home));
        }
        Ok(())
    }

    /// Before a scoped caller is served the body of `id`: a reference's
    /// source must map at or below the node's folder and inside the
    /// caller's branches, else the node answers as missing.
    pub(crate) fn check_served(&self, id: &str, node: &Node) -> VResult<()> {
        if !self.access.scoped() || node.get_str("content").as_deref() != Some("reference") {
            return Ok(());
        }
        self.reference_check(id, node).map_err(|_| {
            VineError::not_found(format!("reference body unreachable for {}", norm_id(id)))
                .hint("The source is unreachable from here; look() and the catalog still describe it.")
        })
    }

    /// The storage keys a scoped writer records on `id` (plant, and the
    /// node a transplant moves): see the module doc.
    pub(crate) fn check_storage_keys(&self, id: &str, node: &Node, planting: bool) -> VResult<()> {
        if !self.access.scoped() {
            return Ok(());
        }
        let forbid = |m: String| {
            VineError::new(ErrorCode::Forbidden, format!("{id}: {m}")).hint(format!(
                "A scoped token sets storage keys ({}) only to places under: {}.",
                STORAGE_KEYS.join(", "),
                self.access.branches.join(", ")
            ))
        };
        if planting && node.front.contains_key("tier") {
            return Err(forbid("'tier' may be set only by an unscoped token".into()));
        }
        let content = node.get_str("content");
        if !matches!(content.as_deref(), None | Some("inline" | "cached" | "reference")) {
            return Err(forbid(format!(
                "content '{}' is not inline, cached or reference",
                content.unwrap_or_default()
            )));
        }
        let reference = content.as_deref() == Some("reference");
        let sourced = node.front.contains_key("source_path") || node.front.contains_key("source_name");
        if reference || (planting && sourced) {
            match self.reference_check(id, node) {
                Ok(()) => {}
                Err(Outside::Unmapped) => {
                    return Err(forbid("its source_path does not map to a configured source".into()));
                }
                Err(Outside::At(home)) => {
                    let place = if home.is_empty() { "the forest root".to_string() } else { format!("'{home}/'") };
                    return Err(forbid(format!("its source maps to {place}, outside this node's scope")));
                }
            }
        }
        if let Some(p) = node.get_str("payload").filter(|p| !p.is_empty()) {
            let inside = payload_path(id, &p).is_some_and(|rel| {
                let canon = std::fs::canonicalize(self.root.join(&rel));
                self.access.visible(&rel) && canon.map_or(true, |c| self.file_in_scope(&c))
            });
            if !inside {
                return Err(forbid(format!("payload '{p}' lies outside this token's branches")));
            }
        }
        Ok(())
    }
}
