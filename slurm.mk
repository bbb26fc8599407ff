# slurm.mk — sharded products (SHARDS=n) and the Slurm engine (SCHEDULER=slurm); included by
# pipeline.mk.  See README.md "On a Slurm cluster".
#
#   make sweep SHARDS=4                      the same products, each stage in 4 shards run by make -j
#   make sweep SHARDS=64 SCHEDULER=slurm     writes sbatch job arrays under $(OUT)/slurm/, submits them
#   make report / davis / demo SCHEDULER=slurm   the same for those goals (report: the best setting
#                                            is chosen by a job of the graph, the `best` step)
#   make status                              squeue/sacct view: done, out of date, pending (why, in
#                                            plain words), running, failed, what to resubmit
# Before submitting, each step's request (SLURM_INI) is checked against the cluster's partitions and
# nodes (configs/slurm-check.sh); what can never run is refused and nothing is queued.
#
# A sharded product P (keys.h5, centered.h5, masks*.h5) is made by kc-merge from P.shards/k-of-n.h5,
# k = 1..n, each written by the stage with --shard k/n from the WHOLE (merged) input, with the same
# arguments as the single run: the merged file equals the single run's (kc-merge's header).
# Once kc-merge has checked the merged file against the shards, it removes them (KEEP_SHARDS=1 keeps).
# kc-propagate shards write whole sequences into the same results folder; a stamp
# $(OUT)/.recipes/results/<net>/<davis>.shards/k-of-n.done marks each, and kc-davis runs once all are there.

SLURM_INI ?= configs/slurm.ini
KEEP_SHARDS ?=

SHARD_IDS := $(if $(filter 1,$(SHARDS)),1,$(call kc_seq,$(SHARDS),1))
kc_shards_of = $(foreach k,$(SHARD_IDS),$(1).shards/$(k)-of-$(SHARDS).h5)
# The shard rules and their merges are pipeline.mk's (kc_cached, kc_davis_results): a shard is
# made with the same arguments as the single run, with --shard k/n, from the WHOLE (merged) input;
# the merged product shares the single run's recipe stamp, so changing SHARDS remakes nothing.

# ---- SCHEDULER=slurm ---------------------------------------------------------------------------------
# The job graph is a list of steps; each step is one job array whose task k makes one target with
# `make SCHEDULER=local <the same variables> TARGET` (so a task runs exactly the stage command a
# local run would), after the steps it depends on (--dependency=afterok).  The last step runs the
# goal itself (SCHEDULER=local), which finds every product made and only scores and tabulates.
# configs/slurm-submit.sh writes the sbatch scripts into $(OUT)/slurm/round-N/, submits the
# targets a local make would remake (one `make -n` with the tasks' variables over the plan: a
# product older than any input, or downstream of one, is resubmitted; missing shards of an
# up-to-date merged product are not), and gives up on a target whose last two attempts failed with
# the same error; when everything is up to date it submits nothing.  configs/slurm-status.sh is
# `make status` (the same question: a product is done only while it is up to date).
SLURM_DIR = $(OUT)/slurm
kc_plan = $(foreach t,$(3),echo "$(1) $(2) $(t)";)
kc_sel_shards = $(foreach n,$(NETS),$(call kc_shards_of,$(OUT)/cache/$(n)/voc12-select/$(1)))
kc_val_shards = $(foreach n,$(NETS),$(call kc_shards_of,$(OUT)/cache/$(n)/voc12-val/$(1)))
kc_sel = $(foreach n,$(NETS),$(OUT)/cache/$(n)/voc12-select/$(1))
kc_val = $(foreach n,$(NETS),$(OUT)/cache/$(n)/voc12-val/$(1))
KC_DAVIS_TOK_SHARDS = $(if $(DAVIS),$(foreach n,$(NETS),$(call kc_shards_of,$(OUT)/cache/$(n)/$(DAVIS_SET)/tokens.h5)))
KC_DAVIS_TOK = $(if $(DAVIS),$(foreach n,$(NETS),$(OUT)/cache/$(n)/$(DAVIS_SET)/tokens.h5))
KC_PROP_STAMPS = $(if $(DAVIS),$(foreach n,$(NETS),$(foreach k,$(SHARD_IDS),$(RECIPES)/results/$(n)/$(DAVIS_SET).shards/$(k)-of-$(SHARDS).done)))

