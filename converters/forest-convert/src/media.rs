//! Media stub: a placeholder body until a describer runs (dialect §3.5).
//! The format named in the body is what the bytes are (magic bytes via
//! `infer`), not what the extension claims.

use crate::converter::{Conversion, Converter, Limits};
use crate::error::ConvertError;
use crate::sniff::{self, Sniffed};
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use forest_model::slug::title_from_stem;
use std::path::Path;

/// Image, audio and video extensions handled by the stub.
pub(crate) const MEDIA_EXTS: [&str; 54] = [
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".mp3", ".wav", ".m4a", ".ogg", ".flac", ".mp4", ".mov", ".mkv", ".webm",
    ".tif", ".tiff", ".bmp", ".ico", ".cur", ".psd", ".heic", ".heif", ".avif", ".jxl", ".svg", ".svgz", ".ppm",
    ".pgm", ".pbm", ".pnm", ".xcf", ".eps", ".opus", ".oga", ".wma", ".aif", ".aiff", ".aac", ".mid", ".midi", ".amr",
    ".avi", ".wmv", ".m4v", ".mpg", ".mpeg", ".3gp", ".flv", ".ogv", ".xpm", ".xbm", ".jp2", ".wmf", ".emf",
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
    fn version(&self) -> u32 {
        2
    }
    fn convert(&self, path: &Path, _: &Limits, warnings: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let size = std::fs::metadata(path)?.len();
        let title = title_from_stem(&stem(path));
        let ext = path.extension().map(|e| e.to_string_lossy().to_uppercase()).unwrap_or_default();
        let format = match sniff::sniff(&sniff::head(path)?) {
            Sniffed::Media(f) => {
                // Extensions that name the same container as the sniffed format.
                let alias = |a: &str, b: &str| f == a && b.split(',').any(|e| e == ext);
                let same = f == ext
                    || alias("TIF", "TIFF")
                    || alias("JPG", "JPEG,JPE")
                    || alias("OGG", "OGA,OGV,OPUS,SPX")
                    || alias("MP4", "M4A,M4V")
                    || alias("MKV", "WEBM")
                    || alias("HEIF", "HEIC")
                    || alias("MID", "MIDI")
                    || alias("AIFF", "AIF");
                if !same && !ext.is_empty() {
                    warnings.push(format!("named .{} but its bytes are {f}", ext.to_lowercase()));
                }
                f
            }
            _ if ext.is_empty() => "unknown".to_string(),
            _ => ext,
        };
        let body = format!(
            "# {title}\n\nMedia file `{}` ({format} format, {size} bytes).\n\nNo description has been generated for this media yet.\n",
            file_name(path).replace('`', "'")
        );
        let meta = SourceMeta { stub: Some("media".into()), ..SourceMeta::default() };
        Ok(Conversion::Markdown { title, body, meta })
    }
}
