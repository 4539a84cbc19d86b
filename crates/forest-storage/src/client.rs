//! Blocking S3 client: aws-sdk-s3 driven by an internal tokio runtime.
//!
//! TLS is rustls with the ring provider, passed explicitly so that
//! aws-lc-sys is never built. Credentials come from the standard AWS chain
//! (env, profile, web identity, container, IMDS) unless given explicitly.

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::config::{Region, RequestChecksumCalculation, ResponseChecksumValidation};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::operation::list_objects_v2::ListObjectsV2Output;
use aws_sdk_s3::primitives::{ByteStream, DateTime};
use aws_sdk_s3::types::EncodingType;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use sha2::{Digest, Sha256};

use crate::location::decode_list_key;
use crate::{S3Location, StorageError};

/// Mid-body failures tolerated per download; each resumes with `Range`.
const MAX_RESUMES: u32 = 3;
/// First resume backoff; doubles each time (200, 400, 800 ms).
const RESUME_BACKOFF: Duration = Duration::from_millis(200);

/// Static credentials (tests, explicit configuration). `Debug` hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Credentials {
    /// Access key id.
    pub access_key_id: String,
    /// Secret access key (never logged or displayed).
    pub secret_access_key: String,
}

impl fmt::Debug for S3Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .finish()
    }
}

/// How to reach the object store.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct S3Options {
    /// Custom endpoint (MinIO, R2, moto…); `None` = AWS.
    pub endpoint_url: Option<String>,
    /// Path-style addressing (`http://host/bucket/key`), needed by most
    /// S3-compatible local servers.
    pub path_style: bool,
    /// Region; `None` = `us-east-1`.
    pub region: Option<String>,
    /// Explicit credentials; `None` = the standard AWS env + profile chain.
    pub credentials: Option<S3Credentials>,
}

impl S3Options {
    /// Options for a custom endpoint with path-style addressing.
    pub fn with_endpoint(endpoint_url: impl Into<String>) -> Self {
        S3Options { endpoint_url: Some(endpoint_url.into()), path_style: true, ..Default::default() }
    }

    /// Read the environment:
    /// endpoint from `FOREST_S3_ENDPOINT`, `AWS_ENDPOINT_URL_S3`,
    /// `AWS_ENDPOINT_URL`, `MONKEYLLM_S3_ENDPOINT` (first non-empty wins);
    /// path style from `FOREST_S3_PATH_STYLE` (`1`/`true`/`0`/`false`),
    /// default on exactly when a custom endpoint is set; region from
    /// `AWS_REGION`, `AWS_DEFAULT_REGION`, default `us-east-1`.
    /// Credentials are left to the AWS chain.
    pub fn from_env() -> Self {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// [`S3Options::from_env`] over any variable lookup (testable).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let first =
            |keys: &[&str]| keys.iter().find_map(|k| get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty()));
        let endpoint_url =
            first(&["FOREST_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "MONKEYLLM_S3_ENDPOINT"]);
        let path_style = match first(&["FOREST_S3_PATH_STYLE"]).map(|v| v.to_ascii_lowercase()).as_deref() {
            Some("1" | "true" | "yes" | "on") => true,
            Some("0" | "false" | "no" | "off") => false,
            _ => endpoint_url.is_some(),
        };
        let region = Some(first(&["AWS_REGION", "AWS_DEFAULT_REGION"]).unwrap_or_else(|| "us-east-1".to_string()));
        S3Options { endpoint_url, path_style, region, credentials: None }
    }
}

/// One object of a listing (or a `head`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// The key as raw bytes (listings are percent-decoded by this crate).
    pub raw_key: Vec<u8>,
    /// The key as text; `None` when the bytes are not UTF-8 (report it, the
    /// object cannot be mirrored under a Markdown path).
    pub key: Option<String>,
    /// Size in bytes.
    pub size: u64,
    /// ETag without the surrounding quotes.
    pub etag: String,
    /// Last modification, unix milliseconds (0 when the server sent none).
    pub last_modified_ms: i64,
}

