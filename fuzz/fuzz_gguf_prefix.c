/* fuzz_gguf_prefix.c - libFuzzer target: any bytes as the first bytes of a
 * remote GGUF, through kvp_gguf_header_need (is the header complete, how
 * many bytes at least) and kvp_gguf_read_mem (the header from memory).
 * Besides "no crash, hang, leak or huge allocation", it holds the two to the
 * promises a remote reader relies on, and aborts when one breaks: a need
 * beyond what has arrived, a complete header the reader then finds
 * truncated, a refused prefix that the reader accepts, a shorter prefix
 * asking for more than the complete header's length. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kvp_error e;
    uint64_t need = 0, need_k = 0;
    gguf_file *f = NULL;
    int rn = kvp_gguf_header_need(data, size, "fuzz", &need, &e);
    if (rn == 0 && need <= size)
        abort();
    if (rn == 1 && need > size)
        abort();

    gguf_mem m = {.data = data, .size = size, .file_size = size, .name = "fuzz"};
    int rm = kvp_gguf_read_mem(&m, 1, &f, &e);
    if (rm == 0 && (rn != 1 || need != f->data_offset))
        abort();
    kvp_gguf_free(f);
    f = NULL;
    if (rn == -1 && rm == 0)
        abort();

    if (rn == 1) {
        /* exactly the header, size unknown: never short of bytes */
        m.size = (size_t)need;
        m.file_size = 0;
        if (kvp_gguf_read_mem(&m, 1, &f, &e) != 0 && strstr(e.msg, "truncated"))
            abort();
        kvp_gguf_free(f);
        f = NULL;
        /* a shorter prefix is incomplete and asks for no more than the header */
        size_t ks[3] = {0, (size_t)need / 2, need ? (size_t)need - 1 : 0};
        for (int i = 0; i < 3 && need; i++) {
            int rk = kvp_gguf_header_need(data, ks[i], "fuzz", &need_k, &e);
            if (rk != 0 || need_k > need || need_k <= ks[i])
                abort();
        }
    }

    /* the split path: the same bytes as two shards (shard 2 must say split.no 1) */
    gguf_mem two[2] = {{.data = data, .size = size, .name = "a"},
                       {.data = data, .size = size, .name = "b"}};
    if (kvp_gguf_read_mem(two, 2, &f, &e) == 0)
        kvp_gguf_free(f);
    return 0;
}
