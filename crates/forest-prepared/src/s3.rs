//! S3 backend through forest-storage: objects under `<prefix>objects/`,
//! written with a conditional put (`If-None-Match: *`) so the first writer
//! wins. A server that ignores the condition (s3s-fs) overwrites with an
//! object of the same key; readers verify every object either way.

use crate::{PreparedError, PreparedStore, Put};
use forest_storage::{S3Client, S3Location};

fn object_key(loc: &S3Location, key: &str) -> String {
    format!("{}{}", loc.prefix, PreparedStore::object_name(key))
}

pub(crate) fn read(client: &S3Client, loc: &S3Location, key: &str) -> Result<Option<Vec<u8>>, PreparedError> {
    Ok(client.get_object_bytes(&loc.bucket, &object_key(loc, key))?)
}

pub(crate) fn write_once(client: &S3Client, loc: &S3Location, key: &str, bytes: &[u8]) -> Result<Put, PreparedError> {
    let written = client.put_object_if_absent(&loc.bucket, &object_key(loc, key), bytes)?;
    Ok(if written { Put::Written } else { Put::Exists })
}

pub(crate) fn remove(client: &S3Client, loc: &S3Location, key: &str) -> Result<(), PreparedError> {
    Ok(client.delete_object(&loc.bucket, &object_key(loc, key))?)
}
