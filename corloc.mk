# corloc.mk — CorLoc on the detection sets of the published tables (included by pipeline.mk, after
# its request's variables; its products are made by pipeline.mk with the others: kc_corloc_products).
#
#   make corloc NETS="dino selfpatch" VOC07=/data/VOCdevkit/VOC2007 VOC12=/data/VOCdevkit/VOC2012 \
#               COCO=/data/coco COCO20K_LIST=/data/coco_20k_filenames.txt [SETTING=t0.20-bin-mean-seed-n1] [CENTER=0]
#
# Per network and per dataset given (an empty variable skips that dataset): kc-extract at native16
# (TokenCut's CorLoc resolution), kc-center (CENTER=1, the default; CENTER=0 decodes the raw keys,
# TokenCut's own protocol), kc-decode at one setting (default TokenCut's t0.20-bin-mean-seed-n1;
# SETTING=best, pipeline.mk's default, also means TokenCut's here), kc-score --boxes-only
# (docs/corloc.md), then $(TABLES)/corloc.{csv,md,tex}: one row per network, columns voc07, voc12,
# coco20k, and the published rows of configs/published-corloc.ini labelled as published.
#
# Products: $(OUT)/corloc/<net>/<dataset>/{keys,centered}.h5, masks-<setting>[-raw].h5,
# scores-<setting>[-raw]/ (CSV + summary), $(OUT)/corloc/coco-boxes/ (the COCO box cache).
# Datasets: voc07 = voc:$(VOC07):Main/trainval (5,011 images), voc12 = voc:$(VOC12):Main/trainval
# (11,540), coco20k = coco:$(COCO):$(COCO20K_LIST) (19,817) with ROOT/annotations/instances_train2014.json.
#
# Like every product of pipeline.mk (docs/design.md, "The make pipeline"), each is an explicit
# target with a recipe stamp: its command as the request expands it (the network's options from
# nets.ini, the dataset's root and list, SETTING, CENTER, KIND, NETS and the datasets for the table)
# and the SHA-256 of the user files it reads (the weights, the list, the published ini); an `init =`
# network's weights are made by kc-init.  So a request made after others gives what it gives in
# empty folders, and a request made again runs nothing.  The request is checked before anything
# runs (configs/check-request.sh: the roots, lists, SETTING, the networks' weights).

#: VOC07        (none)                 make corloc: the VOC2007 root (Main/trainval)
#: VOC12        (none)                 make corloc: the VOC2012 root (Main/trainval); the pipeline's is VOC
#: COCO         (none)                 make corloc: the COCO root (train2014, annotations/)
#: COCO20K_LIST (none)                 make corloc: the COCO20k file list
#: CENTER       1                      make corloc: 0 decodes the raw keys (TokenCut's own protocol)
#: CORLOC_PUBLISHED configs/published-corloc.ini  make corloc: the published rows
VOC07        ?=
VOC12        ?=
COCO         ?=
COCO20K_LIST ?=
CENTER       ?= 1
CORLOC_PUBLISHED ?= configs/published-corloc.ini
CORLOC_SETTING = $(if $(filter best,$(SETTING)),t0.20-bin-mean-seed-n1,$(SETTING))
CORLOC_RAW     = $(if $(filter 0,$(CENTER)),-raw,)
CORLOC_TAG     = $(CORLOC_SETTING)$(CORLOC_RAW)
CORLOC_SETS    = $(strip $(if $(VOC07),voc07) $(if $(VOC12),voc12) $(if $(and $(COCO),$(COCO20K_LIST)),coco20k))
CORLOC_DIR     = $(OUT)/corloc
CORLOC_SUMS    = $(foreach n,$(NETS),$(foreach d,$(CORLOC_SETS),$(CORLOC_DIR)/$(n)/$(d)/scores-$(CORLOC_TAG)/summary.csv))

