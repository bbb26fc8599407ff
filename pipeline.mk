# pipeline.mk — the thesis pipeline as make rules (included by the Makefile).
#
#   make sweep  NETS="dino selfpatch" VOC=/data/VOCdevkit/VOC2012      144 settings, selection split
#   make report NETS="dino selfpatch" VOC=... SETTING=t0.15-bin-mean-corners-n3 [DAVIS=/data/DAVIS]
#   make davis  NETS="dino selfpatch" DAVIS=/data/DAVIS                 J&F of label propagation
#   make tables                                                          the tables of what exists
#   make figures NETS="dino run2-e05 run2-e10" VOC=... [DAVIS=...]       the thesis figures (kc-plot)
#   make probe  NETS="dino selfpatch" VOC12=/data/VOCdevkit/VOC2012   the linear probe (kc-probe): trainaug -> val
#               mIoU; make report then adds the column "Probe mIoU"
#   make report-html NETS=... VOC=... [DAVIS=...]                      the results browser report/index.html (kc-report)
#   make demo   [WEIGHTS=path.pth]                                       everything on built-in data
#   make report ... BASELINES=attn [ATTN_NET=dino]   adds the row "dino (attention 60 %)": DINO's
#               60 %-mass attention masks of ATTN_NET on VOC val (VOC columns only; docs/attention-baseline.md)
#
# Products (OUT=work by default):
#   datasets/splits/select$(SELECT_COUNT).txt (+ .sha256)    the selection split, from VOC's train list
#   $(OUT)/cache/<net>/voc12-select/{keys,centered,masks}.h5   features and the 144-setting masks
#   $(OUT)/cache/<net>/voc12-val/{keys,centered}.h5, masks-<setting>.h5
#   $(OUT)/cache/<net>/davis17-val/tokens.h5
#   $(OUT)/scores/<net>/select/, $(OUT)/scores/<net>/val-<setting>/   score CSVs
#   $(OUT)/results/<net>/davis17-val/                           palette PNGs and J&F CSV/JSON
#   $(OUT)/cache/<net>/voc12-{trainaug,val}/tokens224.h5, $(OUT)/probe/<net>/head224.safetensors (+ .loss.csv),
#   $(OUT)/scores/<net>/probe224/{summary,iou}.csv           the linear probe (PROBE_SIZE=448: Leopart's size)
#   BASELINES=attn: $(OUT)/cache/<ATTN_NET>/voc12-val/{attn,masks-attn-mass0.60}.h5 and
#   $(OUT)/scores/<ATTN_NET>/val-attn-mass0.60/ (network name "<ATTN_NET> (attention 60 %)")
#   $(TABLES)/sweep.{csv,md,tex}, $(TABLES)/report.{csv,md,tex}, report-macros.tex
#   $(FIGURES)/{sweep-*,curves,grid-voc,grid-davis}.{pdf,svg,png,tex,csv}
#   $(REPORT_DIR)/index.html (report/ by default; make report-html, also run by make report and make demo)
# Every product depends on its program, its inputs and its config: editing configs/sweep.ini
# recomputes masks, scores and tables only; editing one network's section of configs/nets.ini
# recomputes that network only.  Each stage writes atomically, so a failed or killed step leaves
# no half-written product, and a rerun resumes from the stage's .partial folder.

NETS         ?= color
VOC12        ?=
VOC          ?= $(VOC12)
DAVIS        ?=
DAVIS_SPLIT  ?= val
SETTING      ?= best
GRID         ?= configs/sweep.ini
NETS_INI     ?= configs/nets.ini
OUT          ?= work
TABLES       ?= tables
SPLITS       ?= datasets/splits
SELECT_COUNT ?= 1000
LEDGER       ?= ledger.tsv
VAL_SPLIT    ?= val
KIND         ?= keys
DAVIS_KIND   ?= tokens
WEIGHTS      ?=
SHARDS       ?= 1
SCHEDULER    ?= local
BASELINES    ?=
ATTN_NET     ?= dino
ATTN_SETTING := attn-mass0.60
ATTN_NETS    := $(if $(filter attn,$(BASELINES)),$(ATTN_NET))
# REFINE=crf|bs: the report's VOC val masks are refined at pixel level by kc-refine (MaskCut's dense
# CRF, TokenCut's bilateral solver) before scoring; masks-<setting>-<refine>.h5, val-<setting>-<refine>/
REFINE       ?= none
REFINE_ARGS  ?=
REFINE_SUFFIX := $(if $(filter-out none,$(REFINE)),-$(REFINE))
ifeq ($(filter $(REFINE),none crf bs),)
$(error REFINE must be none, crf or bs (got '$(REFINE)'))
endif

