/* net/hub.c - one Hub file into the huggingface_hub cache (see hub.h).
 *
 * The protocol is reference/remote-models.md 1.2 and 2.3: a HEAD on
 * /resolve/ (the same-origin 307 followed, a cross-origin 302 of an LFS file
 * returned) gives X-Repo-Commit and the etag; the file is then read pinned
 * to that commit into blobs/<etag>.<rand>.incomplete, checked (size, and the
 * git blob sha1 for 40-hex etags), linked into place without ever replacing
 * an existing blob, and snapshots/<commit>/<path> becomes a relative symlink
 * to it; refs/<revision> is written last, atomically. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../hfcache.h"
#include "../kvp_int.h"
#include "files.h"
#include "hub.h"
#include "util.h"

#define TOKEN_VARS "HF_TOKEN, HUGGING_FACE_HUB_TOKEN or $HF_HOME/token"

static int is_true(const char *v)
{
    return v && (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") ||
                 !strcasecmp(v, "true"));
}

/* ---- settings ---------------------------------------------------------------- */

static int take_token(hub_settings *s, const char *val, const char *src, kvp_error *err)
{
    if (net_token_clean(val, s->token, sizeof s->token, err))
        return kvp_fail(err, KVP_EUSAGE, "the token in %s holds control characters or is too "
                        "long; fix or unset it", src);
    if (s->token[0])
        snprintf(s->token_source, sizeof s->token_source, "%s", src);
    return 0;
}

int hub_settings_from_env(hub_settings *s, kvp_error *err)
{
    memset(s, 0, sizeof *s);
    const char *ep = getenv("HF_ENDPOINT");
    if (!ep || !*ep)
        ep = "https://huggingface.co";
    if (nu_fmt(s->endpoint, sizeof s->endpoint, "%s", ep))
        return kvp_fail(err, KVP_EUSAGE, "HF_ENDPOINT is too long");
    for (size_t l = strlen(s->endpoint); l && s->endpoint[l - 1] == '/'; l--)
        s->endpoint[l - 1] = 0;
    char origin[600];
    s->allow_http = !strncasecmp(s->endpoint, "http://", 7);
    if ((strncasecmp(s->endpoint, "https://", 8) && !s->allow_http) ||
        net_origin(s->endpoint, origin, sizeof origin) || strpbrk(s->endpoint, "?# \t\r\n"))
        return kvp_fail(err, KVP_EUSAGE, "HF_ENDPOINT: not an http(s) URL");
    if (kvp_hfcache_root(s->cache, sizeof s->cache))
        return kvp_fail(err, KVP_EUSAGE, "the Hugging Face cache path is too long");
    s->offline = is_true(getenv("HF_HUB_OFFLINE")) || is_true(getenv("TRANSFORMERS_OFFLINE"));
    if (is_true(getenv("HF_HUB_DISABLE_IMPLICIT_TOKEN")))
        return 0;
    const char *t;
    if ((t = getenv("HF_TOKEN")) && *t)
        return take_token(s, t, "HF_TOKEN", err);
    if ((t = getenv("HUGGING_FACE_HUB_TOKEN")) && *t)
        return take_token(s, t, "HUGGING_FACE_HUB_TOKEN", err);
    char p[4096], home[3000], buf[1024];
    if ((t = getenv("HF_TOKEN_PATH")) && *t)
        snprintf(p, sizeof p, "%s", t);
    else if (kvp_hf_home(home, sizeof home) || nu_fmt(p, sizeof p, "%s/token", home))
        return 0;
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    return take_token(s, buf, "the token file", err);
}

/* ---- validation --------------------------------------------------------------- */

int hub_valid_commit(const char *s) { return s && nu_lower_hex(s, 40); }

