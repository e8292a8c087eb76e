/* fuzz_http_headers.c - libFuzzer target for the response-header parser
 * every remote answer goes through (net_header_line: status lines,
 * Content-Range, Content-Length, X-Linked-*, ETag, Retry-After, Location,
 * Link), then the URL helpers over what a server may send as Location.
 * The input is the header block as a server would send it, one line per
 * '\n'.  Beyond crashes it checks the promises of http.h: a range marked
 * present lies inside its total, and values kept are free of control
 * characters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"

static int clean(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    net_headers h;
    memset(&h, 0, sizeof h);
    h.retry_after = -1;
    const char *url = "https://huggingface.co/org/name/resolve/main/model.gguf";
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i == size || data[i] == '\n') {
            net_header_line(&h, (const char *)data + start, i - start, url);
            start = i + 1;
        }
    }
    if (h.has_range && (h.range_start > h.range_end || (h.has_total && h.range_end >= h.total)))
        abort();
    if (!clean(h.etag) || !clean(h.linked_etag) || !clean(h.repo_commit) ||
        !clean(h.error_code) || !clean(h.error_message) || !clean(h.content_type))
        abort();
    if (h.location) {
        char buf[512];
        net_url_redacted(h.location, buf, sizeof buf);
        net_origin(h.location, buf, sizeof buf);
        net_same_origin(url, h.location);
    }
    if (h.link_next) {
        char buf[512];
        net_origin(h.link_next, buf, sizeof buf);
    }
    net_headers_clear(&h);
    return 0;
}
