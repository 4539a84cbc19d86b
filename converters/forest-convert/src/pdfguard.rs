//! Loading a PDF for its text without decoding what text does not need.
//!
//! In: the file's bytes and the [`Limits`]. Out: a lopdf `Document` whose
//! image XObjects are empty (their pixels are never inflated: pdf-extract's
//! `Do` operator would inflate an image and lex its pixels as a content
//! stream, 243 MB for OCRmyPDF's 9000×9000 `enormous.pdf`), or
//! [`ConvertError::OverLimit`] when a stream inflates beyond
//! [`Limits::max_inflated_bytes`] (a deflate bomb).
//!
//! How: lopdf's load filter sees every object once, in its raw (still
//! compressed) form, before object streams are unpacked. Images lose their
//! data there; every other Flate stream is inflated into a counter (nothing
//! kept) up to [`CEILING`] and tagged with its size under [`SIZE_KEY`]; an
//! over-ceiling stream is emptied there too, so lopdf never unpacks it. After the load, a tagged size over the limit
//! rejects the file. The filter is a plain `fn` (lopdf runs it on its rayon
//! threads), hence the fixed ceiling and the tag instead of captured limits.

use crate::converter::Limits;
use crate::error::{schema, ConvertError};
use pdf_extract::{Document, Object, Stream};
use std::io::Read;

/// Dictionary key holding a Flate stream's inflated size.
const SIZE_KEY: &[u8] = b"ForestInflated";

/// Inflated sizes are counted up to this many bytes; a stream past it is
/// emptied during the load (no limit may be set above it).
pub(crate) const CEILING: u64 = 256 << 20;

/// lopdf's load filter: empty images, count and tag what others inflate to.
/// Objects inside object streams are never streams; their clone is what
/// lopdf keeps. For a top-level object the return value is only a keep/drop
/// signal, so a stream returns `Null` instead of a copy of its data.
fn guard(id: (u32, u16), obj: &mut Object) -> Option<((u32, u16), Object)> {
    let Object::Stream(stream) = obj else {
        return Some((id, obj.clone()));
    };
    if is_image(stream) {
        stream.set_plain_content(Vec::new());
        return Some((id, Object::Null));
    }
    if let Some(size) = inflated_size(stream) {
        if size > CEILING {
            stream.set_plain_content(Vec::new());
        }
        stream.dict.set(SIZE_KEY, Object::Integer(size as i64));
    }
    Some((id, Object::Null))
}

fn is_image(s: &Stream) -> bool {
    matches!(s.dict.get(b"Subtype"), Ok(Object::Name(n)) if n == b"Image")
}

/// What a lone `FlateDecode` stream inflates to, counted (never held) up to
/// one byte past [`CEILING`]. `None` for other filter chains (ASCII85 and
/// hex shrink; LZW is bounded by its raw length times ~2,700) and for data
/// that does not inflate (the reader falls back to the raw bytes).
fn inflated_size(s: &Stream) -> Option<u64> {
    let filters = s.filters().ok()?;
    if filters.as_slice() != [b"FlateDecode".as_slice()] {
        return None;
    }
    let mut z = flate2::read::ZlibDecoder::new(s.content.as_slice()).take(CEILING + 1);
    let mut buf = [0u8; 16 * 1024];
    let mut n = 0u64;
    loop {
        match z.read(&mut buf) {
            Ok(0) => return Some(n),
            Ok(k) => n += k as u64,
            // A truncated or damaged stream: what inflated so far.
            Err(_) => return (n > 0).then_some(n),
        }
    }
}

/// Load `bytes` as a PDF with images empty and inflated sizes checked
/// against `limits` (a stream over [`Limits::max_inflated_bytes`] rejects
/// the file with [`ConvertError::OverLimit`]).
pub(crate) fn load(bytes: &[u8], name: &str, limits: &Limits) -> Result<Document, ConvertError> {
    let opts = pdf_extract::LoadOptions::with_filter(guard);
    let doc =
        Document::load_mem_with_options(bytes, opts).map_err(|e| schema(format!("not a readable PDF: {name}: {e}")))?;
    let over = doc.objects.iter().find_map(|(id, o)| {
        let size = o.as_stream().ok()?.dict.get(SIZE_KEY).ok()?.as_i64().ok()? as u64;
        (size > limits.max_inflated_bytes).then_some((id.0, size))
    });
    match over {
        Some((obj, size)) => Err(ConvertError::OverLimit(format!(
            "PDF stream {obj} inflates to {} bytes, over the limit of {} bytes",
            if size > CEILING { format!("more than {CEILING}") } else { size.to_string() },
            limits.max_inflated_bytes
        ))),
        None => Ok(doc),
    }
}

