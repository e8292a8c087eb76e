/* net/hdrcache.h - kvplan's own cache of remote GGUF headers.
 *
 * A GGUF's header (metadata and tensor infos, a few MB) is all kvplan reads
 * of a remote model, so it keeps exactly that, keyed by the file's sha256
 * (the Hub's X-Linked-Etag, the Ollama layer digest): immutable content,
 * never stale, and never a partial file in the Hugging Face cache's blobs/
 * where huggingface_hub would take it for a download (remote-models.md 2).
 * "Pins" record what a name resolved to (org/name:Q4_K_M at main -> these
 * shards), so the same name answers offline.  Library-internal. */
#ifndef KVP_NET_HDRCACHE_H
#define KVP_NET_HDRCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "kvplan.h"

/* $KVPLAN_CACHE, else $XDG_CACHE_HOME/kvplan, else ~/.cache/kvplan; -1
 * when none can be formed. */
int hdrcache_root(char *buf, size_t n);

/* The cached header of the file with this sha256 (64 hex): 1 found (*data
 * malloc'd, *size its length, *file_size the whole file's), 0 not cached,
 * -1 on a bad key.  A damaged entry counts as not cached. */
int hdrcache_get(const char *sha256, uint8_t **data, size_t *size, uint64_t *file_size);
/* Stores it atomically (best effort: a read-only cache is not an error). */
void hdrcache_put(const char *sha256, const uint8_t *data, size_t size, uint64_t file_size);

/* A pin: a small text under pins/<kind>/<key> ("hf/org--name/main/Q4_K_M").
 * key parts are validated by the callers (hub_valid_*); '/' makes folders. */
void hdrcache_pin_put(const char *key, const char *text);
/* 0 and buf filled when the pin exists, else -1. */
int hdrcache_pin_get(const char *key, char *buf, size_t n);

#endif
