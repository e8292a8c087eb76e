/* net/gguf_remote.h - the header of a GGUF somewhere on the network, by
 * HTTP range requests: the few MB of metadata and tensor infos kvplan reads,
 * never the weights (reference/remote-models.md 3.1 and 3.6).
 * Library-internal; the bytes then go through the one GGUF parser
 * (kvp_gguf_read_mem), so a remote model is read exactly as a local one. */
#ifndef KVP_NET_GGUF_REMOTE_H
#define KVP_NET_GGUF_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "kvplan.h"
#include "http.h"

/* Where the file is and what is known of it beforehand. */
typedef struct gguf_remote_src {
    const char *url;        /* the bytes (a CDN's signed URL, a registry blob, a user's URL) */
    const char *label;      /* for messages: "org/name/FILE.gguf", a redacted URL */
    const char *sha256;     /* the file's sha256 (64 hex): the cache key; NULL: not cached */
    int64_t expect_size;    /* the file's size from the Hub or a manifest; -1 unknown */
    int allow_http;         /* the URL's origin was configured as http by the user */
    int offline;            /* the cache only */
} gguf_remote_src;

typedef struct gguf_remote {
    uint8_t *data;          /* the header bytes (malloc'd), a prefix of the file */
    size_t size;
    uint64_t file_size;     /* the whole file's: Content-Range total, else expect_size */
    int from_cache;         /* answered by kvplan's header cache, no request made */
} gguf_remote;

/* One GET with Range: bytes=0-<cap>, streamed: the bytes are handed to
 * kvp_gguf_header_need as they come and the transfer ends the moment the
 * header is complete, so about the header's size is read whatever the
 * file's size, in one round trip.  A server that ignores Range is cut off
 * the same way (and at KVP_GGUF_HEADER_MAX at worst); a 206 must say which
 * bytes it holds.  -1: err is one line naming src->label (not a GGUF, a
 * header over the cap, a truncated or stalled transfer, an HTTP error). */
int gguf_remote_header(net_session *sess, const gguf_remote_src *src, gguf_remote *out,
                       kvp_error *err);
void gguf_remote_free(gguf_remote *r);

#endif
