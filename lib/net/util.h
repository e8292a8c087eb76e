/* net/util.h - small helpers the remote modules (hub.c, hub_files.c,
 * ollama.c) share, kept in one place so that a checked buffer write or a
 * hash check means the same thing in each.  Library-internal. */
#ifndef KVP_NET_UTIL_H
#define KVP_NET_UTIL_H

#include <stddef.h>

#include "../kvp_int.h"

/* snprintf into out[n]; -1 when the result was cut (or on an encoding
 * error), so a URL or path is never silently truncated. */
int nu_fmt(char *out, size_t n, const char *f, ...) KVP_PRINTF(3, 4);

/* 1 when s is exactly len lower-case hex digits (how the Hub and the
 * registries write commits and hashes; anything else is not compared). */
int nu_lower_hex(const char *s, size_t len);

#endif
