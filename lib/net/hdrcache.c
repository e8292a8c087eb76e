/* net/hdrcache.c - remote GGUF headers kept by sha256, and pins (see
 * hdrcache.h).
 *
 * Layout under the root:
 *   gguf-headers/<sha256>        the header bytes (a prefix of the file)
 *   gguf-headers/<sha256>.size   "<file size> <header size>\n", written after
 *                                the bytes: an entry without it is unfinished
 *   pins/<key>                   what a name resolved to, as its writer chose
 * Entries are never rewritten: the content behind a sha256 cannot change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../gguf.h"
#include "files.h"
#include "hdrcache.h"

static int fmt_path(char *buf, size_t n, const char *a, const char *b, const char *c)
{
    int w = snprintf(buf, n, "%s%s%s", a, b, c);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

int hdrcache_root(char *buf, size_t n)
{
    const char *v = getenv("KVPLAN_CACHE");
    if (v && *v)
        return fmt_path(buf, n, v, "", "");
    v = getenv("XDG_CACHE_HOME");
    if (v && *v)
        return fmt_path(buf, n, v, "/kvplan", "");
    v = getenv("HOME");
    if (v && *v)
        return fmt_path(buf, n, v, "/.cache/kvplan", "");
    return -1;
}

static int valid_sha256(const char *s)
{
    if (!s || strlen(s) != 64)
        return 0;
    for (const char *c = s; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return 0;
    return 1;
}

static int entry_path(const char *sha256, const char *suffix, char *buf, size_t n)
{
    char root[4096];
    if (!valid_sha256(sha256) || hdrcache_root(root, sizeof root))
        return -1;
    int w = snprintf(buf, n, "%s/gguf-headers/%s%s", root, sha256, suffix);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

int hdrcache_get(const char *sha256, uint8_t **data, size_t *size, uint64_t *file_size)
{
    char p[4300], ps[4300];
    if (entry_path(sha256, "", p, sizeof p) || entry_path(sha256, ".size", ps, sizeof ps))
        return -1;
    unsigned long long fsz, hsz;
    FILE *f = fopen(ps, "r");
    int ok = f && fscanf(f, "%llu %llu", &fsz, &hsz) == 2 && hsz > 0 &&
             hsz <= KVP_GGUF_HEADER_MAX && fsz >= hsz;
    if (f)
        fclose(f);
    if (!ok)
        return 0;
    f = fopen(p, "rb");
    struct stat st;
    uint8_t *buf = NULL;
    ok = f && fstat(fileno(f), &st) == 0 && (unsigned long long)st.st_size == hsz &&
         (buf = malloc((size_t)hsz)) && fread(buf, 1, (size_t)hsz, f) == (size_t)hsz;
    if (f)
        fclose(f);
    if (!ok) {
        free(buf);
        return 0;
    }
    *data = buf;
    *size = (size_t)hsz;
    *file_size = fsz;
    return 1;
}

void hdrcache_put(const char *sha256, const uint8_t *data, size_t size, uint64_t file_size)
{
    char p[4300], ps[4300], text[64];
    struct stat st;
    if (entry_path(sha256, "", p, sizeof p) || entry_path(sha256, ".size", ps, sizeof ps) ||
        stat(ps, &st) == 0)
        return;
    snprintf(text, sizeof text, "%llu %llu\n", (unsigned long long)file_size,
             (unsigned long long)size);
    if (nf_write_atomic(p, data, size) == 0)
        nf_write_atomic(ps, text, strlen(text));
}

static int pin_path(const char *key, char *buf, size_t n)
{
    char root[4096];
    if (!key || !*key || strstr(key, "..") || key[0] == '/' || hdrcache_root(root, sizeof root))
        return -1;
    int w = snprintf(buf, n, "%s/pins/%s", root, key);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

void hdrcache_pin_put(const char *key, const char *text)
{
    char p[4300];
    if (pin_path(key, p, sizeof p) == 0)
        nf_write_atomic(p, text, strlen(text));
}

int hdrcache_pin_get(const char *key, char *buf, size_t n)
{
    char p[4300];
    if (n == 0 || pin_path(key, p, sizeof p))
        return -1;
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    size_t got = fread(buf, 1, n - 1, f);
    int full = !feof(f);
    fclose(f);
    buf[got] = 0;
    return full ? -1 : 0;
}
