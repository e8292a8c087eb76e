/* hfcache.c - finds an org/name repo id in the local Hugging Face cache, the
 * way huggingface_hub lays it out: <hub>/models--org--name/refs/main names a
 * snapshot, snapshots/<commit>/config.json is the file.  <hub> is
 * $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub (the root
 * rules are shared with net/hub.c through hfcache.h). */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hfcache.h"
#include "kvp_int.h"
#include "model_int.h"

int kvp_hf_home(char *buf, size_t n)
{
    const char *e, *home = getenv("HOME");
    int w;
    if ((e = getenv("HF_HOME")) && *e)
        w = snprintf(buf, n, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e)
        w = snprintf(buf, n, "%s/huggingface", e);
    else
        w = snprintf(buf, n, "%s/.cache/huggingface", home ? home : "");
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

int kvp_hfcache_root(char *buf, size_t n)
{
    const char *e;
    int w;
    if (((e = getenv("HF_HUB_CACHE")) && *e) || ((e = getenv("HUGGINGFACE_HUB_CACHE")) && *e))
        w = snprintf(buf, n, "%s", e);
    else {
        char home[2048];
        if (kvp_hf_home(home, sizeof home))
            return -1;
        w = snprintf(buf, n, "%s/hub", home);
    }
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* snprintf that reports truncation instead of silently cutting a path. */
static int path(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The commit refs/<rev> names; "" when there is none, it cannot be read,
 * or it holds a '/'. */
static void read_ref(const char *repo, const char *rev, char commit[128])
{
    char p[4096];
    commit[0] = 0;
    if (path(p, sizeof p, "%s/refs/%s", repo, rev))
        return;
    FILE *f = fopen(p, "r");
    if (f) {
        if (fscanf(f, "%127s", commit) != 1 || strchr(commit, '/'))
            commit[0] = 0;
        fclose(f);
    }
}

/* snapshots/<commit>/config.json when it is a file. */
static int snapshot_config(const char *repo, const char *commit, char *out, size_t n)
{
    return path(out, n, "%s/snapshots/%s/config.json", repo, commit) == 0 && is_file(out) ? 0
                                                                                          : -1;
}

/* refs/main first; otherwise the newest snapshot that has a config.json. */
static int pick_snapshot(const char *repo, char *out, size_t n)
{
    char p[4096], commit[128];
    read_ref(repo, "main", commit);
    if (commit[0] && snapshot_config(repo, commit, out, n) == 0)
        return 0;
    if (path(p, sizeof p, "%s/snapshots", repo))
        return -1;
    DIR *d = opendir(p);
    if (!d)
        return -1;
    struct dirent *e;
    time_t best = 0;
    int found = -1;
    while ((e = readdir(d))) {
        char cand[4096];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        if (path(cand, sizeof cand, "%s/%s/config.json", p, e->d_name))
            continue;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && (found || st.st_mtime > best)) {
            best = st.st_mtime;
            snprintf(out, n, "%s", cand);
            found = 0;
        }
    }
    closedir(d);
    return found;
}

int kvp_hfcache_find(const char *repo_id, char *out, size_t n)
{
    return kvp_hfcache_find_rev(repo_id, NULL, out, n);
}

/* A named revision: refs/<rev> (a branch or tag) or the commit itself;
 * never another snapshot, which would be another model version. */
static int pick_revision(const char *repo, const char *rev, char *out, size_t n)
{
    char commit[128];
    if (strstr(rev, ".."))
        return -1;
    read_ref(repo, rev, commit);
    if (!commit[0])
        snprintf(commit, sizeof commit, "%.127s", rev);
    if (strchr(commit, '/'))
        return -1;
    return snapshot_config(repo, commit, out, n);
}

int kvp_hfcache_find_rev(const char *repo_id, const char *rev, char *out, size_t n)
{
    const char *slash = strchr(repo_id, '/');
    if (!slash || slash == repo_id || !slash[1] || strchr(slash + 1, '/') ||
        strstr(repo_id, ".."))
        return -1;
    char hub[2048], repo[4096];
    if (kvp_hfcache_root(hub, sizeof hub))
        return -1;
    if (path(repo, sizeof repo, "%s/models--%.*s--%s", hub, (int)(slash - repo_id), repo_id,
             slash + 1))
        return -1;
    return rev && *rev ? pick_revision(repo, rev, out, n) : pick_snapshot(repo, out, n);
}