SELECT_LIST  := $(SPLITS)/select$(SELECT_COUNT).txt
NET_ARGS      = $(shell OUT=$(OUT) configs/net-args.sh $(NETS_INI) $(1))
NET_WEIGHTS   = $(shell OUT=$(OUT) configs/net-args.sh $(NETS_INI) $(1) --weights-path)
# kind = baseline in nets.ini: the row is listed as a baseline and does not choose the setting
BASELINE_OPTS = $(foreach n,$(NETS),$(if $(filter baseline,$(shell configs/net-args.sh $(NETS_INI) $(n) --kind 2>/dev/null)),--baseline $(n)))
# The networks that choose the setting (SETTING=best) and thereby the star of the sweep figure: one
# rule (eval/setting_choice.h) told the same options, --baseline NET for each that does not choose;
# by default the baselines (all choose when every one is), in make demo its network alone
CHOICE_OPTS  ?= $(BASELINE_OPTS)

.PHONY: sweep report davis tables demo pipeline-check probe
.SECONDEXPANSION:

pipeline-check:
	@[ -n "$(VOC)" ] || { echo "set VOC=/path/to/VOCdevkit/VOC2012 (see README)" >&2; exit 2; }
	@for n in $(NETS); do configs/net-args.sh $(NETS_INI) $$n >/dev/null; done

