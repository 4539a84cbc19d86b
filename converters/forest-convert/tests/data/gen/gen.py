#!/usr/bin/env python3
"""Generate the binary golden inputs for forest-convert's tests.

Standard library only, except `.xls` which uses xlwt (generation only:
`pip install --target /tmp/pyxlwt xlwt`; PYTHONPATH=/tmp/pyxlwt). The
outputs are committed, so tests never need Python.
Run from this directory: python3 gen.py
"""
import os
import sqlite3
import sys
import zipfile

OUT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
HOSTILE = os.path.join(OUT, "..", "hostile")


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def write_zip(path, parts):
    """parts: list of (name, text); deterministic timestamps."""
    if os.path.exists(path):
        os.remove(path)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            z.writestr(info, data)


# ---------------------------------------------------------------- xlsx
def col_letter(i):
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def xlsx_cell(ref, v):
    if v is None:
        return ""
    if isinstance(v, tuple) and v[0] == "date":  # Excel serial date, style 1
        return f'<c r="{ref}" s="1"><v>{v[1]}</v></c>'
    if isinstance(v, bool):
        return f'<c r="{ref}" t="b"><v>{int(v)}</v></c>'
    if isinstance(v, (int, float)):
        return f'<c r="{ref}"><v>{v}</v></c>'
    return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{esc(v)}</t></is></c>'


def xlsx_sheet(rows, merges=(), dimension=None, start_row=1):
    out = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
           '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">']
    if dimension:
        out.append(f'<dimension ref="{dimension}"/>')
    out.append("<sheetData>")
    for r, row in enumerate(rows, start=start_row):
        cells = "".join(xlsx_cell(f"{col_letter(c)}{r}", v) for c, v in enumerate(row))
        out.append(f'<row r="{r}">{cells}</row>')
    out.append("</sheetData>")
    if merges:
        out.append(f'<mergeCells count="{len(merges)}">' + "".join(f'<mergeCell ref="{m}"/>' for m in merges) + "</mergeCells>")
    out.append("</worksheet>")
    return "".join(out)


def write_xlsx(path, sheets):
    """sheets: list of (name, sheet_xml)."""
    ct = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
          '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">',
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>',
          '<Default Extension="xml" ContentType="application/xml"/>',
          '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>',
          '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>']
    for i in range(len(sheets)):
        ct.append(f'<Override PartName="/xl/worksheets/sheet{i+1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>')
    ct.append("</Types>")
    rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
            '</Relationships>')
    wb = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
          '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>']
    wbrels = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
              '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">']
    for i, (name, _) in enumerate(sheets):
        wb.append(f'<sheet name="{esc(name)}" sheetId="{i+1}" r:id="rId{i+1}"/>')
        wbrels.append(f'<Relationship Id="rId{i+1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet{i+1}.xml"/>')
    n = len(sheets)
    wbrels.append(f'<Relationship Id="rId{n+1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>')
    wb.append("</sheets></workbook>")
    wbrels.append("</Relationships>")
    styles = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
              '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
              '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
              '<fills count="1"><fill><patternFill patternType="none"/></fill></fills>'
              '<borders count="1"><border/></borders>'
              '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
              '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
              '<xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
              '</styleSheet>')
    parts = [("[Content_Types].xml", "".join(ct)), ("_rels/.rels", rels), ("xl/workbook.xml", "".join(wb)),
             ("xl/_rels/workbook.xml.rels", "".join(wbrels)), ("xl/styles.xml", styles)]
    for i, (_, xml) in enumerate(sheets):
        parts.append((f"xl/worksheets/sheet{i+1}.xml", xml))
    write_zip(path, parts)


