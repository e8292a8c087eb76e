/* test_hub.c - lib/net/hub.c against tests/remote/fake_remote.py.
 *
 * Builds fresh fixtures with tests/remote/mkfixtures.sh (using the kvplan
 * binary of this build: $KVPLAN, else $UNIT_DIR/../kvplan), starts the fake
 * Hub/CDN with a user token, and checks that a file lands in a fresh HF_HOME
 * exactly as huggingface_hub lays it out, that offline mode makes no request,
 * that each Hub error becomes its one-line message, and that the token only
 * ever reaches the hub listener.  Rate limits: hub.c retries a 429 once when
 * Retry-After is short (test/rate-limited succeeds), else says when to retry
 * (test/always-429).  Proxies are cleared and alarm() bounds the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fake_remote.h"
#include "net/hub.h"

static char home[300];

static uint64_t per_token(const char *spec)
{
    kvp_model *m = NULL;
    kvp_error e;
    kvp_theory_params p;
    kvp_theory_result r;
    if (kvp_model_load(spec, &m, &e))
        return 0;
    kvp_theory_defaults(&p);
    int rc = kvp_theory(m, &p, &r, &e);
    kvp_model_free(m);
    return rc ? 0 : r.per_token_bytes;
}

static int fetch(const char *repo, const char *path, char *out, kvp_error *e)
{
    memset(e, 0, sizeof *e);
    int rc = hub_fetch_file(repo, NULL, path, 0, out, 4096, e);
    if (rc)
        printf("# %s %s: %s\n", repo, path, e->msg); /* run.sh ignores '#' lines */
    return rc;
}

