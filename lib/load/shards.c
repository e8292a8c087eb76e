/* load/shards.c - remote GGUF headers to a model: each shard's header by
 * range (or from kvplan's header cache), then the same parser and reader a
 * local file goes through, so remote and local numbers cannot differ. */
#include <stdlib.h>
#include <string.h>

#include "../gguf.h"
#include "../kvp_int.h"
#include "../net/gguf_remote.h"
#include "load.h"

#define MAX_SHARDS 64

int load_shards(load_ctx *c, const load_shard *sh, size_t n, kvp_model **out, int *cached,
                kvp_error *err)
{
    if (n == 0 || n > MAX_SHARDS)
        return kvp_fail(err, KVP_EINPUT, "%s: %zu shards (kvplan reads 1 to %d)",
                        n ? sh[0].label : c->spec, n, MAX_SHARDS);
    gguf_remote got[MAX_SHARDS];
    gguf_mem mem[MAX_SHARDS];
    memset(got, 0, sizeof got);
    net_session *sess = NULL;
    int rc = 0;
    uint64_t header_bytes = 0;
    *cached = 1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        gguf_remote_src src = {sh[i].url, sh[i].label, sh[i].sha256[0] ? sh[i].sha256 : NULL,
                               sh[i].size, sh[i].allow_http, c->offline || !sh[i].url};
        if (sh[i].url && !sess && !(sess = load_session(c, err)))
            rc = -1;
        else
            rc = gguf_remote_header(sess, &src, &got[i], err);
        if (rc == 0) {
            mem[i] = (gguf_mem){got[i].data, got[i].size, got[i].file_size, sh[i].label};
            header_bytes += got[i].size;
            *cached &= got[i].from_cache;
        }
    }
    gguf_file *f = NULL;
    if (rc == 0)
        rc = kvp_gguf_read_mem(mem, (uint32_t)n, &f, err);
    for (size_t i = 0; i < n; i++)
        gguf_remote_free(&got[i]);
    if (rc)
        return -1;
    rc = kvp_model_from_gguf_file(f, sh[0].label, out, err);
    kvp_gguf_free(f);
    if (rc == 0)
        (*out)->header_bytes = header_bytes;
    return rc;
}
