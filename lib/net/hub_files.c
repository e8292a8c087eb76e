/* net/hub_files.c - a Hub repo's file list from one model-info request,
 * and llama.cpp's choice of GGUF in it (see hub_files.h).
 *
 * The model info is untrusted JSON: every field is checked for its type,
 * paths pass hub_valid_path before anyone may join them onto a directory,
 * hashes must be lower-case hex of the right length, and sizes outside
 * 0..HUB_FILE_MAX_SIZE become "unknown" rather than numbers to add up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "../kvp_int.h"
#include "hub_files.h"
#include "util.h"

/* ---- parsing the model info ------------------------------------------------- */

static const char *label_or_default(const char *label)
{
    return label && *label ? label : "the model info";
}

static void list_init(hub_file_list *l)
{
    memset(l, 0, sizeof *l);
}

void hub_file_list_free(hub_file_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->files[i].path);
    free(l->files);
    list_init(l);
}

/* Copies a JSON string that is len lower-case hex into out[len + 1], else "". */
static void take_hex(json_t *v, size_t len, char *out)
{
    const char *s = json_string_value(v);
    out[0] = 0;
    if (s && json_string_length(v) == len && nu_lower_hex(s, len))
        memcpy(out, s, len + 1);
}

/* A byte count the Hub may have sent: -1 unless an integer in range. */
static int64_t size_value(json_t *v)
{
    if (!json_is_integer(v))
        return -1;
    json_int_t x = json_integer_value(v);
    return x < 0 || x > HUB_FILE_MAX_SIZE ? -1 : (int64_t)x;
}

/* "size" and lfs.size should agree; when they do not, neither is trusted. */
static int64_t sibling_size(json_t *sib, json_t *lfs)
{
    int64_t plain = size_value(json_object_get(sib, "size"));
    int64_t big = size_value(json_object_get(lfs, "size"));
    if (plain < 0)
        return big;
    return big >= 0 && big != plain ? -1 : plain;
}

/* Fills f from one siblings[] entry; -1 when the entry has no usable path. */
static int sibling_take(json_t *sib, hub_file *f)
{
    json_t *name = json_object_get(sib, "rfilename");
    const char *path = json_string_value(name);
    if (!json_is_object(sib) || !path || json_string_length(name) != strlen(path) ||
        !hub_valid_path(path))
        return -1;
    json_t *lfs = json_object_get(sib, "lfs");
    if (!json_is_object(lfs))
        lfs = NULL;
    memset(f, 0, sizeof *f);
    if (!(f->path = strdup(path)))
        return -1;
    f->size = sibling_size(sib, lfs);
    f->lfs = lfs != NULL;
    take_hex(json_object_get(lfs, "sha256"), 64, f->sha256);
    take_hex(json_object_get(sib, "blobId"), 40, f->blob_id);
    return 0;
}

/* false and a missing field mean open; true is what older answers sent for
 * "manual"; an unknown value is kept visible rather than guessed. */
static void take_gated(json_t *v, char out[16])
{
    const char *s = json_string_value(v);
    if (!v || json_is_null(v) || json_is_false(v))
        snprintf(out, 16, "false");
    else if (json_is_true(v))
        snprintf(out, 16, "manual");
    else if (s && (!strcmp(s, "auto") || !strcmp(s, "manual") || !strcmp(s, "false")))
        snprintf(out, 16, "%s", s);
    else
        snprintf(out, 16, "unknown");
}

/* Sorting keeps the first of equal paths (by original position), so the
 * duplicate that is dropped does not depend on qsort. */
typedef struct ranked { hub_file f; size_t at; } ranked;

static int by_path(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    int c = strcmp(x->f.path, y->f.path);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

static int sort_and_dedupe(hub_file_list *l)
{
    if (l->n < 2)
        return 0;
    ranked *r = calloc(l->n, sizeof *r);
    if (!r)
        return -1;
    for (size_t i = 0; i < l->n; i++)
        r[i] = (ranked){l->files[i], i};
    qsort(r, l->n, sizeof *r, by_path);
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (kept && !strcmp(l->files[kept - 1].path, r[i].f.path)) {
            free(r[i].f.path);
            l->dropped++;
            continue;
        }
        l->files[kept++] = r[i].f;
    }
    l->n = kept;
    free(r);
    return 0;
}

