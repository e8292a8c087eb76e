/* net_web.c - lib/net/http.h for the WebAssembly build, in place of the
 * libcurl transport (lib/net/http.c): a page has no libcurl, and a file it
 * is given is read from its own memory.  Every fetch fails as an
 * unreachable network, so a Hub name falls back the way `--offline` makes
 * it (the catalog, or a clear error), never a half-answer.  The URL helpers
 * are what the messages around a fetch need. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/kvp_int.h"
#include "../lib/net/http.h"

struct net_session {
    int unused;
};

int net_global_init(kvp_error *err)
{
    (void)err;
    return 0;
}

net_session *net_session_new(kvp_error *err)
{
    net_session *s = calloc(1, sizeof *s);
    if (!s)
        kvp_fail(err, KVP_EINPUT, "out of memory");
    return s;
}

void net_session_free(net_session *s)
{
    free(s);
}

void net_session_counts(const net_session *s, uint64_t *requests, uint64_t *body_bytes,
                        uint64_t *connects)
{
    (void)s;
    *requests = *body_bytes = *connects = 0;
}

int net_fetch(net_session *s, const net_request *rq, net_result *res, kvp_error *err)
{
    char shown[256];
    (void)s;
    memset(res, 0, sizeof *res);
    res->h.retry_after = -1;
    res->error = NET_EUNREACHABLE;
    net_url_redacted(rq->url, shown, sizeof shown);
    return kvp_fail(err, KVP_EINPUT, "%s: this build of kvplan has no network (the "
                    "browser build reads only what it is given)", shown);
}

void net_result_free(net_result *res)
{
    free(res->url);
    free(res->redirect_url);
    free(res->body);
    free(res->h.location);
    free(res->h.link_next);
    memset(res, 0, sizeof *res);
}

int net_header_line(net_headers *h, const char *buf, size_t n, const char *url)
{
    (void)h, (void)buf, (void)n, (void)url;
    return 0;
}

void net_headers_clear(net_headers *h)
{
    free(h->location);
    free(h->link_next);
    memset(h, 0, sizeof *h);
    h->retry_after = -1;
}

/* scheme://host[:port], as far as the first '/', '?' or '#' after it */
int net_origin(const char *url, char *buf, size_t n)
{
    const char *p = url ? strstr(url, "://") : NULL;
    if (!p || n == 0)
        return -1;
    size_t len = (size_t)(p + 3 - url) + strcspn(p + 3, "/?#");
    if (len >= n)
        return -1;
    memcpy(buf, url, len);
    buf[len] = 0;
    return 0;
}

int net_same_origin(const char *a, const char *b)
{
    char x[256], y[256];
    return net_origin(a, x, sizeof x) == 0 && net_origin(b, y, sizeof y) == 0 && !strcmp(x, y);
}

/* the URL without its query or fragment (where signatures live) */
void net_url_redacted(const char *url, char *buf, size_t n)
{
    size_t len = url ? strcspn(url, "?#") : 0;
    if (n == 0)
        return;
    if (len >= n)
        len = n - 1;
    memcpy(buf, url ? url : "", len);
    buf[len] = 0;
}

int net_token_clean(const char *in, char *out, size_t n, kvp_error *err)
{
    if (snprintf(out, n, "%s", in ? in : "") >= (int)n)
        return kvp_fail(err, KVP_EUSAGE, "the token is too long");
    return 0;
}

int net_check_redirect(const char *from, const char *to, int allow_http, kvp_error *err)
{
    (void)from, (void)to, (void)allow_http;
    return kvp_fail(err, KVP_EINPUT, "this build of kvplan has no network");
}
