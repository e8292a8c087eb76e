/* net/files.c - directories on demand and atomic writes for the remote
 * caches (see files.h).  Atomic because two kvplan runs, or kvplan and
 * huggingface_hub, may fill the same cache at once. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"

int nf_mkdirs_for(const char *path)
{
    char p[4096];
    int w = snprintf(p, sizeof p, "%s", path);
    if (w < 0 || (size_t)w >= sizeof p)
        return -1;
    char *last = strrchr(p, '/');
    if (!last)
        return 0;
    *last = 0;
    for (char *c = p + 1;; c++) {
        if (*c == '/' || !*c) {
            char keep = *c;
            *c = 0;
            if (mkdir(p, 0777) && errno != EEXIST)
                return -1;
            if (!keep)
                return 0;
            *c = keep;
        }
    }
}

unsigned nf_rand32(void)
{
    static unsigned n;
    return (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL) ^ (unsigned)clock() ^
           (++n * 40503u);
}

int nf_write_atomic(const char *path, const void *data, size_t n)
{
    char tmp[4200];
    int w = snprintf(tmp, sizeof tmp, "%s.%08x.tmp", path, nf_rand32());
    if (w < 0 || (size_t)w >= sizeof tmp || nf_mkdirs_for(path))
        return -1;
    FILE *f = fopen(tmp, "wx");
    if (!f)
        return -1;
    int bad = n && fwrite(data, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
