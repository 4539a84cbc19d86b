//! Helpers shared by the integration-test binaries; a dev-dependency only,
//! never linked into the `forest` binary.
//!
//! libtest captures what a passing test prints, so a test that cannot run
//! (a test server or client is missing, a long test is off) says so here:
//! [`skip`] (and [`long`]) append one line `kind<TAB>test<TAB>reason` to the file named by
//! `FOREST_TEST_SKIP_LOG` (set by `ops/test.sh`, which lists the lines at
//! the end of the run) and prints the same line on stderr for `--nocapture`.

use std::io::Write;

/// Environment variable naming the skip log.
pub const SKIP_LOG_VAR: &str = "FOREST_TEST_SKIP_LOG";

/// The running test's name: libtest names each test's thread after it
/// (nextest runs one test a process, on the main thread, and says its name
/// in `NEXTEST_TEST_NAME`).
pub fn current_test() -> String {
    if let Some(n) = std::thread::current().name().filter(|n| *n != "main") {
        return n.to_string();
    }
    std::env::var("NEXTEST_TEST_NAME").unwrap_or_else(|_| "(unnamed test)".to_string())
}

/// Record that the running test skipped its checks, and why.
pub fn skip(reason: &str) {
    log("skipped", reason);
}

/// Record that the running test is a long one and did not run its checks
/// (`FOREST_TEST_LONG=1` runs them); `ops/test.sh` counts these apart from
/// the tests a missing server skipped.
pub fn long(reason: &str) {
    log("long", reason);
}

/// Whether long tests run (`FOREST_TEST_LONG=1`).
pub fn long_tests_enabled() -> bool {
    std::env::var("FOREST_TEST_LONG").is_ok_and(|v| v == "1")
}

fn log(kind: &str, reason: &str) {
    let test = current_test();
    let line = format!("{kind}\t{test}\t{}\n", reason.replace(['\n', '\t'], " "));
    eprint!("NOT RUN {line}");
    if let Some(path) = std::env::var_os(SKIP_LOG_VAR).filter(|p| !p.is_empty()) {
        // One write of one short line with O_APPEND: lines from concurrent
        // test binaries do not interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_thread_name_is_the_test_name() {
        assert!(super::current_test().ends_with("the_thread_name_is_the_test_name"));
    }
}
