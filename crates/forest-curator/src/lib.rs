//! forest-curator: the optional LLM stage of ingest (dialect §4, DESIGN §6).
//!
//! A [`Curator`] talks to any OpenAI-compatible `/v1` endpoint to write
//! summaries ("scent") and tags for new nodes, roll up branch summaries and
//! propose `related-to` links from a closed candidate set. Requests are paced
//! (bounded concurrency, requests-per-minute, timeouts, retries with
//! backoff) and validated outputs are cached in SQLite ([`CurationCache`]).
//! Ingest never blocks on the model: every failure degrades to the derived
//! summary and is counted in [`StatsSnapshot`].
//!
//! Invariant: no hallucinated link can leave this crate — every proposed
//! target is a member of the offered candidate set — and every returned
//! model summary passes `validate_summary`, is grounded in its source
//! ([`grounding`]) and repeats no phrase ([`informative`]).

mod cache;
mod config;
mod curator;
mod endpoints;
mod error;
pub mod grounding;
mod http;
pub mod informative;
mod pacing;
mod parse;
pub mod prompts;
mod reject;
pub mod select;
mod stats;

pub use cache::{CachedCuration, CurationCache};
pub use config::{
    CuratorConfig, DEFAULT_CONCURRENCY, DEFAULT_MAX_TOKENS, DEFAULT_OFFLINE_AFTER, DEFAULT_TIMEOUT,
    DEFAULT_TRANSPORT_RETRIES, NO_KEY,
};
pub use curator::{
    Candidate, CandidateProvider, Curator, Link, ProposalOutcome, ScentRequest, SummaryOrigin, SummaryOutcome,
    MAX_ATTEMPTS, NOTE_MAX_CHARS, OFFER_MAX, PROPOSALS_MAX, PROPOSAL_CONFIDENCE, PROPOSAL_REL,
};
pub use error::CuratorError;
pub use parse::{append_tags, clean_tags};
pub use prompts::{CONTENT_BUDGET_TOKENS, PROMPT_VERSION};
pub use stats::{CuratorStats, StatsSnapshot};
