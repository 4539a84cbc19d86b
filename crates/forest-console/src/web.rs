//! Responses and their security headers, the templates and the static
//! files (compiled in: no build step, no CDN, works offline).

use std::convert::Infallible;

use bytes::Bytes;
use forest_vine::http::Body;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::Value;

use crate::error::ConsoleError;

/// Scripts, styles, images and fetches from the console itself only; no
/// inline script or style, no framing, forms post to the console.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("../templates/base.html")),
    ("macros.html", include_str!("../templates/macros.html")),
    ("login.html", include_str!("../templates/login.html")),
    ("error.html", include_str!("../templates/error.html")),
    ("search.html", include_str!("../templates/search.html")),
    ("browse.html", include_str!("../templates/browse.html")),
    ("node.html", include_str!("../templates/node.html")),
    ("history.html", include_str!("../templates/history.html")),
    ("health.html", include_str!("../templates/health.html")),
    ("bars.html", include_str!("../templates/bars.html")),
];

/// The template environment (HTML auto-escaped: every `.html` template).
pub fn templates() -> Result<minijinja::Environment<'static>, ConsoleError> {
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    for (name, src) in TEMPLATES {
        env.add_template(name, src)?;
    }
    Ok(env)
}

fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).map_err(|e: Infallible| match e {}).boxed()
}

fn with_headers(status: StatusCode, ctype: &str) -> http::response::Builder {
    Response::builder()
        .status(status)
        .header("content-type", ctype)
        .header("content-security-policy", CSP)
        .header("x-content-type-options", "nosniff")
        .header("x-frame-options", "DENY")
        // Not no-referrer: with it, Chromium sends `Origin: null` on a same-origin form POST.
        .header("referrer-policy", "same-origin")
        .header("cache-control", "no-store")
}

fn build(b: http::response::Builder, body: Body) -> Response<Body> {
    b.body(body).unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

/// An HTML page.
pub fn html(status: StatusCode, page: String) -> Response<Body> {
    build(with_headers(status, "text/html; charset=utf-8"), full(page))
}

/// A JSON answer.
pub fn json(status: StatusCode, v: &Value) -> Response<Body> {
    build(with_headers(status, "application/json"), full(v.to_string()))
}

/// A 303 to `to`, optionally setting a cookie.
pub fn redirect(to: &str, cookie: Option<String>) -> Response<Body> {
    let mut b = with_headers(StatusCode::SEE_OTHER, "text/plain; charset=utf-8").header("location", to);
    if let Some(c) = cookie {
        b = b.header("set-cookie", c);
    }
    build(b, full(Bytes::new()))
}

/// One of the compiled-in static files.
pub fn static_file(name: &str) -> Response<Body> {
    let (ctype, bytes): (&str, &'static [u8]) = match name {
        "console.css" => ("text/css; charset=utf-8", include_bytes!("../static/console.css")),
        "console.js" => ("text/javascript; charset=utf-8", include_bytes!("../static/console.js")),
        _ => return build(with_headers(StatusCode::NOT_FOUND, "text/plain"), full("not found")),
    };
    let mut r = build(with_headers(StatusCode::OK, ctype), full(Bytes::from_static(bytes)));
    r.headers_mut().insert("cache-control", http::HeaderValue::from_static("max-age=300"));
    r
}

/// A state-changing POST must name this console as its Origin (the
/// guard already refused a foreign one; a missing one is refused here)
/// and must not be a cross-site fetch.
pub fn same_origin_post<B>(req: &Request<B>) -> Result<(), ConsoleError> {
    let h = req.headers();
    if h.get(http::header::ORIGIN).is_none() {
        return Err(ConsoleError::CrossSite);
    }
    if h.get("sec-fetch-site").and_then(|v| v.to_str().ok()).is_some_and(|s| s == "cross-site") {
        return Err(ConsoleError::CrossSite);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_escape_hostile_text() {
        let env = templates().unwrap();
        let evil = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";
        let html = env
            .get_template("search.html")
            .unwrap()
            .render(json!({"q": evil, "who": "t", "results": [{"id": evil, "href": "/ui/node/x", "title": evil,
                "summary": evil, "type": "note", "trail": [{"id": evil, "href": "/ui/node/y"}]}]}))
            .unwrap();
        assert!(!html.contains("<script>alert") && !html.contains("<img src=x"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"), "{html}");
        assert!(!html.contains(" style="), "no inline style (CSP)");
        assert!(!html.contains("<script>") || html.matches("<script").count() == 1, "one external script");
    }

    #[test]
    fn every_response_carries_the_policy() {
        let r = html(StatusCode::OK, "x".into());
        assert_eq!(r.headers()["content-security-policy"], CSP);
        assert!(!CSP.contains("unsafe-inline"));
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
        let r = redirect("/ui/login", Some("c=1".into()));
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert_eq!(r.headers()["location"], "/ui/login");
        assert_eq!(static_file("../Cargo.toml").status(), StatusCode::NOT_FOUND);
        assert_eq!(static_file("console.js").status(), StatusCode::OK);
    }

    #[test]
    fn posts_need_an_origin() {
        let req = |o: Option<&str>, site: Option<&str>| {
            let mut b = Request::builder().method("POST").uri("/ui/login");
            if let Some(o) = o {
                b = b.header("origin", o);
            }
            if let Some(s) = site {
                b = b.header("sec-fetch-site", s);
            }
            b.body(()).unwrap()
        };
        assert!(same_origin_post(&req(Some("http://127.0.0.1:8000"), Some("same-origin"))).is_ok());
        assert!(matches!(same_origin_post(&req(None, None)), Err(ConsoleError::CrossSite)));
        assert!(same_origin_post(&req(Some("http://127.0.0.1:8000"), Some("cross-site"))).is_err());
    }
}
