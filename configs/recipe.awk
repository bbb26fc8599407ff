# configs/recipe.awk — the recipe stamps' check of pipeline.mk ("Request stamps" in docs/design.md),
# run once by every pipeline make, as one awk and one stat (process starts are what cost).
#
# A product's stamp holds its command, as the request expands it, then one line per user file the
# command reads (weights, dataset lists, the grid, nets.ini, ...): "sha256 <hex> <file>", or
# "missing <file>".  The product depends on its stamp, which is rewritten only when that text
# changes: a file touched without a change of bytes leaves it alone, one replaced by other bytes
# under an older mtime changes it.
#
#   awk -v table=HASHES -v tmp=HASHES.<pid> -v plan=PLAN -f configs/recipe.awk PLAN
#       PLAN has one line per product, "STAMP @@ FILES @@ COMMAND" (written by make while it reads
#       pipeline.mk).  Prints the stamps whose text would change (or that do not exist), having
#       made the folders of the stamps that do not exist, then a word "KC-SHA|FILE|HEX" for every
#       file of the plan that exists (and could be read); removes PLAN.  When a changed stamp's
#       rule runs, make writes the stamp itself ($(file), no process): the command, then the
#       files' lines from these hashes, the text compared here.
#
# The hashes are remembered in the table HASHES ("path|identity|sha256") under the file's identity:
# device, inode, size, mtime and ctime in nanoseconds (ctime cannot be set back, so `cp -p` and
# `rsync -t` are seen), and computed again (sha256sum) only when that identity changes; the table
# is then rewritten (tmp, renamed over it).
function q(x) { gsub(/'/, "'\\''", x); return "'" x "'" }
BEGIN { FS = " @@ " }
{
    stamp[NR] = $1; hashed[NR] = $2; cmd[NR] = $3
    m = split($2, f, " ")
    for (i = 1; i <= m; i++) if (!(f[i] in want)) { want[f[i]] = 1; list = list " " q(f[i]) }
}
END {
    while ((getline l < table) > 0) { split(l, a, "|"); tid[a[1]] = a[2]; th[a[1]] = a[3] }
    close(table)
    # the files' identities, and the plan removed, by one shell
    c = (list != "" ? "stat -L -c '%n|%d %i %s %.9Y %.9Z' --" list " 2>/dev/null; " : "") "exec unlink -- " q(plan)
    while ((c | getline l) > 0) { j = index(l, "|"); id[substr(l, 1, j - 1)] = substr(l, j + 1) }
    close(c)
    dirty = 0
    for (p in want) {
        if (!(p in id)) continue
        if ((p in tid) && tid[p] == id[p] && th[p] != "") continue
        c = "sha256sum -- " q(p); l = ""; c | getline l; close(c)
        split(l, a, " "); tid[p] = id[p]; th[p] = a[1]; dirty = 1
    }
    after = ""
    if (dirty) {
        printf "" > tmp
        for (p in tid) if (th[p] != "") print p "|" tid[p] "|" th[p] > tmp
        close(tmp)
        after = "mv -f " q(tmp) " " q(table)
    }
    dirs = ""
    for (r = 1; r <= NR; r++) {
        text = cmd[r] "\n"
        m = split(hashed[r], f, " ")
        for (i = 1; i <= m; i++) text = text ((f[i] in id) && th[f[i]] != "" ? "sha256 " th[f[i]] " " f[i] : "missing " f[i]) "\n"
        old = ""; n = 0
        while ((getline l < stamp[r]) > 0) { old = old l "\n"; n++ }
        close(stamp[r])
        if (old == text) continue
        print stamp[r]
        # a stamp that cannot be read is new: its folder may not exist yet
        if (n == 0) { d = stamp[r]; sub(/\/[^\/]*$/, "", d); if (!(d in made)) { made[d] = 1; dirs = dirs " " q(d) } }
    }
    if (dirs != "") after = (after != "" ? after "; " : "") "mkdir -p --" dirs
    if (after != "") system(after)
    for (p in id) if ((p in want) && th[p] != "") print "KC-SHA|" p "|" th[p]
}