int hub_etag_normalise(const char *raw, char *out, size_t n)
{
    if (!strncmp(raw, "W/", 2))
        raw += 2;
    size_t l = strlen(raw);
    if (l >= 2 && raw[0] == '"' && raw[l - 1] == '"')
        raw++, l -= 2;
    if ((l != 40 && l != 64) || n <= l)
        return -1;
    memcpy(out, raw, l);
    out[l] = 0;
    return nu_lower_hex(out, l) ? 0 : -1;
}

int hub_valid_repo_id(const char *id)
{
    const char *slash = id ? strchr(id, '/') : NULL;
    if (!slash || slash == id || !slash[1] || strchr(slash + 1, '/') || strstr(id, "--") ||
        strstr(id, "..") || strlen(id) > 200)
        return 0;
    for (const char *c = id; *c; c++)
        if (c != slash && !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789_.-", *c))
            return 0;
    return 1;
}

/* Relative, '/'-separated, no empty, "." or ".." part, no '\\' or control
 * character: safe to append to a directory. */
int hub_valid_path(const char *p)
{
    if (!p || !*p || *p == '/' || strlen(p) > 1000)
        return 0;
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\')
            return 0;
    for (const char *part = p; part;) {
        const char *end = strchr(part, '/');
        size_t l = end ? (size_t)(end - part) : strlen(part);
        if (l == 0 || (l == 1 && part[0] == '.') || (l == 2 && !strncmp(part, "..", 2)))
            return 0;
        part = end ? end + 1 : NULL;
    }
    return 1;
}

int hub_valid_revision(const char *rev) { return hub_valid_path(rev) && strlen(rev) <= 255; }

/* ---- URLs and files --------------------------------------------------------- */

/* Percent-encodes s (huggingface_hub's quote(): '/' kept only with keep_slash). */
int hub_pct(const char *s, int keep_slash, char *out, size_t n)
{
    size_t o = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    strchr("-._~", c) || (keep_slash && c == '/');
        if (o + 4 > n)
            return -1;
        o += (size_t)(plain ? snprintf(out + o, n - o, "%c", c) : snprintf(out + o, n - o, "%%%02X", c));
    }
    out[o] = 0;
    return 0;
}

/* Writes text to path atomically (see files.h). */
static int write_atomic(const char *path, const char *text)
{
    return nf_write_atomic(path, text, strlen(text));
}

/* ---- git blob sha1 (the etag of a regular file) ------------------------------ */

typedef struct { uint32_t h[5]; uint64_t len; uint8_t buf[64]; } sha1_ctx;

static uint32_t rol(uint32_t x, int k) { return x << k | x >> (32 - k); }

static void sha1_block(sha1_ctx *c, const uint8_t *p)
{
    uint32_t w[80], a = c->h[0], b = c->h[1], d = c->h[3], e = c->h[4], cc = c->h[2];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    for (int i = 0; i < 80; i++) {
        uint32_t f = i < 20 ? ((b & cc) | (~b & d)) + 0x5a827999u
                   : i < 40 ? (b ^ cc ^ d) + 0x6ed9eba1u
                   : i < 60 ? ((b & cc) | (b & d) | (cc & d)) + 0x8f1bbcdcu
                            : (b ^ cc ^ d) + 0xca62c1d6u;
        uint32_t t = rol(a, 5) + f + e + w[i];
        e = d, d = cc, cc = rol(b, 30), b = a, a = t;
    }
    c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d, c->h[4] += e;
}

static void sha1_add(sha1_ctx *c, const uint8_t *p, size_t n)
{
    while (n--) {
        c->buf[c->len++ % 64] = *p++;
        if (c->len % 64 == 0)
            sha1_block(c, c->buf);
    }
}

