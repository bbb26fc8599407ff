# pipeline.mk — the thesis pipeline as make rules (included by the Makefile).  `make help` lists
# every variable it reads, with its default; README "The thesis pipeline with make" shows the use.
#
#   make sweep  NETS="dino selfpatch" VOC=/data/VOCdevkit/VOC2012      144 settings, selection split (prints the 10 best)
#   make report NETS="dino selfpatch" VOC=... SETTING=t0.15-bin-mean-corners-n3 [DAVIS=/data/DAVIS]
#   make davis  NETS="dino selfpatch" DAVIS=/data/DAVIS                 J&F of label propagation
#   make probe  NETS="dino selfpatch" VOC=...                           the linear probe (kc-probe): trainaug -> val
#               mIoU; make report then adds the column "Probe mIoU"
#   make figures NETS="dino run2-e05 run2-e10" VOC=... [DAVIS=...]       the thesis figures (kc-plot)
#   make report-html NETS=... VOC=... [DAVIS=...]                      the results browser report/index.html (kc-report)
#   make tables                                                          prints the tables that exist
#   make demo   [WEIGHTS=path.pth]                                       everything on built-in data
#   make report ... BASELINES=attn [ATTN_NET=dino]   adds the row "dino (attention 60 %)": DINO's
#               60 %-mass attention masks of ATTN_NET on VOC val (VOC columns only; docs/attention-baseline.md)
#
# Products (OUT=work by default):
#   $(SPLITS)/select$(SELECT_COUNT).txt                        the selection split, from VOC's train list
#   $(OUT)/cache/<net>/voc12-select/{keys,centered,masks}.h5   features and the 144-setting masks
#   $(OUT)/cache/<net>/voc12-val/{keys,centered}.h5, masks-<setting>.h5
#   $(OUT)/cache/<net>/davis17-<split>/tokens.h5
#   $(OUT)/scores/<net>/select/, $(OUT)/scores/<net>/val-<setting>/   score CSVs
#   $(OUT)/results/<net>/davis17-<split>/                      palette PNGs and J&F CSV/JSON
#   $(OUT)/cache/<net>/voc12-{trainaug,val}/tokens224.h5, $(OUT)/probe/<net>/head224.safetensors (+ .loss.csv),
#   $(OUT)/scores/<net>/probe224/{summary,iou}.csv           the linear probe (PROBE_SIZE=448: Leopart's size)
#   BASELINES=attn: $(OUT)/cache/<ATTN_NET>/voc12-val/{attn,masks-attn-mass0.60}.h5 and
#   $(OUT)/scores/<ATTN_NET>/val-attn-mass0.60/ (network name "<ATTN_NET> (attention 60 %)")
#   $(TABLES)/sweep.{csv,md,tex}, $(TABLES)/report.{csv,md,tex}, report-macros.tex
#   $(FIGURES)/{sweep-*,curves,grid-voc,grid-davis}.{pdf,svg,png,tex,csv}
#   $(REPORT_DIR)/index.html (report/ by default; make report-html, also run by make report and make demo)
#   $(OUT)/corloc/<net>/<dataset>/..., $(TABLES)/corloc.{csv,md,tex}   make corloc (corloc.mk)
#   $(OUT)/cache/<net>/images-<folder>/..., $(OUT)/masks/<net>/<setting>/{overlays,png,coco.json}   make masks IMAGES=DIR (masks.mk)
#   $(OUT)/saliency/<net>/<dataset>/..., $(TABLES)/saliency.{csv,md,tex}   make saliency (saliency.mk)
#   $(OUT)/.recipes/   one recipe stamp per product (below), and the content hashes of the inputs
#
# Request stamps (docs/design.md, "The make pipeline").  Every product P has a stamp
# $(OUT)/.recipes/<P>.recipe holding P's command as the request expands it (networks' options from
# nets.ini, VOC and DAVIS roots, splits, SETTING, GRID's path, the probe's size ...) and the SHA-256
# of the content of every user file the command reads (weights, dataset lists, the grid, nets.ini and
# published.ini for the figures).  configs/recipe.sh rewrites the stamp only when that text changes;
# P depends on its stamp, its program and the products it reads, so P is remade exactly when its
# request, an input's content or an upstream product changed.  Every product is an explicit target
# (no intermediate files but the shards of SHARDS=n), so a missing product is always remade.

