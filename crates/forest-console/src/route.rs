//! Which page a request asks for: the path under `/ui/` decoded and judged
//! before anything is read. Pure; every hostile path (`..`, `.`, encoded
//! slashes or dots, NUL and control bytes, backslashes, over-long ids) is
//! one [`RouteError`], never a file name.
//!
//! In: the request's method, path and query. Out: a [`Route`]. Touches nothing.

use percent_encoding::percent_decode_str;

use crate::error::ConsoleError;

/// The prefix every console path starts with.
pub const PREFIX: &str = "/ui";

/// Longest node id a URL may name (bytes, decoded).
pub const MAX_ID: usize = 512;

/// Longest search query (characters, decoded).
pub const MAX_QUERY: usize = 256;

/// Longest query string of a request (bytes, encoded).
pub const MAX_QUERY_STRING: usize = 2048;

/// One console page or action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/ui/` and `/ui`: to the search page.
    Home,
    /// `GET /ui/login`.
    LoginForm,
    /// `POST /ui/login`.
    Login,
    /// `POST /ui/logout`.
    Logout,
    /// `GET /ui/search?q=`.
    Search { q: String },
    /// `GET /ui/api/locate?q=` (search as you type: JSON).
    SearchJson { q: String },
    /// `GET /ui/browse` (the master or the token's branches) and
    /// `/ui/browse/ID?after=CURSOR`.
    Browse { id: Option<String>, after: Option<String> },
    /// `GET /ui/node/ID`.
    Node { id: String },
    /// `GET /ui/history/ID` (the file's git history, on a page of its own
    /// so the node page never waits on git).
    History { id: String },
    /// `GET /ui/health`.
    Health,
    /// `GET /ui/static/NAME`.
    Static { name: String },
}

/// Decode one path segment; refuse what could name something else.
fn segment(raw: &str) -> Result<String, ConsoleError> {
    let s = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| ConsoleError::BadPath("the path is not UTF-8".into()))?
        .into_owned();
    if s.is_empty() || s == "." || s == ".." {
        return Err(ConsoleError::BadPath("empty, '.' or '..' path segment".into()));
    }
    if s.contains(['/', '\\']) || s.chars().any(char::is_control) {
        return Err(ConsoleError::BadPath("a path segment holds a slash, backslash or control character".into()));
    }
    Ok(s)
}

/// The node id of the path segments after `/ui/node/` or `/ui/browse/`.
fn id_of(rest: &[&str]) -> Result<String, ConsoleError> {
    let segs = rest.iter().map(|r| segment(r)).collect::<Result<Vec<_>, _>>()?;
    let id = segs.join("/");
    if id.len() > MAX_ID {
        return Err(ConsoleError::TooLong(format!("a node id is at most {MAX_ID} bytes")));
    }
    Ok(id.strip_suffix(".md").unwrap_or(&id).to_string())
}

/// One query parameter, decoded (`+` is a space), the first of its name.
pub fn param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == name).then(|| percent_decode_str(&v.replace('+', " ")).decode_utf8_lossy().into_owned())
    })
}

fn query_text(query: &str) -> Result<String, ConsoleError> {
    let q = param(query, "q").unwrap_or_default();
    if q.chars().count() > MAX_QUERY {
        return Err(ConsoleError::TooLong(format!("a search is at most {MAX_QUERY} characters")));
    }
    if q.chars().any(|c| c.is_control() && c != '\t') {
        return Err(ConsoleError::BadPath("the search holds control characters".into()));
    }
    Ok(q.trim().to_string())
}

/// The route of a request, or why it is refused.
pub fn route(method: &http::Method, path: &str, query: Option<&str>) -> Result<Route, ConsoleError> {
    let query = query.unwrap_or_default();
    if query.len() > MAX_QUERY_STRING {
        return Err(ConsoleError::TooLong(format!("a query string is at most {MAX_QUERY_STRING} bytes")));
    }
    let Some(rest) = path.strip_prefix(PREFIX) else { return Err(ConsoleError::NotFound) };
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let parts: Vec<&str> = if rest.is_empty() { vec![] } else { rest.split('/').collect() };
    let get = method == http::Method::GET || method == http::Method::HEAD;
    let post = method == http::Method::POST;
    let r = match (parts.as_slice(), get, post) {
        ([], true, _) => Route::Home,
        (["login"], true, _) => Route::LoginForm,
        (["login"], _, true) => Route::Login,
        (["logout"], _, true) => Route::Logout,
        (["search"], true, _) => Route::Search { q: query_text(query)? },
        (["api", "locate"], true, _) => Route::SearchJson { q: query_text(query)? },
        (["health"], true, _) => Route::Health,
        (["browse"], true, _) => Route::Browse { id: None, after: None },
        (["browse", rest @ ..], true, _) => {
            let after = param(query, "after").filter(|a| !a.is_empty());
            if after.as_ref().is_some_and(|a| a.len() > MAX_ID || a.chars().any(char::is_control)) {
                return Err(ConsoleError::TooLong(format!("a cursor is at most {MAX_ID} bytes")));
            }
            Route::Browse { id: Some(id_of(rest)?), after }
        }
        (["node", rest @ ..], true, _) if !rest.is_empty() => Route::Node { id: id_of(rest)? },
        (["history", rest @ ..], true, _) if !rest.is_empty() => Route::History { id: id_of(rest)? },
        (["static", name], true, _) => Route::Static { name: segment(name)? },
        (_, false, false) => return Err(ConsoleError::Method),
        _ => return Err(ConsoleError::NotFound),
    };
    Ok(r)
}

