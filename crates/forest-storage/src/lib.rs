//! Object storage for forests: a blocking S3 client (aws-sdk-s3 on an
//! internal tokio runtime, rustls with ring) and the remote-payload cache of
//! dialect §8 (`_derived/payloads/`).
//!
//! The rest of the program is synchronous (rayon), so every call here blocks;
//! [`S3Client`] is `Send + Sync` and meant to be shared through an `Arc`.
//! Never call it from inside another tokio runtime.

mod cache;
mod client;
mod error;
mod location;
mod rclone;

pub use cache::{plan_eviction, slot_name, CacheFile, EvictReport, PayloadCache};
pub use client::{Downloaded, FolderListing, ObjectMeta, S3Client, S3Credentials, S3Options};
pub use error::StorageError;
pub use location::{decode_list_key, is_remote, S3Location};
pub use rclone::{stored_hash_for, Rclone, RcloneEntry, RcloneLocation, RcloneOptions, RUN_ENTRIES};

/// Result alias of this crate.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;
