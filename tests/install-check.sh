#!/bin/bash
# tests/install-check.sh - `make install` into a scratch prefix, then build
# the README's library example against the installed header and library via
# pkg-config, and check it prints the README's number (Qwen3-8B at 32K:
# 4,831,838,208 bytes, DESIGN 2); and that the man page is installed where
# man looks and renders without warnings.  Ends with "N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); echo "PASS $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi; }
make -s -C "$root" install B="${B:-build}" PREFIX="$prefix" >/dev/null
check "install puts the tool, libraries, header and pkg-config file in place" \
    '[ -x "$prefix/bin/kvplan" ] && [ -f "$prefix/lib/libkvplan.a" ] && [ -f "$prefix/lib/libkvplan.so" ] && [ -f "$prefix/include/kvplan.h" ] && [ -f "$prefix/lib/pkgconfig/kvplan.pc" ]'
cat >"$prefix/example.c" <<'C'
#include <kvplan.h>
#include <stdio.h>

int main(void)
{
    kvp_model *m; kvp_error err;
    if (kvp_model_load("qwen3-8b", &m, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    kvp_theory_params p; kvp_theory_defaults(&p);
    p.n_ctx = 32768;
    kvp_theory_result r;
    if (kvp_theory(m, &p, &r, &err) == 0)
        printf("%llu bytes\n", (unsigned long long)r.total_bytes);
    kvp_model_free(m);
    return 0;
}
C
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
check "the README example builds against the installed library" \
    'cc -std=c11 "$prefix/example.c" $(pkg-config --cflags --libs kvplan) -Wl,-rpath,"$prefix/lib" -o "$prefix/example"'
check "and prints 4831838208 bytes" '[ "$("$prefix/example")" = "4831838208 bytes" ]'
check "the shared library exports only the kvp_ API" \
    '[ -z "$(nm -D --defined-only "$prefix/lib/libkvplan.so" | awk "{print \$3}" | grep -v "^kvp_")" ]'
check "the installed tool runs" '"$prefix/bin/kvplan" mem qwen3-8b -c 32k --json | grep -q "\"total_bytes\": 4831838208"'

# the man page: installed, the committed docs/kvplan.1, found by man, and
# rendered by man (and by groff with every warning on) without a warning
man1=$prefix/share/man/man1/kvplan.1
check "install puts the man page in share/man/man1" '[ -f "$man1" ] && cmp -s "$man1" "$root/docs/kvplan.1"'
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
    check "man finds it under the prefix" '[ "$(MANPATH=$prefix/share/man man -w kvplan 2>/dev/null)" = "$man1" ]'
    check "man -l renders it without warnings" \
        '[ -z "$(MANWIDTH=80 man --warnings -l "$man1" 2>&1 >/dev/null)" ] && MANWIDTH=80 man -l "$man1" 2>/dev/null | grep -q "^ *kvplan techniques\$"'
    check "groff -man -ww finds nothing to warn about" '[ -z "$(groff -man -ww -z "$man1" 2>&1)" ]'
    check "every command has its section" \
        '(for c in mem compare fit check plot show archs models twin sim techniques "--"; do MANWIDTH=80 man -l "$man1" 2>/dev/null | grep -qx -- "   kvplan $c.*" || exit 1; done)'
else
    fail=$((fail + 1)); echo "FAIL man or groff missing (tools/install-deps installs man-db)"
fi
echo
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
