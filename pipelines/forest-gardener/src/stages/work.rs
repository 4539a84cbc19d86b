//! The unit of work the reconcile stage hands out and the convert and plan
//! stages consume: a file to plant or update, a move, a stale mark. Its own
//! module so those stages import it without importing each other.

use crate::reconcile::{self, ManifestEntry};
use crate::walk::Listed;

/// A unit of work inside a source run, in path order.
pub(crate) enum Work {
    /// A new file to plant.
    Plant(Listed),
    /// A changed file and its node id.
    Update(Listed, String),
    /// A move (vanished path paired with a new file, listed).
    Transplant(reconcile::Move, Option<Listed>),
    /// A vanished path to mark stale.
    MarkStale(String, ManifestEntry),
}

impl Work {
    /// The source path this work is ordered by.
    pub(crate) fn rel(&self) -> &str {
        match self {
            Work::Plant(f) | Work::Update(f, _) => &f.rel,
            Work::Transplant(m, _) => &m.to_rel,
            Work::MarkStale(r, _) => r,
        }
    }

    /// The listed file behind this work, if it was listed.
    pub(crate) fn listed(&self) -> Option<&Listed> {
        match self {
            Work::Plant(f) | Work::Update(f, _) => Some(f),
            Work::Transplant(_, f) => f.as_ref(),
            Work::MarkStale(..) => None,
        }
    }
}
