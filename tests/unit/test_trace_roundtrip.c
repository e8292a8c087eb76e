/* test_trace_roundtrip.c - kvplan's JSONL writer against its reader: every
 * workload written and read back is the same workload (requests, arrivals,
 * chunks, hashes, conversations) and so replays to the same numbers, at
 * block sizes 16 and 512; plus the writer's refusals and the Azure reader's
 * exact arrivals, which the CLI cases cannot see. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "kvplan.h"

static char dir[512];

static int load(const char *path, const char *format, uint32_t bs, kvp_workload *w)
{
    kvp_error e;
    if (!strncmp(path, "synthetic:", 10))
        return kvp_workload_synthetic(path + 10, bs, w, &e) ? (printf("# %s\n", e.msg), -1) : 0;
    return kvp_workload_load(path, format, bs, w, &e) ? (printf("# %s\n", e.msg), -1) : 0;
}

/* the same content chunk by chunk: the builder keeps no empty chunk (a
 * generator's suffix of 0 tokens), so neither side has one to skip */
static int same_chunks(const kvp_sim_chunk *a, size_t na, const kvp_sim_chunk *b, size_t nb)
{
    return na == nb && (na == 0 || !memcmp(a, b, na * sizeof *a));
}

/* the first difference, said in `why` */
static int same_workload(const kvp_workload *a, const kvp_workload *b, char *why, size_t n)
{
    if (a->block_size != b->block_size || a->n_req != b->n_req || a->n_convs != b->n_convs ||
        a->hash_output != b->hash_output || a->n_hashes != b->n_hashes)
        return snprintf(why, n, "shape: %zu/%zu requests, %zu/%zu hashes, %zu/%zu chunks, "
                        "%u/%u convs", a->n_req, b->n_req, a->n_hashes, b->n_hashes,
                        a->n_chunks, b->n_chunks, a->n_convs, b->n_convs), 0;
    for (size_t i = 0; i < a->n_req; i++) {
        const kvp_sim_request *x = &a->req[i], *y = &b->req[i];
        if (x->timestamp != y->timestamp || x->prompt_tokens != y->prompt_tokens ||
            x->output_tokens != y->output_tokens || x->conv != y->conv || x->pass != y->pass ||
            x->n_hashes != y->n_hashes)
            return snprintf(why, n, "request %zu: %.17g/%.17g ms, conv %u/%u", i, x->timestamp,
                            y->timestamp, x->conv, y->conv), 0;
        if (!same_chunks(a->chunks + x->chunk_off, x->n_chunks, b->chunks + y->chunk_off,
                         y->n_chunks))
            return snprintf(why, n, "request %zu: chunks differ", i), 0;
        if (x->n_hashes && memcmp(a->hashes + x->hash_off, b->hashes + y->hash_off,
                                  x->n_hashes * sizeof *a->hashes))
            return snprintf(why, n, "request %zu: hashes differ", i), 0;
    }
    return 1;
}

/* the sequential replay at several capacities and a concurrent one at the
 * trace's arrivals (tokens only), each the same for both */
static int same_sim(const kvp_workload *a, const kvp_workload *b)
{
    static const uint64_t caps[] = {8, 64, 1000, 1000000};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        kvp_sim_config c;
        kvp_sim_result x, y;
        kvp_error e;
        kvp_sim_defaults(&c);
        c.num_blocks = caps[i];
        c.block_size = a->block_size;
        int ra = kvp_sim_run(a, &c, &x, &e), rb = kvp_sim_run(b, &c, &y, &e);
        if (ra != rb || (!ra && (x.requests != y.requests || x.oversized != y.oversized ||
                                 x.prompt_tokens != y.prompt_tokens ||
                                 x.hit_tokens != y.hit_tokens || x.evictions != y.evictions ||
                                 x.peak_blocks != y.peak_blocks)))
            return 0;
    }
    kvp_serve_config s;
    kvp_serve_result x, y;
    kvp_error e;
    kvp_serve_defaults(&s);
    s.num_blocks = 2000;
    s.block_size = a->block_size;
    s.arrivals = KVP_ARRIVE_TRACE;
    int ra = kvp_serve_run(a, &s, &x, &e), rb = kvp_serve_run(b, &s, &y, &e);
    return ra == rb && (ra || (x.requests == y.requests && x.rejected == y.rejected &&
                               x.hit_tokens == y.hit_tokens && x.steps == y.steps &&
                               x.preemptions == y.preemptions && x.max_running == y.max_running &&
                               x.peak_blocks == y.peak_blocks && x.n_passes == y.n_passes));
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    *n = 0;
    if (!f)
        return NULL;
    size_t cap = 0, got;
    do {
        char *q = realloc(buf, cap + 65536);
        if (!q)
            break;
        buf = q;
        got = fread(buf + cap, 1, 65536, f);
        cap += got;
    } while (got == 65536);
    fclose(f);
    *n = cap;
    return buf;
}

