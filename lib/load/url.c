/* load/url.c - https://.../FILE.gguf: a GGUF at any URL, its header by
 * range.  http:// is read only because the user typed it; a redirect from
 * https never goes to http (net/http.c).  No sha256 is known beforehand, so
 * nothing is cached and the URL itself is never stored (it may be signed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../kvp_int.h"
#include "../net/hub_files.h"
#include "load.h"

/* For a plain URL naming shard 1 of a split model, the other shards' URLs
 * differ only in the shard number (llama.cpp's llama_split_path). */
static size_t split_urls(const char *url, size_t cap)
{
    const char *name = strrchr(url, '/');
    char prefix[1024];
    unsigned no = 0, count = 0;
    if (strpbrk(url, "?#") || !name ||
        !hub_split_name(name + 1, prefix, sizeof prefix, &no, &count) || no != 1 || count > cap)
        return 1;
    return count;
}

int load_url(load_ctx *c, const char *url, kvp_model **out, kvp_error *err)
{
    char shown[512];
    net_url_redacted(url, shown, sizeof shown);
    if (c->offline)
        return kvp_fail(err, KVP_EINPUT, "%s: a URL is read from the network, and --offline (or "
                        "HF_HUB_OFFLINE) forbids it", shown);
    if (c->revision)
        return kvp_fail(err, KVP_EUSAGE, "%s: --revision applies to a Hub repo, not a URL", shown);
    size_t n = split_urls(url, 64), base = strlen(url) - strlen("00001-of-00000.gguf");
    char (*urls)[4096] = calloc(n, sizeof *urls);
    load_shard *sh = calloc(n, sizeof *sh);
    if (!urls || !sh) {
        free(urls);
        free(sh);
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", shown);
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(urls[i], sizeof urls[i], "%s", url);
        if (n > 1) /* ...-0000k-of-0000n.gguf */
            snprintf(urls[i] + base, sizeof urls[i] - base, "%05zu-of-%05zu.gguf", i + 1, n);
        sh[i] = (load_shard){.url = urls[i], .size = -1,
                             .allow_http = strncasecmp(url, "http://", 7) == 0};
        net_url_redacted(urls[i], sh[i].label, sizeof sh[i].label);
    }
    int cached;
    int rc = load_shards(c, sh, n, out, &cached, err);
    free(urls);
    free(sh);
    if (rc)
        return -1;
    kvp_model *m = *out;
    load_label(m->name, sizeof m->name, "%s", shown);
    load_label(m->source, sizeof m->source, "%s: the GGUF header (%llu bytes%s) by HTTP range "
             "requests", shown, (unsigned long long)m->header_bytes,
             n > 1 ? ", all shards" : "");
    return 0;
}
