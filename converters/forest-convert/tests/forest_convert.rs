//! Integration tests for forest-convert: golden conversions, hostile
//! inputs, command hooks, dataset databases and the sample map.

use forest_convert::{Conversion, ConvertOutcome, Limits, Registry, Status};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn hostile_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile")
}

/// What a golden file records: the rendered body (or the final error line)
/// followed by any warnings.
fn render_outcome(out: &ConvertOutcome) -> String {
    let mut s = match (&out.result, out.error_line()) {
        (Ok(c), _) => c.render(),
        (Err(_), line) => format!("ERROR: {}\n", line.unwrap_or_default()),
    };
    if !out.warnings.is_empty() {
        s.push_str("\n<!-- warnings:\n");
        for w in &out.warnings {
            s.push_str(&format!("{w}\n"));
        }
        s.push_str("-->\n");
    }
    s
}

mod golden {
    use super::*;

    /// Each `tests/data/<case>.<ext>` converts to exactly
    /// `tests/data/expected/<case>.<ext>.md`; `UPDATE_GOLDEN=1` rewrites them.
    #[test]
    fn all_cases_match_expected() {
        let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
        let reg = Registry::builtin();
        let limits = Limits::default();
        let mut inputs: Vec<PathBuf> =
            std::fs::read_dir(data_dir()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
        inputs.sort();
        assert!(inputs.len() >= 30, "only {} golden cases", inputs.len());
        let mut failures = Vec::new();
        for input in &inputs {
            let name = input.file_name().unwrap().to_string_lossy().into_owned();
            let out = reg.convert(input, &format!("src/{name}"), &limits);
            assert!(!out.is_unsupported(), "{name} unsupported");
            let got = render_outcome(&out);
            let expected_path = data_dir().join("expected").join(format!("{name}.md"));
            if update {
                std::fs::create_dir_all(expected_path.parent().unwrap()).unwrap();
                std::fs::write(&expected_path, &got).unwrap();
                continue;
            }
            match std::fs::read_to_string(&expected_path) {
                Ok(want) if want == got => {}
                Ok(want) => failures.push(format!("{name}:\n--- want\n{want}\n--- got\n{got}")),
                Err(_) => failures.push(format!("{name}: missing {}", expected_path.display())),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    #[test]
    fn markdown_meta_is_lifted() {
        let out = Registry::builtin().convert(&data_dir().join("with-frontmatter.md"), "x.md", &Limits::default());
        match out.result.unwrap() {
            Conversion::Markdown { title, body, meta } => {
                assert_eq!(title, "Falcon Arm Q2 Update");
                assert_eq!(meta.tags, vec!["robotics", "falcon"]);
                assert_eq!(meta.aliases, vec!["FA-12"]);
                assert!(body.starts_with("# Heading That Is Not The Title"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn csv_types_follow_python_leniency() {
        let out = Registry::builtin().convert(&data_dir().join("python-lenient.csv"), "p.csv", &Limits::default());
        let Conversion::Dataset { tables, .. } = out.result.unwrap() else { panic!("not a dataset") };
        let types: Vec<&str> = tables[0].columns.iter().map(|(_, t)| t.sql()).collect();
        assert_eq!(types, vec!["INTEGER", "REAL", "TEXT", "REAL", "TEXT"]);
        assert_eq!(tables[0].rows[0][0], forest_convert::Cell::Int(7));
    }
}

mod hostile {
    use super::*;

    fn convert(path: &Path, limits: &Limits) -> ConvertOutcome {
        Registry::builtin().convert(path, &path.file_name().unwrap().to_string_lossy(), limits)
    }

    /// The line a file over a decoder limit leaves: planted as a stub that
    /// names the limit, with one warning.
    fn over_limit(out: ConvertOutcome) -> String {
        assert_eq!(out.status, Status::Stub("over a decoder limit".into()));
        let Ok(Conversion::Markdown { body, .. }) = &out.result else { panic!("{:?}", out.result) };
        assert!(body.contains("Not read: over a decoder limit ("), "{body}");
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        out.warnings[0].clone()
    }

    #[test]
    fn zip_bombs_are_refused_before_parsing() {
        let w = over_limit(convert(&hostile_dir().join("declared-huge.docx"), &Limits::default()));
        assert!(w.contains("declared uncompressed size exceeds"), "{w}");
        let w = over_limit(convert(&hostile_dir().join("many-entries.xlsx"), &Limits::default()));
        assert!(w.contains("10001 entries exceed the limit of 10000"), "{w}");
        // A small limit trips on an ordinary document too.
        let tight = Limits { max_zip_entries: 3, ..Limits::default() };
        let w = over_limit(convert(&data_dir().join("quarterly-review.docx"), &tight));
        assert!(w.contains("entries exceed the limit of 3"), "{w}");
        let one_sheet = Limits { max_sheets: 1, ..Limits::default() };
        let w = over_limit(convert(&data_dir().join("workbook-multi.xlsx"), &one_sheet));
        assert!(w.contains("sheets, over the limit of 1"), "{w}");
    }

    #[test]
    fn truncated_and_garbage_containers_error_cleanly() {
        let d = tempfile::tempdir().unwrap();
        let err = convert(&hostile_dir().join("truncated.docx"), &Limits::default()).error_line().unwrap();
        assert!(err.starts_with("truncated.docx: zip container rejected"), "{err}");
        let garbage: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for ext in ["pdf", "xlsx", "docx", "xls", "ods", "db", "json", "html", "csv", "msg"] {
            let p = d.path().join(format!("garbage.{ext}"));
            std::fs::write(&p, &garbage).unwrap();
            let out = convert(&p, &Limits::default());
            assert!(!out.is_unsupported(), "{ext}");
            // Text formats may accept bytes; binary ones must fail with a line.
            if matches!(ext, "pdf" | "xlsx" | "docx" | "xls" | "ods" | "db" | "json" | "msg") {
                let err = out.error_line().expect(ext);
                assert!(err.starts_with(&format!("garbage.{ext}: ")), "{err}");
            }
        }
        // Windows' thumbnail cache is skipped, not an error.
        let thumbs = d.path().join("Thumbs.db");
        let mut ole = vec![0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
        ole.extend_from_slice(&garbage);
        std::fs::write(&thumbs, ole).unwrap();
        let out = convert(&thumbs, &Limits::default());
        assert!(
            matches!(&out.status, forest_convert::Status::Skipped(r) if r.contains("thumbnail")),
            "{:?}",
            out.status
        );
        // A text file named .db is read as what it is, with a warning.
        let out = convert(&data_dir().join("notadb.db"), &Limits::default());
        assert_eq!(out.result.unwrap().title(), "notadb");
        assert_eq!(out.warnings, vec!["notadb.db: named .db but its content is text: converted as text"]);
    }

    #[test]
    fn oversized_input_is_refused_without_reading() {
        let limits = Limits { max_input_bytes: 100, ..Limits::default() };
        let err = convert(&data_dir().join("article.html"), &limits).error_line().unwrap();
        assert!(err.starts_with("article.html: input too large:"), "{err}");
    }

    #[test]
    fn two_megabyte_single_line_json_is_fast() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.json");
        let mut s = String::from("[");
        let mut i = 0;
        while s.len() < 2_000_000 {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&format!("{{\"id\":{i},\"name\":\"item {i}\",\"v\":{}.5}}", i % 97));
            i += 1;
        }
        s.push(']');
        std::fs::write(&p, &s).unwrap();
        let t0 = Instant::now();
        let out = convert(&p, &Limits::default());
        let Conversion::Dataset { tables, .. } = out.result.unwrap() else { panic!("not a dataset") };
        assert_eq!(tables[0].rows.len(), i);
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        // The same bytes as one huge text line (not a list of records).
        let p2 = d.path().join("big.txt");
        std::fs::write(&p2, &s).unwrap();
        let t0 = Instant::now();
        assert!(convert(&p2, &Limits::default()).result.is_ok());
        assert!(t0.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn deep_html_and_huge_csv_line_do_not_stall() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("deep.html");
        std::fs::write(&p, "<div><span>".repeat(200_000)).unwrap();
        let t0 = Instant::now();
        assert!(convert(&p, &Limits::default()).result.is_ok());
        assert!(t0.elapsed() < Duration::from_secs(10));
        let p = d.path().join("wide.csv");
        let header: Vec<String> = (0..5000).map(|i| format!("c{i}")).collect();
        std::fs::write(&p, format!("{}\n{}\n", header.join(","), header.join(","))).unwrap();
        let Conversion::Dataset { tables, .. } = convert(&p, &Limits::default()).result.unwrap() else {
            panic!("not a dataset")
        };
        assert_eq!(tables[0].columns.len(), 5000);
    }
}

#[cfg(unix)]
mod hooks {
    use super::*;
    use std::collections::BTreeMap;

    fn reg(ext: &str, tpl: &str, timeout: Duration) -> Registry {
        let mut m = BTreeMap::new();
        m.insert(ext.to_string(), tpl.to_string());
        Registry::builtin().with_command_hooks(&m, timeout)
    }

    fn input(d: &Path, name: &str, text: &str) -> PathBuf {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn stdout_and_output_file_are_read() {
        let d = tempfile::tempdir().unwrap();
        let p = input(d.path(), "doc.wpd", "# From Hook\n\nbody\n");
        let out = reg(".wpd", "cat {input}", Duration::from_secs(10)).convert(&p, "doc.wpd", &Limits::default());
        assert_eq!(out.result.unwrap().title(), "From Hook");
        let out = reg(".wpd", "sh -c 'printf \"plain\" > \"$0\"' {output}", Duration::from_secs(10)).convert(
            &p,
            "doc.wpd",
            &Limits::default(),
        );
        match out.result.unwrap() {
            Conversion::Markdown { title, body, .. } => {
                assert_eq!(title, "doc");
                assert_eq!(body, "plain");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failures_are_reported_and_fall_back() {
        let d = tempfile::tempdir().unwrap();
        let p = input(d.path(), "doc.wpd", "x");
        let out = reg(".wpd", "sh -c 'echo oops >&2; exit 3'", Duration::from_secs(10)).convert(
            &p,
            "doc.wpd",
            &Limits::default(),
        );
        assert_eq!(out.error_line().unwrap(), "doc.wpd: converter command failed for doc.wpd (exit 3): oops");
        let out = reg(".wpd", "true", Duration::from_secs(10)).convert(&p, "doc.wpd", &Limits::default());
        assert_eq!(out.error_line().unwrap(), "doc.wpd: converter command produced no markdown: doc.wpd");
        // A failing hook on .md falls back to the built-in passthrough.
        let md = input(d.path(), "n.md", "# Kept\n");
        let out = reg(".md", "false", Duration::from_secs(10)).convert(&md, "n.md", &Limits::default());
        assert_eq!(out.result.unwrap().title(), "Kept");
        assert_eq!(
            out.warnings,
            vec!["n.md: CommandHook(.md) failed, falling back: converter command failed for n.md (exit 1)"]
        );
    }

    #[test]
    fn sleeping_hook_is_killed_at_its_timeout() {
        let d = tempfile::tempdir().unwrap();
        let p = input(d.path(), "doc.wpd", "x");
        let t0 = Instant::now();
        let out = reg(".wpd", "sleep 30", Duration::from_millis(300)).convert(&p, "doc.wpd", &Limits::default());
        let err = out.error_line().unwrap();
        assert!(err.contains("timed out"), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(5));
    }
}

mod dataset_db {
    use super::*;
    use forest_convert::{write_dataset_db, Cell, ColType, Table};

    #[test]
    fn csv_dataset_round_trips_through_sqlite() {
        let reg = Registry::builtin();
        let out = reg.convert(&data_dir().join("quoted-multiline.csv"), "q.csv", &Limits::default());
        let Conversion::Dataset { title, tables } = out.result.unwrap() else { panic!("not a dataset") };
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("q.db");
        let hash = write_dataset_db(&tables, &db).unwrap();
        assert_eq!(hash.len(), 64);
        let back = reg.convert(&db, "q.db", &Limits::default());
        let Conversion::Payload { tables: pt, .. } = back.result.unwrap() else { panic!("not a payload") };
        assert_eq!(pt[0].count, Some(tables[0].rows.len() as i64));
        assert_eq!(pt[0].sample, tables[0].rows.iter().take(3).cloned().collect::<Vec<_>>());
        // Same map whether rendered from the conversion or the adopted file.
        let from_payload = back_render(&title, &pt);
        assert_eq!(from_payload, Conversion::Dataset { title: title.clone(), tables }.render());
    }

    fn back_render(title: &str, pt: &[forest_convert::PayloadTable]) -> String {
        Conversion::Payload { title: title.to_string(), tables: pt.to_vec() }.render()
    }

    #[test]
    fn many_tables_are_capped_in_the_map() {
        let tables: Vec<Table> = (0..22)
            .map(|i| Table {
                name: format!("t{i:02}"),
                columns: vec![("n".into(), ColType::Integer)],
                rows: if i == 0 { vec![] } else { vec![vec![Cell::Int(i)]] },
            })
            .collect();
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("many.db");
        write_dataset_db(&tables, &db).unwrap();
        let out = Registry::builtin().convert(&db, "many.db", &Limits::default());
        let body = out.result.unwrap().render();
        assert!(body.contains("### t00 — 0 rows\n\n_No rows._\n"), "{body}");
        assert!(body.contains("### t01 — 1 row\n"));
        assert!(!body.contains("### t20"));
        assert!(body.ends_with("\n_2 further table(s) not sampled; the manual above lists them all._\n"));
        assert!(body.contains("- `t21(n INTEGER)`"));
    }

    #[test]
    fn summary_uses_counts() {
        let s = forest_convert::dataset_summary("Orders", &[("orders".into(), Some(3)), ("items".into(), None)]);
        assert_eq!(s, "Tabular data 'Orders': 2 tables orders (3 rows), items. Adopted from source; pending curation.");
    }
}

mod real_golden {
    use super::*;

    fn golden_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/real-corpus/golden")
    }

    /// Real files from Debian packages and PyPI sdists (provenance in
    /// `forests/real-corpus/golden/PROVENANCE.tsv`), one or more per format:
    /// each converts to exactly `expected/<name>.md` (`UPDATE_GOLDEN=1` rewrites),
    /// never panics, and is never a failure or unsupported.
    #[test]
    fn real_files_match_expected() {
        let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
        let reg = Registry::builtin();
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(golden_dir().join("files"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        inputs.sort();
        assert!(inputs.len() >= 20, "only {} real golden files", inputs.len());
        let mut failures = Vec::new();
        for input in &inputs {
            let name = input.file_name().unwrap().to_string_lossy().into_owned();
            let out = reg.convert(input, &name, &Limits::default());
            let status = format!("{:?}", out.status);
            if matches!(out.status, forest_convert::Status::Failed | forest_convert::Status::Unsupported) {
                failures.push(format!("{name}: {status}: {:?}", out.result.as_ref().err()));
                continue;
            }
            let got = format!("<!-- status: {status} -->\n{}", render_outcome(&out));
            let expected_path = golden_dir().join("expected").join(format!("{name}.md"));
            if update {
                std::fs::create_dir_all(expected_path.parent().unwrap()).unwrap();
                std::fs::write(&expected_path, &got).unwrap();
                continue;
            }
            match std::fs::read_to_string(&expected_path) {
                Ok(want) if want == got => {}
                Ok(_) => failures.push(format!("{name}: differs from {}", expected_path.display())),
                Err(_) => failures.push(format!("{name}: missing {}", expected_path.display())),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

mod formats {
    use super::*;

    fn real_golden_file(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/real-corpus/golden/files").join(name)
    }
    use std::io::Write;

    fn md(path: &Path) -> (String, String, forest_convert::Status) {
        let out = Registry::builtin().convert(path, &path.file_name().unwrap().to_string_lossy(), &Limits::default());
        let status = out.status.clone();
        match out.result {
            Ok(Conversion::Markdown { title, body, .. }) => (title, body, status),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn eml_headers_text_and_attachments() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("mail.eml");
        std::fs::write(
            &p,
            "From: Ana Lima <ana@example.com>\r\nTo: team@example.com\r\nSubject: =?UTF-8?Q?Relat=C3=B3rio?= Q3\r\n\
Date: Tue, 1 Dec 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nNumbers attached [[1]].\r\n\
--b\r\nContent-Type: text/csv; name=\"q3.csv\"\r\nContent-Disposition: attachment; filename=\"q3.csv\"\r\n\r\na,b\r\n1,2\r\n--b--\r\n",
        )
        .unwrap();
        let (title, body, _) = md(&p);
        assert_eq!(title, "Relatório Q3");
        assert!(body.contains("- **From:** Ana Lima <ana@example.com>"), "{body}");
        assert!(body.contains("Numbers attached [\\[1]\\]."), "{body}");
        assert!(body.contains("## Attachments\n\n- `q3.csv` (text/csv, "), "{body}");
    }

    #[test]
    fn man_page_reads_as_sections_and_its_summary_starts_at_the_name_line() {
        let gz = real_golden_file("gzexe.1.gz");
        let (title, body, _) = md(&gz);
        assert_eq!(title, "gzexe(1)");
        assert!(body.starts_with("# gzexe(1)\n\n## NAME\n\ngzexe - compress executable files in place\n"), "{body}");
        assert!(!body.contains("\\f") && !body.contains("\n.SH"), "{body}");
        let summary = forest_model::scent::derive_summary(&body, &title);
        assert!(summary.starts_with("gzexe - compress executable files in place"), "{summary}");
        // The same page without a name that says it is one is found by content.
        let d = tempfile::tempdir().unwrap();
        let bare = d.path().join("gzexe");
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap()), &mut raw)
            .unwrap();
        std::fs::write(&bare, raw).unwrap();
        assert_eq!(md(&bare).1, body);
    }

    #[test]
    fn epub_chapters_in_spine_order() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("book.epub");
        let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
        let o = zip::write::SimpleFileOptions::default();
        let mut put = |name: &str, body: &str| {
            z.start_file(name, o).unwrap();
            z.write_all(body.as_bytes()).unwrap();
        };
        put("mimetype", "application/epub+zip");
        put(
            "META-INF/container.xml",
            r#"<container><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>"#,
        );
        put(
            "OEBPS/content.opf",
            r#"<package><metadata><dc:title>Field Book</dc:title></metadata><manifest>
<item id="a" href="ch%201.xhtml"/><item id="b" href="ch2.xhtml"/></manifest>
<spine><itemref idref="b"/><itemref idref="a"/></spine></package>"#,
        );
        put("OEBPS/ch 1.xhtml", "<html><body><h1>One</h1><p>First written.</p></body></html>");
        put("OEBPS/ch2.xhtml", "<html><body><h1>Two</h1><p>Read first.</p></body></html>");
        z.finish().unwrap();
        let (title, body, _) = md(&p);
        assert_eq!(title, "Field Book");
        assert_eq!(body, "# Field Book\n\n## Two\n\nRead first.\n\n## One\n\nFirst written.\n");
    }

    #[test]
    fn compressed_csv_is_a_dataset_and_tsv_jsonl_parse() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sales.csv.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(b"region,total\nnorth,10\nsouth,12\n").unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let out = Registry::builtin().convert(&p, "sales.csv.gz", &Limits::default());
        assert_eq!(out.converter.unwrap().name, "Gzip+Csv");
        let Ok(Conversion::Dataset { tables, .. }) = out.result else { panic!("not a dataset") };
        assert_eq!(tables[0].rows.len(), 2);
        let t = d.path().join("x.tsv");
        std::fs::write(&t, "a\tb,c\n1\t\"2,3\"\n").unwrap();
        let Ok(Conversion::Dataset { tables, .. }) =
            Registry::builtin().convert(&t, "x.tsv", &Limits::default()).result
        else {
            panic!("tsv")
        };
        assert_eq!(tables[0].columns.len(), 2);
        let j = d.path().join("x.jsonl");
        std::fs::write(&j, "{\"a\":1,\"b\":{\"n\":2}}\n\nnot json\n{\"a\":3}\n").unwrap();
        let out = Registry::builtin().convert(&j, "x.jsonl", &Limits::default());
        assert_eq!(out.warnings, vec!["x.jsonl: 1 line(s) are not JSON objects and were left out"]);
        let Ok(Conversion::Dataset { tables, .. }) = out.result else { panic!("jsonl") };
        assert_eq!(tables[0].rows.len(), 2);
    }

    #[test]
    fn extensionless_media_and_tar_listing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("scan");
        std::fs::write(&p, b"II*\0\x08\0\0\0\0\0\0\0\0\0\0\0").unwrap();
        let (_, body, status) = md(&p);
        assert_eq!(status, forest_convert::Status::Stub("media".into()));
        assert!(body.contains("(TIF format, 16 bytes)"), "{body}");
        let t = d.path().join("docs.tar");
        let mut b = tar::Builder::new(std::fs::File::create(&t).unwrap());
        let mut h = tar::Header::new_gnu();
        h.set_size(5);
        h.set_cksum();
        b.append_data(&mut h, "a/readme.txt", &b"hello"[..]).unwrap();
        b.finish().unwrap();
        drop(b);
        let (_, body, _) = md(&t);
        assert!(
            body.contains("Tar archive with 1 member(s), 5 bytes uncompressed.\n\n- `a/readme.txt` (5 bytes)"),
            "{body}"
        );
    }
}

/// Legacy-encoded text (CPython's cjkencodings test data, tests/data/cjk/PROVENANCE):
/// each file converts to a body with a phrase of its UTF-8 counterpart and no U+FFFD.
mod charsets {
    use super::*;

    fn converts_to(enc: &str, phrase: &str) {
        let dir = data_dir().join("cjk");
        let utf8 = std::fs::read_to_string(dir.join(format!("{enc}-utf8.txt"))).unwrap();
        assert!(utf8.contains(phrase), "{enc}: phrase not in the UTF-8 counterpart");
        let name = format!("{enc}.txt");
        let out = Registry::builtin().convert(&dir.join(&name), &name, &Limits::default());
        let Ok(Conversion::Markdown { body, .. }) = out.result else { panic!("{enc}: {:?}", out.result) };
        assert!(body.contains(phrase), "{enc}: {body}");
        assert!(!body.contains('\u{fffd}') && !body.contains('\u{1b}'), "{enc}: {body}");
        assert_eq!(out.suspect, None, "{enc}");
    }

    macro_rules! encodings {
        ($($test:ident: $enc:literal => $phrase:literal,)*) => {
            $(#[test]
            fn $test() {
                converts_to($enc, $phrase);
            })*
        };
    }

    encodings! {
        big5: "big5" => "在資訊科技快速發展的今天",
        big5_hkscs: "big5hkscs" => "鵮罓洆",
        cp949: "cp949" => "똠방각하 펲시콜라",
        euc_jp: "euc_jp" => "開発者の Guido van Rossum は教育用のプログラミング言語",
        shift_jis: "shift_jis" => "開発者の Guido van Rossum は教育用のプログラミング言語",
        iso2022_jp: "iso2022_jp" => "開発者の Guido van Rossum は教育用のプログラミング言語",
        euc_kr: "euc_kr" => "파이썬(Python)은 배우기 쉽고, 강력한 프로그래밍 언어입니다",
        iso2022_kr: "iso2022_kr" => "파이썬(Python)은 배우기 쉽고, 강력한 프로그래밍 언어입니다",
        gb18030: "gb18030" => "已经具有十多年的发展历史，成熟且稳定",
        gbk: "gbk" => "已经具有十多年的发展历史，成熟且稳定",
        gb2312: "gb2312" => "已经具有十多年的发展历史，成熟且稳定",
        hz: "hz" => "己所不欲，勿施於人。",
    }
}

/// Real generated manual pages (tests/data/man/PROVENANCE): the Pod::Man
/// preamble is recognised and no roff reaches the body.
mod man_pages {
    use super::*;

    fn roffish(line: &str) -> bool {
        let b = line.as_bytes();
        matches!(b.first(), Some(b'.' | b'\''))
            && (b.get(1).is_some_and(u8::is_ascii_alphabetic) || b[1..].starts_with(b"\\\""))
    }

    #[test]
    fn pod_man_and_help2man_pages_render_without_roff() {
        for (file, title, phrase) in [
            ("corelist.1.gz", "corelist(1)", "corelist - a commandline frontend to Module::CoreList"),
            ("arch.1.gz", "arch(1)", "arch - print machine hardware name (same as uname -m)"),
        ] {
            let out = Registry::builtin().convert(&data_dir().join("man").join(file), file, &Limits::default());
            assert_eq!(out.converter.as_ref().unwrap().name, "Gzip+Man", "{file}");
            let Ok(Conversion::Markdown { title: t, body, .. }) = out.result else { panic!("{file}") };
            assert_eq!(t, title);
            assert!(body.contains(&format!("## NAME\n\n{phrase}\n")), "{body}");
            assert_eq!(body.lines().find(|l| roffish(l)), None, "{file}");
            let summary = forest_model::scent::derive_summary(&body, &t);
            assert!(summary.starts_with(phrase.split(" - ").next().unwrap()), "{summary}");
            assert_eq!(out.suspect, None);
        }
    }
}
