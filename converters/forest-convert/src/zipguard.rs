//! Zip-bomb guard: inspect the central directory before any parser runs.

use crate::converter::Limits;
use crate::error::ConvertError;
use std::io::{Cursor, Read};
use zip::ZipArchive;

/// Open `bytes` as a zip and check the declared entry count and total
/// uncompressed size against `limits` without decompressing anything.
pub(crate) fn open_checked<'a>(bytes: &'a [u8], limits: &Limits) -> Result<ZipArchive<Cursor<&'a [u8]>>, ConvertError> {
    let mut zip =
        ZipArchive::new(Cursor::new(bytes)).map_err(|e| ConvertError::Zip(format!("not a readable zip: {e}")))?;
    if zip.len() > limits.max_zip_entries {
        return Err(ConvertError::OverLimit(format!(
            "zip of {} entries exceed the limit of {}",
            zip.len(),
            limits.max_zip_entries
        )));
    }
    let mut total: u64 = 0;
    for i in 0..zip.len() {
        let size = zip.by_index_raw(i).map_err(|e| ConvertError::Zip(format!("damaged entry {i}: {e}")))?.size();
        total = total.saturating_add(size);
        if total > limits.max_unzipped_bytes {
            return Err(ConvertError::OverLimit(format!(
                "declared uncompressed size exceeds the limit of {} bytes",
                limits.max_unzipped_bytes
            )));
        }
    }
    Ok(zip)
}

/// Read one entry, never more than the unzipped limit (declared sizes can lie).
pub(crate) fn read_entry(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    name: &str,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, ConvertError> {
    let entry = match zip.by_name(name) {
        Ok(e) => e,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(ConvertError::Zip(format!("cannot read {name}: {e}"))),
    };
    let mut out = Vec::new();
    entry
        .take(limits.max_unzipped_bytes.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| ConvertError::Zip(format!("cannot inflate {name}: {e}")))?;
    if out.len() as u64 > limits.max_unzipped_bytes {
        return Err(ConvertError::OverLimit(format!(
            "zip member {name} inflates beyond the limit of {} bytes",
            limits.max_unzipped_bytes
        )));
    }
    Ok(Some(out))
}
