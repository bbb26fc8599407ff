# configs/recipe.awk — the stamp check of configs/recipe.sh --check, in one process (it runs in
# every pipeline make).  Input: the plan, one line per product "STAMP @@ FILES @@ COMMAND".
# Variables: table (the hash table "path|identity|sha256"), tmp (a temporary name beside it),
# text_only (1: print the text of the first product's stamp instead: configs/recipe.sh STAMP ...).
# Prints the stamps whose text would change.  The files' identities come from one stat; a hash
# is computed (sha256sum) only for a file whose identity is not the table's, and the table is
# then rewritten.
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
    if (list != "") {
        c = "stat -L -c '%n|%d %i %s %.9Y %.9Z' --" list " 2>/dev/null"
        while ((c | getline l) > 0) { j = index(l, "|"); id[substr(l, 1, j - 1)] = substr(l, j + 1) }
        close(c)
    }
    dirty = 0
    for (p in want) {
        if (!(p in id)) continue
        if ((p in tid) && tid[p] == id[p] && th[p] != "") continue
        c = "sha256sum -- " q(p); l = ""; c | getline l; close(c)
        split(l, a, " "); tid[p] = id[p]; th[p] = a[1]; dirty = 1
    }
    if (dirty) {
        printf "" > tmp
        for (p in tid) if (th[p] != "") print p "|" tid[p] "|" th[p] > tmp
        close(tmp)
        system("mv -f " q(tmp) " " q(table))
    }
    for (r = 1; r <= NR; r++) {
        text = cmd[r] "\n"
        m = split(hashed[r], f, " ")
        for (i = 1; i <= m; i++) text = text ((f[i] in id) ? "sha256 " th[f[i]] " " f[i] : "missing " f[i]) "\n"
        if (text_only) { printf "%s", text; exit }
        old = ""
        while ((getline l < stamp[r]) > 0) old = old l "\n"
        close(stamp[r])
        if (old != text) print stamp[r]
    }
}