static void sha1_hex(sha1_ctx *c, char out[41])
{
    uint64_t bits = c->len * 8;
    uint8_t pad = 0x80, z = 0, be[8];
    sha1_add(c, &pad, 1);
    while (c->len % 64 != 56)
        sha1_add(c, &z, 1);
    for (int i = 0; i < 8; i++)
        be[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha1_add(c, be, 8);
    for (int i = 0; i < 20; i++)
        snprintf(out + 2 * i, 3, "%02x", (unsigned)(c->h[i / 4] >> (24 - 8 * (i % 4))) & 0xff);
}

/* sha1("blob <size>\0" + content) of the file at path. */
static int git_sha1_file(const char *path, char out[41])
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f)
        return -1;
    if (fstat(fileno(f), &st)) {
        fclose(f);
        return -1;
    }
    sha1_ctx c = {{0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u}, 0, {0}};
    char head[32];
    int hl = snprintf(head, sizeof head, "blob %llu", (unsigned long long)st.st_size);
    sha1_add(&c, (const uint8_t *)head, (size_t)hl + 1);
    uint8_t buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        sha1_add(&c, buf, got);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return -1;
    sha1_hex(&c, out);
    return 0;
}

/* ---- the fetch ------------------------------------------------------------------ */

typedef struct fetch {
    const hub_settings *s;
    net_session *sess;
    const char *repo, *rev, *path;
    char dir[4400];      /* <cache>/models--org--name */
    char url[4096];
    hub_failure why;     /* what kind of failure, for hub_fetch_file_why */
} fetch;

int hub_fail_status(const hub_settings *s, const char *repo, const char *path, const char *rev,
                    const net_result *r, kvp_error *err)
{
    const char *code = r->h.error_code, *msg = r->h.error_message;
    if (!strcmp(code, "GatedRepo"))
        return kvp_fail(err, KVP_EINPUT, "%s is a gated model%s: request access on %s/%s and set "
                        "HF_TOKEN to a token of an account that was granted it", repo,
                        s->token[0] ? " and this token is not (yet) approved for it" : "",
                        s->endpoint, repo);
    if (!strcmp(code, "RepoNotFound"))
        return kvp_fail(err, KVP_EINPUT, "%s: no such model repository on %s (it may be private "
                        "or mistyped; a private repo needs a token, read from %s%s%s)", repo,
                        s->endpoint, TOKEN_VARS, s->token[0] ? "; sent the one from " : "",
                        s->token[0] ? s->token_source : "");
    if (!strcmp(code, "EntryNotFound"))
        return kvp_fail(err, KVP_EINPUT, "%s: no file %s at revision %s", repo, path, rev);
    if (!strcmp(code, "RevisionNotFound"))
        return kvp_fail(err, KVP_EINPUT, "%s: no revision %s (a branch, tag or commit)", repo,
                        rev);
    if (r->status == 429) {
        if (r->h.retry_after >= 0)
            return kvp_fail(err, KVP_EINPUT, "%s: rate limited by %s (HTTP 429); retry in %ld s",
                            repo, s->endpoint, r->h.retry_after);
        return kvp_fail(err, KVP_EINPUT, "%s: rate limited by %s (HTTP 429); retry in a few "
                        "minutes (the Hub counts requests over 5-minute windows)", repo,
                        s->endpoint);
    }
    if (r->status == 401 && s->token[0] && strstr(msg, "nvalid credentials"))
        return kvp_fail(err, KVP_EINPUT, "%s rejected the token from %s (invalid credentials): "
                        "fix or unset it", s->endpoint, s->token_source);
    if (strstr(msg, "is disabled"))
        return kvp_fail(err, KVP_EINPUT, "%s: access to this repository is disabled", repo);
    return kvp_fail(err, KVP_EINPUT, "%s: %s at revision %s: HTTP %ld from %s%s%s", repo,
                    path, rev, r->status, s->endpoint, msg[0] ? ": " : "", msg);
}

