#!/usr/bin/env bash
# Rebuild the real-world converter corpus from packages the registries serve.
#
# Usage: forests/real-corpus/build.sh OUT_DIR
# Needs: apt-get (Debian), dpkg-deb, python3 -m pip, cargo. Writes OUT_DIR/files/<origin>/...
# and OUT_DIR/PROVENANCE.tsv (path, package, version, licence) — one line per file.
# Packages are pinned by name only; versions are whatever the mirror serves and are
# recorded in PROVENANCE.tsv.
set -euo pipefail
# The repository, resolved before the script changes directory.
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:?usage: build.sh OUT_DIR}
mkdir -p "$OUT/debs" "$OUT/sdists" "$OUT/files"
OUT=$(cd "$OUT" && pwd)
PROV="$OUT/PROVENANCE.tsv"
printf 'path\tpackage\tversion\tlicence\n' > "$PROV"

# Documentation-heavy Debian packages: manuals (PDF, HTML, info, man), changelogs, copyright files.
DEBS=(bash-doc sqlite3-doc git-doc docutils-doc python3-docutils gnupg gawk-doc
      libpng-dev debian-reference-en asciidoc-base grep sed tar gzip coreutils
      findutils diffutils less nano manpages libjpeg-tools libtiff-tools
      sound-theme-freedesktop texlive-latex-recommended-doc r-cran-readxl r-cran-readr
      librtf-writer-perl asciidoctor r-cran-vroom calibre)
# Large documentation packages: only these subtrees are kept (path globs).
declare -A KEEP=([texlive-latex-recommended-doc]='*/beamer/*|*/koma-script/*|*/caption/*|*/fancyvrb/*|*/listings/*'
                [r-cran-readxl]='*/extdata/*|*/doc/*' [r-cran-readr]='*/extdata/*|*/doc/*'
                [r-cran-vroom]='*/bench/*.tsv|*/extdata/*|*/doc/*' [calibre]='*/quick_start/*|*/doc/calibre/*')
# PyPI sdists of document libraries: their test files are real documents.
SDISTS=(python-docx python-pptx odfpy xlrd openpyxl pdfminer.six mammoth
        EbookLib extract-msg striprtf pyexcel-ods3 pypdf orgparse)

licence_of_deb() { # first License: field of the package's copyright file
  local root=$1 pkg=$2 f
  f=$(find "$root/usr/share/doc" -maxdepth 2 -name copyright 2>/dev/null | head -1)
  [ -n "$f" ] && grep -m1 -E '^License:' "$f" | sed 's/^License: *//' || echo "see usr/share/doc/$pkg/copyright"
}

if [ ! -f "$OUT/.apt-updated" ]; then apt-get update -qq && touch "$OUT/.apt-updated"; fi
cd "$OUT/debs"
for p in "${DEBS[@]}"; do
  p=${p%\?}
  ls "${p}"_*.deb >/dev/null 2>&1 || apt-get download "$p" >/dev/null 2>&1 || echo "skip deb $p" >&2
done
for deb in "$OUT"/debs/*.deb; do
  pkg=$(dpkg-deb -f "$deb" Package); ver=$(dpkg-deb -f "$deb" Version)
  root="$OUT/files/deb/$pkg"
  rm -rf "$root"; mkdir -p "$root"
  dpkg-deb -x "$deb" "$root"
  lic=$(licence_of_deb "$root" "$pkg")
  if [ -n "${KEEP[$pkg]:-}" ]; then
    IFS='|' read -ra globs <<< "${KEEP[$pkg]}"
    args=(); for g in "${globs[@]}"; do args+=(-path "$g" -o); done; unset 'args[-1]'
    find "$root" -type f ! \( "${args[@]}" \) -delete
  else
  # Keep documents only: binaries and libraries are not what a company drive holds.
  find "$root" -type f \( -path '*/usr/bin/*' -o -path '*/usr/sbin/*' -o -path '*/usr/lib/*' -o -path '*/bin/*' -o -name '*.so*' -o -name '*.py' -o -name '*.pyc' -o -name '*.mo' \) -delete
  fi
  find "$root" -type l -delete
  find "$root" -type f | while read -r f; do
    printf '%s\t%s\t%s\t%s\n' "${f#$OUT/files/}" "deb:$pkg" "$ver" "$lic" >> "$PROV"
  done
done

cd "$OUT/sdists"
for p in "${SDISTS[@]}"; do
  ls | grep -qi "^${p//-/[-_]}-" || python3 -m pip download -q --no-deps --no-binary :all: "$p" >/dev/null 2>&1 || echo "skip sdist $p" >&2
done
for sd in "$OUT"/sdists/*; do
  base=$(basename "$sd"); root="$OUT/files/pypi/${base%.tar.gz}"; root=${root%.zip}
  rm -rf "$root"; mkdir -p "$root"
  case "$sd" in *.zip) python3 -m zipfile -e "$sd" "$root" ;; *) tar -xf "$sd" -C "$root" ;; esac
  pkginfo=$(find "$root" -maxdepth 2 -name PKG-INFO | head -1)
  name=$(grep -m1 '^Name:' "$pkginfo" | cut -d' ' -f2-); ver=$(grep -m1 '^Version:' "$pkginfo" | cut -d' ' -f2-)
  lic=$(grep -m1 -E '^License(-Expression)?:' "$pkginfo" | cut -d' ' -f2- | cut -c1-60)
  [ -z "$lic" ] && lic=$(grep -m1 'License ::' "$pkginfo" | sed 's/.*License :: //')
  # Source code is not the point: keep the documents and test files a library reads.
  find "$root" -type f \( -name '*.py' -o -name '*.pyc' -o -name '*.pyi' -o -name '*.c' -o -name '*.h' -o -name '*.cfg' -o -name '*.toml' -o -name 'PKG-INFO' -o -name '*.in' \) -delete
  find "$root" -type l -delete
  find "$root" -type f | while read -r f; do
    printf '%s\t%s\t%s\t%s\n' "${f#$OUT/files/}" "pypi:$name" "$ver" "${lic:-unknown}" >> "$PROV"
  done
done
# Test data shipped inside crates this workspace depends on (versions pinned by
# Cargo.lock, fetched by cargo): real e-mails and Outlook messages.
declare -A CRATE_DATA=([mail-parser]='resources/eml/thirdparty' [msg_parser]='data')
(cd "$REPO" && cargo fetch --locked -q)
CARGO_SRC="${CARGO_HOME:-$HOME/.cargo}/registry/src"
for c in "${!CRATE_DATA[@]}"; do
  ver=$(awk -v n="$c" '$0=="name = \""n"\"" {getline; gsub(/version = |"/, ""); print; exit}' "$REPO/Cargo.lock")
  src=$(ls -d "$CARGO_SRC"/*/"$c-$ver" 2>/dev/null | head -1)
  [ -n "$src" ] || { echo "skip crate $c $ver" >&2; continue; }
  lic=$(grep -m1 '^license = ' "$src/Cargo.toml" | sed 's/license = //; s/"//g')
  root="$OUT/files/crate/$c-$ver"; rm -rf "$root"; mkdir -p "$root"
  cp -r "$src/${CRATE_DATA[$c]}" "$root/"
  find "$root" -type f \( -name '*.json' -o -name '*.rs' \) -delete
  find "$root" -type f | while read -r f; do
    printf '%s\t%s\t%s\t%s\n' "${f#$OUT/files/}" "crate:$c" "$ver" "$lic" >> "$PROV"
  done
done
find "$OUT/files" -type d -empty -delete
echo "files: $(($(wc -l < "$PROV") - 1))" >&2