# The parts of the job graph a goal needs (set by the goals below):
#   SLURM_SWEEP   the selection split's keys, centred keys and 144-setting masks
#   SLURM_VAL     VOC val's keys and centred keys
#   SLURM_REPORT  VOC val's masks at SETTING; with SETTING=best the `best` step (one job running
#                 kc-table --print-best on the sweep's scores, writing $(KC_BEST_FILE)) comes first,
#                 and the val masks' targets carry @BEST@, which their tasks replace by that file's
#                 setting (configs/slurm-submit.sh)
#   SLURM_DAVIS   DAVIS tokens, kc-propagate shards and kc-davis (when DAVIS is set)
SLURM_SWEEP ?=
SLURM_VAL ?=
SLURM_REPORT ?=
SLURM_DAVIS ?=
KC_BEST_FILE = $(TABLES)/sweep-best.txt
KC_SET = $(if $(filter best,$(SETTING)),@BEST@,$(SETTING))
kc_if = $(if $(1),$(2))
KC_DAVIS_ON = $(and $(SLURM_DAVIS),$(DAVIS))
slurm-plan:
	@{ $(call kc_plan,extract,-,$(call kc_if,$(SLURM_SWEEP),$(call kc_sel_shards,keys.h5)) $(call kc_if,$(SLURM_VAL),$(call kc_val_shards,keys.h5)) $(call kc_if,$(KC_DAVIS_ON),$(KC_DAVIS_TOK_SHARDS))) \
	   $(call kc_plan,merge-features,extract,$(call kc_if,$(SLURM_SWEEP),$(call kc_sel,keys.h5)) $(call kc_if,$(SLURM_VAL),$(call kc_val,keys.h5)) $(call kc_if,$(KC_DAVIS_ON),$(KC_DAVIS_TOK))) \
	   $(call kc_plan,center,merge-features,$(call kc_if,$(SLURM_SWEEP),$(call kc_sel_shards,centered.h5)) $(call kc_if,$(SLURM_VAL),$(call kc_val_shards,centered.h5))) \
	   $(call kc_plan,propagate,merge-features,$(call kc_if,$(KC_DAVIS_ON),$(KC_PROP_STAMPS))) \
	   $(call kc_plan,davis,propagate,$(call kc_if,$(KC_DAVIS_ON),$(foreach n,$(NETS),$(OUT)/results/$(n)/$(DAVIS_SET)/global_results-$(DAVIS_SPLIT).csv))) \
	   $(call kc_plan,merge-centered,center,$(call kc_if,$(SLURM_SWEEP),$(call kc_sel,centered.h5)) $(call kc_if,$(SLURM_VAL),$(call kc_val,centered.h5))) \
	   $(call kc_plan,decode,merge-centered,$(call kc_if,$(SLURM_SWEEP),$(call kc_sel_shards,masks.h5))) \
	   $(call kc_plan,merge-masks,decode,$(call kc_if,$(SLURM_SWEEP),$(call kc_sel,masks.h5))) \
	   $(call kc_plan,best,merge-masks,$(call kc_if,$(and $(SLURM_REPORT),$(filter @BEST@,$(KC_SET))),$(KC_BEST_FILE))) \
	   $(call kc_plan,decode-val,merge-centered$(COMMA)best,$(call kc_if,$(SLURM_REPORT),$(call kc_val_shards,masks-$(KC_SET).h5))) \
	   $(call kc_plan,merge-val,decode-val,$(call kc_if,$(SLURM_REPORT),$(call kc_val,masks-$(KC_SET).h5))) true; }

