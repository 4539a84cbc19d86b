//! The engine object: one open forest (catalog, trails, dialect, optional
//! writer lock) plus the shared resolution rules of vine spec §1.6.
//!
//! In: a forest root. Touches: `_derived/` (catalog auto-reindex, traces,
//! heat) even when read-only; `.md` files and git only through `write`.

use forest_model::ErrorCode;
use std::path::{Path, PathBuf};
use std::time::Instant;

use forest_catalog::{Catalog, NodeRow, Trails};
use forest_derived::catalog::{open_catalog, TRAILS_PATH};
use forest_git::{GitForest, WriterLock};
use forest_model::node::Node;
use forest_model::schema::Dialect;

use crate::caller::Access;
use crate::error::{VResult, VineError};
pub use crate::ids::norm_id;
pub(crate) use crate::ids::not_found;
use crate::session::Tracer;

/// Pheromone weight α of locate and sniff.
pub const ALPHA: f64 = 0.3;

/// How to open a forest.
#[derive(Debug, Clone, Default)]
pub struct VineOptions {
    /// Take the writer lock and allow writes.
    pub writable: bool,
    /// Session id (default: 12 random hex chars).
    pub session: Option<String>,
}

/// Writable state: the held lock and the repository.
pub(crate) struct Writer {
    pub(crate) _lock: WriterLock,
    pub(crate) git: GitForest,
}

/// An open forest with the Vine primitives as methods.
pub struct Vine {
    pub(crate) root: PathBuf,
    pub(crate) catalog: Catalog,
    pub(crate) trails: Trails,
    pub(crate) dialect: Dialect,
    pub(crate) writer: Option<Writer>,
    pub(crate) tracer: Tracer,
    /// Deadline of the running call (set by [`Vine::call_until`]).
    pub(crate) deadline: Option<Instant>,
    /// May reads write shared state (catalog upserts, session heat in
    /// `trails.db`)? False on a `--readonly` server.
    pub(crate) shared_writes: bool,
    /// The caller of the running call (`call_as`); the owner otherwise.
    pub(crate) access: Access,
    /// True while the catalog is narrowed to `access`'s branches.
    pub(crate) views: bool,
    /// How `locate` ranks when the caller does not say (hybrid with our
    /// fusion whenever the forest has a current canopy; see
    /// [`forest_catalog::Fusion`]).
    pub(crate) fusion: forest_catalog::Fusion,
}

impl std::fmt::Debug for Vine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vine").field("root", &self.root).field("writable", &self.writer.is_some()).finish()
    }
}

impl Vine {
    /// Open the forest at `root`. Writable opens take `.vine.lock`
    /// (`E_LOCKED` when a live writer holds it) and the git repository.
    /// A missing or empty catalog is rebuilt from the Markdown first.
    pub fn open(root: &Path, opts: VineOptions) -> VResult<Vine> {
        let root = std::fs::canonicalize(root)
            .map_err(|_| VineError::not_found(format!("not a forest (no _index.md): {}", root.display())))?;
        if !root.join("_index.md").is_file() {
            return Err(VineError::not_found(format!("not a forest (no _index.md): {}", root.display())));
        }
        let writer = if opts.writable {
            let lock = WriterLock::acquire(&root)?;
            let git = GitForest::open(&root)?;
            Some(Writer { _lock: lock, git })
        } else {
            None
        };
        let catalog = open_catalog(&root).map_err(|e| VineError::internal(forest_model::error_chain(&e)))?;
        let trails = Trails::open(&root.join(TRAILS_PATH))?;
        let dialect = load_dialect(&root);
        let tracer = Tracer::new(&root, opts.session);
        Ok(Vine {
            root,
            catalog,
            trails,
            dialect,
            writer,
            tracer,
            deadline: None,
            shared_writes: true,
            access: Access::owner(),
            views: false,
            fusion: forest_catalog::Fusion::default(),
        })
    }

    /// A read-only engine of a server's worker pool: it shares the
    /// server's session (`tracer`) and, when `shared_writes` is false
    /// (`--readonly`), writes no catalog row and no heat to `trails.db`.
    pub fn open_worker(root: &Path, tracer: &Tracer, shared_writes: bool) -> VResult<Vine> {
        let mut v = Vine::open(root, VineOptions { writable: false, session: None })?;
        v.tracer = tracer.clone();
        v.shared_writes = shared_writes;
        Ok(v)
    }

    /// The session tracer (shared by the engines of one server).
    pub fn tracer(&self) -> &Tracer {
        &self.tracer
    }