# Prints what `make GOALS` would run and how long it should take (configs/plan.sh).
PLAN = $(MAKE) --no-print-directory -n $(1) 2>/dev/null | SELECT_LIST=$(SELECT_LIST) SELECT_COUNT=$(SELECT_COUNT) TRAIN_LIST=$(VOC)/ImageSets/Segmentation/train.txt \
       VAL_LIST=$(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt DAVIS_ROOT=$(DAVIS) DAVIS_SPLIT=$(DAVIS_SPLIT) configs/plan.sh

# ---- per-network options, rewritten only when they change (so make sees edits of one network) ----
# Done while the makefile is read (not by a rule), so that `make -n` shows the true plan.
ifneq ($(filter sweep report davis tables probe $(OUT)/%,$(MAKECMDGOALS)),)
_net_stamps := $(foreach n,$(sort $(NETS) $(ATTN_NETS)),$(shell mkdir -p $(OUT)/nets && \
    OUT=$(OUT) configs/net-args.sh $(NETS_INI) $(n) > $(OUT)/nets/$(n).args.tmp$$$$ 2>/dev/null && \
    { cmp -s $(OUT)/nets/$(n).args.tmp$$$$ $(OUT)/nets/$(n).args || mv $(OUT)/nets/$(n).args.tmp$$$$ $(OUT)/nets/$(n).args; }; \
    rm -f $(OUT)/nets/$(n).args.tmp$$$$))
# networks made by kc-init (`init = ...` in nets.ini): the weights file is a product, remade when
# the init options (stamp $(OUT)/nets/<name>.init) or kc-init change
_init_nets := $(foreach n,$(NETS),$(if $(shell configs/net-args.sh $(NETS_INI) $(n) --init 2>/dev/null),$(n)))
_init_stamps := $(foreach n,$(_init_nets),$(shell configs/net-args.sh $(NETS_INI) $(n) --init > $(OUT)/nets/$(n).init.tmp$$$$ && \
    { cmp -s $(OUT)/nets/$(n).init.tmp$$$$ $(OUT)/nets/$(n).init || mv $(OUT)/nets/$(n).init.tmp$$$$ $(OUT)/nets/$(n).init; }; \
    rm -f $(OUT)/nets/$(n).init.tmp$$$$))
define INIT_RULE
$(call NET_WEIGHTS,$(1)): $(BUILD)/kc-init $(OUT)/nets/$(1).init
	$(BUILD)/kc-init $$(file < $(OUT)/nets/$(1).init) --out $$@
endef
$(foreach n,$(_init_nets),$(eval $(call INIT_RULE,$(n))))
endif
$(OUT)/nets/%.args:
	@configs/net-args.sh $(NETS_INI) $* >/dev/null
	@echo "pipeline: options of network $* are missing; rerun make" >&2; exit 1

# ---- the selection split -------------------------------------------------------------------
$(SELECT_LIST): $(VOC)/ImageSets/Segmentation/train.txt $(BUILD)/kc-score
	$(BUILD)/kc-score --make-selection $< --count $(SELECT_COUNT) --out $(SPLITS)

# ---- features ------------------------------------------------------------------------------
# With SHARDS=n > 1 the rules of this section, decoding and kc-propagate are those of slurm.mk
# (n shards per product, joined by kc-merge into the same file).
ifeq ($(SHARDS),1)
$(OUT)/cache/%/voc12-select/keys.h5: $(BUILD)/kc-extract $(OUT)/nets/%.args $(SELECT_LIST) $$(call NET_WEIGHTS,$$*)
	$(BUILD)/kc-extract $(file < $(OUT)/nets/$*.args) --dataset voc:$(VOC):$(SELECT_LIST) --out $@

$(OUT)/cache/%/voc12-val/keys.h5: $(BUILD)/kc-extract $(OUT)/nets/%.args $(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt $$(call NET_WEIGHTS,$$*)
	$(BUILD)/kc-extract $(file < $(OUT)/nets/$*.args) --dataset voc:$(VOC):$(VAL_SPLIT) --out $@

$(OUT)/cache/%/davis17-val/tokens.h5: $(BUILD)/kc-extract $(OUT)/nets/%.args $(DAVIS)/ImageSets/2017/$(DAVIS_SPLIT).txt $$(call NET_WEIGHTS,$$*)
	$(BUILD)/kc-extract $(file < $(OUT)/nets/$*.args) --dataset davis:$(DAVIS):$(DAVIS_SPLIT) --features $(DAVIS_KIND) --out $@

$(OUT)/cache/%/centered.h5: $(OUT)/cache/%/keys.h5 $(BUILD)/kc-center
	$(BUILD)/kc-center $< $@

# ---- decoding ------------------------------------------------------------------------------
$(OUT)/cache/%/voc12-select/masks.h5: $(OUT)/cache/%/voc12-select/centered.h5 $(GRID) $(BUILD)/kc-decode
	$(BUILD)/kc-decode --features $< --kind $(KIND) --grid $(GRID) --out $@

$(OUT)/cache/%/voc12-val/masks-$(SETTING).h5: $(OUT)/cache/%/voc12-val/centered.h5 $(BUILD)/kc-decode
	$(BUILD)/kc-decode --features $< --kind $(KIND) --setting $(SETTING) --out $@

endif # SHARDS == 1

# ---- scores --------------------------------------------------------------------------------
$(OUT)/scores/%/select/summary.csv: $(OUT)/cache/%/voc12-select/masks.h5 $(BUILD)/kc-score
	$(BUILD)/kc-score --masks $< --voc $(VOC) --split $(SELECT_LIST) --out $(@D) --network $* --ledger $(LEDGER)

$(OUT)/scores/%/val-$(SETTING)/summary.csv: $(OUT)/cache/%/voc12-val/masks-$(SETTING).h5 $(BUILD)/kc-score
	$(BUILD)/kc-score --masks $< --voc $(VOC) --split $(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt --out $(@D) --network $* --ledger $(LEDGER)

# ---- pixel refinement of the val masks (REFINE=crf|bs; kc-refine, eval/refine.h) ---------------
$(OUT)/cache/%/voc12-val/masks-$(SETTING)-crf.h5: $(OUT)/cache/%/voc12-val/masks-$(SETTING).h5 $(BUILD)/kc-refine
	$(BUILD)/kc-refine --masks $< --dataset voc:$(VOC):$(VAL_SPLIT) --method crf $(REFINE_ARGS) --out $@

$(OUT)/cache/%/voc12-val/masks-$(SETTING)-bs.h5: $(OUT)/cache/%/voc12-val/masks-$(SETTING).h5 $(BUILD)/kc-refine
	$(BUILD)/kc-refine --masks $< --dataset voc:$(VOC):$(VAL_SPLIT) --method bs $(REFINE_ARGS) --out $@

$(OUT)/scores/%/val-$(SETTING)-$(REFINE)/summary.csv: $(OUT)/cache/%/voc12-val/masks-$(SETTING)-$(REFINE).h5 $(BUILD)/kc-score
	$(BUILD)/kc-score --masks $< --voc $(VOC) --split $(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt --out $(@D) --network $* --ledger $(LEDGER)

# ---- the attention baseline (BASELINES=attn): class attention, 60 % mass masks, DINO's scoring ----
$(OUT)/cache/%/voc12-val/attn.h5: $(BUILD)/kc-extract $(OUT)/nets/%.args $(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt $$(call NET_WEIGHTS,$$*)
	$(BUILD)/kc-extract $(file < $(OUT)/nets/$*.args) --dataset voc:$(VOC):$(VAL_SPLIT) --features attn --out $@

$(OUT)/cache/%/voc12-val/masks-$(ATTN_SETTING).h5: $(OUT)/cache/%/voc12-val/attn.h5 $(BUILD)/kc-decode
	$(BUILD)/kc-decode --features $< --kind attn --setting $(ATTN_SETTING) --out $@

$(OUT)/scores/%/val-$(ATTN_SETTING)/summary.csv: $(OUT)/cache/%/voc12-val/masks-$(ATTN_SETTING).h5 $(BUILD)/kc-score
	$(BUILD)/kc-score --masks $< --voc $(VOC) --split $(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt --out $(@D) --network '$* (attention 60 %)' --ledger $(LEDGER)

# ---- DAVIS ---------------------------------------------------------------------------------
# kc-propagate keeps finished sequences (a rerun resumes); kc-davis writes its CSV last, so the
# CSV's presence means both steps completed.
ifeq ($(SHARDS),1)
$(OUT)/results/%/davis17-val/global_results-$(DAVIS_SPLIT).csv: $(OUT)/cache/%/davis17-val/tokens.h5 $(BUILD)/kc-propagate $(BUILD)/kc-davis
	$(BUILD)/kc-propagate --features $< --davis $(DAVIS) --split $(DAVIS_SPLIT) --kind $(DAVIS_KIND) --out $(@D)
	$(BUILD)/kc-davis --results $(@D) --davis $(DAVIS) --split $(DAVIS_SPLIT) --force
endif

# ---- the linear probe (kc-probe): tokens at square$(PROBE_SIZE), a head trained on PROBE_TRAIN ----
# (VOC's augmented set: ImageSets/Segmentation/trainaug.txt, labels in SegmentationClassAug/), its
# mIoU on VAL_SPLIT.  PROBE_OPTS goes to kc-probe train (--epochs, --batch, --lr, ...).
PROBE_SIZE   ?= 224
PROBE_TRAIN  ?= trainaug
PROBE_OPTS   ?=
PROBE_SCORES  = $(foreach n,$(NETS),$(OUT)/scores/$(n)/probe$(PROBE_SIZE)/summary.csv)
# the report's column: the probe scores that exist (make probe makes them)
PROBE_TABLE_OPTS = $(foreach n,$(NETS),$(if $(wildcard $(OUT)/scores/$(n)/probe$(PROBE_SIZE)/summary.csv),--probe $(n)=$(OUT)/scores/$(n)/probe$(PROBE_SIZE)))

$(OUT)/cache/%/voc12-$(PROBE_TRAIN)/tokens$(PROBE_SIZE).h5: $(BUILD)/kc-extract $(OUT)/nets/%.args $(VOC)/ImageSets/Segmentation/$(PROBE_TRAIN).txt $$(call NET_WEIGHTS,$$*)
	$(BUILD)/kc-extract $(file < $(OUT)/nets/$*.args) --dataset voc:$(VOC):$(PROBE_TRAIN) --policy square$(PROBE_SIZE) --features tokens --out $@

ifneq ($(PROBE_TRAIN),$(VAL_SPLIT))
$(OUT)/cache/%/voc12-$(VAL_SPLIT)/tokens$(PROBE_SIZE).h5: $(BUILD)/kc-extract $(OUT)/nets/%.args $(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt $$(call NET_WEIGHTS,$$*)
	$(BUILD)/kc-extract $(file < $(OUT)/nets/$*.args) --dataset voc:$(VOC):$(VAL_SPLIT) --policy square$(PROBE_SIZE) --features tokens --out $@
endif

$(OUT)/probe/%/head$(PROBE_SIZE).safetensors: $(OUT)/cache/%/voc12-$(PROBE_TRAIN)/tokens$(PROBE_SIZE).h5 $(BUILD)/kc-probe
	$(BUILD)/kc-probe train --features $< --labels voc:$(VOC):$(PROBE_TRAIN) --out $@ $(PROBE_OPTS)

$(OUT)/scores/%/probe$(PROBE_SIZE)/summary.csv: $(OUT)/probe/%/head$(PROBE_SIZE).safetensors $(OUT)/cache/%/voc12-$(VAL_SPLIT)/tokens$(PROBE_SIZE).h5 $(BUILD)/kc-probe
	$(BUILD)/kc-probe eval --head $< --features $(word 2,$^) --labels voc:$(VOC):$(VAL_SPLIT) --out $(@D) --network $* --ledger $(LEDGER)

probe: pipeline-check all
	@$(call PLAN,$(PROBE_SCORES))
	@$(MAKE) --no-print-directory $(PROBE_SCORES)
	@for n in $(NETS); do echo "$$n: probe mIoU $$(tail -n 1 $(OUT)/scores/$$n/probe$(PROBE_SIZE)/summary.csv | cut -d, -f1) ($(OUT)/scores/$$n/probe$(PROBE_SIZE)/iou.csv)"; done

# ---- tables --------------------------------------------------------------------------------
SELECT_SCORES = $(foreach n,$(NETS),$(OUT)/scores/$(n)/select/summary.csv)
VAL_SCORES    = $(foreach n,$(NETS),$(OUT)/scores/$(n)/val-$(SETTING)$(REFINE_SUFFIX)/summary.csv)
ATTN_SCORES   = $(foreach n,$(ATTN_NETS),$(OUT)/scores/$(n)/val-$(ATTN_SETTING)/summary.csv)
DAVIS_SCORES  = $(if $(DAVIS),$(foreach n,$(NETS),$(OUT)/results/$(n)/davis17-val/global_results-$(DAVIS_SPLIT).csv))
DAVIS_OPTS    = $(if $(DAVIS),$(foreach n,$(NETS),--davis $(n)=$(OUT)/results/$(n)/davis17-val))

$(TABLES)/sweep.csv: $(SELECT_SCORES) $(BUILD)/kc-table
	$(BUILD)/kc-table $(dir $(SELECT_SCORES)) --out $(TABLES) --name sweep --only sweep --ledger $(LEDGER) $(BASELINE_OPTS)

$(TABLES)/report.csv: $(VAL_SCORES) $(ATTN_SCORES) $(DAVIS_SCORES) $(wildcard $(PROBE_SCORES)) $(BUILD)/kc-table
	$(BUILD)/kc-table $(dir $(VAL_SCORES) $(ATTN_SCORES)) --out $(TABLES) --name report --only report --setting $(SETTING) $(DAVIS_OPTS) $(PROBE_TABLE_OPTS) --ledger $(LEDGER) $(BASELINE_OPTS)$(if $(REFINE_SUFFIX), --refine $(REFINE))

ifneq ($(SCHEDULER),slurm)   # SCHEDULER=slurm: sweep and demo are those of slurm.mk
sweep: pipeline-check all
	@$(call PLAN,$(TABLES)/sweep.csv)
	@$(MAKE) --no-print-directory $(TABLES)/sweep.csv
	@cat $(TABLES)/sweep.md
endif

# SETTING=best (the default) takes the setting with the best mean Jaccard over NETS on the
# selection split (kc-table --print-best), after the sweep; any setting id can be given instead.
BEST_SETTING = $$($(BUILD)/kc-table --print-best $(dir $(SELECT_SCORES)) $(CHOICE_OPTS))

ifneq ($(SCHEDULER),slurm)   # SCHEDULER=slurm: report and davis are those of slurm.mk
report: pipeline-check all
ifeq ($(SETTING),best)
	@$(call PLAN,$(TABLES)/sweep.csv)
	@$(MAKE) --no-print-directory $(TABLES)/sweep.csv
	@best=$(BEST_SETTING); echo "pipeline: the selection split chose $$best"; \
	  $(MAKE) --no-print-directory -n SETTING=$$best $(TABLES)/report.csv 2>/dev/null | SELECT_LIST=$(SELECT_LIST) \
	    VAL_LIST=$(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt DAVIS_ROOT=$(DAVIS) configs/plan.sh; \
	  $(MAKE) --no-print-directory SETTING=$$best $(TABLES)/report.csv; \
	  $(MAKE) --no-print-directory SETTING=$$best $(REPORT_DIR)/index.html
else
	@$(call PLAN,$(TABLES)/report.csv)
	@$(MAKE) --no-print-directory $(TABLES)/report.csv
	@$(MAKE) --no-print-directory $(REPORT_DIR)/index.html
endif
	@cat $(TABLES)/report.md
	@echo "report: $(REPORT_DIR)/index.html (the results browser)"

davis: all
	@[ -n "$(DAVIS)" ] || { echo "set DAVIS=/path/to/DAVIS (see README)" >&2; exit 2; }
	@$(call PLAN,$(foreach n,$(NETS),$(OUT)/results/$(n)/davis17-val/global_results-$(DAVIS_SPLIT).csv))
	@$(MAKE) --no-print-directory $(foreach n,$(NETS),$(OUT)/results/$(n)/davis17-val/global_results-$(DAVIS_SPLIT).csv)
	@for n in $(NETS); do echo "$$n: $$(tail -n 1 $(OUT)/results/$$n/davis17-val/global_results-$(DAVIS_SPLIT).csv)"; done
endif

tables:
	@ls $(TABLES)/*.md 2>/dev/null || { echo "no tables yet: run make sweep / make report first" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(if $(wildcard $(TABLES)/sweep.csv),$(TABLES)/sweep.csv) $(if $(wildcard $(TABLES)/report.csv),$(TABLES)/report.csv)

# ---- figures (kc-plot): drawn from the score files that exist; never runs the pipeline --------
# A network of NETS whose scores are missing makes kc-plot stop with a line naming it and the file
# (FIG_FORCE runs the rule then); a figure is redrawn when its score files, nets.ini,
# published.ini or kc-plot change, or when NETS / SETTING / the picture options change (the
# .<figure>-inputs stamps, rewritten only when their text changes).
FIGURES      ?= figures
PUBLISHED    ?= configs/published.ini
FIG_IDS      ?=
FIG_FIRST    ?= 4
FIG_SEQUENCE ?=
FIG_FRAMES   ?= 4
FIG_FORCE     = $(if $(filter-out $(wildcard $(1)),$(1)),figures-missing)
ifneq ($(filter figures $(FIGURES)/%,$(MAKECMDGOALS)),)
FIG_STAMP     = $(shell mkdir -p $(FIGURES) && f=$(FIGURES)/.$(1)-inputs && printf '%s\n' '$(2)' > $$f.tmp && \
                  { cmp -s $$f.tmp $$f && rm -f $$f.tmp || mv $$f.tmp $$f; }; echo $$f)
endif
VAL_MASKS     = $(foreach n,$(NETS),$(OUT)/cache/$(n)/voc12-val/masks-$(SETTING)$(REFINE_SUFFIX).h5)
DAVIS_RESULTS = $(foreach n,$(NETS),$(OUT)/results/$(n)/davis17-val/global_results-$(DAVIS_SPLIT).csv)
.PHONY: figures figures-missing

$(FIGURES)/sweep-jaccard.pdf: $(wildcard $(SELECT_SCORES)) $(call FIG_FORCE,$(SELECT_SCORES)) $(call FIG_STAMP,sweep,$(NETS) $(CHOICE_OPTS)) $(BUILD)/kc-plot
	$(BUILD)/kc-plot sweep $(foreach n,$(NETS),--scores $(n)=$(OUT)/scores/$(n)/select) $(CHOICE_OPTS) --out $(FIGURES)

$(FIGURES)/curves.pdf: $(wildcard $(VAL_SCORES) $(DAVIS_SCORES) $(PROBE_SCORES)) $(call FIG_FORCE,$(VAL_SCORES) $(DAVIS_SCORES)) $(NETS_INI) $(PUBLISHED) \
                       $(call FIG_STAMP,curves,$(NETS) $(SETTING) $(DAVIS) $(PROBE_TABLE_OPTS)) $(BUILD)/kc-plot
	$(BUILD)/kc-plot curves $(foreach n,$(NETS),--voc $(n)=$(OUT)/scores/$(n)/val-$(SETTING)$(REFINE_SUFFIX)) $(if $(DAVIS),$(foreach n,$(NETS),--davis $(n)=$(OUT)/results/$(n)/davis17-val)) \
	  $(PROBE_TABLE_OPTS) \
	  --nets-ini $(NETS_INI) --published $(PUBLISHED) --setting $(SETTING) --out $(FIGURES)

$(FIGURES)/grid-voc.pdf: $(wildcard $(VAL_MASKS)) $(call FIG_FORCE,$(VAL_MASKS)) $(call FIG_STAMP,grid-voc,$(NETS) $(SETTING) $(REFINE) $(VOC) $(FIG_IDS) $(FIG_FIRST)) $(BUILD)/kc-plot
	$(BUILD)/kc-plot voc-grid --voc $(VOC) --split $(VAL_SPLIT) --setting $(SETTING) $(foreach n,$(NETS),--masks $(n)=$(OUT)/cache/$(n)/voc12-val/masks-$(SETTING)$(REFINE_SUFFIX).h5) \
	  $(if $(FIG_IDS),--ids $(FIG_IDS),--first $(FIG_FIRST)) --out $(FIGURES)

$(FIGURES)/grid-davis.pdf: $(wildcard $(DAVIS_RESULTS)) $(call FIG_FORCE,$(DAVIS_RESULTS)) $(call FIG_STAMP,grid-davis,$(NETS) $(DAVIS) $(FIG_SEQUENCE) $(FIG_FRAMES)) $(BUILD)/kc-plot
	seq=$(or $(FIG_SEQUENCE),$$(head -n 1 $(DAVIS)/ImageSets/2017/$(DAVIS_SPLIT).txt)); \
	$(BUILD)/kc-plot davis-grid --davis $(DAVIS) --sequence $$seq $(foreach n,$(NETS),--results $(n)=$(OUT)/results/$(n)/davis17-val) \
	  --frames $(FIG_FRAMES) --out $(FIGURES)

# SETTING=best: the setting kc-table --print-best chooses from the selection scores (as make report:
# the sweep figure's star).
figures: $(BUILD)/kc-plot $(BUILD)/kc-table
	@$(MAKE) --no-print-directory $(FIGURES)/sweep-jaccard.pdf
	@setting=$(if $(filter best,$(SETTING)),$(BEST_SETTING),$(SETTING)); \
	  $(MAKE) --no-print-directory SETTING=$$setting $(FIGURES)/curves.pdf $(if $(VOC),$(FIGURES)/grid-voc.pdf) $(if $(DAVIS),$(FIGURES)/grid-davis.pdf)
	@echo "figures: $(FIGURES)/ (each as .pdf .svg .png, with a pgfplots .tex and its .csv)"

# ---- the results browser (kc-report): $(REPORT_DIR)/index.html, from what report / davis / figures wrote ----
# Shows the tables, score folders, masks caches, DAVIS results and figures that exist (it makes no
# missing product, as make figures); pictures are redrawn only when their inputs changed
# (kc-report checks each one), pages whenever any input is newer than index.html.
REPORT_DIR   ?= report
REPORT_OPTS  ?=
REPORT_SETTING = $(SETTING)$(REFINE_SUFFIX)
REPORT_TABLES  = $(wildcard $(TABLES)/report.csv $(TABLES)/sweep.csv)
REPORT_VOC     = $(foreach n,$(NETS),$(if $(wildcard $(OUT)/scores/$(n)/val-$(REPORT_SETTING)/summary.csv),$(n)))
REPORT_ATTN    = $(foreach n,$(ATTN_NETS),$(if $(wildcard $(OUT)/scores/$(n)/val-$(ATTN_SETTING)/summary.csv),$(n)))
REPORT_DAVIS   = $(if $(DAVIS),$(foreach n,$(NETS),$(if $(wildcard $(OUT)/results/$(n)/davis17-val/global_results-$(DAVIS_SPLIT).csv),$(n))))
REPORT_INPUTS  = $(REPORT_TABLES) $(wildcard $(FIGURES)/*.png) \
                 $(foreach n,$(REPORT_VOC),$(OUT)/scores/$(n)/val-$(REPORT_SETTING)/summary.csv $(wildcard $(OUT)/cache/$(n)/voc12-val/masks-$(REPORT_SETTING).h5)) \
                 $(foreach n,$(REPORT_ATTN),$(OUT)/scores/$(n)/val-$(ATTN_SETTING)/summary.csv $(wildcard $(OUT)/cache/$(n)/voc12-val/masks-$(ATTN_SETTING).h5)) \
                 $(foreach n,$(REPORT_DAVIS),$(OUT)/results/$(n)/davis17-val/global_results-$(DAVIS_SPLIT).csv) \
                 $(if $(VOC),$(wildcard $(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt))
.PHONY: report-html

$(REPORT_DIR)/index.html: $(BUILD)/kc-report $(REPORT_INPUTS)
	$(BUILD)/kc-report --out $(REPORT_DIR) $(foreach t,$(REPORT_TABLES),--table $(t)) $(if $(wildcard $(FIGURES)/*.png),--figures $(FIGURES)) \
	  $(foreach n,$(REPORT_VOC),--scores $(n)=$(OUT)/scores/$(n)/val-$(REPORT_SETTING) \
	    $(if $(wildcard $(OUT)/cache/$(n)/voc12-val/masks-$(REPORT_SETTING).h5),--masks $(n)=$(OUT)/cache/$(n)/voc12-val/masks-$(REPORT_SETTING).h5)) \
	  $(foreach n,$(REPORT_ATTN),--scores '$(n) (attention 60 %)=$(OUT)/scores/$(n)/val-$(ATTN_SETTING)' \
	    --masks '$(n) (attention 60 %)=$(OUT)/cache/$(n)/voc12-val/masks-$(ATTN_SETTING).h5') \
	  $(if $(and $(VOC),$(REPORT_VOC)$(REPORT_ATTN)),--images voc:$(VOC):$(VAL_SPLIT)) \
	  $(foreach n,$(REPORT_DAVIS),--davis $(n)=$(OUT)/results/$(n)/davis17-val) $(if $(REPORT_DAVIS),--davis-root $(DAVIS)) $(REPORT_OPTS)

# SETTING=best: the setting kc-table --print-best chooses from the selection scores (as make report).
report-html: $(BUILD)/kc-report $(BUILD)/kc-table
	@setting=$(if $(filter best,$(SETTING)),$(BEST_SETTING),$(SETTING)); \
	  $(MAKE) --no-print-directory SETTING=$$setting $(REPORT_DIR)/index.html
	@echo "report: $(REPORT_DIR)/index.html (open it in a browser; $$(du -sh $(REPORT_DIR) | cut -f1) on disk)"

# ---- the demo: generated scenes and video, the whole pipeline, tables/demo.* and overlays ----
DEMO_DIR  ?= demo
DEMO_TABLES ?= tables
# the demo's network (color, or WEIGHTS=) chooses the setting; a random-weights baseline
# ([random] of configs/demo-nets.ini: toy/16 made by kc-init, for speed) is reported beside it
DEMO_NETS_INI ?= configs/demo-nets.ini
DEMO_NETS := $(if $(WEIGHTS),weights,color) random
DEMO_NET  := $(firstword $(DEMO_NETS))
# the demo's network alone chooses the setting (kc-table --print-best on its scores); the sweep
# figure's star is told so (the others as --baseline)
DEMO_ARGS := NETS="$(DEMO_NETS)" NETS_INI=$(DEMO_NETS_INI) VOC=$(DEMO_DIR)/data/voc DAVIS=$(DEMO_DIR)/data/davis OUT=$(DEMO_DIR) \
             SPLITS=$(DEMO_DIR)/splits LEDGER=$(DEMO_DIR)/ledger.tsv TABLES=$(DEMO_DIR)/tables SELECT_COUNT=16 \
             CHOICE_OPTS="$(foreach n,$(filter-out $(DEMO_NET),$(DEMO_NETS)),--baseline $(n))"

# the linear probe on the demo's scenes: trained on its train list (a batch of 8: the list is short)
DEMO_PROBE_ARGS := PROBE_TRAIN=train PROBE_SIZE=224 PROBE_OPTS="--batch 8"

$(DEMO_DIR)/data/voc/ImageSets/Segmentation/train.txt: $(BUILD)/kc-demo-data
	rm -rf $(DEMO_DIR)/data
	$(BUILD)/kc-demo-data --out $(DEMO_DIR)/data

ifneq ($(SCHEDULER),slurm)
demo: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory $(DEMO_DIR)/data/voc/ImageSets/Segmentation/train.txt
	@$(MAKE) --no-print-directory $(DEMO_ARGS) $(DEMO_DIR)/tables/sweep.csv
	@$(MAKE) --no-print-directory $(DEMO_ARGS) $(DEMO_PROBE_ARGS) $(foreach n,$(DEMO_NETS),$(DEMO_DIR)/scores/$(n)/probe224/summary.csv)
	@set -e; best=$$($(BUILD)/kc-table --print-best $(DEMO_DIR)/scores/$(DEMO_NET)/select); \
	  setting=$$( [ "$(SETTING)" = best ] && echo $$best || echo $(SETTING) ); \
	  echo "demo: the selection split chose $$best; reporting $$setting on val"; \
	  $(MAKE) --no-print-directory $(DEMO_ARGS) SETTING=$$setting $(DEMO_DIR)/tables/report.csv; \
	  mkdir -p $(DEMO_TABLES); \
	  for e in csv md tex; do cp $(DEMO_DIR)/tables/report.$$e $(DEMO_TABLES)/demo.$$e; \
	                          cp $(DEMO_DIR)/tables/sweep.$$e $(DEMO_TABLES)/demo-sweep.$$e; done; \
	  cp $(DEMO_DIR)/tables/report-macros.tex $(DEMO_TABLES)/demo-macros.tex; \
	  $(BUILD)/kc-show --masks $(DEMO_DIR)/cache/$(DEMO_NET)/voc12-val/masks-$$setting$(REFINE_SUFFIX).h5 --setting $$setting \
	      --images voc:$(DEMO_DIR)/data/voc:val --first 4 --out $(DEMO_DIR)/shows
	@set -e; best=$$($(BUILD)/kc-table --print-best $(DEMO_DIR)/scores/$(DEMO_NET)/select); \
	  $(MAKE) --no-print-directory $(DEMO_ARGS) SETTING=$$( [ "$(SETTING)" = best ] && echo $$best || echo $(SETTING) ) \
	    FIGURES=$(DEMO_DIR)/figures figures
	@set -e; best=$$($(BUILD)/kc-table --print-best $(DEMO_DIR)/scores/$(DEMO_NET)/select); \
	  $(MAKE) --no-print-directory $(DEMO_ARGS) SETTING=$$( [ "$(SETTING)" = best ] && echo $$best || echo $(SETTING) ) \
	    FIGURES=$(DEMO_DIR)/figures REPORT_DIR=$(DEMO_DIR)/report $(DEMO_DIR)/report/index.html
	@echo; echo "demo: $(DEMO_TABLES)/demo.md (VOC val at the chosen setting, DAVIS J&F), $(DEMO_TABLES)/demo-sweep.md (all settings on the selection split), overlays in $(DEMO_DIR)/shows/, the results browser $(DEMO_DIR)/report/index.html"
	@cat $(DEMO_TABLES)/demo.md
endif

# Sharding (SHARDS=n) and SCHEDULER=slurm: see slurm.mk and README "On a Slurm cluster".
-include slurm.mk
