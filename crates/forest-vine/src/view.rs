//! `view` (vine spec §2.7): the image payload of a media node, as a header
//! the server completes with the bytes as an MCP image block.

use crate::answers::Viewed;

use crate::engine::Vine;
use crate::error::{VResult, VineError};

impl Vine {
    /// `view(id)`: the image payload of a media node (header only; the
    /// server adds the bytes as an image block).
    pub fn view(&mut self, id: &str) -> VResult<Viewed> {
        let row = self.row(id)?;
        let nf = || crate::engine::not_found(&row.id);
        let payload = row.payload.clone().filter(|p| !p.is_empty()).ok_or_else(nf)?;
        if let Some((scheme, _)) = payload.split_once("://") {
            return Err(VineError::schema(format!("remote payload scheme '{scheme}' is not served"))
                .hint("Prefetch it into the cache first."));
        }
        let path = self.root.join(forest_model::ids::folder_of(&row.id)).join(&payload);
        let canon = std::fs::canonicalize(&path).map_err(|_| nf())?;
        if !canon.starts_with(&self.root) {
            return Err(VineError::schema("payload escapes the forest"));
        }
        if !self.file_in_scope(&canon) {
            return Err(nf());
        }
        let ext = canon.extension().and_then(|e| e.to_str()).unwrap_or("").to_lowercase();
        let mime = match ext.as_str() {
            "png" => "image/png",
            "jpg" | "jpeg" => "image/jpeg",
            "gif" => "image/gif",
            "webp" => "image/webp",
            "svg" => "image/svg+xml",
            "db" | "sqlite" => "application/vnd.sqlite3",
            "pdf" => "application/pdf",
            _ => "application/octet-stream",
        };
        if !mime.starts_with("image/") {
            return Err(VineError::schema(format!("payload is not an image ({mime})")));
        }
        let size = std::fs::metadata(&canon)?.len();
        if size > 6_291_456 {
            return Err(VineError::schema(format!("image payload is {size} bytes, over the 6291456-byte view limit")));
        }
        Ok(Viewed {
            id: row.id,
            path: canon.display().to_string(),
            media_type: mime,
            size,
            payload_hash: row.payload_hash.unwrap_or_default(),
        })
    }
}