# ---- the request -----------------------------------------------------------------------------
# `#:` lines are `make help` (NAME default: meaning); keep one for every variable read here.
#: NETS         color                  the networks, sections of NETS_INI, in the tables' order
#: NETS_INI     configs/nets.ini       the networks' weights, checkpoint keys, options, kinds
#: VOC          (none)                 VOC2012 root (VOCdevkit/VOC2012): lists, JPEGImages, ground truth
#: VAL_SPLIT    val                    the VOC list scored by make report (ImageSets/Segmentation/NAME.txt)
#: SELECT_COUNT 1000                   size of the selection split drawn from VOC's train list
#: SPLITS       datasets/splits        where the selection split select<COUNT>.txt is written
#: GRID         configs/sweep.ini      the decoder settings of make sweep (144 by default)
#: SETTING      best                   the setting of make report: an id, or best (chosen on the selection split)
#: KIND         keys                   the features decoded on VOC (keys or tokens)
#: REFINE       none                   none, crf or bs: refine the val masks at pixel level before scoring
#: REFINE_ARGS  (none)                 extra kc-refine options (with REFINE=crf|bs)
#: DAVIS        (none)                 DAVIS-2017 root (JPEGImages/480p, Annotations/480p, ImageSets/2017)
#: DAVIS_SPLIT  val                    the DAVIS list (ImageSets/2017/NAME.txt)
#: DAVIS_KIND   tokens                 the features propagated on DAVIS
#: PROBE_TRAIN  trainaug               the probe's training list (labels in SegmentationClassAug/ for trainaug)
#: PROBE_SIZE   224                    the probe's input side (square<N>; 448 is Leopart's)
#: PROBE_OPTS   (none)                 extra kc-probe train options (--epochs, --batch, --lr, ...)
#: PROBE        (none)                 1: make report and make figures include the probe (its mIoU column; made when missing)
#: BASELINES    (none)                 attn: add DINO's attention baseline row of ATTN_NET
#: ATTN_NET     dino                   the network of the attention baseline
#: CHOICE_OPTS  (the baselines)        --baseline NET options: the networks that do not choose SETTING=best
#: WEIGHTS      (none)                 the checkpoint of the network named `weights` (make demo WEIGHTS=...)
#: OUT          work                   caches, scores, results, stamps
#: TABLES       tables                 sweep.* and report.* tables
#: FIGURES      figures                make figures' folder
#: REPORT_DIR   report                 the results browser's folder
#: REPORT_OPTS  (none)                 extra kc-report options
#: LEDGER       ledger.tsv             the ledger: one line per scoring run (kc-score, kc-probe)
#: SHARDS       1                      n > 1: every feature, decode and propagation step in n shards (slurm.mk)
#: SCHEDULER    local                  slurm: submit the steps as job arrays (README "On a Slurm cluster")
#: KEEP_SHARDS  (none)                 1: keep the shards after a verified merge
#: SLURM_INI    configs/slurm.ini      the Slurm resources per step
#: PUBLISHED    configs/published.ini  published numbers drawn beside the networks in the figures
#: FIG_IDS      (none)                 the VOC ids of the figure grid-voc (default: the first FIG_FIRST)
#: FIG_FIRST    4                      images in grid-voc when FIG_IDS is empty
#: FIG_SEQUENCE (the first)            the DAVIS sequence of grid-davis
#: FIG_FRAMES   4                      frames in grid-davis
#: DEMO_DIR     demo                   make demo's folder (data, caches, report)
#: DEMO_TABLES  tables                 where make demo copies its tables (demo.*, demo-sweep.*)
#: DEMO_NETS_INI configs/demo-nets.ini make demo's networks
#: KC_PLAN      1                      0: no plan line before a goal's steps (the tests' reference runs)
#: KC_FIGURES   1                      0: the results browser leaves FIGURES out (make report / report-html set it)
NETS         ?= color
NETS_INI     ?= configs/nets.ini
VOC          ?=
VAL_SPLIT    ?= val
SELECT_COUNT ?= 1000
SPLITS       ?= datasets/splits
GRID         ?= configs/sweep.ini
SETTING      ?= best
KIND         ?= keys
REFINE       ?= none
REFINE_ARGS  ?=
DAVIS        ?=
DAVIS_SPLIT  ?= val
DAVIS_KIND   ?= tokens
PROBE_TRAIN  ?= trainaug
PROBE_SIZE   ?= 224
PROBE_OPTS   ?=
PROBE        ?=
BASELINES    ?=
ATTN_NET     ?= dino
WEIGHTS      ?=
OUT          ?= work
TABLES       ?= tables
FIGURES      ?= figures
REPORT_DIR   ?= report
REPORT_OPTS  ?=
LEDGER       ?= ledger.tsv
SHARDS       ?= 1
SCHEDULER    ?= local
PUBLISHED    ?= configs/published.ini
FIG_IDS      ?=
FIG_FIRST    ?= 4
FIG_SEQUENCE ?=
FIG_FRAMES   ?= 4
# make corloc's variables (VOC07, VOC12, COCO, COCO20K_LIST, CENTER, CORLOC_PUBLISHED), its products
# (kc_corloc_products, made below before the stamps' check) and its goal
-include corloc.mk
# make masks's variables (IMAGES, MASKS_DIR, MASKS_SCORE), its products (kc_masks_products) and its goal
-include masks.mk
# make saliency's variables (ECSSD, DUTS, DUTOMRON), its products (kc_saliency_products) and its goal
-include saliency.mk

ATTN_SETTING  := attn-mass0.60
ATTN_NETS     := $(if $(filter attn,$(BASELINES)),$(ATTN_NET))
REFINE_SUFFIX := $(if $(filter-out none,$(REFINE)),-$(REFINE))
SELECT_LIST   := $(SPLITS)/select$(SELECT_COUNT).txt
TRAIN_LIST    := $(VOC)/ImageSets/Segmentation/train.txt
VAL_LIST      := $(VOC)/ImageSets/Segmentation/$(VAL_SPLIT).txt
PROBE_LIST    := $(VOC)/ImageSets/Segmentation/$(PROBE_TRAIN).txt
DAVIS_LIST    := $(DAVIS)/ImageSets/2017/$(DAVIS_SPLIT).txt
DAVIS_SET     := davis17-$(DAVIS_SPLIT)
RECIPES       := $(OUT)/.recipes

.PHONY: sweep report davis tables probe figures report-html help FORCE
FORCE:
# kc_seq N,1: the numbers 1 to N, by make itself (no seq process in every make; past 512, seq)
kc_seq = $(if $(word $(1),$(2)),$(2),$(if $(word 512,$(2)),$(shell seq 1 $(1)),$(call kc_seq,$(1),$(2) $(words x $(2)))))

# ---- the request checked before anything runs: one line naming what to fix ---------------------
# (at parse time, for the goals a user types; `make SUBGOAL` of the goals below is not checked again)
KC_USER_GOALS := $(filter sweep report davis probe figures report-html tables corloc saliency,$(MAKECMDGOALS))
ifneq ($(KC_USER_GOALS),)
ifneq ($(VOC12),)
ifeq ($(VOC),)
ifneq ($(filter-out corloc,$(KC_USER_GOALS)),)
$(error VOC12 is make corloc's VOC2012 root; the pipeline's is VOC=/path/to/VOCdevkit/VOC2012)
endif
endif
endif
ifeq ($(filter $(REFINE),none crf bs),)
$(error REFINE must be none, crf or bs (got '$(REFINE)'))
endif
KC_CHECK := $(shell GOALS='$(KC_USER_GOALS)' NETS='$(NETS)' NETS_INI='$(NETS_INI)' OUT='$(OUT)' WEIGHTS='$(WEIGHTS)' \
              VOC='$(VOC)' VAL_SPLIT='$(VAL_SPLIT)' PROBE_TRAIN='$(PROBE_TRAIN)' DAVIS='$(DAVIS)' \
              DAVIS_SPLIT='$(DAVIS_SPLIT)' GRID='$(GRID)' SETTING='$(SETTING)' ATTN_NETS='$(ATTN_NETS)' \
              SHARDS='$(SHARDS)' BUILD='$(BUILD)' PROBE='$(PROBE)' TABLES='$(TABLES)' VOC07='$(VOC07)' VOC12='$(VOC12)' \
              COCO='$(COCO)' COCO20K_LIST='$(COCO20K_LIST)' CORLOC_PUBLISHED='$(CORLOC_PUBLISHED)' \
              ECSSD='$(ECSSD)' DUTS='$(DUTS)' DUTOMRON='$(DUTOMRON)' PUBLISHED='$(PUBLISHED)' configs/check-request.sh 2>&1)
ifneq ($(KC_CHECK),)
$(error $(KC_CHECK))
endif
endif

# ---- which make is a pipeline make -------------------------------------------------------------
# The rules below (and the networks' options they need) are made only for goals of the pipeline
# and products; `make`, `make test` and the like never read nets.ini.
KC_NOT_PIPELINE := all deps deps-ref deps-fuzz deps-bench deps-tex test test-fresh check-full bench clean features \
                   help fuzz fuzz-smoke fuzz-build test-slurm status
KC_PIPELINE := $(filter-out $(KC_NOT_PIPELINE) $(STAGES) $(LIB) $(BUILD)/obj/% $(BUILD)/tests/% $(BUILD)/other-arch/%,$(MAKECMDGOALS))
ifneq ($(KC_PIPELINE),)

