#!/usr/bin/env bash
# fuzz/make_seeds.sh [BUILD] — (re)writes the seed corpora in fuzz/corpus/ from small valid files:
# synthetic checkpoints and JSON (make_seeds.py), configs, VOC XML and two tiny caches made by the
# stages of BUILD (default build), and small images from tests/data/image.
set -eu -o pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
C=fuzz/corpus
/usr/bin/python3 fuzz/make_seeds.py
mkdir -p $C/ini $C/voc_xml $C/image $C/cache
cp configs/*.ini $C/ini/ 2>/dev/null || true
printf '[grid]\ntau = 0.125, 0.2\nedges = binary\nsplit = zero\nforeground = minority\nmasks = 8\n' >$C/ini/small_grid.ini
printf 'top = 1\n[a]\n; comment\n# comment\nk = v, w  x\n[b]\nk=\n' >$C/ini/sections.ini
for f in tests/data/image/synth/{gray1.png,pal4_interlaced.png,gray16.png,pal8_trns.png,progressive.jpg,optimized.jpg,gray.jpg,cmyk_adobe.jpg,rgb420.jpg} \
         tests/data/image/bad/{truncated.png,badcrc_ihdr.png}; do
  [ -f "$f" ] && cp "$f" $C/image/
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KC_QUIET=1
"$B"/kc-demo-data --out "$tmp/d" --train 1 --val 1 --videos 1 --frames 3 >/dev/null
cp "$(ls "$tmp"/d/voc/Annotations/*.xml | head -n 1)" $C/voc_xml/demo.xml
cat >$C/voc_xml/full.xml <<'XML'
<?xml version="1.0"?>
<annotation><folder>VOC2012</folder><filename>x.jpg</filename>
<size><width>500</width><height>375</height><depth>3</depth></size>
<object><name>dog</name><pose>Left</pose><truncated>0</truncated><difficult>0</difficult>
<bndbox><xmin>48.5</xmin><ymin>240</ymin><xmax>195</xmax><ymax>371</ymax></bndbox>
<part><name>head</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>3</xmax><ymax>4</ymax></bndbox></part></object>
<object><name>person</name><bndbox><xmin>8</xmin><ymin>12</ymin><xmax>352</xmax><ymax>498</ymax></bndbox></object>
</annotation>
XML
# tiny caches: two 32x32 images, the colour extractor with 16-pixel patches (2x2 grid)
mkdir -p "$tmp/img"
cp tests/data/image/synth/gray1.png "$tmp/img/a.png"
cp tests/data/image/synth/pal4_interlaced.png "$tmp/img/b.png"
"$B"/kc-extract --model color --dataset "dir:$tmp/img" --policy native16 --features keys,tokens --out "$tmp/keys.h5" >/dev/null
"$B"/kc-decode --features "$tmp/keys.h5" --setting t0.20-bin-mean-seed-n2 --out "$tmp/masks.h5" >/dev/null
cp "$tmp/keys.h5" fuzz/regressions/valid-features.h5
cp "$tmp/masks.h5" fuzz/regressions/valid-masks.h5
du -sh $C/*