int hub_fail_net(const hub_settings *s, const char *repo, const net_result *r,
                 const kvp_error *nerr, kvp_error *err)
{
    switch (r->error) {
    case NET_ERESOLVE: case NET_EUNREACHABLE: case NET_ECONNECT: case NET_ETIMEOUT:
        return kvp_fail(err, KVP_EINPUT, "cannot reach %s (%s); cached models still work "
                        "offline: pass --offline or set HF_HUB_OFFLINE=1", s->endpoint,
                        nerr->msg);
    default:
        return kvp_fail(err, KVP_EINPUT, "%s: %s", repo, nerr->msg);
    }
}

static int fail_status(fetch *f, const net_result *r, kvp_error *err)
{
    f->why = !strcmp(r->h.error_code, "EntryNotFound") ? HUB_FAIL_NO_FILE : HUB_FAIL_ANSWER;
    return hub_fail_status(f->s, f->repo, f->path, f->rev, r, err);
}

static int fail_net(fetch *f, const net_result *r, const kvp_error *nerr, kvp_error *err)
{
    switch (r->error) {
    case NET_ERESOLVE: case NET_EUNREACHABLE: case NET_ECONNECT: case NET_ETIMEOUT:
        f->why = HUB_FAIL_UNREACHABLE;
        break;
    default:
        f->why = HUB_FAIL_TRANSFER;
    }
    return hub_fail_net(f->s, f->repo, r, nerr, err);
}

static net_request request(fetch *f, const char *url, int head)
{
    net_request q = {0};
    q.url = url;
    q.head = head;
    q.token = f->s->token;
    q.token_origin = f->s->endpoint; /* net_fetch compares origins: the path part is ignored */
    q.allow_http = f->s->allow_http;
    q.redirects = NET_REDIR_SAME_ORIGIN;
    q.timeout = head ? 30 : 0;
    return q;
}

int hub_fetch_retry(net_session *sess, const net_request *q, net_result *r, kvp_error *nerr)
{
    for (int attempt = 0;; attempt++) {
        memset(nerr, 0, sizeof *nerr);
        if (net_fetch(sess, q, r, nerr))
            return -1;
        long wait = r->h.retry_after < 0 ? 1 : r->h.retry_after;
        if (attempt || (r->status != 429 && r->status < 500) || wait > HUB_RETRY_MAX_WAIT)
            return 0;
        net_result_free(r);
        sleep((unsigned)wait);
    }
}

/* HEAD with one retry of a 429 or 5xx that asks for a short wait; on -1
 * r is already freed. */
static int head(fetch *f, net_result *r, kvp_error *err)
{
    kvp_error nerr;
    net_request q = request(f, f->url, 1);
    if (hub_fetch_retry(f->sess, &q, r, &nerr)) {
        fail_net(f, r, &nerr, err);
        net_result_free(r);
        return -1;
    }
    return 0;
}

typedef struct sink_ud { int fd; } sink_ud;

static int to_file(void *ud, const uint8_t *p, size_t n, uint64_t offset)
{
    (void)offset;
    int fd = ((sink_ud *)ud)->fd;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return NET_ABORT;
        p += w, n -= (size_t)w;
    }
    return NET_CONTINUE;
}

