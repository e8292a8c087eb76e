/* hfcache.h - where the local Hugging Face cache lives, shared by the
 * reader (hfcache.c) and the downloader (net/hub.c) so both follow the same
 * huggingface_hub rules (reference/remote-models.md 1.6, 2.1).  Internal. */
#ifndef KVP_HFCACHE_H
#define KVP_HFCACHE_H

#include <stddef.h>

/* $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface;
 * -1 when it does not fit in buf. */
int kvp_hf_home(char *buf, size_t n);
/* $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else <HF_HOME>/hub; -1 when it
 * does not fit in buf. */
int kvp_hfcache_root(char *buf, size_t n);

#endif
