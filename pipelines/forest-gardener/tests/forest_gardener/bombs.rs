//! Decompression bombs, one per format family, generated here (small on
//! disk), adopted in one folder beside ordinary files: every ordinary file
//! is planted, every bomb is planted as a stub naming the decoder limit it
//! hit (one warning each), and the run goes on. Memory is proven by
//! `bench/memory.sh`, not here.

use super::*;
use std::io::Write;

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A zip of `entries` (name, bytes), deflated (an ODF `mimetype` stored).
fn zip_of(path: &Path, entries: &[(String, Vec<u8>)]) {
    let mut z = zip::ZipWriter::new(fs::File::create(path).unwrap());
    let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let stored = o.compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in entries {
        z.start_file(name.as_str(), if name == "mimetype" { stored } else { o }).unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap();
}

/// A one-page PDF whose content stream inflates to `inflated` bytes (text,
/// then spaces): a deflate bomb past the 32 MiB stream limit.
fn deflate_bomb_pdf(path: &Path, inflated: usize) {
    let mut content = b"BT /F1 12 Tf 72 700 Td (boom) Tj ET\n".to_vec();
    content.resize(inflated, b' ');
    let z = deflate(&content);
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    let objs: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>".to_vec(),
        [format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", z.len()).into_bytes(), z, b"\nendstream".to_vec()]
            .concat(),
    ];
    for (i, o) in objs.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", i + 1).bytes());
        out.extend(o);
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).bytes());
    for o in offsets {
        out.extend(format!("{o:010} 00000 n \n").bytes());
    }
    out.extend(format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objs.len() + 1).bytes());
    fs::write(path, out).unwrap();
}

/// Billion laughs: ten entities, each ten of the one before.
fn laughs() -> String {
    let mut dtd = String::from("<!DOCTYPE lolz [\n<!ENTITY lol0 \"lol\">\n");
    for i in 1..10 {
        let refs: String = (0..10).map(|_| format!("&lol{};", i - 1)).collect();
        dtd.push_str(&format!("<!ENTITY lol{i} \"{refs}\">\n"));
    }
    format!("<?xml version=\"1.0\"?>\n{dtd}]>\n")
}

/// Image headers declaring 100,000 × 100,000 pixels (no pixel data).
fn huge_images(dir: &Path) {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend(100_000u32.to_be_bytes());
    png.extend(100_000u32.to_be_bytes());
    png.extend([8, 6, 0, 0, 0, 0, 0, 0, 0]);
    fs::write(dir.join("huge-png.png"), png).unwrap();
    let mut jpg = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0\xff\xc0\0\x11\x08".to_vec();
    jpg.extend([0x86, 0xa0, 0x86, 0xa0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9]);
    fs::write(dir.join("huge-jpeg.jpg"), jpg).unwrap();
    let mut tif = b"II*\0\x08\0\0\0\x02\0".to_vec();
    for tag in [256u16, 257] {
        tif.extend(tag.to_le_bytes());
        tif.extend(4u16.to_le_bytes());
        tif.extend(1u32.to_le_bytes());
        tif.extend(100_000u32.to_le_bytes());
    }
    tif.extend(0u32.to_le_bytes());
    fs::write(dir.join("huge-tiff.tiff"), tif).unwrap();
}