def gen_xlsx():
    sales = xlsx_sheet([
        ["Region", "Units", "Revenue", "Closed On", None, "Note"],
        ["North", 12, 1250.5, ("date", 46037), None, "first | pipe"],
        ["South", 7, 300, ("date", 46038), None, None],
        [None, None, None, None, None, None],
        ["Merged total", None, 1550.5, ("date", 46040), None, "merged A5:B5"],
        ["East", "n/a", 0.00001, None, None, "   spaced    out   "],
    ], merges=["A5:B5"], dimension="A1:Z999")
    sales_dup = xlsx_sheet([["Id", "Id", ""], [1, 2, "x"], [3, 4, "y"]])
    lonely = xlsx_sheet([["Only header"]])
    offset = xlsx_sheet([["k", "v"], ["a", True], ["b", False]], start_row=4)
    write_xlsx(os.path.join(OUT, "workbook-multi.xlsx"), [
        ("Sales 2026", sales), ("sales-2026", sales_dup), ("Lonely", lonely), ("Offset Sheet", offset)])
    header = [f"Field {i}" for i in range(141)]
    rows = [header] + [[r * 1000 + c for c in range(141)] for r in range(4)]
    write_xlsx(os.path.join(OUT, "export-141-columns.xlsx"), [("Export", xlsx_sheet(rows))])
    write_xlsx(os.path.join(OUT, "empty-workbook.xlsx"), [("S1", xlsx_sheet([["a", "b"]])), ("S2", xlsx_sheet([]))])


# ---------------------------------------------------------------- ods
def gen_ods():
    def cell(v):
        if v is None:
            return "<table:table-cell/>"
        if isinstance(v, tuple):
            return (f'<table:table-cell office:value-type="date" office:date-value="{v[1]}">'
                    f"<text:p>{v[1]}</text:p></table:table-cell>")
        if isinstance(v, (int, float)):
            return f'<table:table-cell office:value-type="float" office:value="{v}"><text:p>{v}</text:p></table:table-cell>'
        return f'<table:table-cell office:value-type="string"><text:p>{esc(v)}</text:p></table:table-cell>'

    def table(name, rows):
        body = "".join("<table:table-row>" + "".join(cell(v) for v in r) + "</table:table-row>" for r in rows)
        return f'<table:table table:name="{esc(name)}">{body}</table:table>'

    content = ('<?xml version="1.0" encoding="UTF-8"?>'
               '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
               "<office:body><office:spreadsheet>"
               + table("Inventory", [["SKU", "Qty", "Price", "Counted"], ["A-101", 5, 9.99, ("d", "2026-02-01")],
                                     ["B-202", 0, 120, ("d", "2026-02-02")]])
               + table("Notes", [["only one row"]])
               + "</office:spreadsheet></office:body></office:document-content>")
    manifest = ('<?xml version="1.0" encoding="UTF-8"?>'
                '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
                '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
                '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
                "</manifest:manifest>")
    write_zip(os.path.join(OUT, "inventory.ods"), [
        ("mimetype", "application/vnd.oasis.opendocument.spreadsheet"),
        ("META-INF/manifest.xml", manifest), ("content.xml", content)])


# ---------------------------------------------------------------- xls
def gen_xls():
    try:
        import xlwt
    except ImportError:
        print("xlwt missing: skipping .xls", file=sys.stderr)
        return
    import datetime
    wb = xlwt.Workbook()
    s = wb.add_sheet("Budget Lines")
    datefmt = xlwt.easyxf(num_format_str="YYYY-MM-DD")
    rows = [["Line", "Amount", "Approved", "Due"], ["Travel", 1200, True, datetime.date(2026, 3, 1)],
            ["Hardware", 899.99, False, datetime.date(2026, 4, 15)]]
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            if isinstance(v, datetime.date):
                s.write(r, c, v, datefmt)
            else:
                s.write(r, c, v)
    wb.add_sheet("Empty")
    wb.save(os.path.join(OUT, "budget.xls"))


# ---------------------------------------------------------------- docx
W = ('xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
     'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
     'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
     'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
     'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
     'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
     'xmlns:v="urn:schemas-microsoft-com:vml"')


def para(text, style=None, runs=None):
    ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    runs = runs if runs is not None else [text]
    return "<w:p>" + ppr + "".join(f'<w:r><w:t xml:space="preserve">{esc(t)}</w:t></w:r>' for t in runs) + "</w:p>"