# the best setting of the sweep (SETTING=best), for the val masks' tasks: the `best` step's target,
# chosen as the goal's final job will choose it: make report from all NETS' selection scores (kind =
# baseline rows do not choose), make demo from its network's alone (SLURM_BEST_NETS)
SLURM_BEST_NETS ?=
KC_BEST_SCORES = $(if $(SLURM_BEST_NETS),$(foreach n,$(SLURM_BEST_NETS),$(OUT)/scores/$(n)/select/summary.csv),$(SELECT_SCORES))
$(KC_BEST_FILE): $(KC_BEST_SCORES) $(BUILD)/kc-table
	@mkdir -p $(@D)
	$(BUILD)/kc-table --print-best $(dir $(KC_BEST_SCORES)) $(if $(SLURM_BEST_NETS),,$(CHOICE_OPTS)) > $@.tmp && mv $@.tmp $@

# Jobs never rebuild the programs (built once before submitting; concurrent tasks would race): their
# objects and the library are -o (make ignores their rules), so a program is never remade, but a
# product older than its program is, as in a local make.  kc-init and kc-demo-data are -o too: they
# make only what the login node makes before submitting (weights, the demo's data), which a task
# must never remake (were they rebuilt while jobs run).  The up-to-date question of
# configs/slurm-submit.sh and make status asks the same make command.
KC_SLURM_OLD = $(addprefix -o ,$(STAGES:$(BUILD)/%=$(BUILD)/obj/stages/%.o) $(LIB) $(BUILD)/kc-init $(BUILD)/kc-demo-data)
# The variables a task's make needs: those given on the command line (and by the demo), with
# SCHEDULER=local.
KC_SLURM_VARS = $(filter-out SCHEDULER=% SLURM_GOAL=% SLURM_SWEEP=% SLURM_VAL=% SLURM_REPORT=% SLURM_DAVIS=% SLURM_USER_VARS=%,$(MAKEOVERRIDES))
COMMA := ,
# The goal's own products, made by the final job (up to date: no final job is needed), and for the
# demo its copies of the tables in DEMO_TABLES ("from:copy", the copy must be newer)
KC_FINAL_TARGETS = $(if $(or $(filter sweep demo,$(SLURM_GOAL)),$(and $(filter report,$(SLURM_GOAL)),$(filter best,$(SETTING)))),$(TABLES)/sweep.csv) \
                   $(if $(filter report demo,$(SLURM_GOAL)),$(TABLES)/report.csv)
KC_FINAL_COPIES = $(if $(filter demo,$(SLURM_GOAL)),$(TABLES)/report.csv:$(DEMO_TABLES)/demo.csv $(TABLES)/sweep.csv:$(DEMO_TABLES)/demo-sweep.csv)

slurm-submit:
	@[ "$(SHARDS)" -ge 1 ] 2>/dev/null || { echo "slurm: SHARDS=$(SHARDS) is not a positive number" >&2; exit 2; }
	@$(MAKE) --no-print-directory SCHEDULER=local $(if $(SLURM_SWEEP),$(SELECT_LIST)) $(KC_INIT_WEIGHTS) FORCE
	@mkdir -p $(SLURM_DIR)
	@$(MAKE) --no-print-directory -s slurm-plan > $(SLURM_DIR)/plan.tmp && mv $(SLURM_DIR)/plan.tmp $(SLURM_DIR)/plan.txt
	@KC_SLURM_DIR=$(SLURM_DIR) KC_SLURM_INI=$(SLURM_INI) KC_SLURM_GOAL='$(SLURM_GOAL)' KC_SLURM_BEST=$(KC_BEST_FILE) \
	  KC_SLURM_MAKE='$(MAKE) -C $(CURDIR) --no-print-directory $(KC_SLURM_OLD) $(KC_SLURM_VARS) SCHEDULER=local' \
	  KC_SLURM_QUERY='$(MAKE) -C $(CURDIR) --no-print-directory $(KC_SLURM_OLD) $(KC_SLURM_VARS) SCHEDULER=local' \
	  KC_SLURM_FINAL_TARGETS='$(strip $(KC_FINAL_TARGETS))' KC_SLURM_FINAL_COPIES='$(strip $(KC_FINAL_COPIES))' \
	  KC_SLURM_FINAL='$(MAKE) -C $(CURDIR) --no-print-directory $(KC_SLURM_OLD) $(SLURM_USER_VARS) SCHEDULER=local $(SLURM_GOAL)' \
	  configs/slurm-submit.sh