# per dataset: kc-extract's dataset, the list (hashed in the stamps), kc-score's ground truth, and
# what kc-score reads besides (the COCO box cache: a cache checked by kc-score, not in the stamp)
CORLOC_DATA.voc07    = voc:$(VOC07):Main/trainval
CORLOC_LIST.voc07    = $(VOC07)/ImageSets/Main/trainval.txt
CORLOC_GT.voc07      = --voc $(VOC07)
CORLOC_DATA.voc12    = voc:$(VOC12):Main/trainval
CORLOC_LIST.voc12    = $(VOC12)/ImageSets/Main/trainval.txt
CORLOC_GT.voc12      = --voc $(VOC12)
CORLOC_DATA.coco20k  = coco:$(COCO):$(COCO20K_LIST)
CORLOC_LIST.coco20k  = $(COCO20K_LIST)
CORLOC_GT.coco20k    = --coco $(COCO)
CORLOC_EXTRA.coco20k = --box-cache $(CORLOC_DIR)/coco-boxes

# ---- the products (made by pipeline.mk before its stamps' check: $(kc_corloc_products)) --------
# $(1) network, $(2) dataset, $(3) its folder; the features decoded: centred keys, or the raw keys
# with CENTER=0 (then no centered.h5 is made).  SHARDS=n shards the features and masks as
# pipeline.mk's (kc_cached).
define kc_corloc_net
$(call kc_cached,$(3)/keys.h5,$(BUILD)/kc-extract $(KC_WDEP.$(1)),$(CORLOC_LIST.$(2)) $(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset $(CORLOC_DATA.$(2)) --policy native16@SHARD@ --out @OUT@)
$(if $(CORLOC_RAW),,$(call kc_cached,$(3)/centered.h5,$(3)/keys.h5 $(BUILD)/kc-center,,\
  $(BUILD)/kc-center@SHARD@ $(3)/keys.h5 @OUT@))
$(call kc_cached,$(3)/masks-$(CORLOC_TAG).h5,$(3)/$(if $(CORLOC_RAW),keys,centered).h5 $(BUILD)/kc-decode,,\
  $(BUILD)/kc-decode --features $(3)/$(if $(CORLOC_RAW),keys,centered).h5 --kind $(KIND) --setting $(CORLOC_SETTING)@SHARD@ --out @OUT@)
$(call kc_product,$(3)/scores-$(CORLOC_TAG)/summary.csv,$(3)/masks-$(CORLOC_TAG).h5 $(BUILD)/kc-score,$(CORLOC_LIST.$(2)),\
  $(BUILD)/kc-score --boxes-only --masks $(3)/masks-$(CORLOC_TAG).h5 $(CORLOC_GT.$(2)) --split $(CORLOC_LIST.$(2)) --out $(3)/scores-$(CORLOC_TAG) --network $(1),\
  --ledger $(LEDGER) $(CORLOC_EXTRA.$(2)))
endef
# the table: the request's networks and datasets only (a score folder of an earlier request is not read)
kc_corloc_products = $(if $(CORLOC_SETS),\
  $(foreach n,$(NETS),$(foreach d,$(CORLOC_SETS),$(eval $(call kc_corloc_net,$(n),$(d),$(CORLOC_DIR)/$(n)/$(d)))))\
  $(call kc_product,$(TABLES)/corloc.csv,$(CORLOC_SUMS) configs/corloc-table.sh,$(CORLOC_PUBLISHED),\
    configs/corloc-table.sh --sets "$(CORLOC_SETS)" $(TABLES) $(CORLOC_PUBLISHED) $(CORLOC_TAG) $(CORLOC_DIR) $(NETS)))

# ---- the goal ----------------------------------------------------------------------------------
# (the request was checked at parse time: configs/check-request.sh names what to fix in one line)
.PHONY: corloc
corloc: all
	@echo "corloc: $(words $(NETS)) network$(if $(filter-out 1,$(words $(NETS))),s) x $(CORLOC_SETS) at $(CORLOC_SETTING)$(if $(CORLOC_RAW), on raw keys (CENTER=0))"
	@$(MAKE) --no-print-directory $(TABLES)/corloc.csv
	@cat $(TABLES)/corloc.md
