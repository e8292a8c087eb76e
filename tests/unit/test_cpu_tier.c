/* test_cpu_tier.c - the host tier's LRU (lib/serve/cpu_tier.c): eviction
 * order, touches, pins and skipped stores on small cases, then a long random
 * run against a plain array LRU (which never shares the map's probing or
 * deletion), so a slip in the backward-shift deletion shows as a lost or a
 * phantom block. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "serve/cpu_tier.h"

static void lru_order(void)
{
    cpu_tier t;
    kvp_error e;
    CHECK("lru: init", cpu_tier_init(&t, 2, 100, &e) == 0);
    CHECK("lru: two stores", cpu_tier_store(&t, 11) == 1 && cpu_tier_store(&t, 12) == 1);
    CHECK("lru: a stored block again is a refresh", cpu_tier_store(&t, 11) == 0);
    CHECK("lru: a third evicts the least recent (12, since 11 was refreshed)",
          cpu_tier_store(&t, 13) == 1 && cpu_tier_match(&t, (uint64_t[]){12}, 0, 1) == 0 &&
              t.evictions == 1);
    uint64_t h[3] = {11, 13, 12};
    CHECK("lru: a match counts consecutive blocks from `from`", cpu_tier_match(&t, h, 0, 3) == 2);
    CHECK("lru: from past the start", cpu_tier_match(&t, h, 1, 3) == 1);
    /* 13 was touched last: 11 is the least recent now */
    CHECK("lru: the match touched its blocks", cpu_tier_store(&t, 14) == 1 &&
                                                   cpu_tier_match(&t, (uint64_t[]){11}, 0, 1) == 0);
    cpu_tier_destroy(&t);
}

static void pins(void)
{
    cpu_tier t;
    kvp_error e;
    uint64_t h[2] = {1, 2};
    CHECK("pin: init", cpu_tier_init(&t, 2, 100, &e) == 0);
    cpu_tier_store(&t, 1);
    cpu_tier_store(&t, 2);
    cpu_tier_pin(&t, h, 0, 2, 1);
    CHECK("pin: a full tier of pinned blocks skips a store",
          cpu_tier_store(&t, 3) == -1 && t.skipped == 1 && cpu_tier_match(&t, h, 0, 2) == 2);
    cpu_tier_pin(&t, h, 0, 1, -1);
    CHECK("pin: the unpinned one goes, though the pinned one is older",
          cpu_tier_store(&t, 3) == 1 && cpu_tier_match(&t, h, 0, 1) == 0 &&
              cpu_tier_match(&t, h, 1, 2) == 1);
    cpu_tier_destroy(&t);
}

static void refusals(void)
{
    cpu_tier t;
    kvp_error e;
    CHECK("refuse: more blocks than kvplan replays",
          cpu_tier_init(&t, UINT64_MAX, UINT64_MAX, &e) != 0 && strstr(e.msg, "host tier"));
}

/* the reference: an array, most recent last */
typedef struct ref_lru {
    uint64_t *h;
    size_t n, cap;
} ref_lru;

static long ref_find(const ref_lru *r, uint64_t x)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->h[i] == x)
            return (long)i;
    return -1;
}

static void ref_store(ref_lru *r, uint64_t x)
{
    long i = ref_find(r, x);
    if (i >= 0)
        memmove(r->h + i, r->h + i + 1, (r->n - (size_t)i - 1) * sizeof *r->h), r->n--;
    else if (r->n == r->cap)
        memmove(r->h, r->h + 1, (--r->n) * sizeof *r->h);
    r->h[r->n++] = x;
}

static void against_reference(void)
{
    cpu_tier t;
    kvp_error e;
    ref_lru r = {malloc(257 * sizeof(uint64_t)), 0, 257};
    int ok = cpu_tier_init(&t, 257, 1u << 20, &e) == 0 && r.h;
    uint64_t seed = 7;
    for (int i = 0; ok && i < 200000; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        /* few distinct hashes, many collisions in a small map: deletions
         * in the middle of probe runs */
        uint64_t x = (seed >> 33) % 700;
        if (i % 3) {
            ok = cpu_tier_store(&t, x) == (ref_find(&r, x) >= 0 ? 0 : 1);
            ref_store(&r, x);
        } else {
            uint64_t got = cpu_tier_match(&t, &x, 0, 1);
            ok = got == (ref_find(&r, x) >= 0);
            if (got)
                ref_store(&r, x); /* a hit is a use */
        }
    }
    for (size_t i = 0; ok && i < 700; i++) {
        uint64_t x = i;
        ok = cpu_tier_match(&t, &x, 0, 1) == (ref_find(&r, x) >= 0);
    }
    CHECK("random: 200,000 stores and lookups agree with an array LRU", ok);
    CHECK("random: full, and evicting", t.n == 257 && t.evictions > 1000);
    cpu_tier_destroy(&t);
    free(r.h);
}

int main(void)
{
    lru_order();
    pins();
    refusals();
    against_reference();
    return check_failures != 0;
}
