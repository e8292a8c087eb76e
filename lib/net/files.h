/* net/files.h - the file-system steps the remote caches share (the Hugging
 * Face cache in hub.c, kvplan's header cache in hdrcache.c): directories on
 * demand and writes that a concurrent reader never sees half done.
 * Library-internal. */
#ifndef KVP_NET_FILES_H
#define KVP_NET_FILES_H

#include <stddef.h>

/* mkdir -p of the directory part of path (everything before the last '/'). */
int nf_mkdirs_for(const char *path);
/* A value for unique temporary names beside their target. */
unsigned nf_rand32(void);
/* Writes n bytes to path through a unique temporary file and rename(2),
 * creating the directories; -1 on any failure (the temporary removed). */
int nf_write_atomic(const char *path, const void *data, size_t n);

#endif
