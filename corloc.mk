# corloc.mk — CorLoc on the detection sets of the published tables (included by the Makefile).
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
CORLOC_SETTING := $(if $(filter best,$(SETTING)),t0.20-bin-mean-seed-n1,$(SETTING))
CORLOC_RAW   := $(if $(filter 0,$(CENTER)),-raw,)
CORLOC_SETS  := $(if $(VOC07),voc07) $(if $(VOC12),voc12) $(if $(and $(COCO),$(COCO20K_LIST)),coco20k)
CORLOC_SUMS   = $(foreach n,$(NETS),$(foreach d,$(CORLOC_SETS),$(OUT)/corloc/$(n)/$(d)/scores-$(CORLOC_SETTING)$(CORLOC_RAW)/summary.csv))

NET_WEIGHTS   = $(shell OUT=$(OUT) configs/net-args.sh $(NETS_INI) $(1) --weights-path)
# its caches are made by pattern rules (intermediate files): kept, never deleted by make
.PRECIOUS: $(OUT)/corloc/%
ifneq ($(filter corloc,$(MAKECMDGOALS)),)   # per-network options, as pipeline.mk does for its goals
_corloc_stamps := $(foreach n,$(NETS),$(shell mkdir -p $(OUT)/nets && \
    configs/net-args.sh $(NETS_INI) $(n) > $(OUT)/nets/$(n).args.tmp$$$$ 2>/dev/null && \
    { cmp -s $(OUT)/nets/$(n).args.tmp$$$$ $(OUT)/nets/$(n).args || mv $(OUT)/nets/$(n).args.tmp$$$$ $(OUT)/nets/$(n).args; }; \
    rm -f $(OUT)/nets/$(n).args.tmp$$$$))
endif

# $(1) dataset name, $(2) kc-extract dataset spec, $(3) split or list file, $(4) kc-score ground-truth options
define CORLOC_SET
$(OUT)/corloc/%/$(1)/keys.h5: $(BUILD)/kc-extract $(OUT)/nets/%.args $(3) $$$$(call NET_WEIGHTS,$$$$*)
	@mkdir -p $$(@D)
	$(BUILD)/kc-extract $$(file < $(OUT)/nets/$$*.args) --dataset $(2) --policy native16 --out $$@

$(OUT)/corloc/%/$(1)/scores-$(CORLOC_SETTING)$(CORLOC_RAW)/summary.csv: $(OUT)/corloc/%/$(1)/masks-$(CORLOC_SETTING)$(CORLOC_RAW).h5 $(BUILD)/kc-score
	$(BUILD)/kc-score --boxes-only --masks $$< $(4) --split $(3) --out $$(@D) --network $$* --ledger $(LEDGER)
endef
$(eval $(call CORLOC_SET,voc07,voc:$(VOC07):Main/trainval,$(VOC07)/ImageSets/Main/trainval.txt,--voc $(VOC07)))
$(eval $(call CORLOC_SET,voc12,voc:$(VOC12):Main/trainval,$(VOC12)/ImageSets/Main/trainval.txt,--voc $(VOC12)))
$(eval $(call CORLOC_SET,coco20k,coco:$(COCO):$(COCO20K_LIST),$(COCO20K_LIST),--coco $(COCO) --box-cache $(OUT)/corloc/coco-boxes))

$(OUT)/corloc/%/centered.h5: $(OUT)/corloc/%/keys.h5 $(BUILD)/kc-center
	$(BUILD)/kc-center $< $@

$(OUT)/corloc/%/masks-$(CORLOC_SETTING).h5: $(OUT)/corloc/%/centered.h5 $(BUILD)/kc-decode
	$(BUILD)/kc-decode --features $< --kind $(KIND) --setting $(CORLOC_SETTING) --out $@

$(OUT)/corloc/%/masks-$(CORLOC_SETTING)-raw.h5: $(OUT)/corloc/%/keys.h5 $(BUILD)/kc-decode
	$(BUILD)/kc-decode --features $< --kind $(KIND) --setting $(CORLOC_SETTING) --out $@

$(TABLES)/corloc.csv: $(CORLOC_SUMS) $(CORLOC_PUBLISHED) configs/corloc-table.sh
	configs/corloc-table.sh $(TABLES) $(CORLOC_PUBLISHED) "$(CORLOC_SETTING)$(CORLOC_RAW)" $(OUT)/corloc $(NETS)

.PHONY: corloc
corloc: all
	@[ -n "$(strip $(CORLOC_SETS))" ] || { echo "set VOC07=, VOC12= and/or COCO= with COCO20K_LIST= (see README, CorLoc)" >&2; exit 2; }
	@for n in $(NETS); do configs/net-args.sh $(NETS_INI) $$n >/dev/null; done
	@echo "corloc: $(words $(NETS)) networks x $(strip $(CORLOC_SETS)) at $(CORLOC_SETTING)$(if $(CORLOC_RAW), on raw keys (CENTER=0))"
	@$(MAKE) --no-print-directory $(TABLES)/corloc.csv
	@cat $(TABLES)/corloc.md