#[test]
fn decompression_bombs_become_stubs_and_the_run_goes_on() {
    let (dir, root, git) = setup();
    let src = dir.path().join("drive");
    fs::create_dir_all(&src).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../converters/forest-convert/tests/data");
    let normal = ["two-column-report.pdf", "quarterly-review.docx", "inventory.ods", "raw_notes.txt"];
    for f in normal {
        fs::copy(data.join(f), src.join(f)).unwrap();
    }
    // Zip bomb: one member of 300 MiB (over the 256 MiB unzipped limit).
    zip_of(&src.join("zip-bomb.docx"), &[("word/document.xml".into(), vec![0u8; 300 << 20])]);
    // Deflate bomb in a PDF content stream (40 MiB, over 32 MiB).
    deflate_bomb_pdf(&src.join("deflate-bomb.pdf"), 40 << 20);
    // Billion laughs in an office part, and as a plain XML file.
    let doc = format!("{}<w:document><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>", laughs());
    zip_of(&src.join("laughs.docx"), &[("word/document.xml".into(), doc.into_bytes())]);
    fs::write(src.join("laughs-plain.xml"), format!("{}<lolz>&lol9;</lolz>\n", laughs())).unwrap();
    huge_images(&src);
    // 10^5 sheets: an xlsx (one zip member per sheet) and an ODS (one content.xml).
    let mut xlsx: Vec<(String, Vec<u8>)> =
        (1..=100_000).map(|i| (format!("xl/worksheets/sheet{i}.xml"), vec![])).collect();
    xlsx.push(("xl/workbook.xml".into(), b"<workbook/>".to_vec()));
    zip_of(&src.join("sheets-xlsx.xlsx"), &xlsx);
    let tables: String = (0..100_000).map(|i| format!("<table:table table:name=\"s{i}\"/>")).collect();
    let content = format!(
        "<?xml version=\"1.0\"?><office:document-content xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" \
         xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\"><office:body><office:spreadsheet>{tables}\
         </office:spreadsheet></office:body></office:document-content>"
    );
    zip_of(
        &src.join("sheets-ods.ods"),
        &[
            ("mimetype".into(), b"application/vnd.oasis.opendocument.spreadsheet".to_vec()),
            ("META-INF/manifest.xml".into(), b"<manifest:manifest/>".to_vec()),
            ("content.xml".into(), content.into_bytes()),
        ],
    );
    let on_disk: u64 = fs::read_dir(&src).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    // Small beside what they inflate to (GiBs); the 10^5-member xlsx is
    // most of it (~13 MB of zip headers: a member per sheet).
    assert!(on_disk < 16 << 20, "the bombs are small on disk: {on_disk} bytes");

    let r = do_adopt(&root, &git, &src);
    let s = one(&r);
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let bombs = ["zip-bomb.docx", "deflate-bomb.pdf", "laughs.docx", "sheets-xlsx.xlsx", "sheets-ods.ods"];
    let reasons = [
        "declared uncompressed size exceeds the limit",
        "inflates to 41943040 bytes, over the limit",
        "declares entities in a DTD",
        "zip of 100001 entries exceed the limit",
        "workbook of 100000 sheets, over the limit of 1000",
    ];
    for (bomb, reason) in bombs.iter().zip(reasons) {
        let lines: Vec<&String> = s.warnings.iter().filter(|w| w.starts_with(&format!("{bomb}: "))).collect();
        assert_eq!(lines.len(), 1, "{bomb}: one clear problem: {:?}", s.warnings);
        assert!(lines[0].contains("over a decoder limit") && lines[0].contains(reason), "{}", lines[0]);
    }
    // Every file is planted: the ordinary ones with their text, each bomb
    // as a stub whose body says why, huge images as media stubs (never decoded).
    assert_eq!(s.planted.len(), normal.len() + bombs.len() + 4, "{:?} {:?}", s.planted, s.warnings);
    let bodies: Vec<(String, String)> = s
        .planted
        .iter()
        .map(|id| {
            let n = read_node(&root, &id);
            (n.get_str("source_path").unwrap_or_default().to_string(), n.body)
        })
        .collect();
    for (path, body) in &bodies {
        if bombs.contains(&path.as_str()) {
            assert!(body.contains("Not read: over a decoder limit ("), "{path}: {body}");
        } else {
            assert!(!body.contains("over a decoder limit"), "{path}: {body}");
        }
    }
    let body_of = |p: &str| &bodies.iter().find(|(path, _)| path == p).unwrap().1;
    assert!(body_of("two-column-report.pdf").contains("Two Column Report"), "{}", body_of("two-column-report.pdf"));
    // The plain XML file is its own text, entities never expanded.
    assert!(body_of("laughs-plain.xml").contains("&lol9;") && body_of("laughs-plain.xml").len() < 4096);
    assert_eq!(lint_forest(&root).errors, 0);
    fsck(&root);
}
