# configs/net-args.awk — the work of configs/net-args.sh (its header says what each mode prints), in
# one awk: pipeline.mk runs it directly in every pipeline make, where a process start is what costs.
#
#   awk -f configs/net-args.awk -- NETS_INI NAME [--weights-path | --kind | --init | --make]
#   awk -f configs/net-args.awk -- NETS_INI --make-all NAME...
#
# Environment: OUT (default work: an `init =` network's weights are $OUT/nets/NAME.safetensors) and
# WEIGHTS (the network named `weights`).  An error is one line "net-args: ..." on stderr and exit
# status 1; with -v make=1 (pipeline.mk) the line goes to stdout, followed by a word KC-FAILED.
function fail(msg) {
    if (make) print "net-args: " msg " KC-FAILED"
    else print "net-args: " msg > "/dev/stderr"
    failed = 1
    exit 1
}
# value(NAME, KEY): the key's value in section [NAME] ("" when absent)
function value(name, key) { return ((name SUBSEP key) in kv) ? kv[name, key] : "" }
# net(NAME, ALL): the network's kind, weights, kc-init options and kc-extract options in N_KIND,
# N_WEIGHTS, N_INIT, N_ARGS; without ALL (--kind, --init, --weights-path) it stops before the
# options, and so before their checks
function net(name, all,   model, opts, key) {
    N_KIND = N_WEIGHTS = N_INIT = N_ARGS = ""
    if (name == "weights") {
        if (ENVIRON["WEIGHTS"] == "") fail("network 'weights' needs WEIGHTS=path")
        N_KIND = "network"; N_WEIGHTS = ENVIRON["WEIGHTS"]; N_ARGS = "--weights " N_WEIGHTS
        return
    }
    if (!(name in found)) fail(ini " has no section [" name "] (NETS names must be sections of it)")
    model = value(name, "model")
    N_KIND = value(name, "kind")
    if (N_KIND != "" && N_KIND != "network" && N_KIND != "baseline")
        fail("[" name "] in " ini ": kind must be network or baseline, not '" N_KIND "'")
    if (N_KIND == "") N_KIND = "network"
    N_INIT = value(name, "init")
    N_WEIGHTS = value(name, "weights")
    if (N_WEIGHTS == "" && N_INIT != "") N_WEIGHTS = (ENVIRON["OUT"] == "" ? "work" : ENVIRON["OUT"]) "/nets/" name ".safetensors"
    if (!all) return
    opts = value(name, "options")
    if ((model == "" ? "vit" : model) == "color") { N_ARGS = "--model color" (opts != "" ? " " opts : ""); return }
    if (N_WEIGHTS == "") fail("[" name "] in " ini " has no weights")
    N_ARGS = "--weights " N_WEIGHTS
    key = value(name, "checkpoint_key")
    if (key != "") N_ARGS = N_ARGS " --checkpoint-key " key
    if (opts != "") N_ARGS = N_ARGS " " opts
}
function dash(x) { return x == "" ? "-" : x }
BEGIN {
    ini = ARGV[1]; what = ARGV[2]
    if (what == "--make-all") { for (i = 3; i < ARGC; i++) want[ARGV[i]] = 1 }
    else { name = ARGV[2]; what = ARGC > 3 ? ARGV[3] : ""; want[name] = 1 }
    # the keys of every wanted section, read once (a section given twice: the later value wins)
    if ((getline line < ini) < 0) fail(ini ": no such file")
    do {
        if (line ~ /^[ \t]*[#;]/) continue
        if (line ~ /^[ \t]*\[/) {
            s = line; gsub(/^[ \t]*\[|\][ \t]*$/, "", s); in_sec = (s in want); if (in_sec) { sec = s; found[s] = 1 }
            continue
        }
        if (!in_sec || !(i = index(line, "="))) continue
        k = substr(line, 1, i - 1); v = substr(line, i + 1)
        gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v)
        if (k != "") kv[sec, k] = v
    } while ((getline line < ini) > 0)
    close(ini)
    if (what == "--make-all") {
        # one line per network, spaces inside a field written '^', printed once all are read
        for (i = 3; i < ARGC; i++) {
            net(ARGV[i], 1)
            l = ARGV[i] "|" dash(N_KIND) "|" dash(N_WEIGHTS) "|" dash(N_INIT) "|" dash(N_ARGS)
            gsub(/ /, "^", l); text = text l "\n"
        }
        printf "%s", text
    } else if (what == "--weights-path") { net(name, 0); print N_WEIGHTS }
    else if (what == "--kind") { net(name, 0); print N_KIND }
    else if (what == "--init") { net(name, 0); print N_INIT }
    else if (what == "--make") { net(name, 1); print dash(N_KIND) "|" dash(N_WEIGHTS) "|" dash(N_INIT) "|" dash(N_ARGS) }
    else { net(name, 1); print N_ARGS }
    exit 0
}