static int same_file(const char *p, const char *q)
{
    size_t n, m;
    char *a = slurp(p, &n), *b = slurp(q, &m);
    int same = a && b && n == m && !memcmp(a, b, n);
    free(a);
    free(b);
    return same;
}

/* load at bs, write, read back (format detected): the same workload and the
 * same replay; written again, the same bytes.  chunk_stable: the source's
 * chunks do not depend on the block size, so the written file also replays
 * at the other size exactly as the source does. */
static void roundtrip(const char *name, const char *path, const char *format, uint32_t bs,
                      int chunk_stable)
{
    char out[700], again[700], t[200], why[256] = "";
    kvp_workload a, b, c;
    kvp_error e;
    snprintf(out, sizeof out, "%s/%s-%u.jsonl", dir, name, bs);
    snprintf(again, sizeof again, "%s/%s-%u-again.jsonl", dir, name, bs);
    snprintf(t, sizeof t, "%s at %u: loads", name, bs);
    CHECK(t, load(path, format, bs, &a) == 0);
    if (a.n_req == 0)
        return;
    snprintf(t, sizeof t, "%s at %u: written", name, bs);
    int wrote = kvp_workload_write(&a, out, 0, &e) == 0;
    CHECK(t, wrote);
    if (!wrote) {
        printf("# %s\n", e.msg);
        kvp_workload_free(&a);
        return;
    }
    snprintf(t, sizeof t, "%s at %u: read back, detected as kvplan", name, bs);
    CHECK(t, load(out, NULL, bs, &b) == 0 && !strcmp(b.format, "kvplan"));
    snprintf(t, sizeof t, "%s at %u: the same requests, chunks and hashes", name, bs);
    int same = same_workload(&a, &b, why, sizeof why);
    CHECK(t, same);
    if (!same)
        printf("# %s\n", why);
    snprintf(t, sizeof t, "%s at %u: the same replay, sequential and concurrent", name, bs);
    CHECK(t, same_sim(&a, &b));
    snprintf(t, sizeof t, "%s at %u: written again, the same bytes", name, bs);
    CHECK(t, kvp_workload_write(&b, again, 0, &e) == 0 && same_file(out, again));
    if (chunk_stable) {
        uint32_t other = bs == 16 ? 512 : 16;
        kvp_workload x, y;
        snprintf(t, sizeof t, "%s written at %u, replayed at %u: the source's hashes", name, bs,
                 other);
        CHECK(t, load(path, format, other, &x) == 0 && load(out, "kvplan", other, &y) == 0 &&
                     same_workload(&x, &y, why, sizeof why) && same_sim(&x, &y));
        kvp_workload_free(&x);
        kvp_workload_free(&y);
    }
    /* an off-grid arrival comes back to within half a nanosecond, then exact */
    kvp_workload_free(&b);
    if (a.n_req > 1) {
        a.req[a.n_req - 1].timestamp += 1.0 / 3.0;
        double want = a.req[a.n_req - 1].timestamp;
        snprintf(t, sizeof t, "%s at %u: an arrival off the nanosecond grid, to within 0.5 ns",
                 name, bs);
        CHECK(t, kvp_workload_write(&a, out, 1, &e) == 0 && load(out, "kvplan", bs, &c) == 0 &&
                     c.req[c.n_req - 1].timestamp - want < 0.5e-6 &&
                     want - c.req[c.n_req - 1].timestamp < 0.5e-6);
        snprintf(t, sizeof t, "%s at %u: ... and exact from there on", name, bs);
        CHECK(t, kvp_workload_write(&c, again, 1, &e) == 0 && load(again, "kvplan", bs, &b) == 0
                     && b.req[b.n_req - 1].timestamp == c.req[c.n_req - 1].timestamp);
        kvp_workload_free(&b);
        kvp_workload_free(&c);
    }
    kvp_workload_free(&a);
    unlink(out);
    unlink(again);
}