    /// `E_TIMEOUT` once the running call's deadline has passed (long loops
    /// call this between items).
    pub(crate) fn check_deadline(&self, what: &str) -> VResult<()> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(timeout(what)),
            _ => Ok(()),
        }
    }

    /// The fusion `locate` uses when a call names none (`FOREST_FUSION`
    /// for a server; `bm25` turns the canopy off).
    pub fn set_fusion(&mut self, fusion: forest_catalog::Fusion) {
        self.fusion = fusion;
    }

    /// Whether the running call's deadline has passed.
    pub(crate) fn deadline_passed(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// The `E_TIMEOUT` envelope of the running call.
    pub(crate) fn deadline_error(&self, what: &str) -> VineError {
        timeout(what)
    }

    /// Ranking heat of ids: persistent + 0.5 × this session's heat (what
    /// `locate` multiplies its strengths by).
    pub(crate) fn ranking_heat(
        &self,
        ids: &[String],
    ) -> forest_catalog::Result<std::collections::HashMap<String, f64>> {
        if self.shared_writes {
            return self.trails.heat_map(ids, Some(&self.tracer.session()));
        }
        // Read-only server: session heat lives in memory, never in trails.db.
        let mut map = self.trails.heat_map(ids, None)?;
        for (id, h) in map.iter_mut() {
            let s = self.tracer.memory_heat(id);
            if s > 0.0 {
                *h = ((*h + 0.5 * s).min(1.0) * 10_000.0).round() / 10_000.0;
            }
        }
        Ok(map)
    }

    /// The forest root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when this engine holds the writer lock.
    pub fn writable(&self) -> bool {
        self.writer.is_some()
    }

    /// The current session id.
    pub fn session(&self) -> String {
        self.tracer.session()
    }

    /// The catalog (read access for callers and tests).
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Ranking heat of ids: persistent + 0.5 × this session's heat.
    pub(crate) fn heat_of(&self, ids: &[String]) -> VResult<std::collections::HashMap<String, f64>> {
        Ok(self.ranking_heat(ids)?)
    }

    /// Catalog lookup (`_row_or_raise`): row, else upsert an existing `.md`
    /// on the fly, else `E_MOVED` for a waymark, else `E_NOT_FOUND`.
    pub(crate) fn row(&mut self, id: &str) -> VResult<NodeRow> {
        let id = norm_id(id);
        if let Some(r) = self.catalog.get(&id)? {
            // A row a scoped caller may see by its id must also lie in its
            // branches on disk (a symlinked file catalogued before).
            if self.access.scoped() {
                self.node_path(&id)?;
            }
            return Ok(r);
        }
        let path = self.node_path(&id)?;
        // A symlinked node file is never a node (validate says so): it is
        // not added to the catalog, so locate and sniff never list it.
        let plain = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
        if self.shared_writes && plain {
            if let Ok(text) = std::fs::read_to_string(&path) {
                if let Ok(node) = Node::parse(&text) {
                    let row = forest_derived::catalog::catalog_row(&id, &node);
                    self.catalog_unscoped(|c| c.upsert(&[row]))?;
                    if let Some(r) = self.catalog.get(&id)? {
                        return Ok(r);
                    }
                }
            }
        }
        if let Some(new) = self.catalog.moved_to(&id)? {
            return Err(VineError::new(ErrorCode::Moved, format!("node moved: {id}"))
                .hint(format!("It now lives at '{new}'; use that id."))
                .with("moved_to", &new));
        }
        Err(not_found(&id))
    }

    /// Id -> absolute `.md` path; `E_NOT_FOUND` when it escapes the root,
    /// `E_FORBIDDEN` when a symlink on the way leads outside it.
    pub(crate) fn node_path(&self, id: &str) -> VResult<PathBuf> {
        let id = norm_id(id);
        if id.is_empty() || id.split('/').any(|c| c == ".." || c == "." || c.is_empty()) || id.starts_with('/') {
            return Err(VineError::not_found(format!("id escapes forest: {id}"))
                .hint("Use locate() to find entry points; ids are canonical paths."));
        }
        let path = self.root.join(format!("{id}.md"));
        confined(&self.root, &path)?;
        if self.access.scoped() && !self.in_scope_on_disk(&id, &path) {
            return Err(not_found(&id));
        }
        Ok(path)
    }

    /// A scoped caller's id must be visible, and so must the place its
    /// file really lies: the file itself resolved (a symlinked node file
    /// `engineering/x.md -> ../hr/y.md` lies in `hr/`), else its folder
    /// (a directory symlink may not lead from a visible branch into
    /// another one).
    fn in_scope_on_disk(&self, id: &str, path: &Path) -> bool {
        if !self.access.visible(id) {
            return false;
        }
        if let Ok(file) = std::fs::canonicalize(path) {
            return self.file_in_scope(&file);
        }
        let Some(dir) = path.parent().and_then(|d| std::fs::canonicalize(d).ok()) else { return true };
        self.file_in_scope(&dir.join("x"))
    }

    /// File lookup (pick, graft): parse the `.md` or `E_NOT_FOUND`.
    pub(crate) fn read_node(&self, id: &str) -> VResult<Node> {
        let path = self.node_path(id)?;
        let text = std::fs::read_to_string(&path).map_err(|_| {
            VineError::not_found(format!("node not found: {}", norm_id(id)))
                .hint("Use locate() to find entry points; ids are canonical paths.")
        })?;
        Node::parse(&text).map_err(|e| VineError::new(ErrorCode::Frontmatter, format!("{}: {e}", norm_id(id))))
    }

    /// The FLESH of a node: inline body, cached body or live reference.
    pub(crate) fn resolve_body(&self, id: &str, node: &Node) -> VResult<String> {
        self.check_served(id, node)?;
        match node.get_str("content").as_deref() {
            None | Some("inline") => Ok(node.body.clone()),
            Some("cached") => {
                let p = self.root.join("_derived/bodies").join(format!("{}.md", norm_id(id)));
                confined(&self.root, &p)?;
                std::fs::read_to_string(p).map_err(|_| {
                    VineError::not_found(format!("cached body missing for {}", norm_id(id)))
                        .hint("Run `forest sync` (vine sync) to regenerate cached bodies; locate/look/scan still work.")
                })
            }
            Some(_) => forest_derived::tiers::read_body(&self.root, None, &norm_id(id)).map_err(|_| {
                VineError::not_found(format!("reference body unreachable for {}", norm_id(id)))
                    .hint("The source is unreachable from here; look() and the catalog still describe it.")
            }),
        }
    }

    /// Scope resolution of sniff/coverage (vine spec §1.6): `None` = whole
    /// forest; `Some(Leaf(id))` one node; `Some(Prefix(p))` ids under `p/`.
    pub(crate) fn scope(&mut self, scope: Option<&str>) -> VResult<ScopeSel> {
        let s = scope.map(norm_id).unwrap_or_default();
        if s.is_empty() || s == "_index" {
            return Ok(ScopeSel::All);
        }
        if let Some(r) = self.catalog.get(&s)? {
            if !r.kind.is_branch() {
                return Ok(ScopeSel::Leaf(s));
            }
        }
        let idx = if s.ends_with("/_index") { s } else { format!("{s}/_index") };
        let r = self.row(&idx)?;
        Ok(ScopeSel::Prefix(format!("{}/", forest_model::ids::folder_of(&r.id))))
    }

    /// Require a writable engine.
    pub(crate) fn writer(&self) -> VResult<&Writer> {
        self.writer.as_ref().ok_or_else(VineError::readonly)
    }
}