static int take_siblings(json_t *sibs, hub_file_list *l, const char *label, kvp_error *err)
{
    size_t count = json_array_size(sibs);
    if (!(l->files = calloc(count ? count : 1, sizeof *l->files)))
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory for %zu files", label, count);
    for (size_t i = 0; i < count; i++) {
        if (sibling_take(json_array_get(sibs, i), &l->files[l->n]) == 0)
            l->n++;
        else
            l->dropped++;
    }
    if (sort_and_dedupe(l))
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory sorting %zu files", label, l->n);
    return 0;
}

int hub_parse_model_info(const char *text, size_t n, const char *label, hub_file_list *out,
                         kvp_error *err)
{
    list_init(out);
    label = label_or_default(label);
    if (!text)
        return kvp_fail(err, KVP_EINPUT, "%s: no model info", label);
    json_error_t je;
    json_t *root = json_loadb(text, n, 0, &je);
    if (!root)
        return kvp_fail(err, KVP_EINPUT, "%s: the model info is not JSON (line %d: %.200s)",
                        label, je.line, je.text);
    int rc = -1;
    const char *sha = json_string_value(json_object_get(root, "sha"));
    json_t *sibs = json_object_get(root, "siblings");
    if (!json_is_object(root))
        kvp_fail(err, KVP_EINPUT, "%s: the model info is not a JSON object", label);
    else if (!sha || !hub_valid_commit(sha))
        kvp_fail(err, KVP_EINPUT, "%s: the model info has no valid commit (\"sha\")", label);
    else if (!json_is_array(sibs))
        kvp_fail(err, KVP_EINPUT, "%s: the model info has no file list (\"siblings\")", label);
    else {
        memcpy(out->commit, sha, 41);
        take_gated(json_object_get(root, "gated"), out->gated);
        rc = take_siblings(sibs, out, label, err);
    }
    json_decref(root);
    if (rc)
        hub_file_list_free(out);
    return rc;
}

/* ---- the request ------------------------------------------------------------- */

static net_request info_request(const hub_settings *s, const char *url)
{
    net_request q = {0};
    q.url = url;
    q.max_bytes = HUB_INFO_MAX_BYTES;
    q.timeout = HUB_INFO_TIMEOUT;
    q.accept = "application/json";
    q.token = s->token;
    q.token_origin = s->endpoint; /* the token never leaves the endpoint's origin */
    q.allow_http = s->allow_http;
    /* a renamed repo answers 307 on the same host; an API answer from
     * another host is not the Hub's */
    q.redirects = NET_REDIR_SAME_ORIGIN;
    return q;
}

/* GET with one retry of a 429 or 5xx that asks for a short wait
 * (hub_fetch_retry, as hub.c's HEAD); on -1 err holds hub_fail_net's line
 * and r is freed. */
static int get_with_retry(const hub_settings *s, net_session *sess, const char *repo,
                          const char *url, net_result *r, kvp_error *err)
{
    kvp_error nerr;
    net_request q = info_request(s, url);
    if (hub_fetch_retry(sess, &q, r, &nerr)) {
        if (r->error == NET_ETOOBIG)
            kvp_fail(err, KVP_EINPUT, "%s: the Hub's file list is larger than %llu bytes; "
                     "refused", repo, (unsigned long long)HUB_INFO_MAX_BYTES);
        else
            hub_fail_net(s, repo, r, &nerr, err);
        net_result_free(r);
        return -1;
    }
    return 0;
}

/* One line for an answer that is not a 200 with a body. */
static int answer_fail(const hub_settings *s, const char *repo, const char *rev,
                       const net_result *r, kvp_error *err)
{
    char origin[600] = "another host";
    if (r->status >= 400)
        return hub_fail_status(s, repo, "the file list", rev, r, err);
    if (r->status >= 300 && r->status < 400 && r->redirect_url) {
        if (net_origin(r->redirect_url, origin, sizeof origin))
            snprintf(origin, sizeof origin, "another host");
        return kvp_fail(err, KVP_EINPUT, "%s: %s redirected the file list request to %s; an "
                        "API answer from another host is refused", repo, s->endpoint, origin);
    }
    return kvp_fail(err, KVP_EINPUT, "%s: unexpected HTTP %ld from %s for the file list at "
                    "revision %s", repo, r->status, s->endpoint, rev);
}