static void refusals(void)
{
    char out[700];
    kvp_workload w;
    kvp_error e;
    struct stat st;
    snprintf(out, sizeof out, "%s/refusals.jsonl", dir);
    if (load("tests/data/traces/kvplan/chunks.jsonl", "kvplan", 16, &w)) {
        CHECK("refusals: chunks.jsonl loads", 0);
        return;
    }
    CHECK("write: a new file", kvp_workload_write(&w, out, 0, &e) == 0);
    off_t size = stat(out, &st) == 0 ? st.st_size : -1;
    CHECK("write: an existing file is refused without force",
          kvp_workload_write(&w, out, 0, &e) != 0 && strstr(e.msg, "exists (--force") &&
              stat(out, &st) == 0 && st.st_size == size);
    CHECK("write: ... and replaced with force", kvp_workload_write(&w, out, 1, &e) == 0 &&
                                                    stat(out, &st) == 0 && st.st_size == size);
    unlink(out);
    /* a device is never removed on failure: /dev/full fails at the flush */
    if (access("/dev/full", W_OK) == 0)
        CHECK("write: a failed write is an error (/dev/full), the device kept",
              kvp_workload_write(&w, "/dev/full", 1, &e) != 0 && strstr(e.msg, "write failed") &&
                  access("/dev/full", F_OK) == 0);
    /* conversations written as numbers keep their numbers, in any order */
    w.req[0].conv = 3, w.req[1].conv = 1, w.req[2].conv = 3, w.n_convs = 3;
    kvp_workload r;
    char why[256];
    CHECK("conversations 3, 1, 3 come back as 3, 1, 3",
          kvp_workload_write(&w, out, 0, &e) == 0 && load(out, NULL, 16, &r) == 0 &&
              same_workload(&w, &r, why, sizeof why));
    kvp_workload_free(&r);
    unlink(out);
    /* a hand-built workload has hashes but no content */
    free(w.chunks);
    w.chunks = NULL;
    w.n_chunks = 0;
    for (size_t i = 0; i < w.n_req; i++)
        w.req[i].n_chunks = 0, w.req[i].chunk_off = 0;
    CHECK("write: a workload without chunks is refused, no file made",
          kvp_workload_write(&w, out, 0, &e) != 0 && strstr(e.msg, "has no chunks") &&
              access(out, F_OK) != 0);
    kvp_workload_free(&w);
}

