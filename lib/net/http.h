/* net/http.h - the one HTTP client under remote model loading (the Hub,
 * its CDN, the Ollama registry): a small libcurl wrapper, library-internal.
 *
 * Every remote request goes through net_fetch so that the rules of
 * reference/remote-models.md section 8 hold in one place: the bearer token
 * reaches only its own origin, redirects are followed by hand (bounded,
 * http/https only, never https -> http), a server's answer to Range is
 * verified rather than trusted, every body is capped, header values are
 * parsed afresh for each response, and errors are one line that never
 * carries a token or a signed URL's query.  Not thread-safe per session. */
#ifndef KVP_NET_HTTP_H
#define KVP_NET_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "kvplan.h"

/* Redirect hops followed by default; browsers allow 20, the Hub needs 2. */
#define NET_MAX_REDIRECTS 10
/* Body cap when the request names none: KVP_GGUF_HEADER_MAX's size. */
#define NET_DEFAULT_MAX_BYTES (64ull << 20)
/* A non-2xx body (an error's JSON or XML) is kept up to this much. */
#define NET_ERROR_BODY_MAX (64u << 10)

/* What a streaming sink returns. */
enum { NET_CONTINUE = 0, NET_STOP = 1, NET_ABORT = -1 };
/* Receives a 2xx body as it arrives; offset is the position in the file of
 * p[0] (the Content-Range start of a 206, else 0).  NET_STOP ends the
 * transfer as a success (flag NET_STOPPED_EARLY); NET_ABORT as a failure. */
typedef int (*net_sink)(void *ud, const uint8_t *p, size_t n, uint64_t offset);

typedef enum net_redirects {
    NET_REDIR_FOLLOW = 0,  /* follow up to max_redirects hops */
    NET_REDIR_SAME_ORIGIN, /* follow same-origin hops, return the first cross-origin 3xx
                            * (the Hub's 302 carries headers its CDN does not repeat) */
    NET_REDIR_NONE         /* return any 3xx */
} net_redirects;

typedef struct net_request {
    const char *url;
    int head;                  /* HEAD instead of GET */
    const char *range;         /* "a-b" or "a-" (no "bytes="), NULL: whole body */
    uint64_t max_bytes;        /* body cap; 0: NET_DEFAULT_MAX_BYTES */
    net_sink sink;             /* NULL: the body is buffered in the result */
    void *sink_ud;
    const char *token;         /* bearer token; CR/LF and blanks stripped, other control
                                * characters refused; "" or NULL: none */
    const char *token_origin;  /* scheme://host[:port] the token may go to; NULL: url's */
    int allow_http;            /* http too (only for a user-configured http endpoint) */
    net_redirects redirects;
    int max_redirects;         /* 0: NET_MAX_REDIRECTS; < 0: a redirect is an error */
    long connect_timeout;      /* s, DNS + TCP + TLS; 0: 10 */
    long low_speed_limit;      /* bytes/s below which ... */
    long low_speed_time;       /* ... for this many s is a stall; 0: 1024 B/s, 30 s */
    long timeout;              /* s for each hop as a whole (small JSON calls); 0: none */
    const char *accept;        /* Accept header, NULL: libcurl's */
    const char *user_agent;    /* NULL: "kvplan/<version>; libcurl/<version>" */
    const char *ca_file;       /* CURLOPT_CAINFO (tests, corporate CAs); NULL: system */
    const char *progress;      /* label for a progress line on stderr, shown only when
                                * stderr is a tty and the transfer is slow; NULL: never */
} net_request;

/* Headers of one response; parsed again from scratch at each status line. */
typedef struct net_headers {
    long status;
    int has_content_range;     /* "bytes a-b/total"; a-b or total may be "*" */
    int has_range;             /* a-b present (not "*"), with a <= b < total */
    uint64_t range_start, range_end;
    int has_total;
    uint64_t total;
    int has_content_length;
    uint64_t content_length;
    int has_linked_size;
    uint64_t linked_size;      /* X-Linked-Size: the file behind a Hub redirect */
    long retry_after;          /* s (from seconds or an HTTP date); -1: absent */
    /* raw values, quotes kept; empty when absent, too long or holding control
     * characters (they are validated again before use as paths) */
    char etag[136];
    char linked_etag[136];     /* X-Linked-Etag: "<sha256>" of an LFS file */
    char repo_commit[72];      /* X-Repo-Commit */
    char error_code[64];       /* X-Error-Code, e.g. EntryNotFound, GatedRepo */
    /* for messages: control characters become spaces, long values are cut */
    char error_message[512];   /* X-Error-Message */
    char content_type[128];
    char *location;            /* raw Location (owned; may be signed: do not print) */
    char *link_next;           /* Link rel="next", resolved against the request URL
                                * (owned; check its origin before following) */
} net_headers;