/* Downloads into blobs/<etag> (never replacing an existing blob). */
static int get_blob(fetch *f, const char *url, const char *etag, int64_t size, uint64_t cap,
                    const char *blob, kvp_error *err)
{
    char tmp[4600];
    int fd = -1;
    for (int i = 0; i < 16 && fd < 0; i++) {
        if (nu_fmt(tmp, sizeof tmp, "%s.%08x.incomplete", blob, nf_rand32()))
            break;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    }
    if (fd < 0)
        return kvp_fail(err, KVP_EINPUT, "%s: cannot create a file in %s/blobs", f->repo, f->dir);
    sink_ud ud = {fd};
    net_request q = request(f, url, 0);
    q.max_bytes = cap;
    q.sink = to_file;
    q.sink_ud = &ud;
    q.redirects = NET_REDIR_FOLLOW; /* the cdn's own hops; the token stays on its origin */
    net_result r;
    kvp_error nerr = {0};
    int rc = net_fetch(f->sess, &q, &r, &nerr);
    int bad = close(fd) != 0;
    char got[41];
    char e2[72] = "";
    if (rc)
        rc = fail_net(f, &r, &nerr, err);
    else if (r.status != 200)
        rc = r.status >= 400 ? fail_status(f, &r, err)
                             : kvp_fail(err, KVP_EINPUT, "%s: %s: HTTP %ld", f->repo, f->path, r.status);
    else if (r.flags & NET_CAPPED)
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s is larger than %llu bytes; not downloaded",
                      f->repo, f->path, (unsigned long long)cap);
    else if (bad || (r.flags & NET_TRUNCATED) || (size >= 0 && r.received != (uint64_t)size))
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s: incomplete download (%llu bytes)", f->repo,
                      f->path, (unsigned long long)r.received);
    else if (r.h.etag[0] && hub_etag_normalise(r.h.etag, e2, sizeof e2) == 0 &&
             strlen(etag) == 40 && strcmp(e2, etag))
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s changed on the server during the download",
                      f->repo, f->path);
    else if (strlen(etag) == 40 && (git_sha1_file(tmp, got) || strcmp(got, etag)))
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s: content does not match its etag %s", f->repo,
                      f->path, etag);
    net_result_free(&r);
    /* link(2) fails on an existing name: a blob already there is kept */
    if (rc == 0 && link(tmp, blob) && errno != EEXIST)
        rc = kvp_fail(err, KVP_EINPUT, "%s: cannot write %s", f->repo, blob);
    unlink(tmp);
    return rc;
}

/* snapshots/<commit>/<path> -> ../../[../...]blobs/<etag>, replaced atomically if different. */
static int link_snapshot(fetch *f, const char *snap, const char *etag, kvp_error *err)
{
    char target[4096] = "../../", cur[4096], tmp[4600];
    for (const char *c = f->path; *c; c++)
        if (*c == '/' && strlen(target) + 3 < sizeof target)
            strcat(target, "../");
    strcat(target, "blobs/");
    strcat(target, etag);
    ssize_t l = readlink(snap, cur, sizeof cur - 1);
    if (l >= 0 && (cur[l] = 0, !strcmp(cur, target)))
        return 0;
    if (nf_mkdirs_for(snap) || nu_fmt(tmp, sizeof tmp, "%s.%08x.tmp", snap, nf_rand32()) ||
        symlink(target, tmp) || rename(tmp, snap)) {
        unlink(tmp);
        return kvp_fail(err, KVP_EINPUT, "%s: cannot create %s", f->repo, snap);
    }
    return 0;
}

static int from_cache(fetch *f, char *out, size_t n, kvp_error *err)
{
    char p[4600], commit[64] = "";
    if (hub_valid_commit(f->rev))
        snprintf(commit, sizeof commit, "%s", f->rev);
    else if (nu_fmt(p, sizeof p, "%s/refs/%s", f->dir, f->rev) == 0) {
        FILE *r = fopen(p, "r");
        if (r) {
            if (fscanf(r, "%63s", commit) != 1 || !hub_valid_commit(commit))
                commit[0] = 0;
            fclose(r);
        }
    }
    struct stat st;
    if (commit[0] && nu_fmt(out, n, "%s/snapshots/%s/%s", f->dir, commit, f->path) == 0 &&
        stat(out, &st) == 0 && S_ISREG(st.st_mode))
        return 0;
    return kvp_fail(err, KVP_EINPUT, "%s: %s at revision %s is not in the Hugging Face cache "
                    "(%s) and HF_HUB_OFFLINE is set, so nothing was downloaded", f->repo,
                    f->path, f->rev, f->s->cache);
}

