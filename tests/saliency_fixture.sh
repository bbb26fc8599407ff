#!/usr/bin/env bash
# tests/saliency_fixture.sh SHARED DEST — saliency datasets in the releases' layouts, built from the
# real photos and masks of the shared data (SHARED, ../shared/data) by symbolic links: the files are
# read in place, never copied.  Prints nothing; exit 1 when SHARED lacks a file.
#
#   DEST/ECSSD/       images/<seq>.jpg + ground_truth_mask/<seq>.png: 8 DAVIS-2017 test-dev first
#                     frames (854, 902, 910 and 1301 pixels wide; 1 to 7 objects, every id foreground)
#   DEST/DUTS-TE/     DUTS-TE-Image/ + DUTS-TE-Mask/: the 4 VOC photos with a SegmentationObject PNG
#                     (500 x 338 and 500 x 375; every nonzero value, VOC's boundary 255 too, is foreground)
#   DEST/DUT-OMRON/   DUT-OMRON-image/ + pixelwiseGT-new-PNG/: 6 frames of blackswan and car-shadow
#   DEST/tokencut/    img/ + gt/ (TokenCut's re-packaging): 6 frames of libby
set -eu -o pipefail
shared=$1 dest=$2
link() { # link SRC DST
  [ -f "$1" ] || { echo "saliency_fixture: $1: missing" >&2; exit 1; }
  ln -sf "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" "$2"
}
rm -rf "$dest"
mkdir -p "$dest/ECSSD/images" "$dest/ECSSD/ground_truth_mask" "$dest/DUTS-TE/DUTS-TE-Image" \
  "$dest/DUTS-TE/DUTS-TE-Mask" "$dest/DUT-OMRON/DUT-OMRON-image" "$dest/DUT-OMRON/pixelwiseGT-new-PNG" \
  "$dest/tokencut/img" "$dest/tokencut/gt"
td=$shared/davis_testdev_firstframe
for seq in bike-trial choreography dolphins inflatable selfie tackle turtle vietnam; do
  link "$td/JPEGImages/480p/$seq/00000.jpg" "$dest/ECSSD/images/$seq.jpg"
  link "$td/Annotations/480p/$seq/00000.png" "$dest/ECSSD/ground_truth_mask/$seq.png"
done
for voc in voc_labelme voc_official; do
  for f in "$shared/$voc"/SegmentationObject/*.png; do
    id=$(basename "$f" .png)
    link "$shared/$voc/JPEGImages/$id.jpg" "$dest/DUTS-TE/DUTS-TE-Image/$id.jpg"
    link "$f" "$dest/DUTS-TE/DUTS-TE-Mask/$id.png"
  done
done
for seq in blackswan car-shadow; do
  for fr in 00000 00014 00028; do
    link "$shared/davis/JPEGImages/480p/$seq/$fr.jpg" "$dest/DUT-OMRON/DUT-OMRON-image/$seq-$fr.jpg"
    link "$shared/davis/Annotations/480p/$seq/$fr.png" "$dest/DUT-OMRON/pixelwiseGT-new-PNG/$seq-$fr.png"
  done
done
for fr in 00003 00010 00017 00024 00031 00038; do
  link "$shared/davis/JPEGImages/480p/libby/$fr.jpg" "$dest/tokencut/img/libby_$fr.jpg"
  link "$shared/davis/Annotations/480p/libby/$fr.png" "$dest/tokencut/gt/libby_$fr.png"
done
