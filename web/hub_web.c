/* hub_web.c - which of a Hub repo's GGUF files `ORG/NAME:QUANT` means, for
 * the page: the library's own choice (lib/net/hub_files.c, llama.cpp's -hf
 * rules) over the model info the page fetched, so that the page fetches the
 * header of exactly the file that `kvplan mem ORG/NAME:QUANT` then reads
 * (from the header cache the page fills).  Exported to web/hub.js only. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../lib/kvp_int.h"
#include "../lib/net/hub_files.h"

/* Appends to out[n] at *at; -1 when it does not fit. */
static int put(char *out, size_t n, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *at, n - *at, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= n - *at)
        return -1;
    *at += (size_t)w;
    return 0;
}

/* info[0..len): the answer of {hub}/api/models/{repo}/revision/main?blobs=true.
 * tag or path (NULL/"" for none) as in the spec.  On success 0 and out holds
 * "commit <40 hex>\n" then "<sha256 or -> <size> <path>\n" per shard, shard
 * 1 first; on failure -1 and out holds the library's one-line error. */
int kvp_web_hub_pick(const char *info, size_t len, const char *repo, const char *tag,
                     const char *path, char *out, size_t n)
{
    hub_file_list list;
    hub_gguf_pick pick;
    kvp_error err = {0};
    size_t at = 0;
    if (!out || n == 0)
        return -1;
    out[0] = 0;
    int rc = hub_parse_model_info(info, len, repo, &list, &err);
    if (rc == 0)
        rc = path && *path ? hub_pick_path(&list, repo, path, &pick, &err)
                           : hub_pick_gguf(&list, repo, tag && *tag ? tag : NULL, &pick, &err);
    if (rc == 0)
        rc = put(out, n, &at, "commit %s\n", list.commit);
    for (size_t i = 0; rc == 0 && i < pick.n; i++) {
        const hub_file *f = pick.shards[i];
        rc = put(out, n, &at, "%s %lld %s\n", f->sha256[0] ? f->sha256 : "-",
                 (long long)f->size, f->path);
    }
    if (rc && !err.msg[0])
        kvp_fail(&err, KVP_EINPUT, "%s: too many shards to list", repo);
    if (rc)
        snprintf(out, n, "%s", err.msg);
    hub_file_list_free(&list);
    return rc ? -1 : 0;
}
