/* net_web.c - lib/net/http.h for the WebAssembly build, in place of the
 * libcurl transport (lib/net/http.c).  A page has no libcurl, and the C
 * code runs to completion without waiting, so it cannot fetch either: the
 * page's script (web/hub.js) fetches what a command will ask for first and
 * lays the answers down here with kvp_web_net_put, and net_fetch answers
 * from them.  Anything else fails as an unreachable network, so a Hub name
 * falls back the way `--offline` makes it (the catalog, or a clear error),
 * never a half-answer.  The URL helpers are what the messages need. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/kvp_int.h"
#include "../lib/net/http.h"

struct net_session {
    int unused;
};

/* One answer the page fetched: the URL asked for, its status, the two Hub
 * headers kvplan's errors read, and the body. */
typedef struct web_answer {
    char *url;
    long status;
    char error_code[64];
    char repo_commit[72];
    uint8_t *body;
    size_t len;
} web_answer;

#define WEB_ANSWERS_MAX 256
static web_answer answers[WEB_ANSWERS_MAX];
static size_t n_answers;

static web_answer *find_answer(const char *url)
{
    for (size_t i = 0; i < n_answers; i++)
        if (!strcmp(answers[i].url, url))
            return &answers[i];
    return NULL;
}

static void answer_drop(web_answer *a)
{
    free(a->url);
    free(a->body);
    memset(a, 0, sizeof *a);
}

/* Exported to the page: the answer to GET or HEAD url (a later put for the
 * same URL replaces it).  0, or -1 when the table is full or memory is. */
int kvp_web_net_put(const char *url, long status, const char *error_code,
                    const char *repo_commit, const void *body, size_t len)
{
    web_answer *a = find_answer(url);
    if (!a && n_answers == WEB_ANSWERS_MAX)
        return -1;
    web_answer fresh = {0};
    fresh.url = strdup(url);
    fresh.body = malloc(len + 1);
    if (!fresh.url || !fresh.body) {
        answer_drop(&fresh);
        return -1;
    }
    if (len)
        memcpy(fresh.body, body, len);
    fresh.body[len] = 0;
    fresh.len = len;
    fresh.status = status;
    snprintf(fresh.error_code, sizeof fresh.error_code, "%s", error_code ? error_code : "");
    snprintf(fresh.repo_commit, sizeof fresh.repo_commit, "%s", repo_commit ? repo_commit : "");
    if (a)
        answer_drop(a);
    else
        a = &answers[n_answers++];
    *a = fresh;
    return 0;
}

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

/* What the page laid down for this request, as a response would be: a
 * body is taken by the sink when there is one and the status is 2xx. */
static int answer_from(const web_answer *a, const net_request *rq, net_result *res,
                       kvp_error *err)
{
    res->status = res->h.status = a->status;
    memcpy(res->h.error_code, a->error_code, sizeof a->error_code);
    memcpy(res->h.repo_commit, a->repo_commit, sizeof a->repo_commit);
    res->h.has_content_length = 1;
    res->h.content_length = a->len;
    res->url = strdup(rq->url);
    if (!res->url)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    if (rq->head)
        return 0;
    uint64_t cap = rq->max_bytes ? rq->max_bytes : NET_DEFAULT_MAX_BYTES;
    int ok = a->status >= 200 && a->status < 300;
    if (ok && a->len > cap) {
        res->error = NET_ETOOBIG;
        return kvp_fail(err, KVP_EINPUT, "an answer larger than %llu bytes",
                        (unsigned long long)cap);
    }
    if (ok && rq->sink) {
        int r = rq->sink(rq->sink_ud, a->body, a->len, 0);
        res->received = a->len;
        if (r == NET_ABORT) {
            res->error = NET_EABORTED;
            return kvp_fail(err, KVP_EINPUT, "the transfer was stopped");
        }
        res->flags |= r == NET_STOP ? NET_STOPPED_EARLY : 0;
        return 0;
    }
    size_t keep = ok ? a->len : a->len < NET_ERROR_BODY_MAX ? a->len : NET_ERROR_BODY_MAX;
    res->body = malloc(keep + 1);
    if (!res->body)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    memcpy(res->body, a->body, keep);
    res->body[keep] = 0;
    res->body_len = keep;
    res->received = keep;
    return 0;
}

int net_fetch(net_session *s, const net_request *rq, net_result *res, kvp_error *err)
{
    char shown[256];
    (void)s;
    memset(res, 0, sizeof *res);
    res->h.retry_after = -1;
    const web_answer *a = rq->range ? NULL : find_answer(rq->url);
    if (a)
        return answer_from(a, rq, res, err) ? -1 : 0;
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
