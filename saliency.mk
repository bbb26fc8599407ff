# saliency.mk — unsupervised saliency detection on ECSSD, DUTS-TE and DUT-OMRON as TokenCut scores it
# (included by pipeline.mk after its request's variables; its products are made by pipeline.mk with
# the others: kc_saliency_products).
#
#   make saliency NETS="dino selfpatch" ECSSD=/data/ECSSD DUTS=/data/DUTS-TE DUTOMRON=/data/DUT-OMRON \
#                 [SETTING=t0.20-bin-mean-seed-n1]
#
# Per network and per dataset given (an empty variable skips that dataset): kc-extract of the last
# block's keys at policy round (TokenCut's resize: each side to the nearest multiple of the patch,
# Lanczos), kc-decode of the raw keys at one setting (default TokenCut's t0.20-bin-mean-seed-n1;
# SETTING=best, pipeline.mk's default, also means TokenCut's here), kc-saliency (the mask at the
# image's size, TokenCut's bilateral solver, metric.py's max F-beta, IoU and accuracy; per-image
# PNGs for the results browser), then $(TABLES)/saliency.{csv,md,tex} by kc-table --saliency: per
# network a row without and a row with the bilateral solver, three columns per dataset, and the
# published rows of PUBLISHED (TokenCut's README, ViT-S/16).
#
# Products: $(OUT)/saliency/<net>/<dataset>/keys.h5, masks-<setting>.h5, scores-<setting>/ (CSV,
# summary, png/); the results browser $(REPORT_DIR)/index.html with a gallery per dataset.
# Datasets: ecssd = saliency:$(ECSSD) (1,000 images), duts = saliency:$(DUTS) (DUTS-TE, 5,019),
# dutomron = saliency:$(DUTOMRON) (5,168); each root in the layout of its release or TokenCut's
# img/ + gt/ (datasets/dataset.h).
#
# Stamps as every product of pipeline.mk (docs/design.md, "The make pipeline"): the command as the
# request expands it (the network's options, the root, SETTING, NETS and the datasets for the table)
# and the SHA-256 of the user files read (the weights, PUBLISHED).  A dataset's images and masks
# have no list file: the features depend on the image folder and the scores on the mask folder by
# mtime (a photo or mask added, removed or renamed remakes them), and kc-saliency refuses an image
# whose bytes changed since extraction (kc-extract records each file's SHA-256).

#: ECSSD        (none)                 make saliency: the ECSSD root (images/, ground_truth_mask/)
#: DUTS         (none)                 make saliency: the DUTS-TE root (DUTS-TE-Image/, DUTS-TE-Mask/)
#: DUTOMRON     (none)                 make saliency: the DUT-OMRON root (DUT-OMRON-image/, pixelwiseGT-new-PNG/)
ECSSD        ?=
DUTS         ?=
DUTOMRON     ?=
SAL_SETTING   = $(if $(filter best,$(SETTING)),t0.20-bin-mean-seed-n1,$(SETTING))
SAL_SETS      = $(strip $(if $(ECSSD),ecssd) $(if $(DUTS),duts) $(if $(DUTOMRON),dutomron))
SAL_DIR       = $(OUT)/saliency
SAL_SCORES    = $(foreach n,$(NETS),$(foreach d,$(SAL_SETS),$(SAL_DIR)/$(n)/$(d)/scores-$(SAL_SETTING)/summary.csv))
SAL_ROOT.ecssd    = $(ECSSD)
SAL_ROOT.duts     = $(DUTS)
SAL_ROOT.dutomron = $(DUTOMRON)
# the image and mask folders of a root, whichever layout it has (make's wildcard: no process)
sal_images = $(wildcard $(1)/images $(1)/DUTS-TE-Image $(1)/DUT-OMRON-image $(1)/img)
sal_masks  = $(wildcard $(1)/ground_truth_mask $(1)/DUTS-TE-Mask $(1)/pixelwiseGT-new-PNG $(1)/gt)

# ---- the products (made by pipeline.mk before its stamps' check: $(kc_saliency_products)) -----
# $(1) network, $(2) dataset, $(3) its folder.  SHARDS=n shards the features and masks (kc_cached).
define kc_saliency_net
$(call kc_cached,$(3)/keys.h5,$(BUILD)/kc-extract $(KC_WDEP.$(1)) $(call sal_images,$(SAL_ROOT.$(2))),$(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset saliency:$(SAL_ROOT.$(2)) --policy round --features keys@SHARD@ --out @OUT@)
$(call kc_cached,$(3)/masks-$(SAL_SETTING).h5,$(3)/keys.h5 $(BUILD)/kc-decode,,\
  $(BUILD)/kc-decode --features $(3)/keys.h5 --kind keys --setting $(SAL_SETTING)@SHARD@ --out @OUT@)
$(call kc_product,$(3)/scores-$(SAL_SETTING)/summary.csv,$(3)/masks-$(SAL_SETTING).h5 $(BUILD)/kc-saliency $(call sal_masks,$(SAL_ROOT.$(2))),,\
  $(BUILD)/kc-saliency --masks $(3)/masks-$(SAL_SETTING).h5 --dataset saliency:$(SAL_ROOT.$(2)) --out $(3)/scores-$(SAL_SETTING) --png $(3)/scores-$(SAL_SETTING)/png --network $(1),\
  --ledger $(LEDGER))
endef
# the table: the request's networks and datasets only, in the order of NETS and ECSSD, DUTS, DUTOMRON
kc_saliency_products = $(if $(SAL_SETS),\
  $(foreach n,$(NETS),$(foreach d,$(SAL_SETS),$(eval $(call kc_saliency_net,$(n),$(d),$(SAL_DIR)/$(n)/$(d)))))\
  $(call kc_product,$(TABLES)/saliency.csv,$(SAL_SCORES) $(BUILD)/kc-table,$(PUBLISHED),\
    $(BUILD)/kc-table --saliency $(dir $(SAL_SCORES)) --out $(TABLES) --name saliency --published $(PUBLISHED) $(BASELINE_OPTS),\
    --ledger $(LEDGER)))

# ---- the goal ----------------------------------------------------------------------------------
# (the request was checked at parse time: configs/check-request.sh names what to fix in one line)
.PHONY: saliency
# then the results browser (a gallery per dataset; at the saliency setting, without the figures)
saliency: all
	@echo "saliency: $(words $(NETS)) network$(if $(filter-out 1,$(words $(NETS))),s) x $(SAL_SETS) at $(SAL_SETTING)"
	@$(call PLAN,$(TABLES)/saliency.csv)
	@$(MAKE) --no-print-directory $(TABLES)/saliency.csv
	@$(MAKE) --no-print-directory SETTING=$(SAL_SETTING) KC_FIGURES=0 $(REPORT_DIR)/index.html
	@cat $(TABLES)/saliency.md
	@echo "saliency: $(REPORT_DIR)/index.html (the results browser: a gallery per dataset)"
