//! The serde helper the answers share.

/// A flag the wire omits when false.
pub(super) fn is_false(b: &bool) -> bool {
    !*b
}
