# fuzz.mk — libFuzzer harnesses for every parser of untrusted bytes (included by the Makefile).
#
#   make fuzz FUZZ_SECONDS=600     build, then run every harness for FUZZ_SECONDS / (number of
#                                  harnesses) seconds, one after the other (600 s in total; the
#                                  total is split, not given to each)
#   make fuzz-smoke                the same with 10 s per harness (what CI runs)
#   make fuzz-build                only build $(FUZZ_BUILD)/fuzz_<parser>
#
# The library is compiled here with clang -fsanitize=fuzzer-no-link,address,undefined into its own
# folder $(BUILD)-fuzz, never mixed with the gcc build.  Seeds are fuzz/corpus/<parser>/ (read
# only); inputs libFuzzer finds go to $(FUZZ_BUILD)/corpus/<parser>/, crashes to
# $(FUZZ_BUILD)/crashes/.  Each harness prints one line "fuzz_<parser>: N executions in S s, ..."
# and the run fails on the first harness that crashes, leaks, times out or runs out of memory.
# A crash input becomes a regression test: copy it into tests/bad/ (see tests/bad/README.md).

FUZZ_BUILD    := $(BUILD)-fuzz
FUZZ_CC       ?= clang
FUZZ_SECONDS  ?= 80
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS   := -std=c11 -D_GNU_SOURCE -O1 -g -fopenmp -I. -Wall -Wextra -Wno-unknown-pragmas -Wno-pass-failed \
                 -fno-math-errno $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_SRC      := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_NAMES    := $(FUZZ_SRC:fuzz/%.c=%)
FUZZ_BINS     := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJ  := $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_LIB      := $(FUZZ_BUILD)/libkeycut.a
# libFuzzer options for every harness: 2.5 GB RSS (the image decoder may legitimately allocate up
# to its 2^28-pixel limit), 10 s per input, 64 KiB inputs.
FUZZ_OPTS     ?= -rss_limit_mb=2560 -timeout=10 -max_len=65536 -print_final_stats=1

.PHONY: fuzz fuzz-smoke fuzz-build
fuzz-build: $(FUZZ_BINS)

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJ)
	@rm -f $@.tmp
	ar rcs $@.tmp $^
	mv $@.tmp $@

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/fuzz/fuzz_%.o $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) $(LDLIBS) -o $@

-include $(wildcard $(FUZZ_BUILD)/obj/*/*.d $(FUZZ_BUILD)/obj/*/*/*.d)

fuzz: $(FUZZ_BINS)
	@FUZZ_BUILD=$(FUZZ_BUILD) fuzz/run.sh total $(FUZZ_SECONDS) "$(FUZZ_OPTS)" $(FUZZ_NAMES)

fuzz-smoke: $(FUZZ_BINS)
	@FUZZ_BUILD=$(FUZZ_BUILD) fuzz/run.sh each 10 "$(FUZZ_OPTS)" $(FUZZ_NAMES)