/* Result flags. */
enum {
    NET_STOPPED_EARLY = 1,  /* the sink said NET_STOP: a success */
    NET_CAPPED = 2,         /* more body than the cap (or the requested range's end on a
                             * 200): the rest was not read */
    NET_RANGE_HONOURED = 4, /* 206 whose Content-Range starts at the requested start and
                             * ends within the requested end */
    NET_TRUNCATED = 8       /* fewer bytes than announced */
};

typedef enum net_errkind {
    NET_OK = 0,
    NET_EUSAGE,       /* bad request: URL, scheme, range, token or header value */
    NET_ERESOLVE,     /* host name not resolved */
    NET_EUNREACHABLE, /* no route: offline */
    NET_ECONNECT,     /* refused, reset, closed without an answer */
    NET_ETIMEOUT,     /* connect or overall timeout */
    NET_ESTALL,       /* under the low-speed limit for the low-speed time */
    NET_EPARTIAL,     /* body shorter than announced */
    NET_EREDIRECTS,   /* more than max_redirects hops */
    NET_EPROTOCOL,    /* redirect to a scheme other than http(s), or https -> http */
    NET_ETLS,         /* handshake or certificate */
    NET_ETOOBIG,      /* a whole-document GET larger than the cap */
    NET_EABORTED,     /* the sink said NET_ABORT */
    NET_EOTHER
} net_errkind;

typedef struct net_result {
    long status;           /* of the last response; 0 when there was none */
    net_headers h;         /* of the last response */
    char *url;             /* URL of the last request (owned; may be signed: never print
                            * or store it) */
    char *redirect_url;    /* a returned 3xx's absolute target (owned), else NULL */
    uint8_t *body;         /* owned, NUL-terminated; the body when not streamed, and a
                            * non-2xx answer's (up to NET_ERROR_BODY_MAX) */
    size_t body_len;
    uint64_t received;     /* body bytes of the last response taken (buffer or sink) */
    unsigned flags;        /* NET_STOPPED_EARLY ... */
    int redirects;         /* hops followed */
    net_errkind error;
} net_result;

typedef struct net_session net_session;

/* curl_global_init, once per process (safe to call from any thread). */
int net_global_init(kvp_error *err);

/* A session keeps one easy handle per origin, so sequential requests to the
 * same host (growing ranges, shard after shard) reuse its connection. */
net_session *net_session_new(kvp_error *err);
void net_session_free(net_session *s);
/* What the session cost so far: HTTP exchanges (each redirect hop is one),
 * body bytes taken from the network, and new connections opened. */
void net_session_counts(const net_session *s, uint64_t *requests, uint64_t *body_bytes,
                        uint64_t *connects);

/* Performs rq, following redirects as rq->redirects says.  0: a response
 * was obtained, whatever its status (4xx/5xx are the caller's to read from
 * res->h and res->body), or the sink stopped it; -1: err holds one line
 * naming the URL without its query, and res->error the kind.  res is always
 * initialised: free it with net_result_free either way.  s NULL: a session
 * for this call only. */
int net_fetch(net_session *s, const net_request *rq, net_result *res, kvp_error *err);
void net_result_free(net_result *res);

/* ---- helpers (also what net_fetch uses) ------------------------------------- */

/* Parses one response header line (buf[0..n), CRLF or not) into h: 1 when
 * it is a status line, which starts a new response (h reset first), else 0.
 * url resolves a relative Link.  net_headers_clear frees what it holds. */
int net_header_line(net_headers *h, const char *buf, size_t n, const char *url);
void net_headers_clear(net_headers *h);

/* "scheme://host:port", lower-case, default port written out; -1 if url
 * has no http(s) scheme or does not parse. */
int net_origin(const char *url, char *buf, size_t n);
/* 1 when a and b parse and have the same origin. */
int net_same_origin(const char *a, const char *b);
/* url without userinfo, query or fragment: what messages may show. */
void net_url_redacted(const char *url, char *buf, size_t n);
/* A token with CR, LF and surrounding blanks removed, into out; -1 (err
 * KVP_EUSAGE, the token not shown) when it holds other control characters or
 * does not fit.  An empty out means no token. */
int net_token_clean(const char *in, char *out, size_t n, kvp_error *err);
/* Whether a redirect from -> to may be followed: http(s) only, http only
 * with allow_http, never https -> http.  -1 with err (NET_EPROTOCOL's). */
int net_check_redirect(const char *from, const char *to, int allow_http, kvp_error *err);

#endif