/// What a page's content streams inflate to (tagged size, else the bytes
/// held): pdf-extract holds ~60 times that as parsed operators while it
/// reads the page (a 1.2 MB drawing: 73 MiB).
pub(crate) fn page_content_bytes(doc: &Document, page: pdf_extract::ObjectId) -> u64 {
    doc.get_page_contents(page)
        .into_iter()
        .filter_map(|id| doc.get_object(id).ok()?.as_stream().ok())
        .map(|s| match s.dict.get(SIZE_KEY).and_then(Object::as_i64) {
            Ok(n) => n as u64,
            Err(_) => s.content.len() as u64,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::{dictionary, Dictionary};
    use std::io::Write;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// A one-page PDF whose page draws image `Im0` and shows `text`; the
    /// image and the content stream are Flate-compressed.
    fn pdf(image: &[u8], content: &[u8]) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages = doc.new_object_id();
        let font = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica"});
        let mut img = Stream::new(
            dictionary! {"Type" => "XObject", "Subtype" => "Image", "Width" => 9000, "Height" => 9000,
            "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8, "Filter" => "FlateDecode"},
            deflate(image),
        );
        img.allows_compression = false;
        let img = doc.add_object(img);
        let mut body = Stream::new(dictionary! {"Filter" => "FlateDecode"}, deflate(content));
        body.allows_compression = false;
        let contents = doc.add_object(body);
        let resources = dictionary! {"Font" => dictionary! {"F1" => font}, "XObject" => dictionary! {"Im0" => img}};
        let page = doc.add_object(dictionary! {"Type" => "Page", "Parent" => pages, "Contents" => contents,
        "Resources" => resources, "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()]});
        doc.objects.insert(
            pages,
            Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1}),
        );
        let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages});
        doc.trailer.set("Root", catalog);
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    #[test]
    fn images_are_never_inflated_and_text_still_reads() {
        let bytes =
            pdf(&vec![0u8; 1 << 20], b"q 10 0 0 10 0 0 cm /Im0 Do Q BT /F1 12 Tf 72 700 Td (Hello guard) Tj ET");
        let doc = load(&bytes, "t.pdf", &Limits::default()).unwrap();
        let images: Vec<&Stream> =
            doc.objects.values().filter_map(|o| o.as_stream().ok()).filter(|s| is_image(s)).collect();
        assert_eq!(images.len(), 1);
        assert!(images[0].content.is_empty() && images[0].dict.get(b"Filter").is_err());
        let mut dev = crate::pdftext::TextDev::default();
        pdf_extract::output_doc_page(&doc, &mut dev, 1).unwrap();
        assert!(dev.text.contains("Hello guard"), "{}", dev.text);
    }

    #[test]
    fn a_deflate_bomb_content_stream_is_over_the_limit() {
        let mut content = b"BT /F1 12 Tf 72 700 Td (x) Tj ET\n".to_vec();
        content.resize(3 << 20, b' ');
        let bytes = pdf(b"\0", &content);
        let limits = Limits { max_inflated_bytes: 2 << 20, ..Limits::default() };
        let e = load(&bytes, "bomb.pdf", &limits).unwrap_err();
        assert!(matches!(&e, ConvertError::OverLimit(m) if m.contains("3145728 bytes")), "{e}");
        assert!(load(&bytes, "bomb.pdf", &Limits::default()).is_ok(), "within the default limit");
    }

    #[test]
    fn inflated_sizes_are_counted_for_lone_flate_streams_only() {
        let s = Stream::new(dictionary! {"Filter" => "FlateDecode"}, deflate(&[7u8; 5000]));
        assert_eq!(inflated_size(&s), Some(5000));
        let plain = Stream::new(Dictionary::new(), vec![1, 2, 3]);
        assert_eq!(inflated_size(&plain), None);
        let broken = Stream::new(dictionary! {"Filter" => "FlateDecode"}, b"not zlib".to_vec());
        assert_eq!(inflated_size(&broken), None);
    }
}