def textbox(text):
    inner = f"<w:txbxContent>{para(text)}</w:txbxContent>"
    return ("<w:p><w:r><w:t>Sidebar:</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires=\"wps\"><w:drawing><wp:anchor>"
            "<a:graphic><a:graphicData><wps:wsp><wps:txbx>" + inner + "</wps:txbx></wps:wsp></a:graphicData></a:graphic>"
            "</wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>" + inner +
            "</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>")


def tbl(rows):
    out = "<w:tbl><w:tblPr/>"
    for r in rows:
        out += "<w:tr>" + "".join(f"<w:tc>{para(c)}</w:tc>" for c in r) + "</w:tr>"
    return out + "</w:tbl>"


def write_docx(path, body_xml, with_header=True):
    document = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {W}><w:body>{body_xml}<w:sectPr/></w:body></w:document>'
    styles = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles {W}>'
              '<w:style w:type="paragraph" w:styleId="Normal"><w:name w:val="Normal"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>'
              '<w:style w:type="paragraph" w:styleId="Berschrift3"><w:name w:val="heading 3"/></w:style>'
              "</w:styles>")
    header = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:hdr {W}>{para("CONFIDENTIAL HEADER")}</w:hdr>'
    ct = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
          '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
          '<Default Extension="xml" ContentType="application/xml"/>'
          '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
          '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>'
          '<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>'
          "</Types>")
    rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
            "</Relationships>")
    docrels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
               '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
               '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>'
               '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/>'
               "</Relationships>")
    parts = [("[Content_Types].xml", ct), ("_rels/.rels", rels), ("word/document.xml", document),
             ("word/styles.xml", styles), ("word/_rels/document.xml.rels", docrels)]
    if with_header:
        parts.append(("word/header1.xml", header))
    write_zip(path, parts)


def gen_docx():
    body = (para("Quarterly Review", "Title")
            + para("", None, runs=[])
            + para("Summary", "Heading1")
            + para("", None, runs=["The quar", "ter went ", "well.   Revenue   grew."])
            + textbox("Boxed insight: margins up 4%.")
            + para("Numbers", "Heading2")
            + tbl([["Region", "Q1", "Q2"], ["North", "10", "12"], ["", "", ""], ["South|West", "7"]])
            + para("Deep dive", "Berschrift3")
            + para("Closing words.")
            + "<w:sdt><w:sdtContent>" + para("inside content control") + "</w:sdtContent></w:sdt>")
    write_docx(os.path.join(OUT, "quarterly-review.docx"), body)
    write_docx(os.path.join(OUT, "no_headings.docx"), para("Just a plain paragraph.") + tbl([["a", "b"], ["1", "2"]]))
    write_docx(os.path.join(OUT, "empty-doc.docx"), para(""), with_header=False)


# ---------------------------------------------------------------- pdf
def write_pdf(path, pages, title=None):
    """pages: list of content-stream strings using font /F1 (Helvetica)."""
    objs = {}
    n_pages = len(pages)
    objs[1] = "<< /Type /Catalog /Pages 2 0 R >>"
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n_pages))
    objs[2] = f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>"
    objs[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    for i, content in enumerate(pages):
        p, c = 4 + 2 * i, 5 + 2 * i
        objs[p] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                   f"/Resources << /Font << /F1 3 0 R >> >> /Contents {c} 0 R >>")
        data = content.encode("latin-1")
        objs[c] = (f"<< /Length {len(data)} >>\nstream\n", data, b"\nendstream")
    info_id = None
    if title:
        info_id = 4 + 2 * n_pages
        objs[info_id] = f"<< /Title ({title}) /Producer (forest-convert gen.py) >>"
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for k in sorted(objs):
        offsets[k] = len(out)
        out += f"{k} 0 obj\n".encode()
        v = objs[k]
        if isinstance(v, tuple):
            out += v[0].encode() + v[1] + v[2]
        else:
            out += v.encode()
        out += b"\nendobj\n"
    xref = len(out)
    size = max(objs) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    for k in range(1, size):
        out += f"{offsets[k]:010d} 00000 n \n".encode()
    trailer = f"<< /Size {size} /Root 1 0 R" + (f" /Info {info_id} 0 R" if info_id else "") + " >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    with open(path, "wb") as f:
        f.write(out)


