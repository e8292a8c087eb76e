/* net/http.c - net_fetch over libcurl (contract in http.h).
 *
 * Redirects are followed by hand: which headers libcurl keeps across a host
 * change has varied between versions (7.88 drops a custom Authorization on
 * a port change, older ones did not), and following cannot stop at the
 * Hub's cross-host 302, whose X-Repo-Commit / X-Linked-* the CDN never
 * repeats.  So CURLOPT_FOLLOWLOCATION stays 0, each hop is one perform on
 * its origin's handle, and the token is attached per hop.
 *
 * Nothing a server says is trusted: a 200 to a range request is cut at the
 * range's end or the cap, a 206 is checked against the requested start,
 * CURLOPT_MAXFILESIZE_LARGE only acts when a size is announced (and only
 * stops a running transfer from 8.4.0 on), so the write callback counts. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "../kvp_int.h"
#include "http.h"

/* The *_STR protocol options arrived in 7.85.0. */
#if LIBCURL_VERSION_NUM < 0x075500
#error "kvplan needs libcurl 7.85.0 or newer"
#endif

enum { MAX_HANDLES = 8, HEADER_LINE_MAX = 8192 };

/* ---- global init ------------------------------------------------------------ */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode init_rc = CURLE_FAILED_INIT;
static char user_agent[96];

static void init_once(void)
{
    init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    snprintf(user_agent, sizeof user_agent, "kvplan/%s; libcurl/%s", KVPLAN_VERSION,
             v && v->version ? v->version : "unknown");
    /* the library may be newer than the headers, never older */
    if (init_rc == CURLE_OK && (!v || v->version_num < 0x075500))
        init_rc = CURLE_NOT_BUILT_IN;
}

int net_global_init(kvp_error *err)
{
    pthread_once(&once, init_once);
    if (init_rc != CURLE_OK)
        return kvp_fail(err, KVP_EINPUT, "libcurl: cannot initialise (%s; 7.85.0 or newer needed)",
                        curl_easy_strerror(init_rc));
    return 0;
}

/* ---- URLs ----------------------------------------------------------------------- */

static void lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

int net_origin(const char *url, char *buf, size_t n)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    int rc = -1;
    if (u && url && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
        lower(scheme);
        lower(host);
        if ((strcmp(scheme, "https") == 0 || strcmp(scheme, "http") == 0) && *host) {
            int k = snprintf(buf, n, "%s://%s:%s", scheme, host, port);
            rc = k > 0 && (size_t)k < n ? 0 : -1;
        }
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    if (rc && n)
        buf[0] = '\0';
    return rc;
}

int net_same_origin(const char *a, const char *b)
{
    char oa[512], ob[512];
    return net_origin(a, oa, sizeof oa) == 0 && net_origin(b, ob, sizeof ob) == 0 &&
           strcmp(oa, ob) == 0;
}

/* A scheme as written, lower-cased ("" if none): for URLs net_origin refuses. */
static void scheme_of(const char *url, char *buf, size_t n)
{
    size_t i = 0;
    if (!n)
        return;
    while (url && url[i] && url[i] != ':' && url[i] != '/' && i + 1 < n) {
        buf[i] = url[i];
        i++;
    }
    buf[url && url[i] == ':' ? i : 0] = '\0';
    lower(buf);
}

void net_url_redacted(const char *url, char *buf, size_t n)
{
    if (!n)
        return;
    buf[0] = '\0';
    if (!url)
        return;
    CURLU *u = curl_url();
    char *out = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_QUERY, NULL, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_USER, NULL, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_OPTIONS, NULL, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_URL, &out, 0) == CURLUE_OK) {
        snprintf(buf, n, "%s", out);
    } else {
        /* unparsable: keep what precedes any query, and drop userinfo */
        const char *s = url, *at = NULL, *p;
        const char *end = url + strcspn(url, "?#");
        const char *auth = strstr(url, "://");
        if (auth && auth < end) {
            p = auth + 3;
            for (const char *q = p; q < end && *q != '/'; q++)
                if (*q == '@')
                    at = q;
            if (at) {
                snprintf(buf, n, "%.*s%.*s", (int)(p - s), s, (int)(end - at - 1), at + 1);
                goto done;
            }
        }
        snprintf(buf, n, "%.*s", (int)(end - s), s);
    }
done:
    curl_free(out);
    curl_url_cleanup(u);
    /* whatever remains goes into a one-line message */
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

