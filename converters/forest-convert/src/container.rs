//! Containers: single-file compression (gzip, bzip2, xz) and archive listings.
//!
//! In: a `.gz/.bz2/.xz` file, or a `.zip/.tar/.tgz/.tar.*` archive. Out: the
//! decompressed member as a temporary file the registry converts by its inner
//! name (`changelog.Debian.gz` → `changelog.Debian`), or a Markdown node that
//! lists the archive's members (never expanded). Inflation is bounded by
//! `Limits::max_unzipped_bytes` and `Limits::max_input_bytes`; only the
//! caller's temporary directory is written.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use crate::zipguard;
use forest_model::slug::title_from_stem;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Compression of a single-file container, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    Gzip,
    Bzip2,
    Xz,
}

impl Codec {
    /// Codec of a file name's last extension (lowercase, with dot).
    pub(crate) fn of_ext(ext: &str) -> Option<Codec> {
        match ext {
            ".gz" => Some(Codec::Gzip),
            ".bz2" => Some(Codec::Bzip2),
            ".xz" => Some(Codec::Xz),
            _ => None,
        }
    }

    /// Display name used in converter ids.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "Gzip",
            Codec::Bzip2 => "Bzip2",
            Codec::Xz => "Xz",
        }
    }
}

/// True for names the archive lister claims (`.tar.gz` is an archive, not text).
pub(crate) fn is_tarball(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tbz2", ".txz"].iter().any(|s| n.ends_with(s))
}

fn reader<'a>(codec: Codec, input: Box<dyn Read + 'a>) -> Box<dyn Read + 'a> {
    match codec {
        Codec::Gzip => Box::new(flate2::read::MultiGzDecoder::new(input)),
        Codec::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(input)),
        Codec::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(input)),
    }
}

/// Inflate `path` into `dir/<inner name>`; errors when it inflates past the limits.
pub(crate) fn decompress(path: &Path, codec: Codec, dir: &Path, limits: &Limits) -> Result<PathBuf, ConvertError> {
    let name = file_name(path);
    let inner = stem(path);
    let inner = if inner.is_empty() || inner.starts_with('.') { format!("x{inner}") } else { inner };
    let out_path = dir.join(&inner);
    let cap = limits.max_unzipped_bytes.min(limits.max_input_bytes);
    let file = std::fs::File::open(path)?;
    let mut r = reader(codec, Box::new(file)).take(cap.saturating_add(1));
    let mut out = std::fs::File::create(&out_path)?;
    let n = std::io::copy(&mut r, &mut out)
        .map_err(|e| schema(format!("not a readable {} file: {name}: {e}", codec.name().to_lowercase())))?;
    if n > cap {
        return Err(ConvertError::OverLimit(format!("{name} inflates beyond the limit of {cap} bytes")));
    }
    Ok(out_path)
}

/// Lists the members of zip and tar archives (compressed tarballs too).
pub(crate) struct Archive;

/// Most members written into a listing body; the rest are counted.
const MAX_LISTED: usize = 500;

fn render_listing(title: &str, kind: &str, members: &[(String, u64)], total: usize) -> String {
    let bytes: u64 = members.iter().map(|m| m.1).sum();
    let mut body = format!("# {title}\n\n{kind} archive with {total} member(s), {bytes} bytes uncompressed.\n\n");
    for (n, size) in members.iter().take(MAX_LISTED) {
        body.push_str(&format!("- `{}` ({size} bytes)\n", n.replace('`', "'")));
    }
    if total > MAX_LISTED {
        body.push_str(&format!("- … and {} more\n", total - MAX_LISTED));
    }
    body
}

fn tar_members(r: impl Read, limits: &Limits) -> Result<(Vec<(String, u64)>, usize), ConvertError> {
    let mut ar = tar::Archive::new(r);
    let mut members = Vec::new();
    let mut total = 0usize;
    let entries = ar.entries().map_err(|e| schema(format!("not a readable tar archive: {e}")))?;
    for e in entries {
        let e = e.map_err(|e| schema(format!("damaged tar archive: {e}")))?;
        total += 1;
        if total > limits.max_zip_entries {
            return Err(ConvertError::OverLimit(format!("archive of more than {} members", limits.max_zip_entries)));
        }
        if e.header().entry_type().is_dir() {
            continue;
        }
        let name = e.path().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        members.push((name, e.size()));
    }
    let n = members.len();
    Ok((members, n))
}

impl Converter for Archive {
    fn name(&self) -> &str {
        "Archive"
    }
    fn extensions(&self) -> Vec<String> {
        [".zip", ".tar", ".tgz", ".tbz2", ".txz", ".jar"].map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, limits: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let lower = name.to_ascii_lowercase();
        let base = [".tar.gz", ".tar.bz2", ".tar.xz"]
            .iter()
            .find_map(|s| lower.strip_suffix(s).map(|b| name[..b.len()].to_string()))
            .unwrap_or_else(|| stem(path));
        let title = title_from_stem(&base);
        let bytes = std::fs::read(path)?;
        let (kind, members, total) = if bytes.starts_with(b"PK") {
            let mut zip = zipguard::open_checked(&bytes, limits)?;
            let mut m = Vec::new();
            for i in 0..zip.len() {
                let e = zip.by_index_raw(i).map_err(|e| ConvertError::Zip(format!("damaged entry {i}: {e}")))?;
                if !e.is_dir() {
                    m.push((e.name().map(|n| n.to_string()).unwrap_or_default(), e.size()));
                }
            }
            let n = m.len();
            ("Zip", m, n)
        } else {
            let codec = if lower.ends_with(".tgz") || lower.ends_with(".gz") {
                Some(Codec::Gzip)
            } else if lower.ends_with(".tbz2") || lower.ends_with(".bz2") {
                Some(Codec::Bzip2)
            } else if lower.ends_with(".txz") || lower.ends_with(".xz") {
                Some(Codec::Xz)
            } else {
                None
            };
            let r: Box<dyn Read> = match codec {
                Some(c) => reader(c, Box::new(bytes.as_slice())),
                None => Box::new(bytes.as_slice()),
            };
            let (m, n) = tar_members(r.take(limits.max_unzipped_bytes), limits)?;
            ("Tar", m, n)
        };
        let body = render_listing(&title, kind, &members, total);
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_inflates_under_limits() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("changelog.Debian.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&vec![b'a'; 10_000]).unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let out = tempfile::tempdir().unwrap();
        let inner = decompress(&p, Codec::Gzip, out.path(), &Limits::default()).unwrap();
        assert_eq!(inner.file_name().unwrap(), "changelog.Debian");
        assert_eq!(std::fs::metadata(&inner).unwrap().len(), 10_000);
        let small = Limits { max_unzipped_bytes: 100, ..Limits::default() };
        let e = decompress(&p, Codec::Gzip, out.path(), &small).unwrap_err();
        assert!(e.to_string().contains("inflates beyond the limit of 100 bytes"), "{e}");
    }

    #[test]
    fn tarball_names() {
        assert!(is_tarball("x-1.0.tar.gz"));
        assert!(is_tarball("X.TGZ"));
        assert!(!is_tarball("changelog.gz"));
    }
}
