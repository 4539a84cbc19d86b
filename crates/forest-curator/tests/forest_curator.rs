//! Integration tests of forest-curator against scripted local HTTP servers
//! (fault injection) and, when FOREST_TEST_LLM_URL is set, a real one.

#[path = "forest_curator/cache.rs"]
mod cache;
#[path = "forest_curator/endpoints.rs"]
mod endpoints;
#[path = "forest_curator/faults.rs"]
mod faults;
#[path = "forest_curator/live.rs"]
mod live;
#[path = "forest_curator/proposals.rs"]
mod proposals;
#[path = "forest_curator/quality.rs"]
mod quality;
#[path = "forest_curator/summarize.rs"]
mod summarize;
#[path = "forest_curator/support.rs"]
mod support;
