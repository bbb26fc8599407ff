# keycut — build, test, demo, pipeline.  See README.md.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules

# ---- configuration ---------------------------------------------------------------------------
BUILD   ?= build
ifeq ($(SANITIZE),1)
override BUILD := $(BUILD)-san
endif
# objects are kept (pattern-made files are intermediate); the pipeline's products are explicit
# targets, never intermediate (pipeline.mk)
.PRECIOUS: $(BUILD)/obj/%.o $(BUILD)/other-arch/obj/%.o
CC      ?= cc
ifeq ($(origin CC),default)
CC      := gcc
endif
PKGS    := openblas lapacke hdf5 libpng libjpeg libxml-2.0 cairo fontconfig yajl nettle
ifeq ($(NATIVE),1)
ARCH    := -march=native
else
ARCH    := -march=x86-64-v3
endif
OPT     ?= -O2
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE $(OPT) -g $(ARCH) -fopenmp -Wall -Wextra -I. \
               -fno-math-errno
ifeq ($(SANITIZE),1)
CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDSAN   := -fsanitize=address,undefined
endif
# pkg-config runs once per make, when a compile or link first needs it (not when make only reads
# the Makefile: the pipeline's sub-makes never compile)
PKG_CFLAGS = $(eval PKG_CFLAGS := $$(shell pkg-config --cflags $$(PKGS) 2>/dev/null))$(PKG_CFLAGS)
PKG_LIBS   = $(eval PKG_LIBS := $$(shell pkg-config --libs $$(PKGS) 2>/dev/null))$(PKG_LIBS)
CFLAGS  ?=
# oneDNN (libdnnl-dev) ships no pkg-config file in Debian 12: linked by name
LDLIBS   = $(PKG_LIBS) -ldnnl -lm
ALL_CFLAGS = $(CFLAGS_BASE) $(PKG_CFLAGS) $(CFLAGS)

LIB_SRC   := $(sort $(wildcard pipeline/*.c pipeline/*/*.c datasets/*.c decoders/*.c decoders/*/*.c eval/*/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
STAGE_SRC := $(sort $(wildcard stages/*.c))
STAGES    := $(STAGE_SRC:stages/%.c=$(BUILD)/%)
TEST_SRC  := $(sort $(wildcard tests/test_*.c))
TESTS     := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(sort $(wildcard tests/bench_*.c))
BENCHES   := $(BENCH_SRC:tests/%.c=$(BUILD)/tests/%)
LIB       := $(BUILD)/libkeycut.a

.PHONY: all deps deps-ref deps-fuzz deps-bench deps-tex test test-fresh check-full bench demo clean features
# tests/shims: LD_PRELOAD libraries that make the system fail as some filesystems do (test_storage.sh)
SHIMS     := $(BUILD)/tests/libkc_nolock.so
all: $(STAGES) $(TESTS) $(BENCHES) $(SHIMS)

# ---- Debian packages ---------------------------------------------------------------------------
deps:
	@tests/deps.sh deps.txt
deps-ref:
	@tests/deps.sh deps-ref.txt
deps-fuzz:
	@tests/deps.sh deps-fuzz.txt
# ONNX Runtime for `make bench` (tests/bench_vit.sh): npm's onnxruntime-node, its CPU library inside
# the package, install scripts skipped (they only fetch GPU pieces); project-local, not committed.
ORT_NODE_VERSION := 1.30.0
deps-bench: deps-ref
	@tests/deps.sh deps-bench.txt
	@command -v npm >/dev/null || { mkdir -p $(BUILD) && echo npm >$(BUILD)/npm-dep.txt && tests/deps.sh $(BUILD)/npm-dep.txt; }
	@grep -qs '"version": "$(ORT_NODE_VERSION)"' $(BUILD)/bench-node/node_modules/onnxruntime-node/package.json || \
	  npm install --prefix $(BUILD)/bench-node --ignore-scripts --no-audit --no-fund --loglevel=error \
	      onnxruntime-node@$(ORT_NODE_VERSION)
deps-tex:
	@tests/deps.sh deps-tex.txt

features:
	@for p in $(PKGS); do printf '%-12s %s\n' "$$p" "$$(pkg-config --modversion $$p 2>/dev/null || echo MISSING)"; done
	@printf '%-12s %s\n' dnnl "$$(sed -n 's/^\#define DNNL_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' /usr/include/oneapi/dnnl/dnnl_version.h 2>/dev/null | paste -sd. - | grep . || echo MISSING)"

# ---- compile ---------------------------------------------------------------------------------
$(BUILD)/obj/%.o: %.c | $(BUILD)/obj
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@.tmp
	ar rcs $@.tmp $^
	mv $@.tmp $@

$(BUILD)/%: $(BUILD)/obj/stages/%.o $(LIB)
	$(CC) $(ALL_CFLAGS) $(LDSAN) $< $(LIB) $(LDLIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDSAN) $< $(LIB) $(LDLIBS) -o $@

$(BUILD)/obj:
	@mkdir -p $@

# (plain C, never sanitized: it is preloaded into sanitized programs too)
$(BUILD)/tests/libkc_%.so: tests/shims/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -fPIC -shared $< -o $@ -ldl

# the headers each object was compiled from (-MMD), objects one or two folders deep ($(wildcard),
# not a find: no process in every make)
-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d)

# ---- tests -----------------------------------------------------------------------------------
test: deps
	@$(MAKE) --no-print-directory all $(BUILD)/other-arch/kc-decode
	@BUILD=$(BUILD) KC_SANITIZE=$(SANITIZE) tests/run.sh

# kc-decode for the other architecture (tests/test_determinism.sh, docs/ties.md): decoders/ and the
# stage compiled with -march=native (x86-64-v3 under NATIVE=1), the rest of the library as built;
# every step of a mask's arithmetic is in decoders/.
OTHER_ARCH := $(if $(filter 1,$(NATIVE)),-march=x86-64-v3,-march=native)
OTHER_SRC  := $(sort $(wildcard decoders/*.c)) stages/kc-decode.c
$(BUILD)/other-arch/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(ARCH),$(ALL_CFLAGS)) $(OTHER_ARCH) -MMD -MP -c $< -o $@
$(BUILD)/other-arch/kc-decode: $(OTHER_SRC:%.c=$(BUILD)/other-arch/obj/%.o) $(LIB)
	$(CC) $(filter-out $(ARCH),$(ALL_CFLAGS)) $(OTHER_ARCH) $(LDSAN) $^ $(LDLIBS) -o $@
-include $(wildcard $(BUILD)/other-arch/obj/*/*.d)

# The README's promise on a new machine (as root): a minimal Debian 12 root (debootstrap, cached
# under /var/tmp), a git clone of HEAD in it — committed work only, uncommitted changes are not
# tested — and there `make demo`, then `make test`, which must end with 0 failed.  tests/fresh.sh.
test-fresh:
	@BUILD=$(BUILD) tests/fresh.sh

check-full: deps deps-ref
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) KC_FULL=1 tests/run.sh

bench: deps deps-ref
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) tests/bench.sh

clean:
	rm -rf $(BUILD)

# (pipeline.mk includes corloc.mk, masks.mk, saliency.mk and slurm.mk)
-include pipeline.mk
-include fuzz.mk