/* what the Azure reader makes of arrivals: ms from the earliest row, exact */
static void azure_arrivals(void)
{
    kvp_workload w;
    if (load("tests/data/traces/azure/bom-unordered.csv", NULL, 16, &w)) {
        CHECK("azure: bom-unordered.csv loads", 0);
        return;
    }
    /* rows 18:17:05.5 (100), 04.25 (200), 06.0 (0: skipped), 07.0000001 (300) */
    CHECK("azure: detected through a byte-order mark", !strcmp(w.format, "azure"));
    CHECK("azure: sorted by arrival, from the earliest row",
          w.n_req == 3 && w.req[0].prompt_tokens == 200 && w.req[0].timestamp == 0 &&
              w.req[1].prompt_tokens == 100 && w.req[1].timestamp == 1250 &&
              w.req[2].prompt_tokens == 300 && w.req[2].timestamp == 2750.0001);
    CHECK("azure: one chunk of its own per prompt, no conversations",
          w.n_chunks == 3 && w.chunks[0].id != w.chunks[1].id && w.chunks[1].id != w.chunks[2].id
              && w.n_convs == 0 && w.req[2].output_tokens == 0);
    CHECK("azure: the skipped row is counted in the note",
          strstr(w.note, "1 row of 0 context tokens skipped (the first at line 4)") != NULL);
    kvp_workload_free(&w);
    CHECK("azure: across midnight and February 29th, 200 ms",
          load("tests/data/traces/azure/midnight-leap.csv", "azure", 16, &w) == 0 &&
              w.n_req == 2 && w.req[1].timestamp == 200);
    kvp_workload_free(&w);
    CHECK("azure: the code excerpt spans 225.1060490 s",
          load("tests/data/traces/azure/azure-code-400.csv", NULL, 16, &w) == 0 &&
              w.n_req == 400 && w.req[399].timestamp == 225106.049 &&
              strstr(w.note, "no prompt sharing") != NULL);
    kvp_workload_free(&w);
}

/* token ids cut at the replay's block size; conversations by appearance */
static void tokens_form(void)
{
    kvp_workload w;
    if (load("tests/data/traces/kvplan/tokens.jsonl", NULL, 16, &w)) {
        CHECK("tokens.jsonl loads", 0);
        return;
    }
    const kvp_sim_chunk *a = w.chunks + w.req[0].chunk_off, *b = w.chunks + w.req[1].chunk_off,
                        *c = w.chunks + w.req[2].chunk_off;
    CHECK("tokens: blocks of 16 as chunks (4, 5, 5)",
          w.req[0].n_chunks == 4 && w.req[1].n_chunks == 5 && w.req[2].n_chunks == 5 &&
              c[4].tokens == 1);
    CHECK("tokens: equal blocks, equal chunks; the first different block differs",
          !memcmp(a, b, 3 * sizeof *a) && a[3].id != b[3].id && !memcmp(a, c, 4 * sizeof *a));
    CHECK("tokens: \"alice\", \"bob\", \"alice\" are conversations 1, 2, 1",
          w.req[0].conv == 1 && w.req[1].conv == 2 && w.req[2].conv == 1 && w.n_convs == 2);
    CHECK("tokens: arrivals in ms", w.req[1].timestamp == 250 && w.req[2].timestamp == 1500);
    kvp_workload_free(&w);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/kvplan-roundtrip-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK("mkdtemp", 0);
        return 1;
    }
    static const struct {
        const char *name, *path, *format;
        int chunk_stable;
    } src[] = {
        {"mooncake", "tests/data/sim/mooncake-conversation-50.jsonl", "mooncake", 1},
        {"azure-code", "tests/data/traces/azure/azure-code-400.csv", "azure", 1},
        {"azure-conv", "tests/data/traces/azure/azure-conv-400.csv", NULL, 1},
        {"azure-unordered", "tests/data/traces/azure/bom-unordered.csv", "azure", 1},
        {"kvplan-tokens", "tests/data/traces/kvplan/tokens.jsonl", "kvplan", 0},
        {"kvplan-chunks", "tests/data/traces/kvplan/chunks.jsonl", NULL, 1},
        {"kvplan-hashes", "tests/data/traces/kvplan/hashes.jsonl", "kvplan", 1},
        {"synthetic-shared-prefix", "synthetic:shared-prefix:8,1000,100,20", NULL, 0},
        {"synthetic-cyclic", "synthetic:cyclic:4,600,3", NULL, 0},
        {"synthetic-grouped", "synthetic:grouped:3,4,500,50,10,cyclic", NULL, 0},
    };
    static const uint32_t sizes[] = {16, 512};
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
        for (size_t j = 0; j < 2; j++)
            roundtrip(src[i].name, src[i].path, src[i].format, sizes[j], src[i].chunk_stable);
    refusals();
    azure_arrivals();
    tokens_form();
    rmdir(dir);
    return check_failures != 0;
}
