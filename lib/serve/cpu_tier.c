/* cpu_tier.c - the host tier's LRU of prompt blocks (cpu_tier.h).  A hash
 * map by block hash (linear probing, deletion by backward shift so no
 * tombstones pile up over a long trace) beside a doubly linked LRU list;
 * every operation is O(1) expected. */
#include <stdlib.h>
#include <string.h>

#include "cpu_tier.h"

#define CT_NIL UINT32_MAX

int cpu_tier_init(cpu_tier *t, uint64_t capacity, uint64_t distinct, kvp_error *err)
{
    memset(t, 0, sizeof *t);
    t->capacity = capacity;
    t->head = t->tail = CT_NIL;
    uint64_t nodes = capacity < distinct ? capacity : distinct;
    if (nodes == 0)
        nodes = 1;
    if (nodes > UINT32_MAX / 4)
        return kvp_fail(err, KVP_EINPUT, "sim: a host tier of %llu blocks is more than kvplan "
                        "replays", (unsigned long long)nodes);
    uint64_t slots = 16;
    while (slots < 2 * nodes)
        slots <<= 1;
    t->cap_nodes = (uint32_t)nodes;
    t->c = malloc(nodes * sizeof *t->c);
    t->map = malloc(slots * sizeof *t->map);
    if (!t->c || !t->map) {
        cpu_tier_destroy(t);
        return kvp_fail(err, KVP_EINPUT, "sim: out of memory for a host tier of %llu blocks",
                        (unsigned long long)nodes);
    }
    memset(t->map, 0xff, slots * sizeof *t->map);
    t->mask = slots - 1;
    return 0;
}

void cpu_tier_destroy(cpu_tier *t)
{
    free(t->c);
    free(t->map);
    t->c = NULL;
    t->map = NULL;
}

/* the slot holding hash, or the empty slot where it would go */
static uint64_t slot_of(const cpu_tier *t, uint64_t hash)
{
    uint64_t i = kvp_mix64(hash) & t->mask;
    while (t->map[i] != CT_NIL && t->c[t->map[i]].hash != hash)
        i = (i + 1) & t->mask;
    return i;
}

static uint32_t find(const cpu_tier *t, uint64_t hash)
{
    return t->map[slot_of(t, hash)];
}

/* backward-shift deletion: later members of the probe run move up */
static void map_remove(cpu_tier *t, uint64_t hash)
{
    uint64_t i = slot_of(t, hash), j = i;
    t->map[i] = CT_NIL;
    for (;;) {
        j = (j + 1) & t->mask;
        if (t->map[j] == CT_NIL)
            return;
        uint64_t home = kvp_mix64(t->c[t->map[j]].hash) & t->mask;
        /* j's entry may fill the hole i unless its home lies in (i, j] */
        if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
            continue;
        t->map[i] = t->map[j];
        t->map[j] = CT_NIL;
        i = j;
    }
}

static void unlink_node(cpu_tier *t, uint32_t id)
{
    cpu_chunk *c = &t->c[id];
    if (c->prev != CT_NIL)
        t->c[c->prev].next = c->next;
    else
        t->head = c->next;
    if (c->next != CT_NIL)
        t->c[c->next].prev = c->prev;
    else
        t->tail = c->prev;
}

static void append(cpu_tier *t, uint32_t id)
{
    t->c[id].prev = t->tail;
    t->c[id].next = CT_NIL;
    if (t->tail != CT_NIL)
        t->c[t->tail].next = id;
    else
        t->head = id;
    t->tail = id;
}

static void touch(cpu_tier *t, uint32_t id)
{
    unlink_node(t, id);
    append(t, id);
}

uint64_t cpu_tier_match(cpu_tier *t, const uint64_t *h, uint64_t from, uint64_t to)
{
    uint64_t n = 0;
    for (uint64_t i = from; i < to; i++, n++) {
        uint32_t id = find(t, h[i]);
        if (id == CT_NIL)
            break;
        touch(t, id);
    }
    return n;
}

void cpu_tier_pin(cpu_tier *t, const uint64_t *h, uint64_t from, uint64_t to, int delta)
{
    for (uint64_t i = from; i < to; i++) {
        uint32_t id = find(t, h[i]);
        if (id != CT_NIL)
            t->c[id].ref += (uint32_t)delta;
    }
}

/* The least recently used chunk no load holds, unlinked and unmapped. */
static uint32_t evict_one(cpu_tier *t)
{
    uint32_t id = t->head;
    while (id != CT_NIL && t->c[id].ref)
        id = t->c[id].next;
    if (id == CT_NIL)
        return CT_NIL;
    unlink_node(t, id);
    map_remove(t, t->c[id].hash);
    t->evictions++;
    return id;
}

int cpu_tier_store(cpu_tier *t, uint64_t hash)
{
    uint64_t s = slot_of(t, hash);
    if (t->map[s] != CT_NIL) {
        touch(t, t->map[s]);
        t->refreshes++;
        return 0;
    }
    uint32_t id;
    if (t->n < t->capacity && t->n < t->cap_nodes) {
        id = t->n++;
    } else if ((id = evict_one(t)) == CT_NIL) {
        t->skipped++;
        return -1;
    }
    t->c[id] = (cpu_chunk){.hash = hash, .ref = 0};
    t->map[slot_of(t, hash)] = id;
    append(t, id);
    t->stores++;
    return 1;
}