int hub_list_files(const hub_settings *s, net_session *sess, const char *repo,
                   const char *revision, hub_file_list *out, kvp_error *err)
{
    list_init(out);
    const char *rev = revision ? revision : "main";
    if (!hub_valid_repo_id(repo))
        return kvp_fail(err, KVP_EUSAGE, "%s: not a Hub repo id (org/name)", repo ? repo : "");
    if (!hub_valid_revision(rev))
        return kvp_fail(err, KVP_EUSAGE, "%s: bad revision name", repo);
    if (s->offline)
        return kvp_fail(err, KVP_EINPUT, "%s: HF_HUB_OFFLINE is set (or --offline), so the Hub "
                        "was not asked for the repo's files", repo);
    char erev[800], url[1600];
    int w;
    if (hub_pct(rev, 0, erev, sizeof erev) ||
        (w = snprintf(url, sizeof url, "%s/api/models/%s/revision/%s?blobs=true", s->endpoint,
                      repo, erev)) < 0 || (size_t)w >= sizeof url)
        return kvp_fail(err, KVP_EUSAGE, "%s: URL too long", repo);
    net_result r;
    if (get_with_retry(s, sess, repo, url, &r, err))
        return -1;
    int rc;
    if (r.status != 200 || !r.body)
        rc = answer_fail(s, repo, rev, &r, err);
    else
        rc = hub_parse_model_info((const char *)r.body, r.body_len, repo, out, err);
    net_result_free(&r);
    if (rc == 0)
        snprintf(out->revision, sizeof out->revision, "%s", rev);
    return rc;
}

/* ---- names --------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !memcmp(s + a - b, suffix, b);
}

static int is_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* The "-NNNNN-of-NNNNN" shape before ".gguf", numbers unchecked (llama.cpp
 * reads them the same way and then judges them); returns the prefix length,
 * or 0 when path does not have the shape. */
static size_t split_shape(const char *path, unsigned *no, unsigned *count)
{
    static const size_t tail = 15; /* "-00001-of-00002" */
    if (!ends_with(path, ".gguf"))
        return 0;
    size_t stem = strlen(path) - 5;
    if (stem < tail + 1)
        return 0;
    const char *t = path + stem - tail;
    if (t[0] != '-' || !is_digits(t + 1, 5) || strncasecmp(t + 6, "-of-", 4) ||
        !is_digits(t + 10, 5))
        return 0;
    *no = (unsigned)strtoul(t + 1, NULL, 10);
    *count = (unsigned)strtoul(t + 10, NULL, 10);
    return stem - tail;
}

int hub_split_name(const char *path, char *prefix, size_t n, unsigned *no, unsigned *count)
{
    unsigned a = 0, b = 0;
    size_t len = path ? split_shape(path, &a, &b) : 0;
    if (!len || a < 1 || a > b)
        return 0;
    if (prefix) {
        if (len >= n)
            return -1;
        memcpy(prefix, path, len);
        prefix[len] = 0;
    }
    if (no)
        *no = a;
    if (count)
        *count = b;
    return 1;
}

/* A GGUF that llama.cpp would load as the model: not a projector, an
 * importance matrix or a draft model (judged by the file name only, and
 * case-sensitively, as gguf_filename_is_model() does). */
static int is_model_gguf(const char *path)
{
    static const char *const not_models[] = {"mmproj", "imatrix", "mtp-", "eagle3-", "dflash-",
                                             "dspark-"};
    if (!ends_with(path, ".gguf"))
        return 0;
    const char *name = base_name(path);
    for (size_t i = 0; i < sizeof not_models / sizeof *not_models; i++)
        if (strstr(name, not_models[i]))
            return 0;
    return 1;
}

/* Only shard 1 stands for a split set; a split count of 0 or 1 is no split
 * (llama.cpp's rule, odd numbers included). */
static int may_be_chosen(const char *path)
{
    unsigned no = 0, count = 0;
    if (!is_model_gguf(path))
        return 0;
    return !split_shape(path, &no, &count) || count <= 1 || no == 1;
}

/* Where tag occurs in path followed by '.' or '-', case-insensitively; -1 if nowhere. */
static long tag_at(const char *path, const char *tag)
{
    size_t tl = strlen(tag);
    for (const char *p = path; *p; p++)
        if (!strncasecmp(p, tag, tl) && (p[tl] == '.' || p[tl] == '-'))
            return (long)(p - path);
    return -1;
}

