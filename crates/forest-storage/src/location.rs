//! `s3://bucket/prefix` parsing, remote-URI detection and decoding of keys
//! from `encoding-type=url` listings.

use crate::StorageError;

/// A bucket plus a key prefix (`s3://bucket/prefix/`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct S3Location {
    /// Bucket name (never empty).
    pub bucket: String,
    /// Key prefix: empty, or ending with `/`.
    pub prefix: String,
}

impl S3Location {
    /// Parse `s3://bucket`, `s3://bucket/` or `s3://bucket/some/prefix[/]`.
    /// A non-empty prefix is normalised to end with `/` so that listing
    /// `s3://b/docs` never picks up `docs-old/…`.
    pub fn parse(uri: &str) -> Result<Self, StorageError> {
        let bad = |reason: &str| StorageError::InvalidUri { uri: uri.to_string(), reason: reason.to_string() };
        let rest = match uri.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("s3") => rest,
            Some((scheme, _)) => return Err(bad(&format!("expected an s3:// URI, got {scheme}://"))),
            None => return Err(bad("expected an s3:// URI")),
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("empty bucket name"));
        }
        let mut prefix = prefix.to_string();
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        Ok(S3Location { bucket: bucket.to_string(), prefix })
    }

    /// Back to `s3://bucket/prefix`.
    pub fn uri(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.prefix)
    }
}

impl std::fmt::Display for S3Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.prefix)
    }
}

/// Dialect §8 `is_remote`: the payload matches `^[a-z][a-z0-9+.-]*://`.
pub fn is_remote(payload: &str) -> bool {
    scheme_of(payload).is_some()
}

/// The scheme of a remote payload (`s3` for `s3://…`), per [`is_remote`].
pub(crate) fn scheme_of(payload: &str) -> Option<&str> {
    let (scheme, _) = payload.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let ok = first.is_ascii_lowercase()
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '.' | '-'));
    ok.then_some(scheme)
}

/// Decode a key from a `ListObjectsV2` answer made with `encoding-type=url`
/// into raw bytes: `%XX` is a byte and `+` is a space (AWS encodes spaces as
/// `+` and a literal `+` as `%2B`, like HTML forms). A malformed `%` is kept
/// literally. The bytes need not be UTF-8.
pub fn decode_list_key(encoded: &str) -> Vec<u8> {
    let b = encoded.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex_val(b[i + 1]), hex_val(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    out
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_locations() {
        let l = S3Location::parse("s3://bucket/prefix").unwrap();
        assert_eq!((l.bucket.as_str(), l.prefix.as_str()), ("bucket", "prefix/"));
        let l = S3Location::parse("s3://bucket/a/b/").unwrap();
        assert_eq!(l.prefix, "a/b/");
        assert_eq!(S3Location::parse("s3://bucket").unwrap().prefix, "");
        assert_eq!(S3Location::parse("s3://bucket/").unwrap().prefix, "");
        assert_eq!(S3Location::parse("s3://b/x").unwrap().uri(), "s3://b/x/");
        for bad in ["s3://", "s3:///x", "http://b/x", "bucket/x", ""] {
            let e = S3Location::parse(bad).unwrap_err();
            assert!(matches!(e, StorageError::InvalidUri { .. }), "{bad}: {e}");
        }
        assert!(S3Location::parse("s3:///x").unwrap_err().to_string().contains("empty bucket"));
        assert!(S3Location::parse("gs://b/x").unwrap_err().to_string().contains("gs://"));
    }

    #[test]
    fn remote_detection() {
        for yes in ["s3://b/k", "file:///x", "a+b.c-d://x", "x1://"] {
            assert!(is_remote(yes), "{yes}");
        }
        for no in ["data.db", "_assets/x.pdf", "S3://b/k", "1s://x", "://x", "/abs/path", "c:\\x"] {
            assert!(!is_remote(no), "{no}");
        }
        assert_eq!(scheme_of("gs://b/k"), Some("gs"));
    }

    #[test]
    fn decodes_list_keys() {
        assert_eq!(decode_list_key("a%20b+c%2Bd"), b"a b c+d");
        assert_eq!(decode_list_key("dir/f%C3%A9.txt"), "dir/fé.txt".as_bytes());
        assert_eq!(decode_list_key("bad%ff%fe"), b"bad\xff\xfe");
        assert_eq!(decode_list_key("50%"), b"50%");
        assert_eq!(decode_list_key("50%4"), b"50%4");
        assert_eq!(decode_list_key("%zz%41"), b"%zzA");
        assert_eq!(decode_list_key("%0A%01"), b"\n\x01");
    }
}