# A make whose goals are all figures or the results browser (make figures' and make report-html's
# own sub-makes, make -q of them) draws from the products that exist: their rules are not made
# here, so it never runs the pipeline; it redraws when they changed (mtime) or its command did.
KC_DRAW := $(if $(filter-out $(FIGURES)/% $(REPORT_DIR)/% figures report-html,$(MAKECMDGOALS)),,1)

# A pipeline make starts four processes while it reads this file (process starts are what a make
# costs, docs/design.md): this shell, which prints make's pid (the name of its plan, below) and
# becomes the awk of configs/net-args.sh --make-all (every network's line of nets.ini), and the
# stamps' check at the end (configs/recipe.awk, its shell and a stat).
KC_NETS_ALL := $(sort $(NETS) $(ATTN_NETS))
KC_START := $(shell $(if $(wildcard $(RECIPES)),,mkdir -p $(RECIPES) && )echo KC-PID=$$PPID && \
              if [ -f $(NETS_INI) ]; then OUT=$(OUT) WEIGHTS=$(WEIGHTS) exec awk -v make=1 -f configs/net-args.awk -- $(NETS_INI) --make-all $(KC_NETS_ALL) 2>&1; \
              else echo "net-args: $(NETS_INI): no such file KC-FAILED"; fi)
KC_NET_LINES := $(filter-out KC-PID=%,$(KC_START))
ifneq ($(filter KC-FAILED,$(KC_START))$(filter-out $(words $(KC_NETS_ALL)),$(words $(KC_NET_LINES))),)
$(error $(filter-out KC-FAILED,$(KC_NET_LINES)))
endif
KC_PLAN_FILE := $(RECIPES)/.plan.$(patsubst KC-PID=%,%,$(filter KC-PID=%,$(KC_START)))
KC_HASHES := $(RECIPES)/.hashes.tsv
$(file >$(KC_PLAN_FILE))

# ---- products and their stamps -----------------------------------------------------------------
# kc_stamp P: P's stamp, under $(RECIPES) by P's path below OUT (or abs/<absolute path>)
kc_rel   = $(patsubst $(abspath $(OUT))/%,%,$(abspath $(1)))
kc_stamp = $(RECIPES)/$(if $(filter /%,$(call kc_rel,$(1))),abs)$(call kc_rel,$(1)).recipe
# a hashed file that does not exist becomes a prerequisite, so make stops naming it
kc_missing = $(foreach f,$(1),$(if $(wildcard $(f)),,$(f)))
# $(call kc_product,P,PREREQS,HASHED,COMMAND[,EXTRA]): P is made by COMMAND EXTRA (EXTRA: what
# does not determine P, such as the ledger); the stamp holds COMMAND and the hashes of HASHED.
define kc_product_rule
$(1): $(2) $(call kc_stamp,$(1)) $(call kc_missing,$(3))
	$(strip $(4))$(if $(strip $(5)), $(strip $(5)))
$(call kc_stamp_rule,$(1),$(3),$(4))
endef
# The stamps are checked once per make: each product's line goes to KC_PLAN_FILE while the rules
# are made, and one configs/recipe.awk at the end names the stamps whose text changed; only those
# get a rule (FORCE, run also under make -n) that rewrites them when make reaches them, so a make
# rewrites the stamps of its goals' products only.  Make writes the stamp itself ($(file)): the
# command, then a line per hashed file with the hash the check found (KC-SHA words).
define kc_stamp_rule
KC_TEXT.$(call kc_stamp,$(1)) := $(strip $(3))
KC_HASHED.$(call kc_stamp,$(1)) := $(strip $(2))
$$(file >>$(KC_PLAN_FILE),$(call kc_stamp,$(1)) @@ $(strip $(2)) @@ $(strip $(3)))
endef
define kc_stamp_write
$(1): FORCE
	+@$$(file >$$@,$$(KC_TEXT.$(1))$$(call kc_hash_lines,$$(KC_HASHED.$(1))))
endef
define kc_nl


endef
# kc_hash_lines FILES: for each file a newline and "sha256 <hex> <file>" or "missing <file>"
kc_sha = $(patsubst KC-SHA|$(1)|%,%,$(filter KC-SHA|$(1)|%,$(KC_CHECKED)))
kc_hash_line = $(if $(call kc_sha,$(1)),sha256 $(call kc_sha,$(1)) $(1),missing $(1))
kc_hash_lines = $(if $(1),$(kc_nl)$(call kc_hash_line,$(firstword $(1)))$(call kc_hash_lines,$(wordlist 2,$(words $(1)),$(1))))
kc_product = $(eval $(call kc_product_rule,$(1),$(2),$(3),$(4),$(5)))

# $(call kc_cached,P,PREREQS,HASHED,TEMPLATE): a cache made by one stage run, or with SHARDS=n by n
# runs with --shard k/n joined by kc-merge.  TEMPLATE is the command with @SHARD@ where
# " --shard k/n" goes and @OUT@ for its output; the stamp holds the single run's command, so the
# merged file (equal to the single run's, kc-merge's header) is not remade when SHARDS changes.
kc_cmd = $(subst @OUT@,$(2),$(subst @SHARD@,$(3),$(1)))
ifeq ($(SHARDS),1)
kc_cached = $(call kc_product,$(1),$(2),$(3),$(call kc_cmd,$(4),$(1),))
else
SHARD_IDS := $(if $(filter 1,$(SHARDS)),1,$(call kc_seq,$(SHARDS),1))
kc_shards_of = $(foreach k,$(SHARD_IDS),$(1).shards/$(k)-of-$(SHARDS).h5)
# (the stage makes the shard's folder, as every cache writer makes its output's folder)
define kc_shard_rule
$(1).shards/$(5)-of-$(SHARDS).h5: $(2) $(call kc_stamp,$(1)) $(call kc_missing,$(3))
	$(call kc_cmd,$(4),$$@, --shard $(5)/$(SHARDS))
endef
# After a merge, kc-merge --remove-shards reads the merged cache back and checks it against the
# shards, then deletes them (KEEP_SHARDS=1 keeps them).  The shards are intermediate files
# (.SECONDARY): one that kc-merge removed is made again only when its merged product is remade.
define kc_merged_rule
$(1): $(call kc_shards_of,$(1)) $(BUILD)/kc-merge $(call kc_stamp,$(1))
	$(BUILD)/kc-merge $(if $(filter-out 0,$(KEEP_SHARDS)),,--remove-shards) $$@ $(call kc_shards_of,$(1))
$(call kc_stamp_rule,$(1),$(3),$(call kc_cmd,$(4),$(1),))
KC_SHARD_FILES += $(call kc_shards_of,$(1))
endef
kc_cached = $(foreach k,$(SHARD_IDS),$(eval $(call kc_shard_rule,$(1),$(2),$(3),$(4),$(k))))$(eval $(call kc_merged_rule,$(1),$(2),$(3),$(4)))
endif