static int is_word(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* llama.cpp's reading of a quant from a name: the last [-.]-separated run of
 * [A-Za-z0-9_] before ".gguf" and any split suffix, upper-cased. */
static void quant_of(const char *path, char *out, size_t n)
{
    unsigned no, count;
    size_t end = split_shape(path, &no, &count);
    out[0] = 0;
    if (!end) {
        if (!ends_with(path, ".gguf"))
            return;
        end = strlen(path) - 5;
    }
    size_t start = end;
    while (start > 0 && is_word(path[start - 1]))
        start--;
    if (start == end || start == 0 || (path[start - 1] != '-' && path[start - 1] != '.') ||
        end - start >= n)
        return;
    for (size_t i = start; i < end; i++)
        out[i - start] = (char)(path[i] >= 'a' && path[i] <= 'z' ? path[i] - 32 : path[i]);
    out[end - start] = 0;
}

/* ---- picking ------------------------------------------------------------------- */

/* The shards of the set whose shard 1 is files[first], in order, all present. */
static int collect_shards(const hub_file_list *l, const char *repo, size_t first,
                          hub_gguf_pick *out, kvp_error *err)
{
    char prefix[1100], other[1100];
    unsigned no, count, no2, count2;
    memset(out->shards, 0, sizeof out->shards);
    int k = hub_split_name(l->files[first].path, prefix, sizeof prefix, &no, &count);
    if (k <= 0 || count <= 1) {
        out->n = 1;
        out->shards[0] = &l->files[first];
        return 0;
    }
    if (count > HUB_MAX_SHARDS)
        return kvp_fail(err, KVP_EINPUT, "%s: %s is split into %u files; kvplan reads at most %d",
                        repo, l->files[first].path, count, HUB_MAX_SHARDS);
    for (size_t i = 0; i < l->n; i++)
        if (hub_split_name(l->files[i].path, other, sizeof other, &no2, &count2) == 1 &&
            count2 == count && !strcmp(other, prefix) && !out->shards[no2 - 1])
            out->shards[no2 - 1] = &l->files[i];
    for (unsigned s = 0; s < count; s++)
        if (!out->shards[s])
            return kvp_fail(err, KVP_EINPUT, "%s: %s is split into %u files, but shard %u "
                            "(%s-%05u-of-%05u.gguf) is not in the repo at commit %.12s", repo,
                            l->files[first].path, count, s + 1, prefix, s + 1, count,
                            l->commit);
    out->n = count;
    return 0;
}

/* Index of the first model GGUF that may be chosen and carries tag; -1 if none. */
static long first_with_tag(const hub_file_list *l, const char *tag, long *at)
{
    for (size_t i = 0; i < l->n; i++)
        if (may_be_chosen(l->files[i].path) && (*at = tag_at(l->files[i].path, tag)) >= 0)
            return (long)i;
    return -1;
}

static long first_model(const hub_file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (may_be_chosen(l->files[i].path))
            return (long)i;
    return -1;
}

static size_t count_ggufs(const hub_file_list *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += ends_with(l->files[i].path, ".gguf") ? 1 : 0;
    return n;
}

/* "Q4_K_M, Q8_0, BF16" for a message: the distinct quants of the models
 * that could be chosen, in path order, at most 10. */
static void list_quants(const hub_file_list *l, char *out, size_t n)
{
    char seen[10][48], q[48];
    size_t k = 0, more = 0, o = 0;
    out[0] = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!may_be_chosen(l->files[i].path))
            continue;
        quant_of(l->files[i].path, q, sizeof q);
        int dup = !q[0];
        for (size_t j = 0; j < k && !dup; j++)
            dup = !strcmp(seen[j], q);
        if (dup)
            continue;
        if (k == 10) {
            more++;
            continue;
        }
        memcpy(seen[k++], q, sizeof q);
        int w = snprintf(out + o, n - o, "%s%s", o ? ", " : "", q);
        if (w < 0 || (size_t)w >= n - o)
            return;
        o += (size_t)w;
    }
    if (more)
        snprintf(out + o, n - o, " and %zu more", more);
}

static int valid_tag(const char *tag)
{
    size_t n = strlen(tag);
    if (n == 0 || n > 47)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-", tag[i]))
            return 0;
    return 1;
}

