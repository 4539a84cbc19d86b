//! Browser sessions: a token entered once on the login form becomes a
//! random 256-bit session id, kept server-side beside the token's
//! [`Access`] and sent back only as an `HttpOnly; SameSite=Strict` cookie.
//! The raw token is never stored or echoed; a session ends on logout, at
//! its age limit or when the server stops.
//!
//! In: login verdicts and cookies. Out: the caller's [`Access`]. Touches
//! nothing on disk.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use forest_vine::access::Access;

/// The cookie's name.
pub const COOKIE: &str = "forest_console";

/// Sessions kept at most (the oldest goes first past it).
pub const MAX_SESSIONS: usize = 4096;

/// How long a session lives.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);

struct Entry {
    access: Access,
    born: Instant,
}

/// The live sessions.
#[derive(Default)]
pub struct Sessions(Mutex<HashMap<String, Entry>>);

fn new_id() -> Option<String> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).ok()?;
    Some(b.iter().map(|x| format!("{x:02x}")).collect())
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Open a session for `access`; its id (`None` when the OS gives no
    /// randomness).
    pub fn open(&self, access: Access, now: Instant) -> Option<String> {
        let id = new_id()?;
        let mut m = self.lock();
        m.retain(|_, e| now.duration_since(e.born) < SESSION_TTL);
        while m.len() >= MAX_SESSIONS {
            let Some(oldest) = m.iter().min_by_key(|(_, e)| e.born).map(|(k, _)| k.clone()) else { break };
            m.remove(&oldest);
        }
        m.insert(id.clone(), Entry { access, born: now });
        Some(id)
    }

    /// The access of a live session.
    pub fn get(&self, id: &str, now: Instant) -> Option<Access> {
        let mut m = self.lock();
        match m.get(id) {
            Some(e) if now.duration_since(e.born) < SESSION_TTL => Some(e.access.clone()),
            Some(_) => {
                m.remove(id);
                None
            }
            None => None,
        }
    }

    /// End a session.
    pub fn close(&self, id: &str) {
        self.lock().remove(id);
    }
}

/// The session id in a `Cookie` header.
pub fn cookie_value(header: &str) -> Option<&str> {
    header.split(';').find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == COOKIE && !v.is_empty() && v.len() <= 128).then_some(v)
    })
}

/// The `Set-Cookie` of a new session.
pub fn set_cookie(id: &str, secure: bool) -> String {
    let s = if secure { "; Secure" } else { "" };
    format!("{COOKIE}={id}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={}{s}", SESSION_TTL.as_secs())
}

/// The `Set-Cookie` that ends a session in the browser.
pub fn clear_cookie() -> String {
    format!("{COOKIE}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_open_expire_and_close() {
        let s = Sessions::default();
        let t0 = Instant::now();
        let a = Access::new("eng", false, &["engineering".into()]);
        let id = s.open(a.clone(), t0).unwrap();
        assert_eq!(id.len(), 64);
        assert_eq!(s.get(&id, t0), Some(a.clone()));
        assert_eq!(s.get("not-a-session", t0), None);
        assert_eq!(s.get(&id, t0 + SESSION_TTL), None, "expired");
        let id2 = s.open(a, t0).unwrap();
        assert_ne!(id, id2);
        s.close(&id2);
        assert_eq!(s.get(&id2, t0), None);
    }

    #[test]
    fn cookies_parse_and_carry_the_flags() {
        assert_eq!(cookie_value("a=b; forest_console=abc; c=d"), Some("abc"));
        assert_eq!(cookie_value("forest_console="), None);
        assert_eq!(cookie_value("other=1"), None);
        let c = set_cookie("abc", false);
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Strict") && c.contains("Path=/ui"), "{c}");
        assert!(set_cookie("abc", true).ends_with("; Secure"));
        assert!(clear_cookie().contains("Max-Age=0"));
    }
}
