/* write.c - any workload out as kvplan's own JSONL (tokens.c reads it): each
 * request's arrival, conversation, output and its prompt's chunks, so reading
 * the file back gives the same replay (requests, chunks, hashes at any block
 * size).  A file is never overwritten unless asked, and a failed write leaves
 * nothing behind but what was there. */
#define _GNU_SOURCE /* O_CLOEXEC with -std=c11 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_int.h"

/* ms -> seconds text that arrival_ms() reads back to the same ms: the exact
 * decimal of its nanoseconds when ms lies on that grid, else %.17g */
static void arrival_text(double ms, char *buf, size_t n)
{
    double ns = ms * 1e6;
    if (ns < JSONL_NS_EXACT) {
        unsigned long long k = (unsigned long long)llround(ns);
        if ((double)k / 1e6 == ms) {
            int len = snprintf(buf, n, "%llu.%09llu", k / 1000000000ull, k % 1000000000ull);
            while (len > 0 && buf[len - 1] == '0')
                buf[--len] = 0;
            if (len > 0 && buf[len - 1] == '.')
                buf[--len] = 0;
            return;
        }
    }
    snprintf(buf, n, "%.17g", ms / 1000);
}

/* Everything the file needs, checked before the file exists. */
static int write_check(const kvp_workload *w, const char *path, kvp_error *err)
{
    if (w->n_req == 0)
        return kvp_fail(err, KVP_EINPUT, "%s: the workload has no requests", path);
    for (size_t i = 0; i < w->n_req; i++) {
        const kvp_sim_request *r = &w->req[i];
        uint64_t sum = 0;
        if (r->n_chunks == 0)
            return kvp_fail(err, KVP_EINPUT, "%s: request %zu has no chunks (a hand-built "
                            "workload of hashes only): kvplan's JSONL needs each prompt's "
                            "content", path, i + 1);
        if (r->chunk_off > w->n_chunks || r->n_chunks > w->n_chunks - r->chunk_off)
            return kvp_fail(err, KVP_EINPUT, "%s: request %zu's chunks lie outside the "
                            "workload's", path, i + 1);
        for (size_t j = 0; j < r->n_chunks; j++) {
            const kvp_sim_chunk *c = &w->chunks[r->chunk_off + j];
            if (c->tokens && (c->id > JSONL_ID_MAX || c->tokens > KVP_MAX_TOKENS - sum))
                return kvp_fail(err, KVP_EINPUT, "%s: request %zu has a chunk kvplan's JSONL "
                                "cannot hold (an id of 2^63 or more)", path, i + 1);
            sum += c->tokens;
        }
        if (sum != r->prompt_tokens || r->output_tokens > KVP_MAX_TOKENS)
            return kvp_fail(err, KVP_EINPUT, "%s: request %zu's chunks hold %llu tokens, its "
                            "prompt %llu", path, i + 1, (unsigned long long)sum,
                            (unsigned long long)r->prompt_tokens);
        if (!(r->timestamp >= 0 && r->timestamp <= JSONL_MAX_ARRIVAL_S * 1000))
            return kvp_fail(err, KVP_EINPUT, "%s: request %zu arrives at %g ms (kvplan's "
                            "JSONL needs [0, 1e12] s)", path, i + 1, r->timestamp);
    }
    return 0;
}

static int write_request(FILE *f, const kvp_workload *w, const kvp_sim_request *r)
{
    char t[64];
    arrival_text(r->timestamp, t, sizeof t);
    if (fprintf(f, "{\"arrival\": %s", t) < 0 ||
        (r->conv && fprintf(f, ", \"conversation\": %u", r->conv) < 0) ||
        (r->pass && fprintf(f, ", \"pass\": %u", r->pass) < 0) ||
        fprintf(f, ", \"output\": %llu", (unsigned long long)r->output_tokens) < 0 ||
        (w->hash_output && fputs(", \"output_cached\": true", f) < 0) ||
        fputs(", \"chunks\": [", f) < 0)
        return -1;
    int first = 1;
    for (size_t j = 0; j < r->n_chunks; j++) {
        const kvp_sim_chunk *c = &w->chunks[r->chunk_off + j];
        if (c->tokens == 0) /* no content, no effect on any hash: left out */
            continue;
        if (fprintf(f, "%s[%llu, %llu]", first ? "" : ", ", (unsigned long long)c->id,
                    (unsigned long long)c->tokens) < 0)
            return -1;
        first = 0;
    }
    return fputs("]}\n", f) < 0 ? -1 : 0;
}

int kvp_workload_write(const kvp_workload *w, const char *path, int force, kvp_error *err)
{
    if (write_check(w, path, err))
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
    if (fd < 0)
        return errno == EEXIST
                   ? kvp_fail(err, KVP_EINPUT, "%s exists (--force replaces it)", path)
                   : kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(errno));
    struct stat st, lst;
    /* only the regular file at path itself is removed on failure: never a
     * device or a pipe, nor a symbolic link such as /dev/stdout in its target's
     * stead */
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lstat(path, &lst) == 0 &&
                  !S_ISLNK(lst.st_mode) && st.st_dev == lst.st_dev && st.st_ino == lst.st_ino;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        if (regular)
            unlink(path);
        return kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(e));
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < w->n_req; i++)
        rc = write_request(f, w, &w->req[i]);
    int e = errno;
    if (ferror(f))
        rc = -1;
    if (fclose(f) != 0 && !rc)
        rc = -1, e = errno;
    if (rc) {
        if (regular)
            unlink(path);
        return kvp_fail(err, KVP_EINPUT, "%s: write failed: %s", path, strerror(e));
    }
    return 0;
}
