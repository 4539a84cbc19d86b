//! The split trigger and bucket marks both bucket rules ([`super::split`],
//! [`super::ranges`]) measure against (pure constants, no imports).

/// Entry lines (`- [[`) past which the dialect's health flags `needs_split`.
pub(crate) const MAX_ENTRIES: usize = 150;
/// Body tokens past which the dialect's health flags `needs_split`.
pub(crate) const MAX_BODY_TOKENS: usize = 3000;
/// A branch splits when it passes this many entries.
pub(crate) const SPLIT_ENTRIES: usize = MAX_ENTRIES;
/// A branch splits when its body passes this many tokens: 80% of the
/// dialect's limit, headroom for summaries a curator rewrites later (an
/// entry line costs `[[id]]` plus a summary of up to 60 tokens).
pub(crate) const SPLIT_TOKENS: usize = MAX_BODY_TOKENS * 4 / 5;
/// Tokens of an empty bucket body (title, blockquote, three headings).
pub(crate) const BUCKET_BASE_TOKENS: usize = 45;

/// The first character of a bucket's id component.
pub(crate) const BUCKET_MARK: char = '~';