/// `E_FORBIDDEN` when `path` (or its deepest existing ancestor)
/// resolves, through a symlink, to a place outside `root` (canonical).
/// A path that does not exist yet is judged by its existing ancestor.
pub(crate) fn confined(root: &Path, path: &Path) -> VResult<()> {
    let mut probe = path;
    loop {
        match std::fs::canonicalize(probe) {
            Ok(c) if c.starts_with(root) => return Ok(()),
            Ok(_) => {
                let rel = path.strip_prefix(root).unwrap_or(path);
                return Err(VineError::new(
                    ErrorCode::Forbidden,
                    format!("{} is a symlink that leaves the forest", rel.display()),
                )
                .hint("Nothing outside the forest is served; replace the symlink with the file (forest validate lists them)."));
            }
            Err(_) => match probe.parent() {
                Some(p) if p.starts_with(root) && p != probe => probe = p,
                _ => return Ok(()),
            },
        }
    }
}

/// The `E_TIMEOUT` envelope of a call past its deadline.
pub(crate) fn timeout(what: &str) -> VineError {
    VineError::new(ErrorCode::Timeout, format!("{what} exceeded its deadline"))
        .hint("Narrow the call (a scope, fewer or shorter terms, a smaller k) and retry.")
}

/// A resolved scope.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ScopeSel {
    All,
    Leaf(String),
    Prefix(String),
}

impl ScopeSel {
    pub(crate) fn admits(&self, id: &str) -> bool {
        match self {
            ScopeSel::All => true,
            ScopeSel::Leaf(l) => l == id,
            ScopeSel::Prefix(p) => id.starts_with(p.as_str()),
        }
    }
}

/// The dialect of `_meta/schema.md` (defaults when absent).
fn load_dialect(root: &Path) -> Dialect {
    std::fs::read_to_string(root.join("_meta/schema.md"))
        .ok()
        .and_then(|t| Node::parse(&t).ok())
        .map(|n| Dialect::from_schema_body(&n.body))
        .unwrap_or_default()
}

/// Wire kind: catalog `banana` is emitted as `note`.
pub(crate) fn wire_kind(kind: forest_model::Kind) -> &'static str {
    match kind {
        forest_model::Kind::Banana => "note",
        forest_model::Kind::Branch => "branch",
    }
}

/// Python-like `repr` of a string (single quotes) for message templates.
pub(crate) fn py_repr(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Python list repr of strings: `['a', 'b']`.
pub(crate) fn py_list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|s| py_repr(s)).collect::<Vec<_>>().join(", "))
}

/// Coverage of a branch row as `{notes, branches}` or the raw string.
pub(crate) fn coverage_of(raw: Option<&str>) -> Option<forest_catalog::Coverage> {
    let c = raw.filter(|c| !c.is_empty())?;
    Some(match forest_catalog::parse_coverage(c) {
        Some((notes, branches)) => forest_catalog::Coverage::Counts { notes, branches },
        None => forest_catalog::Coverage::Raw(c.to_string()),
    })
}