static void test_download(void)
{
    char out[4096], p[4400], link[4096], want[128], cmd[700];
    kvp_error e;
    int rc = fetch("Qwen/Qwen3-8B", "config.json", out, &e);
    CHECK("Qwen/Qwen3-8B config.json is fetched", rc == 0);
    if (rc) {
        printf("  %s\n", e.msg);
        return;
    }
    size_t la, lb;
    char *a = fr_slurp(out, &la), *b = fr_slurp("data/models/Qwen__Qwen3-8B.json", &lb);
    CHECK("its bytes are the catalog's config", a && b && la == lb && !memcmp(a, b, la));
    free(a);
    free(b);
    /* <home>/hub/models--Qwen--Qwen3-8B/snapshots/<commit>/config.json */
    char commit[64] = "";
    const char *s = strstr(out, "/snapshots/");
    snprintf(p, sizeof p, "%s/hub/models--Qwen--Qwen3-8B/snapshots/", home);
    CHECK("the snapshot is in HF_HOME/hub", !strncmp(out, p, strlen(p)) && s);
    if (s)
        sscanf(s + 11, "%40[0-9a-f]", commit);
    CHECK("named by a 40-hex commit", hub_valid_commit(commit));
    snprintf(cmd, sizeof cmd, "python3 -c \"import hashlib;d=open('data/models/Qwen__Qwen3-8B."
             "json','rb').read();print(hashlib.sha1(b'blob %%d\\0'%%len(d)+d).hexdigest())\"");
    fr_run_line(cmd, want, sizeof want);
    ssize_t n = readlink(out, link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    snprintf(p, sizeof p, "../../blobs/%s", want);
    CHECK("the snapshot is a relative symlink to blobs/<git sha1>", want[0] && !strcmp(link, p));
    snprintf(p, sizeof p, "%s/hub/models--Qwen--Qwen3-8B/refs/main", home);
    char *ref = fr_slurp(p, NULL);
    CHECK("refs/main holds the commit, no newline", ref && !strcmp(ref, commit));
    free(ref);
    char nested[4096];
    rc = fetch("test/paginated", "extra/notes.md", nested, &e);
    n = rc ? -1 : readlink(nested, link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    CHECK("a nested path links with one more ../", n > 0 && !strncmp(link, "../../../blobs/", 15));
    uint64_t pt = per_token(out);
    CHECK("the snapshot loads like catalog qwen3-8b", pt && pt == per_token("qwen3-8b"));

    int before = fr_log_lines();
    char again[4096];
    setenv("HF_HUB_OFFLINE", "1", 1);
    rc = fetch("Qwen/Qwen3-8B", "config.json", again, &e);
    CHECK("HF_HUB_OFFLINE=1 finds the cached file", rc == 0 && !strcmp(again, out));
    rc = fetch("Qwen/Qwen3-8B", "generation_config.json", again, &e);
    CHECK("HF_HUB_OFFLINE=1, uncached: says so",
          rc && e.code == KVP_EINPUT && strstr(e.msg, "not in the Hugging Face cache") &&
              strstr(e.msg, "HF_HUB_OFFLINE"));
    unsetenv("HF_HUB_OFFLINE");
    CHECK("offline: no request reached the server", fr_log_lines() == before);
}

static void test_errors(void)
{
    char out[4096];
    kvp_error e;
    int rc = fetch("meta-llama/Llama-3.2-1B-Instruct", "config.json", out, &e);
    CHECK("gated repo without a token: GatedRepo message naming HF_TOKEN",
          rc && e.code == KVP_EINPUT && strstr(e.msg, "gated") && strstr(e.msg, "HF_TOKEN") &&
              strstr(e.msg, "request access"));
    rc = fetch("Qwen/Qwen3-8B", "nope.json", out, &e);
    CHECK("missing file: EntryNotFound message", rc && strstr(e.msg, "no file nope.json"));
    rc = hub_fetch_file("Qwen/Qwen3-8B", "no-branch", "config.json", 0, out, sizeof out, &e);
    CHECK("missing revision: RevisionNotFound message", rc && strstr(e.msg, "no revision"));
    rc = fetch("kvtest/no-such-model", "config.json", out, &e);
    CHECK("missing repo: RepoNotFound message (private or mistyped, token variables)",
          rc && strstr(e.msg, "no such model repository") && strstr(e.msg, "private") &&
              strstr(e.msg, "HF_TOKEN"));
    rc = fetch("test/rate-limited", "config.json", out, &e);
    CHECK("429 with Retry-After: 1 was retried once and succeeded", rc == 0);
    rc = fetch("test/always-429", "config.json", out, &e);
    CHECK("429 again: the message says when to retry", rc && strstr(e.msg, "retry in 1 s"));
    rc = fetch("../etc", "config.json", out, &e);
    CHECK("a bad repo id is refused before any request", rc && e.code == KVP_EUSAGE);
    rc = fetch("Qwen/Qwen3-8B", "../../x", out, &e);
    CHECK("a path with .. is refused", rc && e.code == KVP_EUSAGE);
    setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);
    rc = fetch("Qwen/Qwen3-8B", "README.md", out, &e);
    CHECK("unreachable endpoint: suggests --offline",
          rc && strstr(e.msg, "cannot reach") && strstr(e.msg, "--offline"));
}

static void test_token(void)
{
    char out[4096];
    kvp_error e;
    int from = fr_log_lines();
    setenv("HF_TOKEN", "hf_wrong_secret", 1);
    int rc = fetch("Qwen/Qwen3-8B", "generation_config.json", out, &e);
    CHECK("an invalid token is named by its variable, never shown",
          rc && strstr(e.msg, "HF_TOKEN") && !strstr(e.msg, "hf_wrong_secret"));
    setenv("HF_TOKEN", "hf_user", 1);
    rc = fetch("kvtest/private-model", "config.json", out, &e);
    CHECK("with HF_TOKEN a private repo's file is fetched", rc == 0);
    /* README.md is served as LFS (see main): hub 302, then the cdn */
    rc = fetch("Qwen/Qwen3-8B", "README.md", out, &e);
    char want[128], link[4096], p[200];
    fr_run_line("python3 -c \"import hashlib,sys;print(hashlib.sha256(open(sys.argv[1],'rb')."
                "read()).hexdigest())\" \"$KVP_TEST_FX/hf/Qwen/Qwen3-8B/README.md\"",
                want, sizeof want);
    ssize_t n = rc ? -1 : readlink(out, link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    snprintf(p, sizeof p, "../../blobs/%s", want);
    CHECK("an LFS file comes through the cdn into blobs/<sha256>", rc == 0 && !strcmp(link, p));
    CHECK("the token reached the hub",
          fr_log_count(from, "\"listener\":\"hub\"", "\"auth\":true") > 0);
    CHECK("the cdn was asked, never with the token",
          fr_log_count(from, "\"listener\":\"cdn\"", "\"auth\":false") > 0 &&
              fr_log_count(from, "\"listener\":\"cdn\"", "\"auth\":true") == 0);
    setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1", 1);
    rc = fetch("kvtest/private-model", "generation_config.json", out, &e);
    CHECK("HF_HUB_DISABLE_IMPLICIT_TOKEN: no token sent", rc && strstr(e.msg, "no such model"));
    unsetenv("HF_HUB_DISABLE_IMPLICIT_TOKEN");
    unsetenv("HF_TOKEN");
}

int main(void)
{
    alarm(180);
    fr_clear_env((const char *const[]){FR_HF_VARS, NULL});

    char cmd[1400];
    if (fr_make_dir("hub"))
        return 1;
    snprintf(home, sizeof home, "%s/hf-home", fr.dir);
    setenv("KVP_TEST_FX", fr.fx, 1);
    /* fixtures, then README.md of Qwen/Qwen3-8B made an LFS file (for the cdn) */
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import json,sys;p=sys.argv[1];d=json.load(open(p));d['lfs']="
             "['README.md'];json.dump(d,open(p,'w'))\" '%s/hf/Qwen/Qwen3-8B/.meta.json'",
             fr.fx);
    int fx_ok = fr_fixtures() == 0 && system(cmd) == 0;
    CHECK("fixtures built (tests/remote/mkfixtures.sh)", fx_ok);
    const char *const args[] = {"--token", "hf_user", "--gated-approved-token", "hf_approved",
                                NULL};
    int up = fx_ok && fr_start(args, 15) == 0;
    CHECK("the fake Hub starts", up);
    if (up) {
        char ep[64];
        snprintf(ep, sizeof ep, "http://127.0.0.1:%d/", fr.hub_port); /* the '/' is trimmed */
        setenv("HF_ENDPOINT", ep, 1);
        setenv("HF_HOME", home, 1);
        test_download();
        test_token();
        test_errors();
    }
    fr_cleanup();
    return check_failures != 0;
}
