# man2help.awk — the --help text of every command, taken from the manual: reads man/jsmf.1 and
# writes C source defining cli_docs (src/cli/cli.h), which src/cli/options.c prints.
#   awk -f tools/man2help.awk man/jsmf.1 > build/gen/cli_doc.c
# One entry per command section (.SS "jsmf CMD ...": its heading is the usage line) and per
# option tag (.TP followed by a line starting with an option) in a command section or in COMMON
# OPTIONS; an entry's text is the first sentence of what follows, rendered as plain ASCII. A
# sentence ends with a line of the page that ends in '.', '!' or '?' (roff's own rule; not
# "...", "e.g." or "i.e."), or where the paragraph does. An escape this script cannot render,
# an option tag without text and an option documented twice in one section fail (exit 1).

BEGIN {
    glyph["aq"] = "'"; glyph["dq"] = "\""; glyph["lq"] = "\""; glyph["rq"] = "\""
    glyph["mu"] = "x"; glyph["ha"] = "^"; glyph[">="] = ">="; glyph["!="] = "!="
    glyph["*S"] = "sum"; glyph["*a"] = "alpha"; glyph["*e"] = "epsilon"; glyph["*h"] = "theta"
    glyph["*l"] = "lambda"; glyph["*m"] = "mu"; glyph["*n"] = "nu"; glyph["*t"] = "tau"
    print "/* Generated from man/jsmf.1 by tools/man2help.awk: edit the manual, not this file. */"
    print "#include \"cli/cli.h\""
    print ""
    print "const cli_doc cli_docs[] = {"
    cmd = "-"; state = "skip" # "-": not in a section that documents options
}

function fail(msg) {
    printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
    failed = 1
    exit 1
}

# S with roff's font changes, dashes and named glyphs in plain ASCII.
function plain(s,    out, name) {
    gsub(/\\f[BIRP]/, "", s)
    gsub(/\\-/, "-", s)
    gsub(/\\&/, "", s)
    out = ""
    while (match(s, /\\\(../)) {
        name = substr(s, RSTART + 2, 2)
        if (!(name in glyph))
            fail("no plain text for \\(" name " (tools/man2help.awk, glyph[])")
        out = out substr(s, 1, RSTART - 1) glyph[name]
        s = substr(s, RSTART + RLENGTH)
    }
    out = out s
    if (index(out, "\\"))
        fail("an escape that tools/man2help.awk cannot render: " out)
    return out
}

# A line of the page as text: a font macro's arguments (quoted ones keep their spaces) joined
# by spaces (.B, .I) or run together (.BR, .IR, ...); a text line as it is.
function render(line,    m, rest, n, arg, sep, out) {
    if (line !~ /^\./)
        return plain(line)
    m = line; sub(/[ \t].*/, "", m)
    rest = substr(line, length(m) + 1)
    sep = (m == ".B" || m == ".I") ? " " : ""
    out = ""; n = 0
    while (rest != "") {
        sub(/^[ \t]+/, "", rest)
        if (rest == "")
            break
        if (substr(rest, 1, 1) == "\"") {
            rest = substr(rest, 2)
            arg = index(rest, "\"") ? substr(rest, 1, index(rest, "\"") - 1) : rest
            rest = index(rest, "\"") ? substr(rest, index(rest, "\"") + 1) : ""
        } else {
            arg = rest; sub(/[ \t].*/, "", arg)
            rest = substr(rest, length(arg) + 1)
        }
        out = out (n++ ? sep : "") arg
    }
    return plain(out)
}

function cstring(s,    out, i, c) {
    out = ""
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        out = out (c == "\"" ? "\\\"" : c)
    }
    return "\"" out "\""
}

# Ends the entry being collected: written out when it has text.
function flush() {
    if (state == "text" && text == "")
        fail("no description for " head)
    if (state == "text")
        printf "    {%s, %d, %s,\n     %s},\n", cstring(cmd), usage, cstring(head), cstring(text)
    state = "skip"
}

# HEAD's options ("-k, --topics K" names -k and --topics) are documented once per section.
function note_options(    n, i, parts, o) {
    n = split(head, parts, /, /)
    for (i = 1; i <= n; i++) {
        o = parts[i]; sub(/[ =].*/, "", o)
        if (o !~ /^-/)
            continue
        if ((cmd, o) in seen)
            fail(o " is documented twice for " (cmd == "" ? "every command" : "jsmf " cmd))
        seen[cmd, o] = 1
    }
}

/^\.\\"/ { next }

/^\.SH / {
    flush()
    section = $0; sub(/^\.SH +/, "", section); gsub(/"/, "", section)
    cmd = section == "COMMON OPTIONS" ? "" : "-"
    next
}

/^\.SS / {
    flush()
    head = render($0); sub(/^ */, "", head)
    if (section != "COMMANDS" || head !~ /^jsmf [a-z]/) {
        cmd = "-"
        next
    }
    split(head, w, " "); cmd = w[2]
    usage = 1; text = ""; state = "text"
    next
}

/^\.TP/ {
    flush()
    if (cmd != "-")
        state = "tag"
    next
}

/^\.(PP|P|LP|IP|RS|RE|nf|fi)( |$)/ { flush(); next }

/^\.br( |$)/ { next }

state == "tag" {
    head = render($0)
    if (head !~ /^-/) {
        state = "skip"
        next
    }
    note_options()
    usage = 0; text = ""; state = "text"
    next
}

state == "text" {
    line = render($0)
    text = text (text == "" ? "" : " ") line
    if (line ~ /[.!?][)"']*$/ && line !~ /\.\.\.$/ && line !~ /(^|[^a-z])(e\.g|i\.e)\.$/)
        flush()
}

END {
    if (failed)
        exit 1
    flush()
    print "    {0},"
    print "};"
}