static int no_gguf_fail(const hub_file_list *l, const char *repo, kvp_error *err)
{
    if (count_ggufs(l))
        return kvp_fail(err, KVP_EINPUT, "%s has no model GGUF files (only projectors, "
                        "importance matrices or draft models); without :QUANT kvplan reads its "
                        "config.json", repo);
    return kvp_fail(err, KVP_EINPUT, "%s has no GGUF files; without :QUANT kvplan reads its "
                    "config.json", repo);
}

/* Chooses files[i], matched at `at` for tag_len bytes (tag_len 0: no tag). */
static int chose(const hub_file_list *l, const char *repo, long i, long at, size_t tag_len,
                 const char *why, hub_gguf_pick *out, kvp_error *err)
{
    const char *path = l->files[i].path;
    if (tag_len)
        snprintf(out->quant, sizeof out->quant, "%.*s", (int)tag_len, path + at);
    else
        quant_of(path, out->quant, sizeof out->quant);
    snprintf(out->why, sizeof out->why, "%s", why);
    return collect_shards(l, repo, (size_t)i, out, err);
}

int hub_pick_gguf(const hub_file_list *l, const char *repo, const char *tag, hub_gguf_pick *out,
                  kvp_error *err)
{
    memset(out, 0, sizeof *out);
    repo = repo ? repo : "the repo";
    if (!l)
        return kvp_fail(err, KVP_EUSAGE, "%s: no file list", repo);
    if (tag && !valid_tag(tag))
        return kvp_fail(err, KVP_EUSAGE, "%s: '%.60s' is not a quant tag (letters, digits, _ . + -, "
                        "at most 47)", repo, tag);
    if (first_model(l) < 0)
        return no_gguf_fail(l, repo, err);
    long at = -1, i;
    char why[160], have[600];
    if (tag) {
        if ((i = first_with_tag(l, tag, &at)) >= 0) {
            snprintf(why, sizeof why, "%.*s (asked)", (int)strlen(tag), l->files[i].path + at);
            return chose(l, repo, i, at, strlen(tag), why, out, err);
        }
        list_quants(l, have, sizeof have);
        return kvp_fail(err, KVP_EINPUT, "%s has no GGUF file for :%s; %s%s", repo, tag,
                        have[0] ? "its quants: " : "its GGUF names carry no quant tag",
                        have);
    }
    if ((i = first_with_tag(l, "Q4_K_M", &at)) >= 0)
        return chose(l, repo, i, at, 6, "Q4_K_M (default)", out, err);
    if ((i = first_with_tag(l, "Q8_0", &at)) >= 0)
        return chose(l, repo, i, at, 4, "Q8_0 (no Q4_K_M)", out, err);
    return chose(l, repo, first_model(l), -1, 0, "the first GGUF (no Q4_K_M or Q8_0)", out, err);
}

int hub_pick_path(const hub_file_list *l, const char *repo, const char *path, hub_gguf_pick *out,
                  kvp_error *err)
{
    memset(out, 0, sizeof *out);
    repo = repo ? repo : "the repo";
    if (!l)
        return kvp_fail(err, KVP_EUSAGE, "%s: no file list", repo);
    if (!path || !hub_valid_path(path))
        return kvp_fail(err, KVP_EUSAGE, "%s: not a file path in a repo: '%.200s'", repo,
                        path ? path : "");
    long found = -1;
    for (size_t i = 0; i < l->n && found < 0; i++)
        if (!strcasecmp(l->files[i].path, path))
            found = (long)i;
    const char *rev = l->revision[0] ? l->revision : "main";
    if (found < 0)
        return kvp_fail(err, KVP_EINPUT, "%s: no file %s at revision %s%s%.12s%s", repo, path,
                        rev, l->commit[0] ? " (commit " : "", l->commit,
                        l->commit[0] ? ")" : "");
    const char *name = l->files[found].path;
    if (strlen(name) < 5 || strcasecmp(name + strlen(name) - 5, ".gguf"))
        return kvp_fail(err, KVP_EINPUT, "%s: %s is not a GGUF file (.gguf)", repo, name);
    char prefix[1100];
    unsigned no, count;
    if (hub_split_name(name, prefix, sizeof prefix, &no, &count) == 1 && count > 1 && no != 1)
        return kvp_fail(err, KVP_EINPUT, "%s: %s is shard %u of %u of a split GGUF; name shard 1 "
                        "(%s-00001-of-%05u.gguf)", repo, name, no, count, prefix, count);
    snprintf(out->why, sizeof out->why, "the named file");
    return collect_shards(l, repo, (size_t)found, out, err);
}
