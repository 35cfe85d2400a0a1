# cycles.awk — the cycles of a directed graph given as "from to" lines, for include-graph.sh
# (files and folders by #include) and call-graph.sh (files by call). Variables (awk -v):
#   label  what a cycle line starts with ("cycle", "call cycle"): "LABEL: a -> b -> a"
#   list   1: print every node first, "node -> dep dep ..." (sorted)
#   edges  1: after each cycle, its edges as "cycle edge: FROM TO" lines
# Exits 1 when there is a cycle.
{ deps[$1] = deps[$1] " " $2; nodes[$1] = 1; nodes[$2] = 1 }
function visit(n,   i, j, k, d, parts, msg) {
    state[n] = 1; stack[++depth] = n
    k = split(deps[n], parts, " ")
    for (i = 1; i <= k; i++) {
        d = parts[i]
        if (state[d] == 1) {
            msg = d
            for (j = depth; j >= 1 && stack[j] != d; j--) msg = stack[j] " -> " msg
            print label ": " d " -> " msg
            if (edges) {
                for (j = depth; j >= 1 && stack[j] != d; j--) ;
                for (; j <= depth; j++) print "cycle edge:", stack[j], (j < depth ? stack[j + 1] : d)
            }
            found = 1
        } else if (!state[d]) visit(d)
    }
    depth--; state[n] = 2
}
END {
    n = 0
    for (x in nodes) list_[++n] = x
    for (i = 2; i <= n; i++) { v = list_[i]; for (j = i - 1; j >= 1 && list_[j] > v; j--) list_[j + 1] = list_[j]; list_[j + 1] = v }
    if (list) for (i = 1; i <= n; i++) print list_[i] " ->" deps[list_[i]]
    for (i = 1; i <= n; i++) if (!state[list_[i]]) visit(list_[i])
    if (found) exit 1
}
