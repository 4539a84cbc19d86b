//! The console's errors: each one page (or JSON envelope) with a status
//! and a stable code.

use forest_model::ErrorCode;
use forest_vine::VineError;

/// Why a console request failed.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// No such page.
    #[error("no such page")]
    NotFound,
    /// A method the page does not take.
    #[error("method not allowed")]
    Method,
    /// A path or parameter that could name something else.
    #[error("refused path: {0}")]
    BadPath(String),
    /// A parameter over its cap.
    #[error("too long: {0}")]
    TooLong(String),
    /// No session, or an expired one.
    #[error("sign in with a token first")]
    Unauthenticated,
    /// A bad token on the login form.
    #[error("unknown token")]
    BadToken,
    /// Too many failed logins from this address.
    #[error("too many failed sign-ins from this address; retry in {0} s")]
    Limited(u64),
    /// A POST without this server's Origin (CSRF).
    #[error("a form must come from this console (Origin missing or foreign)")]
    CrossSite,
    /// The engine's answer (not found, out of scope, busy, timeout...): its
    /// message is this error's message (a Vine error has no cause of its
    /// own, so it is not a `#[source]` printed twice).
    #[error("{}", .0.message)]
    Vine(VineError),
    /// A template failed (a bug).
    #[error("page could not be rendered")]
    Render(#[source] minijinja::Error),
}

impl ConsoleError {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ConsoleError::NotFound => ErrorCode::NotFound,
            ConsoleError::Method | ConsoleError::BadPath(_) | ConsoleError::TooLong(_) => ErrorCode::Schema,
            ConsoleError::Unauthenticated | ConsoleError::BadToken => ErrorCode::Unauthorized,
            ConsoleError::Limited(_) => ErrorCode::Busy,
            ConsoleError::CrossSite => ErrorCode::Forbidden,
            ConsoleError::Vine(e) => match e.code {
                c @ (ErrorCode::NotFound
                | ErrorCode::Forbidden
                | ErrorCode::Busy
                | ErrorCode::Timeout
                | ErrorCode::Schema) => c,
                _ => ErrorCode::Internal,
            },
            ConsoleError::Render(_) => ErrorCode::Internal,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> http::StatusCode {
        use http::StatusCode as S;
        match (self, self.code()) {
            (ConsoleError::Method, _) => S::METHOD_NOT_ALLOWED,
            (ConsoleError::TooLong(_), _) => S::URI_TOO_LONG,
            (_, ErrorCode::NotFound) => S::NOT_FOUND,
            (_, ErrorCode::Unauthorized) => S::UNAUTHORIZED,
            (_, ErrorCode::Forbidden) => S::FORBIDDEN,
            (_, ErrorCode::Busy) => S::TOO_MANY_REQUESTS,
            (_, ErrorCode::Timeout) => S::GATEWAY_TIMEOUT,
            (_, ErrorCode::Schema) => S::BAD_REQUEST,
            _ => S::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<VineError> for ConsoleError {
    fn from(e: VineError) -> Self {
        ConsoleError::Vine(e)
    }
}

impl From<minijinja::Error> for ConsoleError {
    fn from(e: minijinja::Error) -> Self {
        ConsoleError::Render(e)
    }
}
