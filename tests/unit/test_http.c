/* test_http.c - lib/net/http.c against a loopback server.
 *
 * tests/unit/http_fixture.py listens as "hub" on 127.0.0.1 and "cdn" on
 * 127.0.0.2 and logs each request (path, Range, whether Authorization came)
 * before answering, so each test states what the client must do with one
 * hostile or quirky server behaviour and checks both the result and what
 * reached the wire.  Proxy variables are cleared so a CI proxy cannot take
 * the traffic; every transfer has a timeout and alarm() bounds the whole
 * run, so nothing here can hang. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fake_remote.h"
#include "net/http.h"

enum { SIZE = 200000 };

static uint8_t data[SIZE]; /* the fixture's DATA */

/* ---- the server ------------------------------------------------------------ */

/* tests/unit/http_fixture.py (fake_remote.h starts and stops it), its
 * stderr kept in server.err: 10 s at most for its ports line. */
static int start_server(void)
{
    char err_path[320];
    snprintf(err_path, sizeof err_path, "%s/server.err", fr.dir);
    const char *const argv[] = {"python3", "tests/unit/http_fixture.py", "--ports-file",
                                fr.ports, "--log", fr.log, NULL};
    return fr_spawn(argv, err_path, 10);
}

static const char *hub(const char *path)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "http://127.0.0.1:%d%s", fr.hub_port, path);
    return p;
}

static const char *cdn(const char *path)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "http://127.0.0.2:%d%s", fr.cdn_port, path);
    return p;
}

/* ---- the request log --------------------------------------------------------- */

static long log_mark(void)
{
    struct stat st;
    return stat(fr.log, &st) == 0 ? (long)st.st_size : 0;
}

/* Lines written since mark that contain every given substring (NULL ends). */
static int log_count(long mark, const char *a, const char *b, const char *c)
{
    FILE *f = fopen(fr.log, "r");
    char line[2048];
    int n = 0;
    if (!f)
        return -1;
    fseek(f, mark, SEEK_SET);
    while (fgets(line, sizeof line, f))
        if ((!a || strstr(line, a)) && (!b || strstr(line, b)) && (!c || strstr(line, c)))
            n++;
    fclose(f);
    return n;
}

/* The client port of the nth (0-based) logged line since mark with path p. */
static int log_port(long mark, const char *p, int nth)
{
    FILE *f = fopen(fr.log, "r");
    char line[2048];
    int port = -1;
    if (!f)
        return -1;
    fseek(f, mark, SEEK_SET);
    while (fgets(line, sizeof line, f))
        if (strstr(line, p) && nth-- == 0) {
            const char *q = strstr(line, "\"client_port\": ");
            port = q ? atoi(q + 15) : -1;
            break;
        }
    fclose(f);
    return port;
}

/* ---- requests ------------------------------------------------------------------ */

static net_request req(const char *url)
{
    net_request r = {0};
    r.url = url;
    r.allow_http = 1;
    r.connect_timeout = 5;
    r.timeout = 20; /* nothing below may take that long */
    return r;
}

static int fetch(net_session *s, const net_request *r, net_result *res, kvp_error *e)
{
    e->msg[0] = '\0';
    return net_fetch(s, r, res, e);
}

typedef struct sink_state {
    uint64_t got, first_offset, stop_after;
    int calls, abort;
} sink_state;

