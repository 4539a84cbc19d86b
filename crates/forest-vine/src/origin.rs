//! Exact `Origin` matching (pure), checked by the HTTP guard before rmcp's
//! own list: an Origin is `scheme://host[:port]` and nothing else, its host
//! equal to an allowed one, its port equal (or the entry's `:*`). So
//! `http://localhost:8000.evil.example` (whose "port" is not a number) is
//! refused, where a parser that drops an unreadable port would let it pass
//! as `localhost`.

/// A parsed origin: lowercase scheme and host, port (`None`: the scheme's
/// default).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

/// Parse `scheme://host[:port]` strictly; `None` for anything else.
fn parse(s: &str, allow_star: bool) -> Option<(Origin, bool)> {
    let (scheme, rest) = s.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (h, tail) = v6.split_once(']')?;
        (format!("[{}]", h.to_ascii_lowercase()), tail)
    } else {
        match rest.find(':') {
            Some(i) => (rest[..i].to_ascii_lowercase(), &rest[i..]),
            None => (rest.to_ascii_lowercase(), ""),
        }
    };
    let host_ok = !host.is_empty()
        && host.chars().all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c))
        && (host.starts_with('[') || !host.contains(':'));
    if !host_ok {
        return None;
    }
    let (port, star) = match port {
        "" => (None, false),
        ":*" if allow_star => (None, true),
        p => {
            let digits = p.strip_prefix(':')?;
            if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (Some(digits.parse::<u16>().ok()?), false)
        }
    };
    Some((Origin { scheme, host, port }, star))
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" {
        443
    } else {
        80
    }
}

/// True when the `Origin` header value `origin` matches one of `allowed`
/// (`http://localhost:*`, `https://app.example:443`, `https://app.example`)
/// exactly: scheme, host and port.
pub fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let Some((o, _)) = parse(origin, false) else { return false };
    let port = o.port.unwrap_or_else(|| default_port(&o.scheme));
    allowed.iter().filter_map(|a| parse(a, true)).any(|(a, star)| {
        a.scheme == o.scheme && a.host == o.host && (star || a.port.unwrap_or_else(|| default_port(&a.scheme)) == port)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_match_exactly() {
        let allowed: Vec<String> =
            ["http://localhost:*", "http://[::1]:*", "https://app.example:443", "http://intranet"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        for ok in [
            "http://localhost:8000",
            "http://LOCALHOST:1",
            "http://localhost",
            "http://[::1]:9",
            "https://app.example",
            "https://app.example:443",
            "http://intranet:80",
        ] {
            assert!(origin_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "http://localhost:8000.evil.example",
            "http://localhost.evil.example",
            "http://localhost:8000/",
            "http://localhost:8000@evil.example",
            "http://evil.example#localhost",
            "https://localhost:8000",
            "https://app.example:8443",
            "http://app.example",
            "http://intranet:8080",
            "http://localhost:99999",
            "http://localhost:",
            "null",
            "localhost:8000",
            "",
        ] {
            assert!(!origin_allowed(bad, &allowed), "{bad}");
        }
    }
}