/* The metadata half of a download: the HEAD on /resolve/ (section 1.2). */
static int resolve(fetch *f, hub_resolved *o, kvp_error *err)
{
    char erev[800], epath[3100];
    memset(o, 0, sizeof *o);
    o->size = -1;
    if (hub_pct(f->rev, 0, erev, sizeof erev) || hub_pct(f->path, 1, epath, sizeof epath) ||
        nu_fmt(f->url, sizeof f->url, "%s/%s/resolve/%s/%s", f->s->endpoint, f->repo, erev, epath))
        return kvp_fail(err, KVP_EUSAGE, "%s: URL too long", f->repo);
    net_result r;
    if (head(f, &r, err))
        return -1;
    int rc = 0;
    char snap[4600];
    o->lfs = r.status >= 300 && r.status < 400 && r.redirect_url;
    if (r.status >= 400) {
        rc = fail_status(f, &r, err);
        if (!strcmp(r.h.error_code, "EntryNotFound") && hub_valid_commit(r.h.repo_commit) &&
            nu_fmt(snap, sizeof snap, "%s/.no_exist/%s/%s", f->dir, r.h.repo_commit, f->path) == 0)
            write_atomic(snap, ""); /* huggingface_hub's "known absent" marker, best effort */
    } else if (r.status != 200 && !o->lfs)
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s: unexpected HTTP %ld from %s", f->repo, f->path,
                      r.status, f->s->endpoint);
    else if (!hub_valid_commit(r.h.repo_commit))
        rc = kvp_fail(err, KVP_EINPUT, "%s: the answer from %s has no valid X-Repo-Commit; it "
                      "does not seem to be the Hugging Face Hub (a proxy or captive portal?)",
                      f->repo, f->s->endpoint);
    else if (hub_etag_normalise(r.h.linked_etag[0] ? r.h.linked_etag : r.h.etag, o->etag,
                                sizeof o->etag))
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s: the Hub sent no usable ETag", f->repo, f->path);
    else {
        snprintf(o->commit, sizeof o->commit, "%s", r.h.repo_commit);
        if (strlen(o->etag) == 64)
            snprintf(o->sha256, sizeof o->sha256, "%s", o->etag);
        if (r.h.has_linked_size)
            o->size = (int64_t)r.h.linked_size;
        else if (!o->lfs && r.h.has_content_length)
            o->size = (int64_t)r.h.content_length;
        if (o->lfs)
            rc = nu_fmt(o->url, sizeof o->url, "%s", r.redirect_url);
        else /* pinned to the commit, so the file matches the metadata */
            rc = nu_fmt(o->url, sizeof o->url, "%s/%s/resolve/%s/%s", f->s->endpoint, f->repo,
                        o->commit, epath);
        if (rc)
            rc = kvp_fail(err, KVP_EUSAGE, "%s: URL too long", f->repo);
    }
    net_result_free(&r);
    return rc;
}

static int start(fetch *f, const hub_settings *s, net_session *sess, const char *repo_id,
                 const char *revision, const char *path, kvp_error *err)
{
    *f = (fetch){s, sess, repo_id, revision ? revision : "main", path, "", "", HUB_FAIL_OTHER};
    if (!hub_valid_repo_id(repo_id))
        return kvp_fail(err, KVP_EUSAGE, "%s: not a Hub repo id (org/name)", repo_id ? repo_id : "");
    if (!hub_valid_path(path) || !hub_valid_revision(f->rev))
        return kvp_fail(err, KVP_EUSAGE, "%s: bad file path or revision", repo_id);
    const char *slash = strchr(repo_id, '/');
    if (nu_fmt(f->dir, sizeof f->dir, "%s/models--%.*s--%s", s->cache,
               (int)(slash - repo_id), repo_id, slash + 1))
        return kvp_fail(err, KVP_EUSAGE, "%s: cache path too long", repo_id);
    return 0;
}

int hub_resolve(const hub_settings *s, net_session *sess, const char *repo_id,
                const char *revision, const char *path, hub_resolved *out, kvp_error *err)
{
    fetch f;
    if (start(&f, s, sess, repo_id, revision, path, err))
        return -1;
    if (s->offline)
        return kvp_fail(err, KVP_EINPUT, "%s: %s: HF_HUB_OFFLINE is set (or --offline), so the "
                        "Hub was not asked", repo_id, path);
    return resolve(&f, out, err);
}