impl ObjectMeta {
    /// The key with `prefix` stripped (`None` when not UTF-8 or not under it).
    pub fn relative_to(&self, prefix: &str) -> Option<&str> {
        self.key.as_deref()?.strip_prefix(prefix)
    }

    /// The key for messages: lossy UTF-8.
    pub fn key_lossy(&self) -> String {
        String::from_utf8_lossy(&self.raw_key).into_owned()
    }
}

/// Result of a streamed download: both hashes computed in the same pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    /// Bytes written.
    pub size: u64,
    /// blake3 of the bytes (hex).
    pub blake3_hex: String,
    /// sha256 of the bytes (hex).
    pub sha256_hex: String,
    /// How many times the body was resumed with a `Range` request.
    pub resumes: u32,
}

/// One folder level of an S3 prefix ([`S3Client::list_folder`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderListing {
    /// Sub-folder names (one path component each), in the server's order.
    pub folders: Vec<String>,
    /// Objects directly in the folder (directory markers excluded).
    pub files: usize,
}

/// Blocking S3 client. `Send + Sync`: share it (e.g. in an `Arc`) across
/// rayon threads; each call blocks its own thread only.
pub struct S3Client {
    // Dropped before the runtime that drives it (field order).
    inner: aws_sdk_s3::Client,
    rt: tokio::runtime::Runtime,
    options: S3Options,
}

impl fmt::Debug for S3Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Client").field("options", &self.options).finish_non_exhaustive()
    }
}

fn s3_target(bucket: &str, key: &str) -> String {
    format!("s3://{bucket}/{key}")
}

fn strip_quotes(etag: &str) -> String {
    etag.trim_matches('"').to_string()
}

fn millis(t: Option<&DateTime>) -> i64 {
    t.map_or(0, |t| t.secs().saturating_mul(1000).saturating_add(i64::from(t.subsec_nanos() / 1_000_000)))
}

/// Map an SDK error to [`StorageError`]: NotFound for 404 / NoSuchKey /
/// NoSuchBucket, else code + message. Only server text and the transport's
/// error chain are used: request headers (signatures) never are.
fn map_sdk_error<E>(op: &'static str, target: &str, err: SdkError<E, HttpResponse>) -> StorageError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let status = err.raw_response().map(|r| r.status().as_u16());
    let code = err.code().map(str::to_string);
    match (code.as_deref(), status) {
        (Some("NoSuchBucket"), _) => {
            return StorageError::NotFound { what: "S3 bucket", target: target.to_string() };
        }
        (Some("NoSuchKey" | "NotFound"), _) | (_, Some(404)) => {
            return StorageError::NotFound { what: "S3 object", target: target.to_string() };
        }
        _ => {}
    }
    let message = match (&err, code) {
        (SdkError::ServiceError(_), Some(code)) => {
            let msg = err.message().unwrap_or("");
            let status = status.map(|s| format!("HTTP {s} ")).unwrap_or_default();
            format!("{status}{code}: {msg}")
        }
        _ => DisplayErrorContext(&err).to_string(),
    };
    StorageError::S3 { op, target: target.to_string(), message }
}

/// The continuation token of a ListObjectsV2 page, `None` after the last
/// page; a truncated page without one is an error (a partial listing must
/// never pass for a complete one).
fn next_page(truncated: Option<bool>, token: Option<&str>, target: &str) -> Result<Option<String>, StorageError> {
    match (truncated, token) {
        (Some(true), Some(t)) if !t.is_empty() => Ok(Some(t.to_string())),
        (Some(true), _) => Err(StorageError::S3 {
            op: "ListObjectsV2",
            target: target.to_string(),
            message: "truncated page without a continuation token".into(),
        }),
        _ => Ok(None),
    }
}

