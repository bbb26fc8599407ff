#!/usr/bin/env bash
# configs/net-args.sh NETS_INI NAME [--weights-path | --kind | --init | --make]
# configs/net-args.sh NETS_INI --make-all NAME...
# Prints the kc-extract options of network NAME from NETS_INI (or only its weights path; its kind,
# "network" or "baseline"; its kc-init options, empty unless the section has `init`; or, with
# --make, all four on one line for pipeline.mk: "KIND|WEIGHTS|INIT|OPTIONS", '-' for an empty field).
# --make-all: the --make line of every NAME, one line each, "NAME|KIND|WEIGHTS|INIT|OPTIONS" with
# the spaces inside a field written as '^' (pipeline.mk reads every network from one run: a make's
# $(shell) turns newlines into spaces); the first NAME with an error prints its message alone.
# An error is one line "net-args: ..." on stderr, exit status 1.
# The network name "weights" means the file in $WEIGHTS (the demo's WEIGHTS=path.pth).
# A network with `init = <kc-init options>` and no `weights` gets $OUT/nets/NAME.safetensors
# (OUT defaults to work), which the pipeline makes with kc-init.
# configs/net-args.awk does the work (pipeline.mk runs it directly: no bash in every make).
[ -f "${1:-}" ] || { echo "net-args: ${1:-}: no such file" >&2; exit 1; }   # (awk stops on a folder)
exec awk -f "${0%/*}/net-args.awk" -- "$@"
