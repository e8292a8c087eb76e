/* net/gguf_remote.c - a remote GGUF's header in one streamed range request
 * (see gguf_remote.h).
 *
 * Why one request and not growing chunks: the header's length is unknown
 * until its last tensor info is parsed, and each extra round trip to a CDN
 * costs more than the few KB a streamed read overshoots by.  The sink
 * re-parses only when the bytes kvp_gguf_header_need asked for have come,
 * so parsing stays linear in practice (a 6 MB tokenizer header is parsed a
 * handful of times, not once per 16 KB chunk). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../gguf.h"
#include "../kvp_int.h"
#include "gguf_remote.h"
#include "hdrcache.h"

typedef struct reader {
    const gguf_remote_src *src;
    uint8_t *buf;
    size_t len, cap;
    uint64_t need;        /* parse again once this many bytes are here */
    int done;             /* the header is complete: len >= header size */
    uint64_t header;      /* its size, when done */
    int bad;              /* 1: not a GGUF (perr says why); 2: wrong offset; 3: no memory */
    kvp_error perr;
} reader;

static int grow(reader *r, size_t want)
{
    if (want <= r->cap)
        return 0;
    size_t n = r->cap ? r->cap : 1u << 20;
    while (n < want)
        n *= 2;
    uint8_t *p = realloc(r->buf, n);
    if (!p)
        return -1;
    r->buf = p;
    r->cap = n;
    return 0;
}

static int take(void *ud, const uint8_t *p, size_t n, uint64_t offset)
{
    reader *r = ud;
    if (offset != r->len) {
        r->bad = 2; /* not the bytes that follow what we have */
        return NET_ABORT;
    }
    if (r->len + n > KVP_GGUF_HEADER_MAX + (1u << 20))
        n = (size_t)(KVP_GGUF_HEADER_MAX + (1u << 20) - r->len);
    if (grow(r, r->len + n)) {
        r->bad = 3;
        return NET_ABORT;
    }
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    if (r->len < r->need)
        return NET_CONTINUE;
    int rc = kvp_gguf_header_need(r->buf, r->len, r->src->label, &r->need, &r->perr);
    if (rc < 0) {
        r->bad = 1;
        return NET_ABORT;
    }
    if (rc == 1) {
        r->done = 1;
        r->header = r->need;
        return NET_STOP;
    }
    return NET_CONTINUE;
}

static long stall_seconds(void)
{
    const char *v = getenv("KVPLAN_STALL_TIMEOUT");
    long s = v && *v ? strtol(v, NULL, 10) : 0;
    return s > 0 && s <= 3600 ? s : 30;
}

/* What a non-2xx answer or an answer that is no GGUF means, in one line. */
static int fail_answer(const gguf_remote_src *src, const net_result *res, kvp_error *err)
{
    if (res->status == 416)
        return kvp_fail(err, KVP_EINPUT, "%s: the server refused the byte range (HTTP 416): the "
                        "file is empty or shorter than it was said to be", src->label);
    if (res->status == 403 && res->body && strstr((const char *)res->body, "xpired"))
        return kvp_fail(err, KVP_EINPUT, "%s: the download link expired (HTTP 403); run again to "
                        "get a fresh one", src->label);
    if (res->status == 404)
        return kvp_fail(err, KVP_EINPUT, "%s: not found (HTTP 404)", src->label);
    if (res->status == 429)
        return kvp_fail(err, KVP_EINPUT, "%s: rate limited (HTTP 429); retry in %ld s",
                        src->label, res->h.retry_after >= 0 ? res->h.retry_after : 60L);
    return kvp_fail(err, KVP_EINPUT, "%s: HTTP %ld where a GGUF was expected", src->label,
                    res->status);
}

/* The file's total size from the answer, checked against what was said. */
static int total_size(const gguf_remote_src *src, const net_result *res, uint64_t *total,
                      kvp_error *err)
{
    uint64_t t = 0;
    if (res->status == 206 && res->h.has_total)
        t = res->h.total;
    else if (res->status == 200 && res->h.has_content_length)
        t = res->h.content_length;
    if (t && src->expect_size >= 0 && t != (uint64_t)src->expect_size)
        return kvp_fail(err, KVP_EINPUT, "%s: the server says the file has %llu bytes, the "
                        "listing %lld: it changed, or a proxy is in the way", src->label,
                        (unsigned long long)t, (long long)src->expect_size);
    *total = t ? t : src->expect_size >= 0 ? (uint64_t)src->expect_size : 0;
    return 0;
}