int net_check_redirect(const char *from, const char *to, int allow_http, kvp_error *err)
{
    char fs[16], ts[16], shown[512];
    scheme_of(from, fs, sizeof fs);
    scheme_of(to, ts, sizeof ts);
    net_url_redacted(from, shown, sizeof shown);
    if (strcmp(ts, "https") != 0 && strcmp(ts, "http") != 0)
        return kvp_fail(err, KVP_EINPUT, "%s: refused a redirect to a '%s%s' URL (only http and https)",
                        shown, *ts ? ts : "scheme-less", *ts ? ":" : "");
    if (strcmp(fs, "https") == 0 && strcmp(ts, "http") == 0)
        return kvp_fail(err, KVP_EINPUT, "%s: refused a redirect from https to plain http", shown);
    if (strcmp(ts, "http") == 0 && !allow_http)
        return kvp_fail(err, KVP_EINPUT,
                        "%s: refused a redirect to plain http (http is only used for an http "
                        "endpoint you configured)", shown);
    char o[512];
    if (net_origin(to, o, sizeof o))
        return kvp_fail(err, KVP_EINPUT, "%s: refused a redirect to a URL that does not parse", shown);
    return 0;
}

/* ---- header values --------------------------------------------------------------- */

int net_token_clean(const char *in, char *out, size_t n, kvp_error *err)
{
    size_t k = 0;
    if (!n)
        return kvp_fail(err, KVP_EUSAGE, "token: no room");
    out[0] = '\0';
    if (!in)
        return 0;
    for (const char *p = in; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '\r' || ch == '\n')
            continue;
        /* the token becomes a header line: anything else would inject one */
        if ((ch < 0x20 && ch != ' ' && ch != '\t') || ch == 0x7f) {
            explicit_bzero(out, n);
            return kvp_fail(err, KVP_EUSAGE,
                            "the access token holds a control character (0x%02x); not sent", ch);
        }
        if (k + 1 >= n) {
            explicit_bzero(out, n);
            return kvp_fail(err, KVP_EUSAGE, "the access token is longer than %zu bytes", n - 1);
        }
        out[k++] = (char)ch;
    }
    out[k] = '\0';
    size_t a = 0;
    while (out[a] == ' ' || out[a] == '\t')
        a++;
    while (k > a && (out[k - 1] == ' ' || out[k - 1] == '\t'))
        k--;
    memmove(out, out + a, k - a);
    out[k - a] = '\0';
    explicit_bzero(out + (k - a), n - (k - a));
    /* a blank inside would split the header into a different credential */
    for (size_t i = 0; out[i]; i++)
        if (out[i] == ' ' || out[i] == '\t') {
            explicit_bzero(out, n);
            return kvp_fail(err, KVP_EUSAGE, "the access token holds a blank; not sent");
        }
    return 0;
}

static int has_ctl(const char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* Digits only, overflow-checked; *end after them. */
static int parse_u64(const char *s, const char **end, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++)
        if (kvp_mul(v, 10, &v) || kvp_add(v, (uint64_t)(*p - '0'), &v))
            return -1;
    *end = p;
    *out = v;
    return 0;
}

static int parse_u64_all(const char *s, uint64_t *out)
{
    const char *e;
    return parse_u64(s, &e, out) == 0 && *e == '\0' ? 0 : -1;
}

/* "bytes a-b/total", where total may be "*" (unknown), or a-b "*" (a 416). */
static void parse_content_range(net_headers *h, const char *v)
{
    const char *p = v, *e;
    uint64_t a = 0, b = 0, t = 0;
    int has_ab = 0, has_t = 0;
    if (strncasecmp(p, "bytes", 5) != 0)
        return;
    p += 5;
    if (*p != ' ' && *p != '=')
        return;
    while (*p == ' ' || *p == '=')
        p++;
    if (*p == '*') {
        p++;
    } else {
        /* b + 1 is a length later: 2^64 - 1 is no end */
        if (parse_u64(p, &e, &a) || *e != '-' || parse_u64(e + 1, &e, &b) || b < a ||
            b == UINT64_MAX)
            return;
        p = e;
        has_ab = 1;
    }
    if (*p++ != '/')
        return;
    if (*p == '*' && p[1] == '\0') {
        if (!has_ab)
            return; /* "* / *" says nothing */
    } else if (parse_u64_all(p, &t) == 0) {
        has_t = 1;
        if (has_ab && b >= t)
            return;
    } else {
        return;
    }
    h->has_content_range = 1;
    h->has_range = has_ab;
    h->range_start = a;
    h->range_end = b;
    h->has_total = has_t;
    h->total = t;
}

