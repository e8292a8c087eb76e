/* net/hub_files.h - what a Hugging Face Hub repo holds, and which of its
 * GGUF files `org/name[:QUANT]` means.  One model-info request with
 * blobs=true (reference/remote-models.md 1.8) gives the commit, every path
 * (shards in sub-folders included), sizes and sha256s; the selection then
 * follows llama.cpp's own -hf rules (section 3.4) so that kvplan sizes the
 * file llama.cpp would load.  Library-internal; requests go through
 * net/http.h with hub.h's settings and error lines. */
#ifndef KVP_NET_HUB_FILES_H
#define KVP_NET_HUB_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "kvplan.h"
#include "http.h"
#include "hub.h"

/* The model-info JSON is refused beyond this (a repo of ~100k files fits). */
#define HUB_INFO_MAX_BYTES (16ull << 20)
/* Seconds for the model-info request as a whole. */
#define HUB_INFO_TIMEOUT 60
/* A size above this (1 PiB) is taken as hostile and reported unknown, so
 * sums over shards cannot overflow int64. */
#define HUB_FILE_MAX_SIZE ((int64_t)1 << 50)
/* Shards of one split GGUF that a pick holds. */
#define HUB_MAX_SHARDS 64

typedef struct hub_file {
    char *path;          /* rfilename, validated with hub_valid_path (invalid ones dropped) */
    int64_t size;        /* 0 .. HUB_FILE_MAX_SIZE, -1 unknown */
    char sha256[65];     /* lfs.sha256 for LFS files (64 lower-case hex), else "" */
    char blob_id[41];    /* blobId (git oid, 40 lower-case hex), else "" */
    int lfs;             /* the entry had an lfs object */
} hub_file;

typedef struct hub_file_list {
    char commit[41];     /* "sha" of the revision (validated 40 hex) */
    char revision[256];  /* the revision asked for (hub_list_files), for messages; else "" */
    char gated[16];      /* "false", "auto", "manual" ("unknown" for anything else) */
    hub_file *files;     /* sorted by path (strcmp), no duplicates */
    size_t n;
    size_t dropped;      /* siblings skipped: not an object, no string rfilename, an
                          * invalid path or a duplicate */
} hub_file_list;

/* Parses the answer of GET {ep}/api/models/{repo}/revision/{rev}?blobs=true
 * (siblings with rfilename, size, blobId, lfs{sha256,size}).  label names
 * the repo in errors (NULL: "the model info").  -1 (KVP_EINPUT, one line)
 * when the text is not JSON, not an object, has no valid "sha" or no
 * "siblings" array; bad sibling entries are dropped, bad fields ignored.
 * out is always initialised: free it with hub_file_list_free either way. */
int hub_parse_model_info(const char *text, size_t n, const char *label, hub_file_list *out,
                         kvp_error *err);
void hub_file_list_free(hub_file_list *l);

/* The request itself: revision NULL means "main" (percent-encoded as
 * huggingface_hub's quote(rev, safe="")); the token goes only to the
 * endpoint's origin; same-origin redirects (a renamed repo's 307) are
 * followed, a cross-origin one is refused; a 429 or 5xx asking for at most
 * HUB_RETRY_MAX_WAIT s is retried once.  Refused without a request when
 * s->offline.  -1: err holds hub_fail_status's or hub_fail_net's line, or
 * KVP_EUSAGE for a bad repo id or revision.  out is always initialised. */
int hub_list_files(const hub_settings *s, net_session *sess, const char *repo,
                   const char *revision, hub_file_list *out, kvp_error *err);

/* A chosen GGUF: one file or every shard of a split model, shard 1 first. */
typedef struct hub_gguf_pick {
    size_t n;
    const hub_file *shards[HUB_MAX_SHARDS]; /* point into the list */
    char quant[48];      /* the tag as it appears in the matched path ("Q4_K_M"); for the
                          * first-GGUF fallback the name's last -/. part as llama.cpp reads
                          * it, upper-cased (may be ""); "" when a path was named */
    char why[160];       /* how it was chosen, for the source line: "Q4_K_M (asked)",
                          * "Q4_K_M (default)", "Q8_0 (no Q4_K_M)", "the first GGUF (no
                          * Q4_K_M or Q8_0)", "the named file" */
} hub_gguf_pick;

/* llama.cpp's find_best_model() (common/download.cpp, since 2026-03).
 *
 * A model GGUF is a path ending in ".gguf" whose file name (not folder)
 * contains none of mmproj, imatrix, mtp-, eagle3-, dflash-, dspark- (all
 * case-sensitive, as llama.cpp).  With a tag: the first model GGUF whose
 * path contains the tag followed by '.' or '-', case-insensitively (so
 * "Q4_K" does not match "Q4_K_M").  Without: Q4_K_M the same way, then Q8_0,
 * then the first model GGUF.  Of a split set only shard 1 qualifies, and
 * every shard with the same prefix (folder included) and count is taken;
 * unlike llama.cpp, a missing shard is an error naming it.
 *
 * Order: llama.cpp walks the tree API's first page in the order the Hub
 * sends it and does not sort; kvplan walks the list in path (byte) order,
 * which hub_parse_model_info guarantees, so "first" does not depend on how
 * a server orders its answer.
 *
 * Errors (KVP_EINPUT, naming repo): no GGUF at all ("REPO has no GGUF
 * files; without :QUANT kvplan reads its config.json"); the tag matching
 * nothing (lists up to 10 of the repo's quant tags); a split set of more
 * than HUB_MAX_SHARDS or with a missing shard.  KVP_EUSAGE: a tag that is
 * empty, longer than 47 or not [A-Za-z0-9_.+-]. */
int hub_pick_gguf(const hub_file_list *l, const char *repo, const char *tag,
                  hub_gguf_pick *out, kvp_error *err);

/* A named path (the org/name/path/FILE.gguf form), matched
 * case-insensitively like llama.cpp's --hf-file (the first in path order
 * when several differ only in case).  Shard 1 of a split set expands to
 * every shard; naming shard k > 1 is an error saying to name shard 1; a
 * path not in the list is an error naming it and the list's revision (and
 * commit), without listing the repo; a file not ending in .gguf is refused.
 * KVP_EUSAGE for a path hub_valid_path refuses. */
int hub_pick_path(const hub_file_list *l, const char *repo, const char *path, hub_gguf_pick *out,
                  kvp_error *err);

/* Split-name helper: "<prefix>-%05d-of-%05d.gguf" -> prefix (folder
 * included, into prefix[n]; prefix may be NULL), no (1-based) and count,
 * with 1 <= no <= count; "-of-" is read in any case, as llama.cpp's
 * get_gguf_split_info() does.  1 when path is such a shard, 0 when it is
 * not, -1 when it is but prefix does not fit in n. */
int hub_split_name(const char *path, char *prefix, size_t n, unsigned *no, unsigned *count);

#endif