static int judge(const gguf_remote_src *src, reader *r, int rc, const net_result *res,
                 const kvp_error *nerr, kvp_error *err)
{
    const char *ct = res->h.content_type;
    if (r->bad == 1 && r->len >= 4 && memcmp(r->buf, "GGUF", 4) != 0)
        return kvp_fail(err, KVP_EINPUT, "%s: not a GGUF file (it starts with %s)", src->label,
                        !strncasecmp(ct, "text/html", 9) || (r->len && r->buf[0] == '<')
                            ? "HTML: a login or proxy page?" : "other bytes");
    if (r->bad == 1) {
        *err = r->perr;
        return -1;
    }
    if (r->bad == 2)
        return kvp_fail(err, KVP_EINPUT, "%s: the server sent other bytes than the range asked "
                        "for (Content-Range starts at %llu)", src->label,
                        (unsigned long long)res->h.range_start);
    if (r->bad == 3)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", src->label);
    if (rc) {
        if (res->error == NET_EPARTIAL)
            return kvp_fail(err, KVP_EINPUT, "%s: the transfer was cut short after %llu bytes, "
                            "inside the GGUF header; run again", src->label,
                            (unsigned long long)r->len);
        if (res->error == NET_ESTALL)
            return kvp_fail(err, KVP_EINPUT, "%s: the transfer stalled after %llu bytes (under "
                            "1 KB/s for %ld s); run again", src->label,
                            (unsigned long long)r->len, stall_seconds());
        *err = *nerr;
        return -1;
    }
    if (res->status < 200 || res->status >= 300)
        return fail_answer(src, res, err);
    if (res->status == 206 && !res->h.has_content_range)
        return kvp_fail(err, KVP_EINPUT, "%s: the server answered the range without saying which "
                        "bytes it sent (206 without Content-Range); kvplan does not guess",
                        src->label);
    if (r->done)
        return 0;
    if (r->len >= KVP_GGUF_HEADER_MAX)
        return kvp_fail(err, KVP_EINPUT, "%s: the GGUF header is larger than %llu MiB; kvplan "
                        "reads no more", src->label,
                        (unsigned long long)(KVP_GGUF_HEADER_MAX >> 20));
    if (r->len < 4 || memcmp(r->buf, "GGUF", 4) != 0)
        return kvp_fail(err, KVP_EINPUT, "%s: not a GGUF file (%llu bytes%s)", src->label,
                        (unsigned long long)r->len,
                        !strncasecmp(ct, "text/html", 9) ? " of HTML: a login or proxy page?" : "");
    return kvp_fail(err, KVP_EINPUT, "%s: the file ends (at %llu bytes) inside its GGUF header",
                    src->label, (unsigned long long)r->len);
}

int gguf_remote_header(net_session *sess, const gguf_remote_src *src, gguf_remote *out,
                       kvp_error *err)
{
    memset(out, 0, sizeof *out);
    if (src->sha256 && hdrcache_get(src->sha256, &out->data, &out->size, &out->file_size) == 1) {
        out->from_cache = 1;
        return 0;
    }
    if (src->offline)
        return kvp_fail(err, KVP_EINPUT, "%s: its header is not in kvplan's cache and --offline "
                        "(or HF_HUB_OFFLINE) forbids fetching it", src->label);
    reader r = {.src = src, .need = 4096};
    uint64_t last = KVP_GGUF_HEADER_MAX - 1;
    if (src->expect_size > 0 && (uint64_t)src->expect_size - 1 < last)
        last = (uint64_t)src->expect_size - 1;
    char range[48];
    snprintf(range, sizeof range, "0-%llu", (unsigned long long)last);
    net_request q = {0};
    q.url = src->url;
    q.range = src->expect_size == 0 ? NULL : range;
    q.max_bytes = KVP_GGUF_HEADER_MAX;
    q.sink = take;
    q.sink_ud = &r;
    q.allow_http = src->allow_http;
    q.redirects = NET_REDIR_FOLLOW; /* a registry's 307 to its CDN; never with a token */
    q.low_speed_time = stall_seconds();
    q.progress = src->label;
    net_result res;
    kvp_error nerr = {0};
    int rc = net_fetch(sess, &q, &res, &nerr);
    if (rc == 0 && !r.done && !r.bad && r.len && res.status >= 200 && res.status < 300) {
        /* the whole answer came before the bytes asked for: a file shorter
         * than the first read, or one that ends inside its header */
        int h = kvp_gguf_header_need(r.buf, r.len, src->label, &r.need, &r.perr);
        if (h < 0)
            r.bad = 1;
        else if (h == 1)
            r.done = 1, r.header = r.need;
    }
    uint64_t total = 0;
    rc = judge(src, &r, rc, &res, &nerr, err) || total_size(src, &res, &total, err) ? -1 : 0;
    net_result_free(&res);
    if (rc) {
        free(r.buf);
        return -1;
    }
    if (total && r.header > total) {
        free(r.buf);
        return kvp_fail(err, KVP_EINPUT, "%s: the GGUF header (%llu bytes) runs past the file's "
                        "end (%llu)", src->label, (unsigned long long)r.header,
                        (unsigned long long)total);
    }
    out->data = r.buf;
    out->size = (size_t)r.header; /* what came after it is not kept */
    out->file_size = total;
    if (src->sha256)
        hdrcache_put(src->sha256, out->data, out->size, out->file_size);
    return 0;
}

void gguf_remote_free(gguf_remote *r)
{
    if (r) {
        free(r->data);
        memset(r, 0, sizeof *r);
    }
}