static int sink(void *ud, const uint8_t *p, size_t n, uint64_t offset)
{
    sink_state *s = ud;
    if (s->calls++ == 0)
        s->first_offset = offset;
    /* every byte must be the file's byte at its offset */
    if (offset + n > SIZE || memcmp(p, data + offset, n) != 0)
        return NET_ABORT;
    s->got += n;
    if (s->abort)
        return NET_ABORT;
    return s->stop_after && s->got >= s->stop_after ? NET_STOP : NET_CONTINUE;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- tests without the network --------------------------------------------------- */

static void test_helpers(void)
{
    char o[256], out[256];
    kvp_error e = {0};
    CHECK("origin: scheme and host lower-cased, default port written out",
          net_origin("HTTPS://Hub.Example.COM/org/name?x=1", o, sizeof o) == 0 &&
              strcmp(o, "https://hub.example.com:443") == 0);
    CHECK("origin: an explicit port kept; ftp and garbage refused",
          net_origin("http://127.0.0.1:8080/a", o, sizeof o) == 0 &&
              strcmp(o, "http://127.0.0.1:8080") == 0 &&
              net_origin("ftp://127.0.0.1/x", o, sizeof o) == -1 &&
              net_origin("not a url", o, sizeof o) == -1);
    CHECK("same origin: default port equals written port; another port or scheme differs",
          net_same_origin("https://h.co/a", "https://h.co:443/b?c") &&
              !net_same_origin("http://h.co:80/a", "http://h.co:81/a") &&
              !net_same_origin("http://h.co/a", "https://h.co/a") &&
              !net_same_origin("https://h.co/a", "https://cdn.h.co/a"));
    net_url_redacted("https://user:pw@cdn.example/xet/abc?X-Amz-Signature=SECRET#frag", out,
                     sizeof out);
    CHECK("redacted URL: no userinfo, query or fragment",
          strcmp(out, "https://cdn.example/xet/abc") == 0);
    net_url_redacted("weird://a b@c/d?SECRET", out, sizeof out);
    CHECK("redacted URL: an unparsable one still loses its query and userinfo",
          !strstr(out, "SECRET") && !strstr(out, "a b@"));
    CHECK("token: CR/LF and surrounding blanks stripped",
          net_token_clean("  hf_abc\r\n", out, sizeof out, &e) == 0 && strcmp(out, "hf_abc") == 0);
    CHECK("token: empty after cleaning means no token",
          net_token_clean(" \r\n", out, sizeof out, &e) == 0 && out[0] == '\0');
    e.msg[0] = '\0';
    CHECK("token: a control character refused, the token not in the message",
          net_token_clean("hf_SEKRIT\x01x", out, sizeof out, &e) == -1 && e.code == KVP_EUSAGE &&
              e.msg[0] && !strstr(e.msg, "SEKRIT") && out[0] == '\0');
    CHECK("token: an inner blank refused (it would change the credential)",
          net_token_clean("hf_a b", out, sizeof out, &e) == -1);
    CHECK("redirect: https -> http refused, even with allow_http",
          net_check_redirect("https://h.co/a", "http://h.co/a", 1, &e) == -1 &&
              strstr(e.msg, "https to plain http"));
    CHECK("redirect: http -> https and https -> another https host allowed",
          net_check_redirect("http://h.co/a", "https://h.co/a", 0, &e) == 0 &&
              net_check_redirect("https://h.co/a", "https://cdn.x/y?sig=1", 0, &e) == 0);
    CHECK("redirect: file: and ftp: refused; http refused without allow_http",
          net_check_redirect("https://h.co/a", "file:///etc/passwd", 1, &e) == -1 &&
              net_check_redirect("https://h.co/a", "ftp://h.co/x", 1, &e) == -1 &&
              net_check_redirect("http://h.co/a", "http://h.co/b", 0, &e) == -1);
}

/* ---- against the server ---------------------------------------------------------- */

static void test_ranges(net_session *s)
{
    net_result r;
    kvp_error e;
    net_request q = req(hub("/data"));
    q.range = "100-199";
    int rc = fetch(s, &q, &r, &e);
    CHECK("range: 206 with Content-Range start, end and total; honoured; the bytes exact",
          rc == 0 && r.status == 206 && (r.flags & NET_RANGE_HONOURED) && r.h.has_range &&
              r.h.range_start == 100 && r.h.range_end == 199 && r.h.has_total &&
              r.h.total == SIZE && r.body_len == 100 && memcmp(r.body, data + 100, 100) == 0 &&
              !(r.flags & (NET_CAPPED | NET_TRUNCATED)));
    net_result_free(&r);

    q.range = "300000-";
    rc = fetch(s, &q, &r, &e);
    CHECK("range: past the end: 416 with the size from 'bytes */N', not honoured",
          rc == 0 && r.status == 416 && r.h.has_content_range && !r.h.has_range &&
              r.h.has_total && r.h.total == SIZE && !(r.flags & NET_RANGE_HONOURED));
    net_result_free(&r);

    q = req(hub("/ignore-range"));
    q.range = "0-999";
    rc = fetch(s, &q, &r, &e);
    CHECK("range ignored (200): detected, and cut at the range's end",
          rc == 0 && r.status == 200 && !(r.flags & NET_RANGE_HONOURED) &&
              (r.flags & NET_CAPPED) && r.body_len == 1000 && memcmp(r.body, data, 1000) == 0);
    net_result_free(&r);

    q.range = "0-";
    q.max_bytes = 5000;
    rc = fetch(s, &q, &r, &e);
    CHECK("range ignored with an open range: cut at the cap, not an error",
          rc == 0 && r.status == 200 && (r.flags & NET_CAPPED) && r.body_len == 5000 &&
              r.received == 5000);
    net_result_free(&r);

    q = req(hub("/wrong-start"));
    q.range = "100-199";
    rc = fetch(s, &q, &r, &e);
    CHECK("206 starting elsewhere than asked: not honoured",
          rc == 0 && r.status == 206 && r.h.has_range && r.h.range_start == 0 &&
              !(r.flags & NET_RANGE_HONOURED));
    net_result_free(&r);

    q = req(hub("/data"));
    q.range = "abc";
    long mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("a malformed range is refused before any request",
          rc == -1 && r.error == NET_EUSAGE && log_count(mark, "/data", NULL, NULL) == 0);
    net_result_free(&r);
}

static void test_failures(net_session *s)
{
    net_result r;
    kvp_error e;
    net_request q = req(hub("/truncated?X-Amz-Signature=SECRETSIG"));
    int rc = fetch(s, &q, &r, &e);
    CHECK("truncated body: a partial transfer with the counts, flagged truncated",
          rc == -1 && r.error == NET_EPARTIAL && (r.flags & NET_TRUNCATED) &&
              strstr(e.msg, "1000 of 200000 bytes"));
    CHECK("error messages name the URL without its (signed) query",
          strstr(e.msg, "/truncated") && !strstr(e.msg, "SECRETSIG") && !strchr(e.msg, '?'));
    net_result_free(&r);

    q = req(hub("/partial-206"));
    q.range = "0-999";
    rc = fetch(s, &q, &r, &e);
    CHECK("206 ending before its Content-Range's end (no length announced): partial",
          rc == -1 && r.error == NET_EPARTIAL && (r.flags & NET_TRUNCATED) &&
              strstr(e.msg, "500 of 1000"));
    net_result_free(&r);

    q = req(hub("/stall"));
    q.low_speed_limit = 1000;
    q.low_speed_time = 1;
    double t0 = now();
    rc = fetch(s, &q, &r, &e);
    double dt = now() - t0;
    CHECK("stall: under the low-speed limit for its time ends as a stall, in seconds",
          rc == -1 && r.error == NET_ESTALL && dt < 6.0 && strstr(e.msg, "stalled"));
    net_result_free(&r);

    q = req(hub("/stall"));
    q.low_speed_time = 60;
    q.timeout = 1;
    t0 = now();
    rc = fetch(s, &q, &r, &e);
    dt = now() - t0;
    CHECK("overall timeout (small JSON calls): a timeout, not a stall",
          rc == -1 && r.error == NET_ETIMEOUT && dt < 5.0);
    net_result_free(&r);

    /* a port nobody listens on: bind one, note it, close it */
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof a;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
    q = req(url);
    rc = fetch(s, &q, &r, &e);
    CHECK("connection refused: classified as a connect failure naming the URL",
          port && rc == -1 && r.error == NET_ECONNECT && strstr(e.msg, url) == e.msg);
    net_result_free(&r);

    q = req(hub("/data"));
    q.allow_http = 0;
    long mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("http refused unless the endpoint is configured as http; nothing sent",
          rc == -1 && r.error == NET_EUSAGE && log_count(mark, "/data", NULL, NULL) == 0);
    net_result_free(&r);

    q = req(hub("/data"));
    q.token = "hf_x\x1b[2J";
    mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("a token with a control character: refused, nothing sent",
          rc == -1 && r.error == NET_EUSAGE && log_count(mark, "/data", NULL, NULL) == 0 &&
              !strstr(e.msg, "hf_x"));
    net_result_free(&r);
}

static void test_redirects(net_session *s)
{
    net_result r;
    kvp_error e;
    net_request q = req(hub("/redirect-cross"));
    q.token = "hf_testtoken";
    q.range = "0-99";
    long mark = log_mark();
    int rc = fetch(s, &q, &r, &e);
    CHECK("cross-host 302 followed: the range is re-sent and honoured on the cdn",
          rc == 0 && r.status == 206 && r.redirects == 1 && (r.flags & NET_RANGE_HONOURED) &&
              r.body_len == 100 && memcmp(r.body, data, 100) == 0);
    CHECK("cross-host 302: Authorization reached the hub and not the cdn",
          log_count(mark, "\"hub\"", "/redirect-cross", "\"auth\": true") == 1 &&
              log_count(mark, "\"cdn\"", "/data", "\"auth\": false") == 1 &&
              log_count(mark, "\"cdn\"", "\"auth\": true", NULL) == 0);
    CHECK("followed redirect: the final headers do not carry the 302's X-Linked-*",
          !r.h.has_linked_size && !r.h.linked_etag[0] && !r.h.repo_commit[0]);
    net_result_free(&r);

    q = req(hub("/redirect-same"));
    q.token = "hf_testtoken";
    mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("same-host relative redirect: followed with the token on both hops",
          rc == 0 && r.status == 200 && r.body_len == SIZE &&
              log_count(mark, "\"hub\"", "\"auth\": true", NULL) == 2);
    net_result_free(&r);

    q = req(hub("/via-cdn"));
    q.token = "hf_testtoken";
    mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("hub -> cdn -> hub: the token, once dropped, is not sent again",
          rc == 0 && r.status == 200 && r.redirects == 2 &&
              log_count(mark, "/via-cdn", "\"auth\": true", NULL) == 1 &&
              log_count(mark, "/back-to-hub", "\"auth\": false", NULL) == 1 &&
              log_count(mark, "\"hub\"", "/data", "\"auth\": false") == 1);
    net_result_free(&r);

    q = req(hub("/data"));
    q.token = "hf_testtoken";
    q.token_origin = cdn("");
    mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("a token for another origin is not sent",
          rc == 0 && log_count(mark, "/data", "\"auth\": false", NULL) == 1);
    net_result_free(&r);

    q = req(hub("/hub-lfs"));
    q.token = "hf_testtoken";
    q.redirects = NET_REDIR_SAME_ORIGIN;
    mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("same-origin policy: a relative 307 followed, the Hub's cross-host 302 returned",
          rc == 0 && r.status == 302 && r.redirects == 1 && r.redirect_url &&
              strncmp(r.redirect_url, cdn("/data?"), strlen(cdn("/data?"))) == 0 &&
              log_count(mark, "\"cdn\"", NULL, NULL) == 0);
    CHECK("same-origin policy: X-Repo-Commit, X-Linked-Etag, X-Linked-Size read from the 302",
          strcmp(r.h.repo_commit, "0123456789abcdef0123456789abcdef01234567") == 0 &&
              strlen(r.h.linked_etag) == 66 && r.h.linked_etag[0] == '"' && r.h.has_linked_size &&
              r.h.linked_size == SIZE && r.h.location && strstr(r.h.location, "/data"));
    net_result_free(&r);

    q = req(hub("/redirect-same"));
    q.redirects = NET_REDIR_NONE;
    rc = fetch(s, &q, &r, &e);
    CHECK("no-follow policy: the 302 comes back with its absolute target",
          rc == 0 && r.status == 302 && r.redirects == 0 && r.redirect_url &&
              strcmp(r.redirect_url, hub("/data")) == 0 && r.h.location &&
              strcmp(r.h.location, "/data") == 0);
    net_result_free(&r);

    q = req(hub("/redirect-file"));
    rc = fetch(s, &q, &r, &e);
    CHECK("redirect to file:// refused as an unsupported protocol",
          rc == -1 && r.error == NET_EPROTOCOL && strstr(e.msg, "file"));
    net_result_free(&r);

    q = req(hub("/redirect-ftp"));
    rc = fetch(s, &q, &r, &e);
    CHECK("redirect to ftp:// refused as an unsupported protocol",
          rc == -1 && r.error == NET_EPROTOCOL);
    net_result_free(&r);

    q = req(hub("/loop"));
    mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("redirect loop: refused after the default 10 hops (11 requests)",
          rc == -1 && r.error == NET_EREDIRECTS && r.redirects == NET_MAX_REDIRECTS &&
              log_count(mark, "/loop", NULL, NULL) == NET_MAX_REDIRECTS + 1);
    net_result_free(&r);

    q.max_redirects = 2;
    mark = log_mark();
    rc = fetch(s, &q, &r, &e);
    CHECK("max_redirects 2: three requests, then refused",
          rc == -1 && r.error == NET_EREDIRECTS && log_count(mark, "/loop", NULL, NULL) == 3);
    net_result_free(&r);
}

static void test_bodies(net_session *s)
{
    net_result r;
    kvp_error e;
    sink_state st = {.stop_after = 5000};
    net_request q = req(cdn("/data"));
    q.range = "1000-";
    q.sink = sink;
    q.sink_ud = &st;
    int rc = fetch(s, &q, &r, &e);
    CHECK("early stop: the sink stops after N bytes; a success flagged stopped-early",
          rc == 0 && (r.flags & NET_STOPPED_EARLY) && st.got >= 5000 && st.got < SIZE - 1000 &&
              r.received == st.got && r.body_len == 0);
    CHECK("streaming: offsets are file offsets (the 206's start), bytes verified",
          st.calls > 0 && st.first_offset == 1000);
    net_result_free(&r);

    sink_state ab = {.abort = 1};
    q.sink_ud = &ab;
    rc = fetch(s, &q, &r, &e);
    CHECK("a sink that aborts: an error of its own kind",
          rc == -1 && r.error == NET_EABORTED && !(r.flags & NET_STOPPED_EARLY));
    net_result_free(&r);

    q = req(hub("/big"));
    q.max_bytes = 100000;
    rc = fetch(s, &q, &r, &e);
    CHECK("a whole document over the cap (announced length): too large, capped",
          rc == -1 && r.error == NET_ETOOBIG && (r.flags & NET_CAPPED) &&
              strstr(e.msg, "larger than 100000 bytes"));
    net_result_free(&r);

    q = req(hub("/big-chunked"));
    q.max_bytes = 100000;
    rc = fetch(s, &q, &r, &e);
    CHECK("a whole document over the cap (chunked, no length): the counter stops it",
          rc == -1 && r.error == NET_ETOOBIG && (r.flags & NET_CAPPED) && r.body_len == 100000);
    net_result_free(&r);

    q = req(hub("/json"));
    q.max_bytes = 100000;
    rc = fetch(s, &q, &r, &e);
    CHECK("a small JSON document: exact body, NUL-terminated, Content-Type",
          rc == 0 && r.status == 200 && r.body_len == 51 && r.body[r.body_len] == '\0' &&
              strstr((char *)r.body, "\"sha\"") && strcmp(r.h.content_type, "application/json") == 0);
    net_result_free(&r);

    q = req(hub("/headers"));
    rc = fetch(s, &q, &r, &e);
    CHECK("a 404 is a response, not a failure; its JSON body kept",
          rc == 0 && r.status == 404 && r.error == NET_OK && r.body &&
              strstr((char *)r.body, "Entry not found"));
    CHECK("headers: X-Error-Code, X-Error-Message (control made blank), X-Repo-Commit, ETag raw",
          strcmp(r.h.error_code, "EntryNotFound") == 0 &&
              strcmp(r.h.error_message, "Entry not found for config.json") == 0 &&
              strlen(r.h.repo_commit) == 40 && strncmp(r.h.etag, "W/\"fff", 6) == 0);
    CHECK("headers: Retry-After seconds, Content-Type, Link rel=next absolute",
          r.h.retry_after == 7 && strncmp(r.h.content_type, "application/json", 16) == 0 &&
              r.h.link_next && strcmp(r.h.link_next, hub("/api/tree?cursor=abc")) == 0);
    net_result_free(&r);

    q = req(hub("/link-relative"));
    rc = fetch(s, &q, &r, &e);
    CHECK("Link: rel=prev skipped, a relative rel=next resolved against the request",
          rc == 0 && r.h.link_next && strcmp(r.h.link_next, hub("/api/page2?c=1")) == 0);
    net_result_free(&r);

    q = req(hub("/interim"));
    rc = fetch(s, &q, &r, &e);
    CHECK("an interim 103's headers are dropped at the final status line",
          rc == 0 && r.status == 200 && !r.h.error_code[0] && !r.h.has_linked_size &&
              strlen(r.h.repo_commit) == 40 && r.body_len == 5);
    net_result_free(&r);

    q = req(hub("/data"));
    q.head = 1;
    rc = fetch(s, &q, &r, &e);
    CHECK("HEAD: status and Content-Length of the resource, no body, no size cap",
          rc == 0 && r.status == 200 && r.h.has_content_length && r.h.content_length == SIZE &&
              r.body_len == 0);
    net_result_free(&r);
}

static void test_reuse(net_session *s)
{
    net_result r;
    kvp_error e;
    long mark = log_mark();
    int ok = 1;
    const char *ranges[] = {"0-999", "1000-1999"};
    for (int i = 0; i < 2; i++) {
        net_request q = req(hub("/data"));
        q.range = ranges[i];
        ok &= fetch(s, &q, &r, &e) == 0 && (r.flags & NET_RANGE_HONOURED);
        net_result_free(&r);
        if (i == 0) { /* another origin in between must not evict the hub's handle */
            net_request c = req(cdn("/data"));
            c.range = "0-9";
            ok &= fetch(s, &c, &r, &e) == 0;
            net_result_free(&r);
        }
    }
    int p0 = log_port(mark, "\"hub\"", 0), p1 = log_port(mark, "\"hub\"", 1);
    CHECK("sequential ranges in a session reuse the origin's connection",
          ok && p0 > 0 && p0 == p1);
}

int main(void)
{
    alarm(120); /* the whole run, whatever happens */
    for (int i = 0; i < SIZE; i++)
        data[i] = (uint8_t)((i * 7 + (i >> 8)) & 0xff);
    fr_clear_env(NULL); /* a CI proxy must not see (or answer) any of this */

    test_helpers();

    if (fr_make_dir("http"))
        return 1;
    int up = start_server() == 0;
    CHECK("the loopback fixture server starts (127.0.0.1 and 127.0.0.2)", up);
    if (up) {
        kvp_error e;
        net_session *s = net_session_new(&e);
        CHECK("a session", s != NULL);
        if (s) {
            test_ranges(s);
            test_failures(s);
            test_redirects(s);
            test_bodies(s);
            test_reuse(s);
            net_session_free(s);
        }
        /* a NULL session works too (one made for the call) */
        net_result r;
        net_request q = req(hub("/json"));
        CHECK("a call without a session", net_fetch(NULL, &q, &r, &e) == 0 && r.status == 200);
        net_result_free(&r);
    }
    fr_cleanup();
    return check_failures != 0;
}
