/* net/hub.h - fetches one file of a Hugging Face Hub model repo into the
 * local Hugging Face cache, byte for byte where huggingface_hub would put it
 * (reference/remote-models.md sections 1, 2 and 8), so a later run - kvplan's,
 * transformers' or llama.cpp's - finds it offline.  Library-internal; every
 * request goes through net/http.h. */
#ifndef KVP_NET_HUB_H
#define KVP_NET_HUB_H

#include <stddef.h>
#include <stdint.h>

#include "kvplan.h"
#include "http.h"

/* What the environment says (hub_settings_from_env). */
typedef struct hub_settings {
    char endpoint[512];     /* HF_ENDPOINT or https://huggingface.co, no trailing '/' */
    int allow_http;         /* the user set an http:// endpoint */
    char cache[4096];       /* hub cache root (hfcache.h's rules) */
    int offline;            /* HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE: no network at all */
    char token[1024];       /* cleaned bearer token; "" = none.  Never print it. */
    char token_source[64];  /* where it came from ("HF_TOKEN", "token file"), for messages */
} hub_settings;

/* Reads HF_ENDPOINT, HF_HUB_CACHE/HF_HOME/XDG_CACHE_HOME, HF_HUB_OFFLINE,
 * and the token from HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then HF_TOKEN_PATH or
 * $HF_HOME/token (none of them when HF_HUB_DISABLE_IMPLICIT_TOKEN is true).
 * -1 (KVP_EUSAGE) for a bad endpoint or a token with control characters. */
int hub_settings_from_env(hub_settings *s, kvp_error *err);

/* Validators for anything that becomes part of a path (section 8). */
int hub_valid_repo_id(const char *id);   /* [A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+, no "--", no ".." */
int hub_valid_path(const char *path);    /* relative, no "..", "." or empty parts, no '\\' */
int hub_valid_revision(const char *rev); /* a branch, tag or commit usable under refs/ */
int hub_valid_commit(const char *s);     /* ^[0-9a-f]{40}$ */
/* An ETag value without W/ and quotes into out (n >= 65); -1 unless it is
 * 40 hex (git blob sha1) or 64 hex (sha256). */
int hub_etag_normalise(const char *raw, char *out, size_t n);

/* Makes <cache>/models--org--name/snapshots/<commit>/<path> exist and
 * writes its path into out: from the cache alone when offline, else by
 * resolving {endpoint}/{repo}/resolve/{revision}/{path} (revision NULL:
 * "main").  A file over max_bytes (0: NET_DEFAULT_MAX_BYTES) is refused.
 * A 429 whose Retry-After is at most HUB_RETRY_MAX_WAIT s is retried once
 * after that wait; otherwise the error says when to retry.  -1: err holds
 * one line (KVP_EINPUT; KVP_EUSAGE for bad arguments), never the token. */
#define HUB_RETRY_MAX_WAIT 5
int hub_fetch_file(const char *repo_id, const char *revision, const char *path,
                   uint64_t max_bytes, char *out, size_t n, kvp_error *err);
/* The same with given settings and an optional session (NULL: one per call). */
int hub_fetch_file_with(const hub_settings *s, net_session *sess, const char *repo_id,
                        const char *revision, const char *path, uint64_t max_bytes, char *out,
                        size_t n, kvp_error *err);

/* How a hub_fetch_file_why failed, for callers that fall back. */
typedef enum hub_failure {
    HUB_FAIL_NONE = 0,
    HUB_FAIL_NO_FILE,     /* the repo answered: no such file (EntryNotFound) */
    HUB_FAIL_UNREACHABLE, /* no answer at all: name, route, connection, timeout */
    HUB_FAIL_ANSWER,      /* another error answer (gated, missing repo, 429...) */
    HUB_FAIL_TRANSFER,    /* the transfer failed midway */
    HUB_FAIL_OTHER        /* bad arguments, the cache, offline */
} hub_failure;
int hub_fetch_file_why(const hub_settings *s, net_session *sess, const char *repo_id,
                       const char *revision, const char *path, uint64_t max_bytes, char *out,
                       size_t n, hub_failure *why, kvp_error *err);

/* What a HEAD on /resolve/ says of one file (hub_resolve). */
typedef struct hub_resolved {
    char commit[72];    /* X-Repo-Commit (40 hex) */
    char etag[65];      /* normalised: a git blob sha1 (40 hex) or an LFS sha256 (64) */
    char sha256[65];    /* the LFS file's sha256 (X-Linked-Etag), else "" */
    int64_t size;       /* X-Linked-Size or Content-Length; -1 unknown */
    int lfs;            /* answered by a cross-origin redirect (to the CDN) */
    char url[4096];     /* where its bytes are: the CDN's signed URL (never print or
                         * store it) or the resolve URL pinned to the commit */
} hub_resolved;

/* Resolves {endpoint}/{repo}/resolve/{revision}/{path} without downloading:
 * the metadata comes from the Hub's own answer, never the CDN's.  Refused
 * when s->offline.  -1: err holds hub_fail_status's or hub_fail_net's line. */
int hub_resolve(const hub_settings *s, net_session *sess, const char *repo_id,
                const char *revision, const char *path, hub_resolved *out, kvp_error *err);

/* One line for a Hub answer >= 400 (X-Error-Code: gated, missing repo, file
 * or revision; 429 with when to retry; a rejected token), naming repo and
 * path at rev; and for a failed transfer (unreachable: says --offline). */
int hub_fail_status(const hub_settings *s, const char *repo, const char *path, const char *rev,
                    const net_result *r, kvp_error *err);
int hub_fail_net(const hub_settings *s, const char *repo, const net_result *r,
                 const kvp_error *nerr, kvp_error *err);
/* net_fetch of q, once more after a 429 or 5xx whose Retry-After (1 s when
 * absent) is at most HUB_RETRY_MAX_WAIT s, slept first.  0: r holds the last
 * answer; -1: nerr holds net_fetch's line.  Free r either way. */
int hub_fetch_retry(net_session *sess, const net_request *q, net_result *r, kvp_error *nerr);
/* huggingface_hub's quote(): percent-encodes s, '/' kept only with keep_slash. */
int hub_pct(const char *s, int keep_slash, char *out, size_t n);

#endif