impl S3Client {
    /// Build the client and its runtime (2 worker threads for I/O).
    pub fn new(options: &S3Options) -> Result<Self, StorageError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("forest-s3")
            .enable_all()
            .build()
            .map_err(|e| StorageError::Config(format!("tokio runtime: {e}")))?;
        let http =
            aws_smithy_http_client::Builder::new().tls_provider(tls::Provider::Rustls(CryptoMode::Ring)).build_https();
        let region = Region::new(options.region.clone().unwrap_or_else(|| "us-east-1".to_string()));
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .http_client(http)
            .region(region)
            .timeout_config(
                aws_config::timeout::TimeoutConfig::builder()
                    .connect_timeout(Duration::from_secs(10))
                    .read_timeout(Duration::from_secs(60))
                    .build(),
            );
        if let Some(c) = &options.credentials {
            loader = loader.credentials_provider(aws_sdk_s3::config::Credentials::new(
                c.access_key_id.clone(),
                c.secret_access_key.clone(),
                None,
                None,
                "forest-static",
            ));
        }
        let sdk_config = rt.block_on(loader.load());
        let mut cfg = aws_sdk_s3::config::Builder::from(&sdk_config)
            .force_path_style(options.path_style)
            // We hash every byte ourselves; SDK checksums break ranged resumes
            // and some S3-compatible servers.
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenRequired);
        if let Some(url) = &options.endpoint_url {
            cfg = cfg.endpoint_url(url.clone());
        }
        let inner = aws_sdk_s3::Client::from_conf(cfg.build());
        tracing::debug!(endpoint = ?options.endpoint_url, path_style = options.path_style, "S3 client ready");
        Ok(S3Client { inner, rt, options: options.clone() })
    }

    /// The options this client was built with.
    pub fn options(&self) -> &S3Options {
        &self.options
    }

    /// Every object under `loc` (all pages of ListObjectsV2). Directory
    /// markers (`…/` of size 0) are skipped. Any page error fails the whole
    /// listing: a partial listing must never pass for a complete one.
    pub fn list(&self, loc: &S3Location) -> Result<Vec<ObjectMeta>, StorageError> {
        let mut out = Vec::new();
        self.list_each(loc, &mut |o| out.push(o))?;
        Ok(out)
    }

    /// [`Self::list`] page by page: each object goes to `sink` as its page
    /// arrives (in the server's key order), so memory holds one page. An
    /// error after some pages leaves those objects delivered: the caller
    /// must treat the listing as incomplete.
    pub fn list_each(&self, loc: &S3Location, sink: &mut dyn FnMut(ObjectMeta)) -> Result<(), StorageError> {
        self.rt.block_on(self.list_async(loc, sink))
    }

    /// True when `key` exists in `bucket` (HEAD); a missing bucket or any
    /// other failure is an error.
    pub fn exists(&self, bucket: &str, key: &str) -> Result<bool, StorageError> {
        match self.head(bucket, key) {
            Ok(_) => Ok(true),
            Err(StorageError::NotFound { what: "S3 object", .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn list_async(&self, loc: &S3Location, sink: &mut dyn FnMut(ObjectMeta)) -> Result<(), StorageError> {
        let target = loc.to_string();
        let mut token: Option<String> = None;
        loop {
            let page = self.list_page(&loc.bucket, &loc.prefix, None, token.take(), &target).await?;
            // Decode only when the server says it encoded: one that ignores
            // encoding-type would have a literal `%` or `+` mangled.
            let encoded = page.encoding_type() == Some(&EncodingType::Url);
            for obj in page.contents() {
                let Some(k) = obj.key() else { continue };
                let raw_key = if encoded { decode_list_key(k) } else { k.as_bytes().to_vec() };
                let size = u64::try_from(obj.size().unwrap_or(0)).unwrap_or(0);
                if size == 0 && raw_key.ends_with(b"/") {
                    continue;
                }
                let key = String::from_utf8(raw_key.clone()).ok();
                sink(ObjectMeta {
                    raw_key,
                    key,
                    size,
                    etag: obj.e_tag().map(strip_quotes).unwrap_or_default(),
                    last_modified_ms: millis(obj.last_modified()),
                });
            }
            token = next_page(page.is_truncated(), page.next_continuation_token(), &target)?;
            if token.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// One folder level under `loc`: the names of the sub-folders of
    /// `rel_dir` (`""`: the prefix itself) and how many objects sit
    /// directly in it (ListObjectsV2 with delimiter `/`, all pages; names
    /// that are not UTF-8 are left out). What `read_dir` is to a local
    /// source: the Gardener plans a wide folder's buckets from it.
    pub fn list_folder(&self, loc: &S3Location, rel_dir: &str) -> Result<FolderListing, StorageError> {
        self.rt.block_on(self.list_folder_async(loc, rel_dir))
    }

    /// One ListObjectsV2 page (keys URL-encoded by the server when it can).
    async fn list_page(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: Option<&str>,
        token: Option<String>,
        target: &str,
    ) -> Result<ListObjectsV2Output, StorageError> {
        let mut req = self.inner.list_objects_v2().bucket(bucket).encoding_type(EncodingType::Url);
        if !prefix.is_empty() {
            req = req.prefix(prefix);
        }
        if let Some(d) = delimiter {
            req = req.delimiter(d);
        }
        req.set_continuation_token(token).send().await.map_err(|e| map_sdk_error("ListObjectsV2", target, e))
    }

    async fn list_folder_async(&self, loc: &S3Location, rel_dir: &str) -> Result<FolderListing, StorageError> {
        let prefix = if rel_dir.is_empty() { loc.prefix.clone() } else { format!("{}{rel_dir}/", loc.prefix) };
        let target = format!("s3://{}/{prefix}", loc.bucket);
        let mut out = FolderListing::default();
        let mut token: Option<String> = None;
        loop {
            let page = self.list_page(&loc.bucket, &prefix, Some("/"), token.take(), &target).await?;
            let encoded = page.encoding_type() == Some(&EncodingType::Url);
            let decode = |k: &str| if encoded { decode_list_key(k) } else { k.as_bytes().to_vec() };
            for cp in page.common_prefixes() {
                let Some(p) = cp.prefix() else { continue };
                let raw = decode(p);
                let name = raw.strip_prefix(prefix.as_bytes()).and_then(|r| r.strip_suffix(b"/"));
                if let Some(name) = name.and_then(|n| std::str::from_utf8(n).ok()).filter(|n| !n.is_empty()) {
                    out.folders.push(name.to_string());
                }
            }
            for obj in page.contents() {
                let raw = obj.key().map(decode).unwrap_or_default();
                let marker = obj.size().unwrap_or(0) == 0 && raw.ends_with(b"/");
                if !raw.is_empty() && !marker {
                    out.files += 1;
                }
            }
            token = next_page(page.is_truncated(), page.next_continuation_token(), &target)?;
            if token.is_none() {
                break;
            }
        }
        Ok(out)
    }

    /// HEAD one object.
    pub fn head(&self, bucket: &str, key: &str) -> Result<ObjectMeta, StorageError> {
        let target = s3_target(bucket, key);
        let h = self
            .rt
            .block_on(self.inner.head_object().bucket(bucket).key(key).send())
            .map_err(|e| map_sdk_error("HeadObject", &target, e))?;
        Ok(ObjectMeta {
            raw_key: key.as_bytes().to_vec(),
            key: Some(key.to_string()),
            size: u64::try_from(h.content_length().unwrap_or(0)).unwrap_or(0),
            etag: h.e_tag().map(strip_quotes).unwrap_or_default(),
            last_modified_ms: millis(h.last_modified()),
        })
    }

    /// Stream an object into `dest` (via a temp file in the same directory,
    /// fsynced and renamed: `dest` is never left partial), hashing on the way.
    pub fn download_to(&self, bucket: &str, key: &str, dest: &Path) -> Result<Downloaded, StorageError> {
        let tmp = forest_fs::temp_path_for(dest);
        let result = (|| {
            let mut f = File::create(&tmp).map_err(|e| StorageError::io(format!("create {}", tmp.display()), e))?;
            let d = self.download_to_writer(bucket, key, &mut f)?;
            f.sync_all().map_err(|e| StorageError::io(format!("fsync {}", tmp.display()), e))?;
            drop(f);
            forest_fs::atomic_rename(&tmp, dest)
                .map_err(|e| StorageError::io(format!("rename to {}", dest.display()), e))?;
            Ok(d)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// Stream an object into any writer, computing blake3 and sha256 in one
    /// pass without buffering the object. A body that breaks off is resumed
    /// up to 3 times with `Range: bytes=N-` (and `If-Match` on the first
    /// ETag, so a concurrent overwrite fails instead of splicing two versions).
    pub fn download_to_writer<W: Write>(
        &self,
        bucket: &str,
        key: &str,
        out: &mut W,
    ) -> Result<Downloaded, StorageError> {
        self.rt.block_on(self.download_async(bucket, key, out))
    }

    async fn download_async<W: Write>(&self, bucket: &str, key: &str, out: &mut W) -> Result<Downloaded, StorageError> {
        let target = s3_target(bucket, key);
        let mut sha = Sha256::new();
        let mut b3 = blake3::Hasher::new();
        let mut offset: u64 = 0;
        let mut total: Option<u64> = None;
        let mut etag: Option<String> = None;
        let mut failures: u32 = 0;
        loop {
            let mut req = self.inner.get_object().bucket(bucket).key(key);
            if offset > 0 {
                req = req.range(format!("bytes={offset}-"));
                if let Some(e) = &etag {
                    req = req.if_match(e.clone());
                }
            }
            let failure = match req.send().await {
                Err(e) => {
                    if e.raw_response().map(|r| r.status().as_u16()) == Some(412) {
                        return Err(StorageError::S3 {
                            op: "GetObject",
                            target,
                            message: format!("object changed during download (ETag mismatch at byte {offset})"),
                        });
                    }
                    let err = map_sdk_error("GetObject", &target, e);
                    // The SDK already retried the request itself; only a
                    // resume of a started body earns our own retries.
                    if offset == 0 || err.is_not_found() {
                        return Err(err);
                    }
                    err.to_string()
                }
                Ok(resp) => {
                    if offset == 0 {
                        total = resp.content_length().and_then(|n| u64::try_from(n).ok());
                        etag = resp.e_tag().map(str::to_string);
                    }
                    // A server that ignores Range resends from byte 0.
                    let mut skip = if offset > 0 && resp.content_range().is_none() { offset } else { 0 };
                    let mut body = resp.body;
                    let mut failure = None;
                    loop {
                        match body.try_next().await {
                            Ok(Some(chunk)) => {
                                let mut c = &chunk[..];
                                if skip > 0 {
                                    let n = usize::try_from(skip).unwrap_or(usize::MAX).min(c.len());
                                    c = &c[n..];
                                    skip -= n as u64;
                                }
                                out.write_all(c)
                                    .map_err(|e| StorageError::io(format!("write download of {target}"), e))?;
                                sha.update(c);
                                b3.update(c);
                                offset += c.len() as u64;
                            }
                            Ok(None) => break,
                            Err(e) => {
                                failure = Some(format!("body interrupted: {}", DisplayErrorContext(&e)));
                                break;
                            }
                        }
                    }
                    match (failure, total) {
                        (Some(f), _) => f,
                        (None, Some(t)) if offset < t => format!("body ended at {offset} of {t} bytes"),
                        (None, Some(t)) if offset > t => {
                            return Err(StorageError::S3 {
                                op: "GetObject",
                                target,
                                message: format!("received {offset} bytes, more than the announced {t}"),
                            });
                        }
                        (None, _) => break,
                    }
                }
            };
            failures += 1;
            if failures > MAX_RESUMES {
                return Err(StorageError::S3 {
                    op: "GetObject",
                    target,
                    message: format!("gave up after {MAX_RESUMES} resumes at byte {offset}: {failure}"),
                });
            }
            tracing::warn!(%target, offset, attempt = failures, %failure, "resuming download");
            tokio::time::sleep(RESUME_BACKOFF * (1 << (failures - 1))).await;
        }
        out.flush().map_err(|e| StorageError::io(format!("flush download of {target}"), e))?;
        Ok(Downloaded {
            size: offset,
            blake3_hex: b3.finalize().to_hex().to_string(),
            sha256_hex: hex::encode(sha.finalize()),
            resumes: failures,
        })
    }

    /// Create a bucket; one that already exists and is ours is fine.
    pub fn create_bucket(&self, bucket: &str) -> Result<(), StorageError> {
        let target = format!("s3://{bucket}");
        let mut req = self.inner.create_bucket().bucket(bucket);
        let region = self.options.region.as_deref().unwrap_or("us-east-1");
        // us-east-1 refuses an explicit LocationConstraint.
        if region != "us-east-1" {
            req = req.create_bucket_configuration(
                aws_sdk_s3::types::CreateBucketConfiguration::builder()
                    .location_constraint(aws_sdk_s3::types::BucketLocationConstraint::from(region))
                    .build(),
            );
        }
        match self.rt.block_on(req.send()) {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some("BucketAlreadyOwnedByYou") => Ok(()),
            Err(e) => Err(map_sdk_error("CreateBucket", &target, e)),
        }
    }

    /// Upload `bytes` as one object; returns the ETag (unquoted).
    pub fn put_object(&self, bucket: &str, key: &str, bytes: &[u8]) -> Result<String, StorageError> {
        let target = s3_target(bucket, key);
        let body = ByteStream::from(bytes.to_vec());
        let out = self
            .rt
            .block_on(self.inner.put_object().bucket(bucket).key(key).body(body).send())
            .map_err(|e| map_sdk_error("PutObject", &target, e))?;
        Ok(out.e_tag().map(strip_quotes).unwrap_or_default())
    }

    /// Upload `bytes` only if no object exists under `key` (`If-None-Match: *`,
    /// the S3 conditional put). `Ok(true)`: written; `Ok(false)`: an object
    /// was already there (412) or a concurrent conditional write won (409),
    /// and nothing was changed. A server that ignores the header overwrites.
    pub fn put_object_if_absent(&self, bucket: &str, key: &str, bytes: &[u8]) -> Result<bool, StorageError> {
        let target = s3_target(bucket, key);
        let body = ByteStream::from(bytes.to_vec());
        match self.rt.block_on(self.inner.put_object().bucket(bucket).key(key).if_none_match("*").body(body).send()) {
            Ok(_) => Ok(true),
            Err(e) if matches!(e.raw_response().map(|r| r.status().as_u16()), Some(412 | 409)) => Ok(false),
            Err(e) => Err(map_sdk_error("PutObject", &target, e)),
        }
    }

    /// The whole body of a small object in memory; `Ok(None)` when absent.
    pub fn get_object_bytes(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let mut out = Vec::new();
        match self.download_to_writer(bucket, key, &mut out) {
            Ok(_) => Ok(Some(out)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Upload a local file as one object, streamed from disk; returns the ETag.
    pub fn put_object_file(&self, bucket: &str, key: &str, path: &Path) -> Result<String, StorageError> {
        let target = s3_target(bucket, key);
        self.rt.block_on(async {
            let body = ByteStream::from_path(path).await.map_err(|e| {
                StorageError::io(format!("read {}", path.display()), std::io::Error::other(e.to_string()))
            })?;
            let out = self
                .inner
                .put_object()
                .bucket(bucket)
                .key(key)
                .body(body)
                .send()
                .await
                .map_err(|e| map_sdk_error("PutObject", &target, e))?;
            Ok(out.e_tag().map(strip_quotes).unwrap_or_default())
        })
    }

    /// Delete one object (absent objects are not an error, as in S3).
    pub fn delete_object(&self, bucket: &str, key: &str) -> Result<(), StorageError> {
        let target = s3_target(bucket, key);
        self.rt
            .block_on(self.inner.delete_object().bucket(bucket).key(key).send())
            .map_err(|e| map_sdk_error("DeleteObject", &target, e))?;
        Ok(())
    }

    /// Server-side copy inside one bucket.
    pub fn copy_object(&self, bucket: &str, from: &str, to: &str) -> Result<(), StorageError> {
        let target = s3_target(bucket, to);
        // CopySource is `bucket/key`, URL-encoded (slashes kept).
        let source = format!("{bucket}/{}", percent_encoding::utf8_percent_encode(from, COPY_SOURCE));
        self.rt
            .block_on(self.inner.copy_object().bucket(bucket).key(to).copy_source(source).send())
            .map_err(|e| map_sdk_error("CopyObject", &target, e))?;
        Ok(())
    }
}

/// Everything but unreserved characters and `/` is escaped in CopySource.
const COPY_SOURCE: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'/').remove(b'-').remove(b'_').remove(b'.').remove(b'~');

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn options_from_env() {
        let o = S3Options::from_lookup(env(&[]));
        assert_eq!(
            o,
            S3Options { endpoint_url: None, path_style: false, region: Some("us-east-1".into()), credentials: None }
        );
        let o =
            S3Options::from_lookup(env(&[("MONKEYLLM_S3_ENDPOINT", "http://m"), ("AWS_DEFAULT_REGION", "eu-west-1")]));
        assert_eq!(o.endpoint_url.as_deref(), Some("http://m"));
        assert!(o.path_style);
        assert_eq!(o.region.as_deref(), Some("eu-west-1"));
        let o = S3Options::from_lookup(env(&[
            ("FOREST_S3_ENDPOINT", "http://f"),
            ("AWS_ENDPOINT_URL", "http://a"),
            ("FOREST_S3_PATH_STYLE", "false"),
            ("AWS_REGION", "r1"),
            ("AWS_DEFAULT_REGION", "r2"),
        ]));
        assert_eq!(
            (o.endpoint_url.as_deref(), o.path_style, o.region.as_deref()),
            (Some("http://f"), false, Some("r1"))
        );
        let o = S3Options::from_lookup(env(&[("AWS_ENDPOINT_URL_S3", "http://s3"), ("AWS_ENDPOINT_URL", "http://a")]));
        assert_eq!(o.endpoint_url.as_deref(), Some("http://s3"));
        let o = S3Options::from_lookup(env(&[("FOREST_S3_ENDPOINT", " "), ("FOREST_S3_PATH_STYLE", "1")]));
        assert_eq!((o.endpoint_url, o.path_style), (None, true));
    }

    #[test]
    fn secrets_are_not_printed() {
        let c = S3Credentials { access_key_id: "AKID".into(), secret_access_key: "s3cr3t".into() };
        let o = S3Options { credentials: Some(c), ..S3Options::with_endpoint("http://x") };
        assert!(!format!("{o:?}").contains("s3cr3t"));
    }

    #[test]
    fn client_is_send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<S3Client>();
    }

    #[test]
    fn helpers() {
        assert_eq!(strip_quotes("\"abc\""), "abc");
        assert_eq!(millis(Some(&DateTime::from_millis(1_700_000_000_123))), 1_700_000_000_123);
        assert_eq!(millis(None), 0);
        let src = percent_encoding::utf8_percent_encode("a b/c+d?é", COPY_SOURCE).to_string();
        assert_eq!(src, "a%20b/c%2Bd%3F%C3%A9");
    }
}
