# masks.mk — masks of your own photos (included by pipeline.mk, after its request's variables; its
# products are made by pipeline.mk with the others: kc_masks_products).
#
#   make masks IMAGES=photos [WEIGHTS=dino_deitsmall16_pretrain.pth] [SETTING=t0.15-bin-mean-corners-n3]
#
# Every .jpg .jpeg .png of IMAGES (not recursive; a file's id is its name without the extension)
# goes through kc-extract (square480), kc-center, kc-decode at SETTING (default MaskCut's published
# t0.15-bin-mean-corners-n3; SETTING=best, pipeline.mk's default, means that one here: there is no
# ground truth to choose with), then kc-show and kc-export.  The network is WEIGHTS's (the network
# `weights`), else the no-learning colour extractor ([color] of configs/demo-nets.ini), which finds
# colour blobs, not objects: real masks need a checkpoint.
#
# Products: $(OUT)/cache/<net>/images-<folder>/{keys,centered}.h5, masks-<setting>.h5, and in
# MASKS_DIR ($(OUT)/masks/<net>/<setting>/ by default): overlays/<id>.png (kc-show) with
# overlays/index.txt (the list, written last), png/<id>.png (palette PNG masks at the photos'
# sizes) and coco.json (kc-export; eval/export/export.h).
# Like every product of pipeline.mk (docs/design.md, "The make pipeline"), each is an explicit
# target with a recipe stamp holding its command as the request expands it (IMAGES, the network's
# options, SETTING, MASKS_SCORE, MASKS_DIR) and the SHA-256 of the weights: a changed request
# redoes what it changes, an unchanged one runs nothing.  The features also depend on the folder's
# list of photos, $(MASKS_CACHE)/photos.tsv (name, size and modification time of every .jpg .jpeg
# .png, any case), written when a make reads this file and only when it differs from the last one:
# a photo added, removed, renamed or overwritten in place (even under the same name and size)
# redoes the features and what follows.  IMAGES must be a path without spaces (the photos' names
# may have spaces).

#: IMAGES       (none)                 make masks: a folder of photos (.jpg .jpeg .png)
#: MASKS_DIR    $(OUT)/masks/<net>/<setting>  make masks: where overlays/, png/ and coco.json go
#: MASKS_SCORE  eigengap               make masks: the COCO annotations' score (kc-export --score: eigengap, lambda2, none)
IMAGES       ?=
MASKS_SCORE  ?= eigengap
MASKS_NETS_INI := configs/demo-nets.ini
MASKS_NET      := $(if $(WEIGHTS),weights,color)
MASKS_SETTING   = $(if $(filter best,$(SETTING)),t0.15-bin-mean-corners-n3,$(SETTING))
MASKS_CACHE     = $(OUT)/cache/$(MASKS_NET)/images-$(notdir $(abspath $(IMAGES)))
MASKS_DIR      ?= $(OUT)/masks/$(MASKS_NET)/$(MASKS_SETTING)
MASKS_GOALS     = $(MASKS_DIR)/overlays/index.txt $(MASKS_DIR)/coco.json

# the request, checked before anything runs
ifneq ($(filter masks,$(MAKECMDGOALS)),)
ifeq ($(IMAGES),)
$(error make masks needs IMAGES=DIR, a folder of photos (.jpg .jpeg .png))
endif
ifneq ($(words $(IMAGES)),1)
$(error IMAGES='$(IMAGES)': the folder's path must have no spaces (its photos' names may))
endif
ifeq ($(wildcard $(IMAGES)/.),)
$(error IMAGES=$(IMAGES): no such folder)
endif
ifneq ($(WEIGHTS),)
ifeq ($(wildcard $(WEIGHTS)),)
$(error WEIGHTS=$(WEIGHTS): no such file)
endif
endif
endif

# ---- the products (made by pipeline.mk before its stamps' check: $(kc_masks_products)) ----------
# $(1) the network (a section of NETS_INI, given as NETS by the goal below), $(2) the cache folder
define kc_masks_net
$(call kc_cached,$(2)/keys.h5,$(BUILD)/kc-extract $(KC_WDEP.$(1)) $(2)/photos.tsv,$(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset dir:$(IMAGES) --policy square480@SHARD@ --out @OUT@)
$(call kc_cached,$(2)/centered.h5,$(2)/keys.h5 $(BUILD)/kc-center,,\
  $(BUILD)/kc-center@SHARD@ $(2)/keys.h5 @OUT@)
$(call kc_cached,$(2)/masks-$(MASKS_SETTING).h5,$(2)/centered.h5 $(BUILD)/kc-decode,,\
  $(BUILD)/kc-decode --features $(2)/centered.h5 --kind keys --setting $(MASKS_SETTING)@SHARD@ --out @OUT@)
$(call kc_product,$(MASKS_DIR)/overlays/index.txt,$(2)/masks-$(MASKS_SETTING).h5 $(BUILD)/kc-show,,\
  rm -rf $(MASKS_DIR)/overlays && $(BUILD)/kc-show --masks $(2)/masks-$(MASKS_SETTING).h5 --setting $(MASKS_SETTING) \
    --images dir:$(IMAGES) --out $(MASKS_DIR)/overlays && ls $(MASKS_DIR)/overlays >$(MASKS_DIR)/overlays.index.tmp \
    && mv $(MASKS_DIR)/overlays.index.tmp $(MASKS_DIR)/overlays/index.txt)
$(call kc_product,$(MASKS_DIR)/coco.json,$(2)/masks-$(MASKS_SETTING).h5 $(BUILD)/kc-export,,\
  rm -rf $(MASKS_DIR)/png && $(BUILD)/kc-export --masks $(2)/masks-$(MASKS_SETTING).h5 --setting $(MASKS_SETTING) \
    --images dir:$(IMAGES) --score $(MASKS_SCORE) --out $(MASKS_DIR))
endef
# the list of photos, rewritten only when it changed (so that its time says when the folder did)
kc_masks_photos = $(shell mkdir -p $(1) && cd $(IMAGES) && find . -maxdepth 1 -type f \( -iname '*.jpg' -o -iname '*.jpeg' \
  -o -iname '*.png' \) -printf '%f\t%s\t%T@\n' | LC_ALL=C sort >$(abspath $(1))/photos.tsv.tmp && \
  { cmp -s $(abspath $(1))/photos.tsv.tmp $(abspath $(1))/photos.tsv && rm -f $(abspath $(1))/photos.tsv.tmp || \
    mv $(abspath $(1))/photos.tsv.tmp $(abspath $(1))/photos.tsv; })
kc_masks_products = $(if $(IMAGES),$(foreach n,$(filter $(MASKS_NET),$(NETS)),$(call kc_masks_photos,$(MASKS_CACHE))$(eval $(call kc_masks_net,$(n),$(MASKS_CACHE)))))

# ---- the goal ----------------------------------------------------------------------------------
.PHONY: masks
masks: all
	@echo "masks: $(if $(WEIGHTS),network 'weights' = $(WEIGHTS),no WEIGHTS: the no-learning colour extractor ([color] of $(MASKS_NETS_INI)) finds colour blobs; real masks need a checkpoint, e.g. WEIGHTS=dino_deitsmall16_pretrain.pth), setting $(MASKS_SETTING)"
	@$(MAKE) --no-print-directory NETS=$(MASKS_NET) NETS_INI=$(MASKS_NETS_INI) SETTING=$(MASKS_SETTING) $(MASKS_GOALS)
	@echo "masks: $(MASKS_DIR)/: overlays/ (kc-show), png/ (palette PNG masks at the photos' sizes), coco.json (COCO, RLE; score $(MASKS_SCORE))"
