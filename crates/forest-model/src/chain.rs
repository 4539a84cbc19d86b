//! How an error and its causes print as one line: every error displays
//! its own message only and leaves its cause to `#[source]`, so the line
//! is the messages of the chain, `: `-joined.
//!
//! In: an error. Out: a string. Touches nothing.

/// `e` and its causes, `: `-joined (a per-file report line, a log field,
/// the CLI's stderr, an MCP error message). Empty messages (a transparent
/// wrapper's own) are left out.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !text.is_empty() {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    #[derive(Debug, thiserror::Error)]
    #[error("read {path}")]
    struct Read {
        path: String,
        #[source]
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("sync failed")]
    struct Sync(#[source] Read);

    #[test]
    fn every_message_of_the_chain_prints_once_in_order() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = Sync(Read { path: "/x".into(), source: io });
        assert_eq!(super::error_chain(&e), "sync failed: read /x: no such file");
        assert_eq!(super::error_chain(&e.0), "read /x: no such file");
    }
}