/* A value that becomes an identifier or a path later: whole or nothing. */
static void copy_strict(char *dst, size_t n, const char *v)
{
    size_t len = strlen(v);
    dst[0] = '\0';
    if (len < n && !has_ctl(v))
        memcpy(dst, v, len + 1);
}

/* A value for messages: cut to fit, control characters made blanks. */
static void copy_shown(char *dst, size_t n, const char *v)
{
    snprintf(dst, n, "%s", v);
    for (char *c = dst; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
}

static long parse_retry_after(const char *v)
{
    uint64_t s;
    if (parse_u64_all(v, &s) == 0)
        return s > 86400 * 7 ? 86400 * 7 : (long)s;
    time_t when = curl_getdate(v, NULL);
    if (when == (time_t)-1)
        return -1;
    time_t now = time(NULL);
    return when <= now ? 0 : when - now > 86400 * 7 ? 86400 * 7 : (long)(when - now);
}

/* The rel="next" target of a Link value (RFC 8288), resolved against base. */
static char *parse_link_next(const char *v, const char *base)
{
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p != '<')
            return NULL;
        const char *u0 = ++p, *u1 = strchr(p, '>');
        if (!u1)
            return NULL;
        p = u1 + 1;
        int next = 0;
        /* parameters up to the next link: ;name=value or ;name="value" */
        while (*p && *p != ',') {
            while (*p == ' ' || *p == ';')
                p++;
            const char *n0 = p;
            while (*p && *p != '=' && *p != ';' && *p != ',')
                p++;
            size_t nlen = (size_t)(p - n0);
            while (nlen && n0[nlen - 1] == ' ')
                nlen--;
            const char *v0 = p, *v1 = p;
            if (*p == '=') {
                p++;
                while (*p == ' ')
                    p++;
                if (*p == '"') {
                    v0 = ++p;
                    while (*p && *p != '"')
                        p++;
                    v1 = p;
                    if (*p == '"')
                        p++;
                } else {
                    v0 = p;
                    while (*p && *p != ';' && *p != ',')
                        p++;
                    v1 = p;
                    while (v1 > v0 && v1[-1] == ' ')
                        v1--;
                }
            }
            if (nlen == 3 && strncasecmp(n0, "rel", 3) == 0) {
                /* rel may list several space-separated relations */
                for (const char *w = v0; w < v1;) {
                    while (w < v1 && *w == ' ')
                        w++;
                    const char *w1 = w;
                    while (w1 < v1 && *w1 != ' ')
                        w1++;
                    if (w1 - w == 4 && strncasecmp(w, "next", 4) == 0)
                        next = 1;
                    w = w1;
                }
            }
            while (*p == ' ')
                p++;
            if (*p && *p != ';' && *p != ',')
                p++; /* junk: step over it rather than loop */
        }
        if (next) {
            char *rel = strndup(u0, (size_t)(u1 - u0));
            char *abs = NULL;
            CURLU *u = curl_url();
            char *out = NULL;
            if (rel && u && curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
                curl_url_set(u, CURLUPART_URL, rel, 0) == CURLUE_OK &&
                curl_url_get(u, CURLUPART_URL, &out, 0) == CURLUE_OK)
                abs = strdup(out);
            curl_free(out);
            curl_url_cleanup(u);
            free(rel);
            return abs;
        }
    }
    return NULL;
}

static void headers_reset(net_headers *h)
{
    free(h->location);
    free(h->link_next);
    memset(h, 0, sizeof *h);
    h->retry_after = -1;
}

/* ---- one transfer ------------------------------------------------------------------ */

typedef struct xfer {
    const net_request *rq;
    net_result *res;
    const char *url;         /* of this hop, for Link resolution */
    uint64_t cap;            /* rq's cap */
    int has_req_range, has_req_end;
    uint64_t req_start, req_end;
    /* per response, reset at each status line */
    int decided, to_sink, stop, abort, capped;
    uint64_t limit, offset;  /* bytes this response may deliver; file offset of the next */
    size_t body_cap;
    /* progress */
    struct timespec t0, last;
    int shown;
} xfer;

static int is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

static int range_honoured(const xfer *x)
{
    const net_headers *h = &x->res->h;
    return x->has_req_range && h->status == 206 && h->has_range &&
           h->range_start == x->req_start && (!x->has_req_end || h->range_end <= x->req_end);
}