# ---- the networks: nets.ini read once per make (configs/net-args.awk --make-all, KC_START) -------
# KC_ARGS.n  kc-extract's options; KC_W.n the weights file; KC_KIND.n network|baseline; KC_INIT.n
# kc-init's options (`init =` networks, whose weights are a product: KC_WDEP.n); KC_WHASH.n the
# files whose content the features depend on (the weights and a config.json beside them).
# (KC_NET_LINES: a word "n|KIND|WEIGHTS|INIT|OPTIONS" per network, spaces in a field written '^')
define kc_net_info
KC_NETF.$(1) := $$(subst |, ,$$(patsubst $(1)|%,%,$$(filter $(1)|%,$$(KC_NET_LINES))))
KC_KIND.$(1) := $$(word 1,$$(KC_NETF.$(1)))
KC_W.$(1)    := $$(patsubst -,,$$(word 2,$$(KC_NETF.$(1))))
KC_INIT.$(1) := $$(subst ^, ,$$(patsubst -,,$$(word 3,$$(KC_NETF.$(1)))))
KC_ARGS.$(1) := $$(subst ^, ,$$(patsubst -,,$$(word 4,$$(KC_NETF.$(1)))))
KC_WDEP.$(1) := $$(if $$(KC_INIT.$(1)),$$(KC_W.$(1)))
KC_WHASH.$(1) := $$(if $$(KC_INIT.$(1)),,$$(KC_W.$(1)) $$(wildcard $$(dir $$(KC_W.$(1)))config.json))
endef
$(foreach n,$(sort $(NETS) $(ATTN_NETS)),$(eval $(call kc_net_info,$(n))))
KC_INIT_WEIGHTS := $(sort $(foreach n,$(NETS) $(ATTN_NETS),$(KC_WDEP.$(n))))
$(foreach n,$(if $(KC_DRAW),,$(sort $(NETS) $(ATTN_NETS))),$(if $(KC_INIT.$(n)),$(call kc_product,$(KC_W.$(n)),$(BUILD)/kc-init,,$(BUILD)/kc-init $(KC_INIT.$(n)) --out $(KC_W.$(n)))))

# kind = baseline in nets.ini: the row is listed as a baseline and does not choose the setting.
# CHOICE_OPTS: the networks that choose the setting (SETTING=best) and thereby the star of the sweep
# figure (eval/tables/setting_choice.h): by default all but the baselines, in make demo its network alone.
BASELINE_OPTS := $(foreach n,$(NETS),$(if $(filter baseline,$(KC_KIND.$(n))),--baseline $(n)))
CHOICE_OPTS   ?= $(BASELINE_OPTS)

# ---- the selection split ----------------------------------------------------------------------
$(if $(KC_DRAW),,$(call kc_product,$(SELECT_LIST),$(BUILD)/kc-score,$(TRAIN_LIST),\
  $(BUILD)/kc-score --make-selection $(TRAIN_LIST) --count $(SELECT_COUNT) --out $(SPLITS)))

