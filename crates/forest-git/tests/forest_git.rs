//! Integration tests of forest-git: batch commits, the writer lock, and
//! crash recovery (the kill test).

#[path = "forest_git/commit.rs"]
mod commit;
#[path = "forest_git/crash.rs"]
mod crash;
#[path = "forest_git/deferred.rs"]
mod deferred;
#[path = "forest_git/index_file.rs"]
mod index_file;
#[path = "forest_git/lock.rs"]
mod lock;
#[path = "forest_git/util.rs"]
mod util;
