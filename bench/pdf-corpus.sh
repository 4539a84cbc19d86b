#!/usr/bin/env bash
# The PDF test files of OCRmyPDF, pikepdf and pypdf as their source
# distributions publish them (176 PDFs, 29 MB at the versions in
# bench/README.md): hostile and odd real PDFs (9000x9000 page images, deflate
# streams of 243 MB, broken xrefs). Prints the corpus folder.
#   bash bench/pdf-corpus.sh [DIR]   (default /tmp/forest-pdf-corpus)
# DIR/provenance.tsv records package, version and download URL; VERSIONS
# ("ocrmypdf==17.13.0 ...") pins them, else the newest are taken.
set -euo pipefail
D="${1:-/tmp/forest-pdf-corpus}"
mkdir -p "$D/dl" "$D/files"
if [ ! -s "$D/provenance.tsv" ]; then
  # The source distribution of each (its build backend may come as a wheel:
  # `--no-binary :all:` would build cmake from source for pikepdf's).
  for spec in ${VERSIONS:-ocrmypdf pikepdf pypdf}; do
    pip download --no-binary "${spec%%=*}" --no-deps -q -d "$D/dl" "$spec" >&2
  done
  printf 'package\tversion\turl\n' > "$D/provenance.tsv"
  for a in "$D"/dl/*.tar.gz; do
    base=$(basename "$a" .tar.gz); pkg=${base%-*}; ver=${base##*-}
    mkdir -p "$D/files/$pkg"
    tar -xzf "$a" -C "$D/dl"
    (cd "$D/dl/$base" && find . -iname '*.pdf' -exec cp --parents {} "$D/files/$pkg/" \;)
    printf '%s\t%s\thttps://files.pythonhosted.org/packages/source/%s/%s/%s.tar.gz\n' \
      "$pkg" "$ver" "${pkg:0:1}" "$pkg" "$base" >> "$D/provenance.tsv"
    rm -rf "${D:?}/dl/$base"
  done
fi
echo "$D/files"
