#!/bin/sh
# api_link.sh — libjsmf.so is usable as a library: its soname is libjsmf.so.MAJOR and the
# program links it; a small C program that includes only include/ (no src/) compiles with
# -Wall -Wextra -Werror, links with -ljsmf against the build directory and reads the store
# 'jsmf ingest' made of examples/ (vocabulary size and documents as 'jsmf info --json' says,
# and JSMF_ENOTFOUND with a message for a missing store); 'make install' into a DESTDIR puts
# libjsmf.so.X.Y.Z, its soname link and libjsmf.so beside the headers, the installed program
# runs on the installed library, the program compiles against the installed files too, and
# 'make uninstall' removes them. Skips (77) without cc, make or readelf.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-.}
BUILD=${BUILD:-build}
CC=${CC:-cc}
for tool in "$CC" make readelf; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool not installed"; exit 77; }
done
T=$(mktemp -d /tmp/jsmf-api-link-XXXXXX)
trap 'rm -rf "$T"' EXIT
B=$(cd "$BUILD" && pwd)
major=$(sed -n 's/^#define JSMF_VERSION_MAJOR \([0-9]*\)$/\1/p' "$ROOT/include/jsmf.h")
version=$(sed -n 's/^#define JSMF_VERSION_STRING "\(.*\)"$/\1/p' "$ROOT/include/jsmf.h")

readelf -d "$B/libjsmf.so" | grep -q "(SONAME).*\[libjsmf.so.$major\]" \
    || fail "soname of libjsmf.so is not libjsmf.so.$major: $(readelf -d "$B/libjsmf.so" | grep SONAME)"
[ "$(readlink "$B/libjsmf.so.$major")" = "libjsmf.so.$version" ] || fail "libjsmf.so.$major -> $(readlink "$B/libjsmf.so.$major")"
readelf -d "$J" | grep -q "(NEEDED).*\[libjsmf.so.$major\]" || fail "jsmf does not link libjsmf.so.$major"

cat >"$T/prog.c" <<'PROG'
/* Reads a store through the public API only. */
#include <stdio.h>

#include "jsmf_store.h"

int main(int argc, char **argv)
{
    (void)argc;
    jsmf_store *s = NULL;
    jsmf_store_stats st;
    jsmf_vocab *v = NULL;
    int rc = jsmf_store_open(argv[1], JSMF_STORE_RDONLY, &s);
    if (!rc && !(rc = jsmf_store_stats_get(s, &st)) && !(rc = jsmf_store_vocab_get(s, &v)))
        printf("%s words %u %u docs %llu\n", jsmf_version(), st.n_words, v->n,
               (unsigned long long)st.docs);
    jsmf_vocab_free(v);
    jsmf_store_close(s);
    if (rc) {
        fprintf(stderr, "%s: %s\n", jsmf_strerror(rc), jsmf_errmsg());
        return 1;
    }
    rc = jsmf_store_open(argv[2], JSMF_STORE_RDONLY, &s);
    printf("missing: %s, %s\n", rc == JSMF_ENOTFOUND ? "ENOTFOUND" : jsmf_strerror(rc),
           jsmf_errmsg()[0] ? "message" : "no message");
    return 0;
}
PROG
"$J" ingest -q "$T/store" "$ROOT/examples/kjv-passages.txt.zst" || fail "ingest of examples/"
"$J" info --json "$T/store" >"$T/info.json" || fail "jsmf info"
n=$(sed -n 's/^  "n_words": \([0-9]*\),$/\1/p' "$T/info.json")
docs=$(sed -n 's/^  "docs": \([0-9]*\),$/\1/p' "$T/info.json")
want="$("$J" --version | sed 's/^jsmf //') words $n $n docs $docs
missing: ENOTFOUND, message"
# A library built with sanitizers (make check-asan) needs their runtime first in the program.
san=
readelf -d "$B/libjsmf.so" | grep -q '(NEEDED).*\[libasan' && san="-fsanitize=address,undefined"
# run DIR LIBDIR: compile prog.c against DIR's headers and LIBDIR's -ljsmf, run it on the store
run() {
    "$CC" -std=c11 -Wall -Wextra -Werror $san -I"$1" "$T/prog.c" -L"$2" -ljsmf -Wl,-rpath,"$2" \
        -o "$T/prog" 2>"$T/cc.err" || { fail "compiling against $1 and $2: $(cat "$T/cc.err")"; return; }
    got=$(env -u LD_LIBRARY_PATH "$T/prog" "$T/store" "$T/none" 2>&1)
    [ "$got" = "$want" ] || fail "the program built against $2 says '$got', not '$want'"
}
run "$ROOT/include" "$B"
readelf -d "$T/prog" | grep -q "(NEEDED).*\[libjsmf.so.$major\]" || fail "the program does not need libjsmf.so.$major"

dest=$T/root prefix=/opt/jsmf
make -C "$ROOT" --no-print-directory -o all install DESTDIR="$dest" PREFIX="$prefix" BUILD="$BUILD" \
    CUDA=no MPI=no >"$T/log" 2>&1 || { fail "make install: $(cat "$T/log")"; exit "$fails"; }
lib=$dest$prefix/lib
[ -f "$lib/libjsmf.so.$version" ] && [ ! -L "$lib/libjsmf.so.$version" ] || fail "no $lib/libjsmf.so.$version"
[ "$(readlink "$lib/libjsmf.so.$major")" = "libjsmf.so.$version" ] || fail "installed libjsmf.so.$major -> $(readlink "$lib/libjsmf.so.$major")"
[ "$(readlink "$lib/libjsmf.so")" = "libjsmf.so.$major" ] || fail "installed libjsmf.so -> $(readlink "$lib/libjsmf.so")"
[ -f "$dest$prefix/include/jsmf_store.h" ] || fail "no installed jsmf_store.h"
loaded=$(env -u LD_LIBRARY_PATH LD_TRACE_LOADED_OBJECTS=1 "$dest$prefix/bin/jsmf" |
    sed -n 's/^.*libjsmf\.so\.[0-9]* => \(.*\) (0x.*$/\1/p')
[ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$lib/libjsmf.so.$major")" ] \
    || fail "installed jsmf loads '$loaded', not $lib/libjsmf.so.$major"
env -u LD_LIBRARY_PATH "$dest$prefix/bin/jsmf" --version | grep -q "^jsmf $version " || fail "installed jsmf --version"
run "$dest$prefix/include" "$lib"
make -C "$ROOT" --no-print-directory uninstall DESTDIR="$dest" PREFIX="$prefix" BUILD="$BUILD" \
    >"$T/log" 2>&1 || fail "make uninstall: $(cat "$T/log")"
left=$(cd "$dest" && find . -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"
[ "$fails" -eq 0 ] && echo "api_link: ok"
exit "$fails"