/// The URL path of a node page (each segment percent-encoded).
pub fn node_href(kind: &str, id: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
    const SEG: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'%').add(b'<').add(b'>').add(b'?').add(b'`');
    const SEG2: &AsciiSet = &SEG.add(b'{').add(b'}').add(b'\\').add(b'^').add(b'|').add(b'[').add(b']').add(b'\'');
    let enc: Vec<String> = id.split('/').map(|s| utf8_percent_encode(s, SEG2).to_string()).collect();
    format!("{PREFIX}/{kind}/{}", enc.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;

    fn get(p: &str, q: Option<&str>) -> Result<Route, ConsoleError> {
        route(&Method::GET, p, q)
    }

    #[test]
    fn pages_route() {
        assert_eq!(get("/ui", None).unwrap(), Route::Home);
        assert_eq!(get("/ui/", None).unwrap(), Route::Home);
        assert_eq!(get("/ui/search", Some("q=build+pipeline")).unwrap(), Route::Search { q: "build pipeline".into() });
        assert_eq!(get("/ui/node/engineering/build", None).unwrap(), Route::Node { id: "engineering/build".into() });
        assert_eq!(
            get("/ui/node/people/ana%20castro.md", None).unwrap(),
            Route::Node { id: "people/ana castro".into() }
        );
        assert_eq!(
            get("/ui/browse/people/_index", Some("after=people%2Fb")).unwrap(),
            Route::Browse { id: Some("people/_index".into()), after: Some("people/b".into()) }
        );
        assert_eq!(get("/ui/history/a/b", None).unwrap(), Route::History { id: "a/b".into() });
        assert_eq!(route(&Method::POST, "/ui/login", None).unwrap(), Route::Login);
        assert!(matches!(route(&Method::DELETE, "/ui/login", None), Err(ConsoleError::Method)));
        assert!(matches!(get("/ui/nope", None), Err(ConsoleError::NotFound)));
    }

    #[test]
    fn traversal_and_oversize_are_refused() {
        for p in [
            "/ui/node/../../etc/passwd",
            "/ui/node/%2e%2e/%2e%2e/etc/passwd",
            "/ui/node/engineering%2f..%2f..%2fetc%2fpasswd",
            "/ui/node/a/%2E%2E/b",
            "/ui/node/a/./b",
            "/ui/node/a//b",
            "/ui/node/a%00b",
            "/ui/node/a%5c..%5cb",
            "/ui/static/..",
            "/ui/static/%2e%2e%2fCargo.toml",
            "/ui/node/%ff%fe",
        ] {
            assert!(matches!(get(p, None), Err(ConsoleError::BadPath(_))), "{p}");
        }
        let long = format!("/ui/node/{}", "a".repeat(MAX_ID + 1));
        assert!(matches!(get(&long, None), Err(ConsoleError::TooLong(_))));
        let q = format!("q={}", "x".repeat(MAX_QUERY + 1));
        assert!(matches!(get("/ui/search", Some(&q)), Err(ConsoleError::TooLong(_))));
        let huge = format!("q=x&pad={}", "y".repeat(MAX_QUERY_STRING));
        assert!(matches!(get("/ui/search", Some(&huge)), Err(ConsoleError::TooLong(_))));
    }

    #[test]
    fn hrefs_round_trip() {
        for id in ["engineering/build", "people/ana castro", "x/a#b?c%d", "hr/<script>"] {
            let href = node_href("node", id);
            let (path, q) = href.split_once('?').map_or((href.as_str(), None), |(p, q)| (p, Some(q)));
            assert!(q.is_none(), "{href}");
            assert_eq!(get(path, None).unwrap(), Route::Node { id: id.into() }, "{href}");
        }
    }
}