# ---- one network's products --------------------------------------------------------------------
define kc_net_products
# features (SHARDS=n: n shards each, slurm.mk)
$(call kc_cached,$(OUT)/cache/$(1)/voc12-select/keys.h5,$(BUILD)/kc-extract $(SELECT_LIST) $(KC_WDEP.$(1)),$(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset voc:$(VOC):$(SELECT_LIST)@SHARD@ --out @OUT@)
$(call kc_cached,$(OUT)/cache/$(1)/voc12-val/keys.h5,$(BUILD)/kc-extract $(KC_WDEP.$(1)),$(VAL_LIST) $(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset voc:$(VOC):$(VAL_SPLIT)@SHARD@ --out @OUT@)
$(call kc_cached,$(OUT)/cache/$(1)/voc12-select/centered.h5,$(OUT)/cache/$(1)/voc12-select/keys.h5 $(BUILD)/kc-center,,\
  $(BUILD)/kc-center@SHARD@ $(OUT)/cache/$(1)/voc12-select/keys.h5 @OUT@)
$(call kc_cached,$(OUT)/cache/$(1)/voc12-val/centered.h5,$(OUT)/cache/$(1)/voc12-val/keys.h5 $(BUILD)/kc-center,,\
  $(BUILD)/kc-center@SHARD@ $(OUT)/cache/$(1)/voc12-val/keys.h5 @OUT@)
# decoding: every setting of GRID on the selection split, SETTING on val
$(call kc_cached,$(OUT)/cache/$(1)/voc12-select/masks.h5,$(OUT)/cache/$(1)/voc12-select/centered.h5 $(BUILD)/kc-decode,$(GRID),\
  $(BUILD)/kc-decode --features $(OUT)/cache/$(1)/voc12-select/centered.h5 --kind $(KIND) --grid $(GRID)@SHARD@ --out @OUT@)
$(if $(filter-out best,$(SETTING)),$(call kc_cached,$(OUT)/cache/$(1)/voc12-val/masks-$(SETTING).h5,$(OUT)/cache/$(1)/voc12-val/centered.h5 $(BUILD)/kc-decode,,\
  $(BUILD)/kc-decode --features $(OUT)/cache/$(1)/voc12-val/centered.h5 --kind $(KIND) --setting $(SETTING)@SHARD@ --out @OUT@))
# scores
$(call kc_product,$(OUT)/scores/$(1)/select/summary.csv,$(OUT)/cache/$(1)/voc12-select/masks.h5 $(SELECT_LIST) $(BUILD)/kc-score,,\
  $(BUILD)/kc-score --masks $(OUT)/cache/$(1)/voc12-select/masks.h5 --voc $(VOC) --split $(SELECT_LIST) --out $(OUT)/scores/$(1)/select --network $(1),\
  --ledger $(LEDGER))
$(if $(filter-out best,$(SETTING)),$(call kc_net_val,$(1),$(SETTING)))
# DAVIS: kc-propagate (--replace: results of other features in the folder are stale, make only
# runs it when its request changed), then kc-davis
$(if $(DAVIS),$(call kc_cached,$(OUT)/cache/$(1)/$(DAVIS_SET)/tokens.h5,$(BUILD)/kc-extract $(KC_WDEP.$(1)),$(DAVIS_LIST) $(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset davis:$(DAVIS):$(DAVIS_SPLIT) --features $(DAVIS_KIND)@SHARD@ --out @OUT@)\
  $(call kc_davis_results,$(1)))
# the linear probe
$(call kc_product,$(OUT)/cache/$(1)/voc12-$(PROBE_TRAIN)/tokens$(PROBE_SIZE).h5,$(BUILD)/kc-extract $(KC_WDEP.$(1)),$(PROBE_LIST) $(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset voc:$(VOC):$(PROBE_TRAIN) --policy square$(PROBE_SIZE) --features tokens --out $(OUT)/cache/$(1)/voc12-$(PROBE_TRAIN)/tokens$(PROBE_SIZE).h5)
$(if $(filter-out $(PROBE_TRAIN),$(VAL_SPLIT)),$(call kc_product,$(OUT)/cache/$(1)/voc12-$(VAL_SPLIT)/tokens$(PROBE_SIZE).h5,$(BUILD)/kc-extract $(KC_WDEP.$(1)),$(VAL_LIST) $(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset voc:$(VOC):$(VAL_SPLIT) --policy square$(PROBE_SIZE) --features tokens --out $(OUT)/cache/$(1)/voc12-$(VAL_SPLIT)/tokens$(PROBE_SIZE).h5))
$(call kc_product,$(OUT)/probe/$(1)/head$(PROBE_SIZE).safetensors,$(OUT)/cache/$(1)/voc12-$(PROBE_TRAIN)/tokens$(PROBE_SIZE).h5 $(BUILD)/kc-probe,$(PROBE_LIST),\
  $(BUILD)/kc-probe train --features $(OUT)/cache/$(1)/voc12-$(PROBE_TRAIN)/tokens$(PROBE_SIZE).h5 --labels voc:$(VOC):$(PROBE_TRAIN) --out $(OUT)/probe/$(1)/head$(PROBE_SIZE).safetensors $(PROBE_OPTS))
$(call kc_product,$(OUT)/scores/$(1)/probe$(PROBE_SIZE)/summary.csv,$(OUT)/probe/$(1)/head$(PROBE_SIZE).safetensors $(OUT)/cache/$(1)/voc12-$(VAL_SPLIT)/tokens$(PROBE_SIZE).h5 $(BUILD)/kc-probe,$(VAL_LIST),\
  $(BUILD)/kc-probe eval --head $(OUT)/probe/$(1)/head$(PROBE_SIZE).safetensors --features $(OUT)/cache/$(1)/voc12-$(VAL_SPLIT)/tokens$(PROBE_SIZE).h5 --labels voc:$(VOC):$(VAL_SPLIT) --out $(OUT)/scores/$(1)/probe$(PROBE_SIZE) --network $(1),\
  --ledger $(LEDGER))
endef

# VOC val at one setting $(2): scores of the decoder's masks, or of kc-refine's (REFINE=crf|bs)
define kc_net_val_text
$(if $(REFINE_SUFFIX),$(call kc_product,$(OUT)/cache/$(1)/voc12-val/masks-$(2)$(REFINE_SUFFIX).h5,$(OUT)/cache/$(1)/voc12-val/masks-$(2).h5 $(BUILD)/kc-refine,$(VAL_LIST),\
  $(BUILD)/kc-refine --masks $(OUT)/cache/$(1)/voc12-val/masks-$(2).h5 --dataset voc:$(VOC):$(VAL_SPLIT) --method $(REFINE) $(REFINE_ARGS) --out $(OUT)/cache/$(1)/voc12-val/masks-$(2)$(REFINE_SUFFIX).h5))
$(call kc_product,$(OUT)/scores/$(1)/val-$(2)$(REFINE_SUFFIX)/summary.csv,$(OUT)/cache/$(1)/voc12-val/masks-$(2)$(REFINE_SUFFIX).h5 $(BUILD)/kc-score,$(VAL_LIST),\
  $(BUILD)/kc-score --masks $(OUT)/cache/$(1)/voc12-val/masks-$(2)$(REFINE_SUFFIX).h5 --voc $(VOC) --split $(VAL_LIST) --out $(OUT)/scores/$(1)/val-$(2)$(REFINE_SUFFIX) --network $(1),\
  --ledger $(LEDGER))
endef
kc_net_val = $(call kc_net_val_text,$(1),$(2))

# DAVIS results of network $(1): one folder, its J&F files written last by kc-davis
KC_DAVIS_CMD = $(BUILD)/kc-propagate --features $(OUT)/cache/$(1)/$(DAVIS_SET)/tokens.h5 --davis $(DAVIS) --split $(DAVIS_SPLIT) --kind $(DAVIS_KIND) --replace@SHARD@ --out $(OUT)/results/$(1)/$(DAVIS_SET)
KC_DAVIS_J  = $(BUILD)/kc-davis --results $(OUT)/results/$(1)/$(DAVIS_SET) --davis $(DAVIS) --split $(DAVIS_SPLIT) --force
ifeq ($(SHARDS),1)
kc_davis_results = $(call kc_product,$(OUT)/results/$(1)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv,$(OUT)/cache/$(1)/$(DAVIS_SET)/tokens.h5 $(BUILD)/kc-propagate $(BUILD)/kc-davis,$(DAVIS_LIST),\
  $(call kc_cmd,$(KC_DAVIS_CMD),,) && $(KC_DAVIS_J))
else
# kc-propagate shards write whole sequences into the same folder; a file
# $(OUT)/.recipes/results/<net>/<davis>.shards/k-of-n.done marks each shard, and kc-davis runs once all are there
define kc_davis_shard
$(RECIPES)/results/$(1)/$(DAVIS_SET).shards/$(2)-of-$(SHARDS).done: $(OUT)/cache/$(1)/$(DAVIS_SET)/tokens.h5 $(BUILD)/kc-propagate $(call kc_stamp,$(OUT)/results/$(1)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv)
	$(call kc_cmd,$(KC_DAVIS_CMD),, --shard $(2)/$(SHARDS))
	@mkdir -p $$(@D) && touch $$@
endef
define kc_davis_merged
$(OUT)/results/$(1)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv: $(foreach k,$(SHARD_IDS),$(RECIPES)/results/$(1)/$(DAVIS_SET).shards/$(k)-of-$(SHARDS).done) $(BUILD)/kc-davis $(call kc_stamp,$(OUT)/results/$(1)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv) $(call kc_missing,$(DAVIS_LIST))
	$(KC_DAVIS_J)
$(call kc_stamp_rule,$(OUT)/results/$(1)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv,$(DAVIS_LIST),$(call kc_cmd,$(KC_DAVIS_CMD),,) && $(KC_DAVIS_J))
endef
kc_davis_results = $(foreach k,$(SHARD_IDS),$(eval $(call kc_davis_shard,$(1),$(k))))$(eval $(call kc_davis_merged,$(1)))
endif

$(foreach n,$(if $(KC_DRAW),,$(NETS)),$(eval $(call kc_net_products,$(n))))

# ---- the attention baseline (BASELINES=attn): class attention, 60 % mass masks, DINO's scoring ----
define kc_attn_products
$(call kc_product,$(OUT)/cache/$(1)/voc12-val/attn.h5,$(BUILD)/kc-extract $(KC_WDEP.$(1)),$(VAL_LIST) $(KC_WHASH.$(1)),\
  $(BUILD)/kc-extract $(KC_ARGS.$(1)) --dataset voc:$(VOC):$(VAL_SPLIT) --features attn --out $(OUT)/cache/$(1)/voc12-val/attn.h5)
$(call kc_product,$(OUT)/cache/$(1)/voc12-val/masks-$(ATTN_SETTING).h5,$(OUT)/cache/$(1)/voc12-val/attn.h5 $(BUILD)/kc-decode,,\
  $(BUILD)/kc-decode --features $(OUT)/cache/$(1)/voc12-val/attn.h5 --kind attn --setting $(ATTN_SETTING) --out $(OUT)/cache/$(1)/voc12-val/masks-$(ATTN_SETTING).h5)
$(call kc_product,$(OUT)/scores/$(1)/val-$(ATTN_SETTING)/summary.csv,$(OUT)/cache/$(1)/voc12-val/masks-$(ATTN_SETTING).h5 $(BUILD)/kc-score,$(VAL_LIST),\
  $(BUILD)/kc-score --masks $(OUT)/cache/$(1)/voc12-val/masks-$(ATTN_SETTING).h5 --voc $(VOC) --split $(VAL_LIST) --out $(OUT)/scores/$(1)/val-$(ATTN_SETTING) --network '$(1) (attention 60 %)',\
  --ledger $(LEDGER))
endef
$(foreach n,$(if $(KC_DRAW),,$(ATTN_NETS)),$(eval $(call kc_attn_products,$(n))))

# ---- tables --------------------------------------------------------------------------------
SELECT_SCORES = $(foreach n,$(NETS),$(OUT)/scores/$(n)/select/summary.csv)
VAL_SCORES    = $(foreach n,$(NETS),$(OUT)/scores/$(n)/val-$(SETTING)$(REFINE_SUFFIX)/summary.csv)
ATTN_SCORES   = $(foreach n,$(ATTN_NETS),$(OUT)/scores/$(n)/val-$(ATTN_SETTING)/summary.csv)
DAVIS_SCORES  = $(if $(DAVIS),$(foreach n,$(NETS),$(OUT)/results/$(n)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv))
DAVIS_OPTS    = $(if $(DAVIS),$(foreach n,$(NETS),--davis $(n)=$(OUT)/results/$(n)/$(DAVIS_SET)))
PROBE_SCORES  = $(foreach n,$(NETS),$(OUT)/scores/$(n)/probe$(PROBE_SIZE)/summary.csv)
# the report's column "Probe mIoU" (and the figures' probe panel) with PROBE=1: the probe scores are
# then part of the report's request, made or brought up to date with it (never "whatever exists")
REPORT_PROBE  = $(if $(filter-out 0,$(PROBE)),$(PROBE_SCORES))
PROBE_TABLE_OPTS = $(foreach n,$(if $(REPORT_PROBE),$(NETS)),--probe $(n)=$(OUT)/scores/$(n)/probe$(PROBE_SIZE))
KC_SWEEP_ABOUT = --select-list $(SELECT_LIST)
KC_TABLE_ABOUT = --voc $(VOC) --val-split $(VAL_SPLIT)$(if $(DAVIS), --davis-root $(DAVIS) --davis-split $(DAVIS_SPLIT))

$(if $(KC_DRAW),,$(call kc_product,$(TABLES)/sweep.csv,$(SELECT_SCORES) $(SELECT_LIST) $(BUILD)/kc-table,,\
  $(BUILD)/kc-table $(dir $(SELECT_SCORES)) --out $(TABLES) --name sweep --only sweep $(KC_SWEEP_ABOUT) $(BASELINE_OPTS),\
  --ledger $(LEDGER)))
$(if $(filter-out best,$(SETTING)),$(if $(KC_DRAW),,$(call kc_product,$(TABLES)/report.csv,$(VAL_SCORES) $(ATTN_SCORES) $(DAVIS_SCORES) $(REPORT_PROBE) $(BUILD)/kc-table,,\
  $(BUILD)/kc-table $(dir $(VAL_SCORES) $(ATTN_SCORES)) --out $(TABLES) --name report --only report --setting $(SETTING) $(KC_TABLE_ABOUT) $(DAVIS_OPTS) $(PROBE_TABLE_OPTS) $(BASELINE_OPTS)$(if $(REFINE_SUFFIX), --refine $(REFINE)),\
  --ledger $(LEDGER))))

# ---- figures (kc-plot): drawn from the score files that exist; never runs the pipeline --------
# A network of NETS whose scores are missing makes kc-plot stop with a line naming it and the file
# (FIG_FORCE runs the rule then).
FIG_FORCE     = $(if $(filter-out $(wildcard $(1)),$(1)),figures-missing)
VAL_MASKS     = $(foreach n,$(NETS),$(OUT)/cache/$(n)/voc12-val/masks-$(SETTING)$(REFINE_SUFFIX).h5)
DAVIS_RESULTS = $(foreach n,$(NETS),$(OUT)/results/$(n)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv)
.PHONY: figures-missing
ifneq ($(filter-out best,$(SETTING)),)
$(call kc_product,$(FIGURES)/sweep-jaccard.pdf,$(wildcard $(SELECT_SCORES)) $(call FIG_FORCE,$(SELECT_SCORES)) $(BUILD)/kc-plot,,\
  $(BUILD)/kc-plot sweep $(foreach n,$(NETS),--scores $(n)=$(OUT)/scores/$(n)/select) $(CHOICE_OPTS) --out $(FIGURES),\
  && configs/prune-figures.sh $(FIGURES) sweep $(NETS))
$(call kc_product,$(FIGURES)/curves.pdf,$(wildcard $(VAL_SCORES) $(DAVIS_SCORES) $(REPORT_PROBE)) $(call FIG_FORCE,$(VAL_SCORES) $(DAVIS_SCORES) $(REPORT_PROBE)) $(BUILD)/kc-plot,$(NETS_INI) $(PUBLISHED),\
  $(BUILD)/kc-plot curves $(foreach n,$(NETS),--voc $(n)=$(OUT)/scores/$(n)/val-$(SETTING)$(REFINE_SUFFIX)) $(if $(DAVIS),$(foreach n,$(NETS),--davis $(n)=$(OUT)/results/$(n)/$(DAVIS_SET))) $(PROBE_TABLE_OPTS) --nets-ini $(NETS_INI) --published $(PUBLISHED) --setting $(SETTING) --out $(FIGURES))
$(if $(VOC),$(call kc_product,$(FIGURES)/grid-voc.pdf,$(wildcard $(VAL_MASKS)) $(call FIG_FORCE,$(VAL_MASKS)) $(BUILD)/kc-plot,$(VAL_LIST),\
  $(BUILD)/kc-plot voc-grid --voc $(VOC) --split $(VAL_SPLIT) --setting $(SETTING) $(foreach n,$(NETS),--masks $(n)=$(OUT)/cache/$(n)/voc12-val/masks-$(SETTING)$(REFINE_SUFFIX).h5) $(if $(FIG_IDS),--ids $(FIG_IDS),--first $(FIG_FIRST)) --out $(FIGURES)))
$(if $(DAVIS),$(call kc_product,$(FIGURES)/grid-davis.pdf,$(wildcard $(DAVIS_RESULTS)) $(call FIG_FORCE,$(DAVIS_RESULTS)) $(BUILD)/kc-plot,$(if $(FIG_SEQUENCE),,$(DAVIS_LIST)),\
  $(BUILD)/kc-plot davis-grid --davis $(DAVIS) --sequence $(or $(FIG_SEQUENCE),$(firstword $(file < $(DAVIS_LIST)))) $(foreach n,$(NETS),--results $(n)=$(OUT)/results/$(n)/$(DAVIS_SET)) --frames $(FIG_FRAMES) --out $(FIGURES)))
endif

# ---- the results browser (kc-report): $(REPORT_DIR)/index.html, from what report / davis / figures wrote ----
# Shows the tables, score folders, masks caches, DAVIS results and figures of the request that exist
# (it makes no missing product, as make figures); pictures are redrawn only when their inputs
# changed (kc-report checks each one).
REPORT_SETTING = $(SETTING)$(REFINE_SUFFIX)
REPORT_TABLES  = $(wildcard $(TABLES)/report.csv $(TABLES)/sweep.csv)
REPORT_VOC     = $(foreach n,$(NETS),$(if $(wildcard $(OUT)/scores/$(n)/val-$(REPORT_SETTING)/summary.csv),$(n)))
REPORT_ATTN    = $(foreach n,$(ATTN_NETS),$(if $(wildcard $(OUT)/scores/$(n)/val-$(ATTN_SETTING)/summary.csv),$(n)))
REPORT_DAVIS   = $(if $(DAVIS),$(foreach n,$(NETS),$(if $(wildcard $(OUT)/results/$(n)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv),$(n))))
# make saliency's score folders of the request (ECSSD, DUTS, DUTOMRON given) that exist: <net>/<dataset>
REPORT_SAL     = $(foreach n,$(NETS),$(foreach d,$(SAL_SETS),$(if $(wildcard $(SAL_DIR)/$(n)/$(d)/scores-$(SAL_SETTING)/summary.csv),$(n)/$(d))))
# the figures, shown when they are of this request (KC_FIGURES=0: make report / report-html found them
# out of date, so a page never shows figures drawn from other scores than its tables')
KC_FIGURES    ?= 1
REPORT_FIGS    = $(if $(filter 1,$(KC_FIGURES)),$(wildcard $(FIGURES)/*.png))
KC_REPORT_ABOUT = --setting $(SETTING)$(if $(REFINE_SUFFIX), --refine $(REFINE))$(if $(VOC), --val-split $(VAL_SPLIT))
KC_REPORT_ABOUT_DAVIS = $(if $(REPORT_DAVIS),--davis-split $(DAVIS_SPLIT))
REPORT_INPUTS  = $(REPORT_TABLES) $(REPORT_FIGS) \
                 $(foreach n,$(REPORT_VOC),$(OUT)/scores/$(n)/val-$(REPORT_SETTING)/summary.csv $(wildcard $(OUT)/cache/$(n)/voc12-val/masks-$(REPORT_SETTING).h5)) \
                 $(foreach n,$(REPORT_ATTN),$(OUT)/scores/$(n)/val-$(ATTN_SETTING)/summary.csv $(wildcard $(OUT)/cache/$(n)/voc12-val/masks-$(ATTN_SETTING).h5)) \
                 $(foreach n,$(REPORT_DAVIS),$(OUT)/results/$(n)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv) \
                 $(foreach s,$(REPORT_SAL),$(SAL_DIR)/$(s)/scores-$(SAL_SETTING)/summary.csv)
ifneq ($(filter-out best,$(SETTING)),)
$(call kc_product,$(REPORT_DIR)/index.html,$(BUILD)/kc-report $(REPORT_INPUTS),$(if $(VOC),$(VAL_LIST)),\
  $(BUILD)/kc-report --out $(REPORT_DIR) $(foreach t,$(REPORT_TABLES),--table $(t)) $(if $(REPORT_FIGS),--figures $(FIGURES)) \
    $(foreach n,$(REPORT_VOC),--scores $(n)=$(OUT)/scores/$(n)/val-$(REPORT_SETTING) \
      $(if $(wildcard $(OUT)/cache/$(n)/voc12-val/masks-$(REPORT_SETTING).h5),--masks $(n)=$(OUT)/cache/$(n)/voc12-val/masks-$(REPORT_SETTING).h5)) \
    $(foreach n,$(REPORT_ATTN),--scores '$(n) (attention 60 %)=$(OUT)/scores/$(n)/val-$(ATTN_SETTING)' \
      --masks '$(n) (attention 60 %)=$(OUT)/cache/$(n)/voc12-val/masks-$(ATTN_SETTING).h5') \
    $(if $(and $(VOC),$(REPORT_VOC)$(REPORT_ATTN)),--images voc:$(VOC):$(VAL_SPLIT)) $(KC_REPORT_ABOUT) \
    $(foreach n,$(REPORT_DAVIS),--davis $(n)=$(OUT)/results/$(n)/$(DAVIS_SET)) $(if $(REPORT_DAVIS),--davis-root $(DAVIS)) $(KC_REPORT_ABOUT_DAVIS) \
    $(foreach s,$(REPORT_SAL),--saliency $(firstword $(subst /, ,$(s)))=$(SAL_DIR)/$(s)/scores-$(SAL_SETTING)) $(REPORT_OPTS))
endif

# ---- make corloc's products (corloc.mk): stamped as the others, so checked with them below ----
$(if $(KC_DRAW),,$(kc_corloc_products))
# ---- make masks's products (masks.mk): your own photos to overlays, PNG masks and a COCO JSON ----
$(if $(KC_DRAW),,$(kc_masks_products))
# ---- make saliency's products (saliency.mk): ECSSD, DUTS-TE, DUT-OMRON as TokenCut scores them ----
$(if $(KC_DRAW),,$(kc_saliency_products))

# the stamps whose text changed get their rule (every product's rule is made above this line)
KC_CHECKED := $(shell awk -v table=$(KC_HASHES) -v tmp=$(KC_HASHES).$$$$ -v plan=$(KC_PLAN_FILE) -f configs/recipe.awk $(KC_PLAN_FILE))
KC_CHANGED := $(filter-out KC-SHA|%,$(KC_CHECKED))
$(foreach s,$(KC_CHANGED),$(eval $(call kc_stamp_write,$(s))))
ifneq ($(SHARDS),1)
.SECONDARY: $(KC_SHARD_FILES)
endif
endif # KC_PIPELINE

# ---- the goals ---------------------------------------------------------------------------------
# Each prints its plan (configs/plan.sh: what `make -n` would run and how long it should take; an
# error of make -n is shown and stops the goal), makes its products, then prints its table: always
# the one this run made or checked against the request.
# KC_PLAN=0 (tests' reference runs) skips it.
KC_PLAN ?= 1
PLAN = $(if $(filter 0,$(KC_PLAN)),true,$(MAKE) --no-print-directory -n $(1) | SELECT_LIST=$(SELECT_LIST) SELECT_COUNT=$(SELECT_COUNT) TRAIN_LIST=$(TRAIN_LIST) \
       VAL_LIST=$(VAL_LIST) DAVIS_ROOT=$(DAVIS) DAVIS_SPLIT=$(DAVIS_SPLIT) ECSSD=$(ECSSD) DUTS=$(DUTS) DUTOMRON=$(DUTOMRON) configs/plan.sh)
# SETTING=best takes the setting with the best mean Jaccard over NETS on the selection split
# (kc-table --print-best, CHOICE_OPTS), after the sweep; any setting id can be given instead.
BEST_SETTING = $$($(BUILD)/kc-table --print-best $(dir $(SELECT_SCORES)) $(CHOICE_OPTS))
# the setting of the goal: SETTING, or the one the selection split chose (the sweep must exist)
KC_SETTING = $(if $(filter best,$(SETTING)),$(BEST_SETTING),$(SETTING))
# KC_FIGS_OK SETTING: 1 when FIGURES holds figures and they are up to date with the request (make -q
# of make figures' products), else 0 (and a line saying why they are left out of the page)
KC_FIG_TARGETS = $(FIGURES)/sweep-jaccard.pdf $(FIGURES)/curves.pdf $(if $(VOC),$(FIGURES)/grid-voc.pdf) $(if $(DAVIS),$(FIGURES)/grid-davis.pdf)
KC_FIGS_OK = $$(if ls $(FIGURES)/*.png >/dev/null 2>&1; then \
                 if $(MAKE) --no-print-directory -q SETTING=$(1) $(KC_FIG_TARGETS) >/dev/null 2>&1; then echo 1; \
                 else echo "report: the figures in $(FIGURES)/ are not of this request (make figures redraws them); the page leaves them out" >&2; echo 0; fi; \
               else echo 0; fi)

ifneq ($(SCHEDULER),slurm)   # SCHEDULER=slurm: sweep, report, davis and demo are those of slurm.mk
sweep: all
	@$(call PLAN,$(TABLES)/sweep.csv)
	@$(MAKE) --no-print-directory $(TABLES)/sweep.csv
	@configs/sweep-best.sh $(TABLES) 10 $(CHOICE_OPTS)

report: all
ifeq ($(SETTING),best)
	@$(call PLAN,$(TABLES)/sweep.csv)
	@$(MAKE) --no-print-directory $(TABLES)/sweep.csv
	@best=$(BEST_SETTING); echo "pipeline: the selection split chose $$best"; \
	  $(call PLAN,SETTING=$$best $(TABLES)/report.csv); \
	  $(MAKE) --no-print-directory SETTING=$$best $(TABLES)/report.csv; \
	  $(MAKE) --no-print-directory SETTING=$$best KC_FIGURES=$(call KC_FIGS_OK,$$best) $(REPORT_DIR)/index.html
else
	@$(BUILD)/kc-decode --check-setting $(SETTING) --grid $(GRID)
	@$(call PLAN,$(TABLES)/report.csv)
	@$(MAKE) --no-print-directory $(TABLES)/report.csv
	@$(MAKE) --no-print-directory KC_FIGURES=$(call KC_FIGS_OK,$(SETTING)) $(REPORT_DIR)/index.html
endif
	@cat $(TABLES)/report.md
	@echo "report: $(REPORT_DIR)/index.html (the results browser)"

davis: all
	@$(call PLAN,$(DAVIS_SCORES))
	@$(MAKE) --no-print-directory $(DAVIS_SCORES)
	@for n in $(NETS); do echo "$$n: $$(tail -n 1 $(OUT)/results/$$n/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv)"; done
endif

probe: all
	@$(call PLAN,$(PROBE_SCORES))
	@$(MAKE) --no-print-directory $(PROBE_SCORES)
	@for n in $(NETS); do echo "$$n: probe mIoU $$(tail -n 1 $(OUT)/scores/$$n/probe$(PROBE_SIZE)/summary.csv | cut -d, -f1) ($(OUT)/scores/$$n/probe$(PROBE_SIZE)/iou.csv)"; done

# the tables as they were last made (each names the request that made it); runs nothing
tables:
	@for f in $(TABLES)/*.md; do echo "== $$f"; cat "$$f"; echo; done

# SETTING=best: the setting kc-table --print-best chooses from the selection scores (as make report:
# the sweep figure's star).
figures: $(BUILD)/kc-plot $(BUILD)/kc-table
	@setting=$(KC_SETTING); \
	  $(MAKE) --no-print-directory SETTING=$$setting $(FIGURES)/sweep-jaccard.pdf $(FIGURES)/curves.pdf $(if $(VOC),$(FIGURES)/grid-voc.pdf) $(if $(DAVIS),$(FIGURES)/grid-davis.pdf)
	@echo "figures: $(FIGURES)/ (each as .pdf .svg .png, with a pgfplots .tex and its .csv)"

report-html: $(BUILD)/kc-report $(BUILD)/kc-table
	@setting=$(KC_SETTING); $(MAKE) --no-print-directory SETTING=$$setting KC_FIGURES=$(call KC_FIGS_OK,$$setting) $(REPORT_DIR)/index.html
	@echo "report: $(REPORT_DIR)/index.html (open it in a browser; $$(du -sh $(REPORT_DIR) | cut -f1) on disk)"

# Goals given together run one after another, in the order given (make -j2 report figures: the
# figures are drawn from the report's products), each goal's own steps in parallel under -j.
kc_chain = $(if $(word 2,$(1)),$(eval $(word 2,$(1)): | $(word 1,$(1)))$(call kc_chain,$(wordlist 2,$(words $(1)),$(1))))
$(call kc_chain,$(filter sweep report davis probe figures report-html,$(MAKECMDGOALS)))

# every variable the pipeline reads, with its default and meaning (the `#:` lines above)
help:
	@echo "keycut's pipeline: make sweep | report | davis | probe | figures | report-html | tables | demo | corloc | masks | saliency"
	@echo "(README.md, \"The thesis pipeline with make\"); the variables, their defaults and meaning:"
	@sed -n 's/^#: //p' pipeline.mk corloc.mk masks.mk saliency.mk

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
DEMO_PROBE_ARGS := PROBE=1 PROBE_TRAIN=train PROBE_SIZE=224 PROBE_OPTS="--batch 8"

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
	  $(MAKE) --no-print-directory $(DEMO_ARGS) $(DEMO_PROBE_ARGS) SETTING=$$setting $(DEMO_DIR)/tables/report.csv; \
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
	  $(MAKE) --no-print-directory $(DEMO_ARGS) $(DEMO_PROBE_ARGS) SETTING=$$( [ "$(SETTING)" = best ] && echo $$best || echo $(SETTING) ) \
	    FIGURES=$(DEMO_DIR)/figures REPORT_DIR=$(DEMO_DIR)/report $(DEMO_DIR)/report/index.html
	@echo; echo "demo: $(DEMO_TABLES)/demo.md (VOC val at the chosen setting, DAVIS J&F), $(DEMO_TABLES)/demo-sweep.md (all settings on the selection split), overlays in $(DEMO_DIR)/shows/, the results browser $(DEMO_DIR)/report/index.html"
	@cat $(DEMO_TABLES)/demo.md
endif

# Sharding (SHARDS=n) and SCHEDULER=slurm: see slurm.mk and README "On a Slurm cluster".
-include slurm.mk
