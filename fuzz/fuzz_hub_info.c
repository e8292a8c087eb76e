/* fuzz_hub_info.c - libFuzzer target: any bytes as the Hub's model-info
 * answer (GET /api/models/{repo}/revision/{rev}?blobs=true), then every
 * GGUF selection over the files it lists.  The model info comes from the
 * network, so garbage must give a clean error; and whatever is accepted
 * must keep the promises callers build paths on (valid, sorted, unique
 * paths; sizes in range; picks pointing into the list), else we trap. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/hub_files.h"

static void check_list(const hub_file_list *l)
{
    if (!hub_valid_commit(l->commit))
        __builtin_trap();
    for (size_t i = 0; i < l->n; i++) {
        const hub_file *f = &l->files[i];
        if (!hub_valid_path(f->path) || f->size < -1 || f->size > HUB_FILE_MAX_SIZE ||
            (f->sha256[0] && strlen(f->sha256) != 64) || (f->blob_id[0] && strlen(f->blob_id) != 40))
            __builtin_trap();
        if (i && strcmp(l->files[i - 1].path, f->path) >= 0)
            __builtin_trap();
    }
}

static void check_pick(const hub_file_list *l, const hub_gguf_pick *p)
{
    if (p->n < 1 || p->n > HUB_MAX_SHARDS || !memchr(p->why, 0, sizeof p->why) ||
        !memchr(p->quant, 0, sizeof p->quant))
        __builtin_trap();
    for (size_t i = 0; i < p->n; i++)
        if (p->shards[i] < l->files || p->shards[i] >= l->files + l->n)
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hub_file_list l;
    kvp_error e;
    if (hub_parse_model_info((const char *)data, size, "fuzz/repo", &l, &e) == 0) {
        check_list(&l);
        static const char *const tags[] = {NULL, "Q4_K_M", "q8_0", "BF16", "Q4_K", "F16"};
        hub_gguf_pick p;
        for (size_t i = 0; i < sizeof tags / sizeof *tags; i++)
            if (hub_pick_gguf(&l, "fuzz/repo", tags[i], &p, &e) == 0)
                check_pick(&l, &p);
        for (size_t i = 0; i < l.n && i < 64; i++) {
            char prefix[64];
            unsigned no, count;
            hub_split_name(l.files[i].path, prefix, sizeof prefix, &no, &count);
            if (hub_pick_path(&l, "fuzz/repo", l.files[i].path, &p, &e) == 0)
                check_pick(&l, &p);
        }
    }
    hub_file_list_free(&l);
    return 0;
}
