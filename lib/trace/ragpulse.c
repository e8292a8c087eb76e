/* ragpulse.c - placeholder: the ragpulse reader is being written. */
#include <string.h>

#include "trace_int.h"

int wl_read_ragpulse(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err)
{
    (void)bs;
    memset(w, 0, sizeof *w);
    return kvp_fail(err, KVP_EINPUT, "%s: the ragpulse reader is not written yet", path);
}
