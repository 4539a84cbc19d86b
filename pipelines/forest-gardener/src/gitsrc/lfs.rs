//! Git LFS pointer files. A repository using LFS commits a small text file
//! (the pointer) in place of the content, which lives on the LFS server:
//!
//! ```text
//! version https://git-lfs.github.com/spec/v1
//! oid sha256:4d7a2146…
//! size 12345
//! ```
//!
//! The pointer is not the document: a file whose blob is a pointer becomes
//! a BONE reference (a stub node whose `payload` is the file at the source
//! and whose `payload_hash` is the LFS object's sha256), never a converted
//! pointer text. The content is not fetched from the LFS server.

use forest_convert::{Conversion, SourceMeta};

/// Pointer files are smaller than this (the LFS specification).
pub const POINTER_MAX: u64 = 1024;

/// The stub reason of an LFS file's node.
pub const STUB: &str = "git-lfs";

/// A parsed LFS pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// sha256 of the content, lowercase hex.
    pub sha256: String,
    /// Size of the content in bytes.
    pub size: u64,
}

/// The first line of a pointer (the current and the pre-release name).
const VERSIONS: [&str; 2] = ["version https://git-lfs.github.com/spec/v1", "version https://hawser.github.com/spec/v1"];

/// Parse `bytes` as a pointer: UTF-8 under [`POINTER_MAX`], the version
/// line first, then `key value` lines with an `oid sha256:<64 hex>` and a
/// `size`. Anything else is not a pointer (None), so an ordinary small
/// file that merely mentions LFS is converted as usual.
pub fn parse(bytes: &[u8]) -> Option<Pointer> {
    if bytes.len() as u64 >= POINTER_MAX {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    if !VERSIONS.contains(&lines.next()?.trim_end()) {
        return None;
    }
    let (mut sha256, mut size) = (None, None);
    for line in lines.filter(|l| !l.is_empty()) {
        let (key, value) = line.split_once(' ')?;
        match key {
            "oid" => {
                let hex = value.strip_prefix("sha256:")?;
                if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
                    return None;
                }
                sha256 = Some(hex.to_string());
            }
            "size" => size = Some(value.parse::<u64>().ok()?),
            k if k.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-') => {}
            _ => return None,
        }
    }
    Some(Pointer { sha256: sha256?, size: size? })
}

/// The stub conversion of an LFS file titled `title`: a body saying where
/// the content is.
pub fn stub(title: String, p: &Pointer) -> Conversion {
    let body = format!(
        "# {title}\n\nStored in Git LFS: the repository holds a pointer to {} bytes (sha256 {}); \
         the content is on the repository's LFS server and was not read.\n",
        p.size, p.sha256
    );
    let meta = SourceMeta { stub: Some(STUB.into()), ..SourceMeta::default() };
    Conversion::Markdown { title, body, meta }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OID: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

    #[test]
    fn pointers_and_look_alikes() {
        let good = format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 12345\n");
        assert_eq!(parse(good.as_bytes()), Some(Pointer { sha256: OID.into(), size: 12345 }));
        let ext =
            format!("version https://git-lfs.github.com/spec/v1\next-0-foo sha256:{OID}\noid sha256:{OID}\nsize 1\n");
        assert_eq!(parse(ext.as_bytes()).map(|p| p.size), Some(1));
        let old = format!("version https://hawser.github.com/spec/v1\noid sha256:{OID}\nsize 7\n");
        assert!(parse(old.as_bytes()).is_some());
        for bad in [
            "version https://git-lfs.github.com/spec/v1\nsize 12\n".to_string(), // no oid
            format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\n"), // no size
            format!("version https://git-lfs.github.com/spec/v1\noid md5:{OID}\nsize 1\n"),
            format!("version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 1\n", OID.to_uppercase()),
            format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize -1\n"),
            format!("# Notes on LFS\n\nversion https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 1\n"),
            format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 1\nSome prose here.\n"),
        ] {
            assert_eq!(parse(bad.as_bytes()), None, "{bad}");
        }
        let big = format!("{good}{}", "x ".repeat(600));
        assert_eq!(parse(big.as_bytes()), None);
        assert_eq!(parse(&[0xff, 0xfe, 0x00]), None);
    }

    #[test]
    fn the_stub_names_the_content_not_the_pointer() {
        let Conversion::Markdown { title, body, meta } =
            stub("launch video".into(), &Pointer { sha256: OID.into(), size: 9 })
        else {
            panic!("a Markdown stub")
        };
        assert_eq!(title, "launch video");
        assert!(body.contains("Stored in Git LFS") && body.contains(OID) && !body.contains("version https"));
        assert_eq!(meta.stub.as_deref(), Some(STUB));
    }
}