static void response_reset(xfer *x)
{
    x->decided = x->to_sink = x->stop = x->abort = x->capped = 0;
    x->limit = x->offset = 0;
    x->res->body_len = 0;
    x->res->received = 0;
    if (x->res->body)
        x->res->body[0] = '\0';
}

int net_header_line(net_headers *h, const char *buf, size_t n, const char *url)
{
    if (n >= HEADER_LINE_MAX)
        return 0; /* a line this long carries nothing kvplan uses */
    char line[HEADER_LINE_MAX];
    memcpy(line, buf, n);
    line[n] = '\0';
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
                 line[n - 1] == '\t'))
        line[--n] = '\0';
    if (strncmp(line, "HTTP/", 5) == 0) {
        /* a new response (an interim 1xx, a proxy's CONNECT): nothing carries over */
        headers_reset(h);
        const char *sp = strchr(line, ' ');
        uint64_t code;
        const char *e;
        if (sp && parse_u64(sp + 1, &e, &code) == 0 && code < 1000)
            h->status = (long)code;
        return 1;
    }
    char *colon = strchr(line, ':');
    if (!colon)
        return 0;
    *colon = '\0';
    const char *name = line;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    if (strcasecmp(name, "content-range") == 0)
        parse_content_range(h, v);
    else if (strcasecmp(name, "content-length") == 0)
        h->has_content_length = parse_u64_all(v, &h->content_length) == 0;
    else if (strcasecmp(name, "x-linked-size") == 0)
        h->has_linked_size = parse_u64_all(v, &h->linked_size) == 0;
    else if (strcasecmp(name, "etag") == 0)
        copy_strict(h->etag, sizeof h->etag, v);
    else if (strcasecmp(name, "x-linked-etag") == 0)
        copy_strict(h->linked_etag, sizeof h->linked_etag, v);
    else if (strcasecmp(name, "x-repo-commit") == 0)
        copy_strict(h->repo_commit, sizeof h->repo_commit, v);
    else if (strcasecmp(name, "x-error-code") == 0)
        copy_strict(h->error_code, sizeof h->error_code, v);
    else if (strcasecmp(name, "x-error-message") == 0)
        copy_shown(h->error_message, sizeof h->error_message, v);
    else if (strcasecmp(name, "content-type") == 0)
        copy_shown(h->content_type, sizeof h->content_type, v);
    else if (strcasecmp(name, "retry-after") == 0)
        h->retry_after = parse_retry_after(v);
    else if (strcasecmp(name, "location") == 0 && !h->location)
        h->location = strdup(v);
    else if (strcasecmp(name, "link") == 0 && !h->link_next)
        h->link_next = parse_link_next(v, url);
    return 0;
}

void net_headers_clear(net_headers *h)
{
    headers_reset(h);
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
    xfer *x = ud;
    if (net_header_line(&x->res->h, buf, size * nitems, x->url))
        response_reset(x); /* a new response (an interim 1xx, a proxy's CONNECT) */
    return size * nitems;
}

/* How this response's body is taken, decided at its first byte (the
 * headers are complete by then). */
static void decide(xfer *x)
{
    const net_headers *h = &x->res->h;
    int ok = h->status >= 200 && h->status < 300;
    x->decided = 1;
    x->to_sink = ok && x->rq->sink != NULL;
    x->limit = ok ? x->cap : x->cap < NET_ERROR_BODY_MAX ? x->cap : NET_ERROR_BODY_MAX;
    x->offset = 0;
    if (range_honoured(x)) {
        uint64_t len = h->range_end - h->range_start + 1;
        x->offset = h->range_start;
        if (len < x->limit)
            x->limit = len;
    } else if (x->has_req_range && h->status == 206 && h->has_range) {
        x->offset = h->range_start; /* not what was asked: the caller sees the flag */
    } else if (x->has_req_range && x->has_req_end && h->status == 200 &&
               x->req_end < x->limit) {
        /* Range ignored: the whole file follows; what was asked ends here */
        x->limit = x->req_end + 1;
    }
}

