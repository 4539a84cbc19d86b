//! Media stub: a placeholder body until a describer runs (dialect §3.5).

use crate::error::ConvertError;
use crate::registry::Converter;
use crate::text::{file_name, stem};
use crate::{Conversion, Limits, SourceMeta};
use forest_model::slug::title_from_stem;
use std::path::Path;

/// Image, audio and video extensions handled by the stub.
pub(crate) const MEDIA_EXTS: [&str; 14] = [
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".mp3", ".wav", ".m4a", ".ogg", ".flac", ".mp4", ".mov", ".mkv", ".webm",
];

/// The media stub converter (always last).
pub(crate) struct MediaStub;

impl Converter for MediaStub {
    fn name(&self) -> &str {
        "MediaStub"
    }
    fn extensions(&self) -> Vec<String> {
        MEDIA_EXTS.map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let size = std::fs::metadata(path)?.len();
        let title = title_from_stem(&stem(path));
        let ext = path.extension().map(|e| e.to_string_lossy().to_uppercase()).unwrap_or_default();
        let body = format!(
            "# {title}\n\nMedia file `{}` ({ext} format, {size} bytes).\n\nNo description has been generated for this media yet.\n",
            file_name(path)
        );
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}