def text_at(x, y, s, size=11):
    s = s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"BT /F1 {size} Tf {x} {y} Td ({s}) Tj ET\n"


def gen_pdf():
    left = ["Left column starts here.", "It continues on a second", "line of the left column."]
    right = ["Right column text runs", "in parallel with the left", "column on the same page."]
    p1 = text_at(72, 740, "Two Column Report", 18)
    for i, (l, r) in enumerate(zip(left, right)):
        y = 700 - 16 * i
        p1 += text_at(72, y, l) + text_at(320, y, r)
    p2 = text_at(72, 740, "Table of results", 14)
    table = [["Item", "Qty", "Price"], ["Widget", "4", "2.50"], ["Gadget", "10", "13.00"]]
    for i, row in enumerate(table):
        y = 700 - 18 * i
        for j, cell in enumerate(row):
            p2 += text_at(72 + 150 * j, y, cell)
    write_pdf(os.path.join(OUT, "two-column-report.pdf"), [p1, p2], title="Two Column Report (2026)")
    write_pdf(os.path.join(OUT, "scanned-no-text.pdf"), ["0 0 1 rg 100 100 200 200 re f\n"])


# ---------------------------------------------------------------- sqlite
def gen_sqlite():
    path = os.path.join(OUT, "inventory-adopt.sqlite")
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE parts (id INTEGER PRIMARY KEY, name text, weight_kg REAL, photo BLOB, misc);
        CREATE TABLE empty_table (a TEXT, b INT);
        CREATE TABLE "Mixed Case" ("odd|col" varchar(20), n NUMERIC);
        CREATE VIEW heavy AS SELECT * FROM parts WHERE weight_kg > 1;
    """)
    con.executemany("INSERT INTO parts VALUES (?,?,?,?,?)", [
        (1, "bolt", 0.01, b"\x00\x01\x02", None), (2, "gear  box\nassembly", 300.0, None, 1250.5),
        (3, "x" * 130, 1e-05, None, "text"), (4, "spare", 2.0, None, None)])
    con.execute("INSERT INTO \"Mixed Case\" VALUES (?, ?)", ("a|b", 7))
    con.execute("INSERT INTO \"Mixed Case\" VALUES (CAST(X'ff fe' AS TEXT), 1)".replace("X'ff fe'", "X'fffe'"))
    con.commit()
    con.close()
    path = os.path.join(OUT, "tables-only-views.db")
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.execute("CREATE VIEW v AS SELECT 1 AS one")
    con.commit()
    con.close()


# ---------------------------------------------------------------- hostile
def gen_hostile():
    os.makedirs(HOSTILE, exist_ok=True)
    # A docx whose central directory declares ~4 GiB for one entry.
    p = os.path.join(HOSTILE, "declared-huge.docx")
    write_docx(p, para("tiny"))
    data = bytearray(open(p, "rb").read())
    i = data.rfind(b"word/document.xml")
    cd = data.rfind(b"PK\x01\x02", 0, i)
    data[cd + 24:cd + 28] = (0xFFFFFFF0).to_bytes(4, "little")
    open(p, "wb").write(bytes(data))
    # 10,001 empty entries.
    p = os.path.join(HOSTILE, "many-entries.xlsx")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
        for k in range(10_001):
            z.writestr(zipfile.ZipInfo(f"e{k}", date_time=(2026, 1, 1, 0, 0, 0)), b"")
    # Truncated docx: first half of a valid one.
    src = open(os.path.join(OUT, "quarterly-review.docx"), "rb").read()
    open(os.path.join(HOSTILE, "truncated.docx"), "wb").write(src[: len(src) // 2])


if __name__ == "__main__":
    gen_xlsx()
    gen_ods()
    gen_xls()
    gen_docx()
    gen_pdf()
    gen_sqlite()
    gen_hostile()
    print("ok")