static int body_grow(net_result *res, size_t *cap, uint64_t need)
{
    uint64_t n = *cap ? *cap : 16384;
    if (need + 1 <= *cap)
        return 0;
    while (n < need + 1)
        if (kvp_mul(n, 2, &n))
            return -1;
    if (n > SIZE_MAX)
        return -1;
    uint8_t *p = realloc(res->body, (size_t)n);
    if (!p)
        return -1;
    res->body = p;
    *cap = (size_t)n;
    return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    net_result *res = x->res;
    size_t n = size * nmemb, take = n;
    if (!x->decided)
        decide(x);
    if (res->received >= x->limit || n > x->limit - res->received) {
        take = (size_t)(x->limit - res->received);
        x->capped = 1;
    }
    if (take && x->to_sink) {
        int rc = x->rq->sink(x->rq->sink_ud, (const uint8_t *)data, take, x->offset);
        res->received += take;
        x->offset += take;
        /* any return but n ends the transfer with CURLE_WRITE_ERROR */
        if (rc == NET_STOP) {
            x->stop = 1;
            return 0;
        }
        if (rc != NET_CONTINUE) {
            x->abort = 1;
            return 0;
        }
    } else if (take) {
        if (body_grow(res, &x->body_cap, (uint64_t)res->body_len + take)) {
            x->abort = 2; /* out of memory */
            return 0;
        }
        memcpy(res->body + res->body_len, data, take);
        res->body_len += take;
        res->body[res->body_len] = '\0';
        res->received += take;
        x->offset += take;
    }
    return take < n ? 0 : n;
}

static double secs(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    xfer *x = ud;
    struct timespec now;
    (void)ultotal;
    (void)ulnow;
    clock_gettime(CLOCK_MONOTONIC, &now);
    /* only a slow transfer is worth a line; redraw a few times a second */
    if (secs(x->t0, now) < 2.0 || (x->shown && secs(x->last, now) < 0.25))
        return 0;
    x->last = now;
    x->shown = 1;
    if (dltotal > 0)
        fprintf(stderr, "\r\033[K%s: %.1f of %.1f MiB", x->rq->progress,
                (double)dlnow / 1048576.0, (double)dltotal / 1048576.0);
    else
        fprintf(stderr, "\r\033[K%s: %.1f MiB", x->rq->progress, (double)dlnow / 1048576.0);
    return 0;
}

/* ---- sessions ---------------------------------------------------------------------- */

struct net_session {
    struct {
        char *origin;
        CURL *h;
    } slot[MAX_HANDLES];
    unsigned next; /* round-robin eviction */
    uint64_t requests, body_bytes, connects; /* net_session_counts */
};

void net_session_counts(const net_session *s, uint64_t *requests, uint64_t *body_bytes,
                        uint64_t *connects)
{
    *requests = s ? s->requests : 0;
    *body_bytes = s ? s->body_bytes : 0;
    *connects = s ? s->connects : 0;
}

net_session *net_session_new(kvp_error *err)
{
    if (net_global_init(err))
        return NULL;
    net_session *s = calloc(1, sizeof *s);
    if (!s)
        kvp_fail(err, KVP_EINPUT, "out of memory");
    return s;
}

void net_session_free(net_session *s)
{
    if (!s)
        return;
    for (int i = 0; i < MAX_HANDLES; i++) {
        if (s->slot[i].h)
            curl_easy_cleanup(s->slot[i].h);
        free(s->slot[i].origin);
    }
    free(s);
}

static CURL *session_handle(net_session *s, const char *origin)
{
    for (int i = 0; i < MAX_HANDLES; i++)
        if (s->slot[i].origin && strcmp(s->slot[i].origin, origin) == 0)
            return s->slot[i].h;
    int k = -1;
    for (int i = 0; i < MAX_HANDLES && k < 0; i++)
        if (!s->slot[i].origin)
            k = i;
    if (k < 0) {
        k = (int)(s->next++ % MAX_HANDLES);
        curl_easy_cleanup(s->slot[k].h);
        free(s->slot[k].origin);
        s->slot[k].h = NULL;
        s->slot[k].origin = NULL;
    }
    char *o = strdup(origin);
    CURL *h = o ? curl_easy_init() : NULL;
    if (!h) {
        free(o);
        return NULL;
    }
    s->slot[k].origin = o;
    s->slot[k].h = h;
    return h;
}

/* ---- errors -------------------------------------------------------------------------- */

static const char *kind_text(net_errkind k)
{
    switch (k) {
    case NET_ERESOLVE: return "cannot resolve the host (offline, or a wrong endpoint?)";
    case NET_EUNREACHABLE: return "network unreachable (offline?)";
    case NET_ECONNECT: return "cannot connect";
    case NET_ETIMEOUT: return "timed out";
    case NET_ESTALL: return "stalled";
    case NET_EPARTIAL: return "the transfer ended early";
    case NET_EREDIRECTS: return "too many redirects";
    case NET_EPROTOCOL: return "unsupported protocol";
    case NET_ETLS: return "TLS failed";
    case NET_ETOOBIG: return "response too large";
    case NET_EABORTED: return "aborted by the reader";
    case NET_EUSAGE: return "bad request";
    default: return "transfer failed";
    }
}