ifeq ($(SCHEDULER),slurm)
KC_USER_VARS = SLURM_USER_VARS='$(filter-out SCHEDULER=%,$(MAKEOVERRIDES))'
sweep: all
	@$(MAKE) --no-print-directory SLURM_GOAL=sweep SLURM_SWEEP=1 $(KC_USER_VARS) slurm-submit

report: all
	@$(MAKE) --no-print-directory SLURM_GOAL=report SLURM_SWEEP=$(if $(filter best,$(SETTING)),1) SLURM_VAL=1 SLURM_REPORT=1 \
	  SLURM_DAVIS=1 $(KC_USER_VARS) slurm-submit

davis: all
	@[ -n "$(DAVIS)" ] || { echo "set DAVIS=/path/to/DAVIS (see README)" >&2; exit 2; }
	@$(MAKE) --no-print-directory SLURM_GOAL=davis SLURM_DAVIS=1 $(KC_USER_VARS) slurm-submit

demo: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory $(DEMO_DIR)/data/voc/ImageSets/Segmentation/train.txt
	@$(MAKE) --no-print-directory $(DEMO_ARGS) $(DEMO_PROBE_ARGS) SLURM_GOAL=demo SLURM_SWEEP=1 SLURM_VAL=1 SLURM_REPORT=1 SLURM_DAVIS=1 \
	  SLURM_BEST_NETS=$(DEMO_NET) $(KC_USER_VARS) slurm-submit
endif

# make test-slurm: tests/slurm/test_slurm.sh (a two-node cluster on this machine, 3-5 minutes; not
# part of tests/run.sh), reported like tests/run.sh: one line, then "N passed, N failed, N skipped".
test-slurm:
	@$(MAKE) --no-print-directory all
	@mkdir -p $(BUILD)/test-logs; log=$(BUILD)/test-logs/test_slurm.sh.log; t0=$$SECONDS; rc=0; \
	  BUILD=$(BUILD) timeout 900 bash tests/slurm/test_slurm.sh > $$log 2>&1 || rc=$$?; \
	  line=$$(grep -E '^RESULT [0-9]+ [0-9]+ [0-9]+$$' $$log | tail -n 1 || true); p=0 f=0 s=0; \
	  [ -z "$$line" ] || read -r _ p f s <<<"$$line"; \
	  if [ $$rc -ne 0 ] && [ $$f -eq 0 ] || [ -z "$$line" ]; then f=$$((f + 1)); fi; \
	  printf '%-28s %4s  %3d passed %3d failed %3d skipped  (%ds)\n' test_slurm.sh $$([ $$f -eq 0 ] && echo ok || echo FAIL) \
	    $$p $$f $$s $$((SECONDS - t0)); \
	  [ $$f -eq 0 ] || grep -E 'FAIL|SKIP|error' $$log | head -n 15 | sed 's/^/    /'; \
	  [ $$s -eq 0 ] || grep -E '^SKIP' $$log | sed 's/^/    /'; \
	  echo "$$p passed, $$f failed, $$s skipped (log: $$log)"; [ $$f -eq 0 ]

# make status [OUT=...]  (or DEMO_DIR=... for the demo): what the last submissions did, and what is
# out of date now (the submission's make command asked, as configs/slurm-submit.sh does).
status:
	@configs/slurm-status.sh $(OUT)/slurm $(if $(filter-out $(OUT),$(DEMO_DIR)),$(DEMO_DIR)/slurm)
.PHONY: slurm-plan slurm-submit status test-slurm