/* The download half (after start()): the cache when offline, else resolve
 * and fetch into blobs/ with a snapshot link; f->why says how it failed. */
static int fetch_file(fetch *fp, uint64_t max_bytes, char *out, size_t n, kvp_error *err)
{
    const hub_settings *s = fp->s;
    const char *repo_id = fp->repo, *path = fp->path;
    if (s->offline)
        return from_cache(fp, out, n, err);
    if (!max_bytes)
        max_bytes = NET_DEFAULT_MAX_BYTES;
    hub_resolved o;
    if (resolve(fp, &o, err))
        return -1;
    if (o.size >= 0 && (uint64_t)o.size > max_bytes)
        return kvp_fail(err, KVP_EINPUT, "%s: %s is %lld bytes, more than the %llu allowed; not "
                        "downloaded", repo_id, path, (long long)o.size,
                        (unsigned long long)max_bytes);
    char blob[4600], snap[4600];
    struct stat st;
    if (nu_fmt(blob, sizeof blob, "%s/blobs/%s", fp->dir, o.etag) ||
        nu_fmt(snap, sizeof snap, "%s/snapshots/%s/%s", fp->dir, o.commit, path) ||
        nu_fmt(out, n, "%s", snap))
        return kvp_fail(err, KVP_EUSAGE, "%s: cache path too long", repo_id);
    if (stat(snap, &st) != 0 || !S_ISREG(st.st_mode)) {
        char tag[4600];
        if (nu_fmt(tag, sizeof tag, "%s/CACHEDIR.TAG", s->cache) == 0 && access(tag, F_OK))
            write_atomic(tag, "Signature: 8a477f597d28d172789f06886806bc55\n"
                              "# This file is a cache directory tag created by kvplan.\n");
        if (nf_mkdirs_for(blob))
            return kvp_fail(err, KVP_EINPUT, "%s: cannot create %s/blobs", repo_id, fp->dir);
        if (access(blob, F_OK) && get_blob(fp, o.url, o.etag, o.size, max_bytes, blob, err))
            return -1;
        if (link_snapshot(fp, snap, o.etag, err))
            return -1;
    }
    char ref[4600];
    if (!hub_valid_commit(fp->rev) && nu_fmt(ref, sizeof ref, "%s/refs/%s", fp->dir, fp->rev) == 0)
        write_atomic(ref, o.commit); /* best effort, as huggingface_hub */
    return 0;
}

int hub_fetch_file_with(const hub_settings *s, net_session *sess, const char *repo_id,
                        const char *revision, const char *path, uint64_t max_bytes, char *out,
                        size_t n, kvp_error *err)
{
    hub_failure why;
    return hub_fetch_file_why(s, sess, repo_id, revision, path, max_bytes, out, n, &why, err);
}

int hub_fetch_file_why(const hub_settings *s, net_session *sess, const char *repo_id,
                       const char *revision, const char *path, uint64_t max_bytes, char *out,
                       size_t n, hub_failure *why, kvp_error *err)
{
    fetch f;
    *why = HUB_FAIL_OTHER;
    if (start(&f, s, sess, repo_id, revision, path, err))
        return -1;
    int rc = fetch_file(&f, max_bytes, out, n, err);
    *why = rc ? f.why : HUB_FAIL_NONE;
    return rc;
}

int hub_fetch_file(const char *repo_id, const char *revision, const char *path,
                   uint64_t max_bytes, char *out, size_t n, kvp_error *err)
{
    hub_settings s;
    if (hub_settings_from_env(&s, err))
        return -1;
    return hub_fetch_file_with(&s, NULL, repo_id, revision, path, max_bytes, out, n, err);
}