static net_errkind classify(CURLcode rc, long os_errno, const char *errbuf)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return NET_ERESOLVE;
    case CURLE_COULDNT_CONNECT:
        return os_errno == ENETUNREACH || os_errno == EHOSTUNREACH ? NET_EUNREACHABLE
                                                                    : NET_ECONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return strncmp(errbuf, "Operation too slow", 18) == 0 ? NET_ESTALL : NET_ETIMEOUT;
    case CURLE_PARTIAL_FILE: return NET_EPARTIAL;
    case CURLE_TOO_MANY_REDIRECTS: return NET_EREDIRECTS;
    case CURLE_UNSUPPORTED_PROTOCOL: return NET_EPROTOCOL;
    case CURLE_URL_MALFORMAT: return NET_EUSAGE;
    case CURLE_FILESIZE_EXCEEDED: return NET_ETOOBIG;
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: return NET_ECONNECT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_USE_SSL_FAILED: return NET_ETLS;
    default: return NET_EOTHER;
    }
}

KVP_PRINTF(4, 5)
static int net_fail(net_result *res, kvp_error *err, net_errkind kind, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    res->error = kind;
    return kvp_fail(err, kind == NET_EUSAGE ? KVP_EUSAGE : KVP_EINPUT, "%s", msg);
}

/* ---- the request ----------------------------------------------------------------------- */

static int parse_req_range(const char *r, xfer *x)
{
    const char *e;
    if (parse_u64(r, &e, &x->req_start) || *e != '-')
        return -1;
    x->has_req_range = 1;
    if (e[1] == '\0')
        return 0;
    if (parse_u64_all(e + 1, &x->req_end) || x->req_end < x->req_start ||
        x->req_end == UINT64_MAX)
        return -1;
    x->has_req_end = 1;
    return 0;
}

static void wipe_list(struct curl_slist *l)
{
    for (struct curl_slist *p = l; p; p = p->next)
        explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l);
}

/* One hop: a perform on the handle of url's origin. */
static CURLcode perform(CURL *h, xfer *x, const char *url, const char *token, char *errbuf,
                        long *os_errno, char **redirect)
{
    const net_request *rq = x->rq;
    struct curl_slist *hdrs = NULL, *t;
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    const char *protos = rq->allow_http ? "http,https" : "https";
    *redirect = NULL;
    *os_errno = 0;
    errbuf[0] = '\0';
    x->url = url;
    curl_easy_reset(h); /* keeps the connection, DNS and TLS session caches */
    if (token && *token) {
        size_t n = strlen(token) + 32;
        char *line = malloc(n);
        if (!line)
            return CURLE_OUT_OF_MEMORY;
        snprintf(line, n, "Authorization: Bearer %s", token);
        t = curl_slist_append(hdrs, line);
        explicit_bzero(line, n);
        free(line);
        if (!t)
            goto out;
        hdrs = t;
    }
    if (rq->accept) {
        size_t n = strlen(rq->accept) + 16;
        char *line = malloc(n);
        if (!line)
            goto out;
        snprintf(line, n, "Accept: %s", rq->accept);
        t = curl_slist_append(hdrs, line);
        free(line);
        if (!t)
            goto out;
        hdrs = t;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, protos);
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, protos);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_USERAGENT, rq->user_agent ? rq->user_agent : user_agent);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, rq->connect_timeout > 0 ? rq->connect_timeout : 10L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, rq->low_speed_limit > 0 ? rq->low_speed_limit : 1024L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, rq->low_speed_time > 0 ? rq->low_speed_time : 30L);
    if (rq->timeout > 0)
        curl_easy_setopt(h, CURLOPT_TIMEOUT, rq->timeout);
    if (rq->range)
        curl_easy_setopt(h, CURLOPT_RANGE, rq->range);
    if (rq->head)
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    /* announced sizes only, and only for whole documents: a 200 answering a
     * range is cut by the counter instead, so it can be detected */
    if (!rq->head && !rq->range && !rq->sink)
        curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->cap);
    if (rq->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, rq->ca_file);
    if (hdrs)
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    if (rq->progress && isatty(STDERR_FILENO)) {
        clock_gettime(CLOCK_MONOTONIC, &x->t0);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    rc = curl_easy_perform(h);
    if (x->shown) {
        fputs("\r\033[K", stderr);
        x->shown = 0;
    }
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, os_errno);
    long code = 0;
    if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code)
        x->res->h.status = code;
    char *r = NULL;
    if (curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &r) == CURLE_OK && r)
        *redirect = strdup(r);
out:
    /* the handle keeps pointers into these until the next reset */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    wipe_list(hdrs);
    return rc;
}

/* libcurl's own message, minus anything from a '?' on (a signed query). */
static void scrub(char *errbuf)
{
    errbuf[strcspn(errbuf, "?\r\n")] = '\0';
    size_t n = strlen(errbuf);
    while (n && (errbuf[n - 1] == ' ' || errbuf[n - 1] == '.'))
        errbuf[--n] = '\0';
}

int net_fetch(net_session *s, const net_request *rq, net_result *res, kvp_error *err)
{
    memset(res, 0, sizeof *res);
    res->h.retry_after = -1;
    char shown[512], token[4096], token_origin[512], origin[512], errbuf[CURL_ERROR_SIZE];
    net_url_redacted(rq->url, shown, sizeof shown);
    if (net_global_init(err)) {
        res->error = NET_EOTHER;
        return -1;
    }
    if (!rq->url || !*rq->url)
        return net_fail(res, err, NET_EUSAGE, "no URL given");
    char sch[16];
    scheme_of(rq->url, sch, sizeof sch);
    if (strcmp(sch, "https") != 0 && !(strcmp(sch, "http") == 0 && rq->allow_http))
        return net_fail(res, err, NET_EUSAGE, "%s: only %s URLs are fetched", shown,
                        rq->allow_http ? "http and https" : "https");
    if (net_origin(rq->url, origin, sizeof origin))
        return net_fail(res, err, NET_EUSAGE, "%s: not a URL kvplan can fetch", shown);
    xfer x = {.rq = rq, .res = res};
    x.cap = rq->max_bytes ? rq->max_bytes : NET_DEFAULT_MAX_BYTES;
    if (rq->range && parse_req_range(rq->range, &x))
        return net_fail(res, err, NET_EUSAGE, "%s: bad range '%.40s' (want a-b or a-)", shown,
                        has_ctl(rq->range) ? "?" : rq->range);
    if (has_ctl(rq->accept) || has_ctl(rq->user_agent))
        return net_fail(res, err, NET_EUSAGE, "%s: a header value holds a control character",
                        shown);
    if (net_token_clean(rq->token, token, sizeof token, err)) {
        res->error = NET_EUSAGE;
        return -1;
    }
    int send_token = token[0] != '\0';
    if (send_token && net_origin(rq->token_origin ? rq->token_origin : rq->url, token_origin,
                                 sizeof token_origin)) {
        explicit_bzero(token, sizeof token);
        return net_fail(res, err, NET_EUSAGE, "%s: the token's origin is not an http(s) URL",
                        shown);
    }
    net_session *own = NULL;
    if (!s && !(s = own = net_session_new(err))) {
        explicit_bzero(token, sizeof token);
        res->error = NET_EOTHER;
        return -1;
    }
    int max_hops = rq->max_redirects > 0 ? rq->max_redirects
                   : rq->max_redirects == 0 ? NET_MAX_REDIRECTS : 0;
    int rc = 0;
    char *url = strdup(rq->url);
    if (!url)
        rc = net_fail(res, err, NET_EOTHER, "%s: out of memory", shown);
    while (rc == 0) {
        char *redirect = NULL;
        long os_errno = 0;
        CURL *h;
        net_url_redacted(url, shown, sizeof shown);
        if (net_origin(url, origin, sizeof origin) || !(h = session_handle(s, origin))) {
            rc = net_fail(res, err, NET_EOTHER, "%s: cannot set up a connection", shown);
            break;
        }
        /* the token goes to its own origin only, and never again once a hop left it */
        if (send_token && strcmp(origin, token_origin) != 0)
            send_token = 0;
        headers_reset(&res->h);
        response_reset(&x);
        free(res->url);
        res->url = url;
        url = NULL;
        CURLcode cc = perform(h, &x, res->url, send_token ? token : NULL, errbuf, &os_errno,
                              &redirect);
        res->status = res->h.status;
        long conns = 0;
        s->requests++;
        s->body_bytes += res->received;
        if (curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &conns) == CURLE_OK && conns > 0)
            s->connects += (uint64_t)conns;
        if (x.stop && cc == CURLE_WRITE_ERROR) {
            res->flags |= NET_STOPPED_EARLY;
            cc = CURLE_OK;
        }
        if (x.capped && !x.stop && !x.abort && cc == CURLE_WRITE_ERROR)
            cc = CURLE_OK; /* the counter's cut, judged below */
        if (x.capped || cc == CURLE_FILESIZE_EXCEEDED)
            res->flags |= NET_CAPPED;
        if (range_honoured(&x))
            res->flags |= NET_RANGE_HONOURED;
        if (x.abort) {
            free(redirect);
            rc = net_fail(res, err, x.abort == 2 ? NET_EOTHER : NET_EABORTED, "%s: %s", shown,
                          x.abort == 2 ? "out of memory" : kind_text(NET_EABORTED));
            break;
        }
        /* a whole document cut short is no document; a prefix is what was asked */
        if (cc == CURLE_FILESIZE_EXCEEDED || (x.capped && !rq->range && !rq->sink &&
                                              res->status >= 200 && res->status < 300)) {
            free(redirect);
            rc = net_fail(res, err, NET_ETOOBIG, "%s: response larger than %llu bytes", shown,
                          (unsigned long long)x.cap);
            break;
        }
        if (cc != CURLE_OK) {
            net_errkind k = classify(cc, os_errno, errbuf);
            scrub(errbuf);
            free(redirect);
            if (k == NET_EPARTIAL) {
                res->flags |= NET_TRUNCATED;
                if (res->h.has_content_length)
                    rc = net_fail(res, err, k, "%s: %s: %llu of %llu bytes", shown, kind_text(k),
                                  (unsigned long long)res->received,
                                  (unsigned long long)res->h.content_length);
                else
                    rc = net_fail(res, err, k, "%s: %s after %llu bytes", shown, kind_text(k),
                                  (unsigned long long)res->received);
            } else if (k == NET_ESTALL) {
                rc = net_fail(res, err, k, "%s: %s: under %ld bytes/s for %ld s (%llu bytes received)",
                              shown, kind_text(k), rq->low_speed_limit > 0 ? rq->low_speed_limit : 1024L,
                              rq->low_speed_time > 0 ? rq->low_speed_time : 30L,
                              (unsigned long long)res->received);
            } else {
                rc = net_fail(res, err, k, "%s: %s (%s)", shown, kind_text(k),
                              *errbuf ? errbuf : curl_easy_strerror(cc));
            }
            break;
        }
        /* a ranged 206 with fewer bytes than its Content-Range, a body cut
         * without libcurl noticing (no length announced) */
        if ((res->flags & NET_RANGE_HONOURED) && !rq->head && !x.stop && !x.capped &&
            res->received < res->h.range_end - res->h.range_start + 1) {
            free(redirect);
            res->flags |= NET_TRUNCATED;
            rc = net_fail(res, err, NET_EPARTIAL, "%s: %s: %llu of %llu bytes", shown,
                          kind_text(NET_EPARTIAL), (unsigned long long)res->received,
                          (unsigned long long)(res->h.range_end - res->h.range_start + 1));
            break;
        }
        if (!is_redirect(res->status) || rq->redirects == NET_REDIR_NONE ||
            (!redirect && !res->h.location)) {
            res->redirect_url = redirect;
            break;
        }
        if (!redirect) {
            rc = net_fail(res, err, NET_EPROTOCOL, "%s: refused a redirect to an unusable Location",
                          shown);
            break;
        }
        if (net_check_redirect(res->url, redirect, rq->allow_http, err)) {
            free(redirect);
            res->error = NET_EPROTOCOL;
            rc = -1;
            break;
        }
        if (rq->redirects == NET_REDIR_SAME_ORIGIN && !net_same_origin(res->url, redirect)) {
            res->redirect_url = redirect;
            break;
        }
        if (res->redirects >= max_hops) {
            free(redirect);
            rc = net_fail(res, err, NET_EREDIRECTS, "%s: %s (more than %d)", shown,
                          kind_text(NET_EREDIRECTS), max_hops);
            break;
        }
        res->redirects++;
        url = redirect;
    }
    free(url);
    explicit_bzero(token, sizeof token);
    net_session_free(own);
    return rc;
}

void net_result_free(net_result *res)
{
    if (!res)
        return;
    headers_reset(&res->h);
    free(res->url);
    free(res->redirect_url);
    free(res->body);
    memset(res, 0, sizeof *res);
}
