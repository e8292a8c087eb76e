/* test_hub_files.c - lib/net/hub_files.c: the model-info parser on
 * real-shaped and hostile JSON, llama.cpp's GGUF selection rules on
 * synthetic file lists, and the request against tests/remote/fake_remote.py
 * (fixtures from tests/remote/mkfixtures.sh, built with $KVPLAN, else
 * $UNIT_DIR/../kvplan).  Sizes and sha256s are checked against the fixture
 * files themselves (stat and sha256sum), the commit against the refs route.
 * Proxies are cleared and alarm() bounds the run. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fake_remote.h"
#include "net/hub_files.h"

#define C40 "0123456789abcdef0123456789abcdef01234567"
#define S64 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define B40 "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"

static hub_file_list L;
static kvp_error E;

static int parse(const char *json)
{
    hub_file_list_free(&L);
    memset(&E, 0, sizeof E);
    return hub_parse_model_info(json, strlen(json), "org/repo", &L, &E);
}

static const hub_file *find(const char *path)
{
    for (size_t i = 0; i < L.n; i++)
        if (!strcmp(L.files[i].path, path))
            return &L.files[i];
    return NULL;
}

/* ---- parsing -------------------------------------------------------------------- */

static void test_parse_real(void)
{
    /* the shape of huggingface.co's answer, files out of order */
    const char *j =
        "{\"_id\":\"6650\",\"id\":\"org/repo\",\"modelId\":\"org/repo\",\"author\":\"org\","
        "\"sha\":\"" C40 "\",\"private\":false,\"gated\":\"manual\",\"disabled\":false,"
        "\"tags\":[\"gguf\"],\"siblings\":["
        "{\"rfilename\":\"model-Q8_0.gguf\",\"size\":8709518624,\"blobId\":\"" B40 "\","
        "\"lfs\":{\"sha256\":\"" S64 "\",\"size\":8709518624,\"pointerSize\":135}},"
        "{\"rfilename\":\".gitattributes\",\"size\":1570,\"blobId\":\"" B40 "\"},"
        "{\"rfilename\":\"BF16/model-BF16-00001-of-00002.gguf\",\"size\":5,"
        "\"lfs\":{\"sha256\":\"" S64 "\",\"size\":5}},"
        "{\"rfilename\":\"README.md\"}],"
        "\"gguf\":{\"total\":8190735360,\"architecture\":\"qwen3\",\"context_length\":40960},"
        "\"usedStorage\":1}";
    int rc = parse(j);
    CHECK("parse: a real-shaped model info parses", rc == 0);
    CHECK("parse: the commit is the sha", !strcmp(L.commit, C40));
    CHECK("parse: gated \"manual\" kept", !strcmp(L.gated, "manual"));
    CHECK("parse: every sibling is listed", L.n == 4 && L.dropped == 0);
    CHECK("parse: sorted by path (byte order)",
          L.n == 4 && !strcmp(L.files[0].path, ".gitattributes") &&
              !strcmp(L.files[1].path, "BF16/model-BF16-00001-of-00002.gguf") &&
              !strcmp(L.files[2].path, "README.md") && !strcmp(L.files[3].path, "model-Q8_0.gguf"));
    const hub_file *g = find("model-Q8_0.gguf"), *a = find(".gitattributes"), *r = find("README.md");
    CHECK("parse: an LFS file's size, sha256, blobId",
          g && g->size == 8709518624LL && !strcmp(g->sha256, S64) && !strcmp(g->blob_id, B40) &&
              g->lfs);
    CHECK("parse: a regular file has a blobId and no sha256",
          a && a->size == 1570 && !a->sha256[0] && !strcmp(a->blob_id, B40) && !a->lfs);
    CHECK("parse: without blobs=true fields the size is unknown",
          r && r->size == -1 && !r->sha256[0] && !r->blob_id[0]);
    CHECK("parse: lfs.size alone is enough", find("BF16/model-BF16-00001-of-00002.gguf") &&
                                                 find("BF16/model-BF16-00001-of-00002.gguf")->size == 5);
    rc = parse("{\"sha\":\"" C40 "\",\"siblings\":[]}");
    CHECK("parse: an empty repo is an empty list, gated false", rc == 0 && L.n == 0 &&
                                                                 !strcmp(L.gated, "false"));
}

static void test_parse_refused(void)
{
    int rc = parse("<html>captive portal</html>");
    CHECK("parse: not JSON is an error naming the repo",
          rc && E.code == KVP_EINPUT && strstr(E.msg, "org/repo") && strstr(E.msg, "not JSON"));
    CHECK("parse: the failed list is empty", L.n == 0 && L.files == NULL);
    rc = parse("[{\"rfilename\":\"a.gguf\"}]");
    CHECK("parse: a JSON array is refused", rc && strstr(E.msg, "not a JSON object"));
    rc = parse("{\"siblings\":[]}");
    CHECK("parse: no sha is refused", rc && strstr(E.msg, "\"sha\""));
    rc = parse("{\"sha\":\"0123456789abcdef0123456789abcdef0123456z\",\"siblings\":[]}");
    CHECK("parse: a non-hex sha is refused", rc && strstr(E.msg, "\"sha\""));
    rc = parse("{\"sha\":\"0123456789ABCDEF0123456789ABCDEF01234567\",\"siblings\":[]}");
    CHECK("parse: an upper-case sha is refused", rc);
    rc = parse("{\"sha\":\"" C40 "0\",\"siblings\":[]}");
    CHECK("parse: a 41-hex sha is refused", rc);
    rc = parse("{\"sha\":12,\"siblings\":[]}");
    CHECK("parse: a numeric sha is refused", rc);
    rc = parse("{\"sha\":\"" C40 "\"}");
    CHECK("parse: no siblings is refused", rc && strstr(E.msg, "siblings"));
    rc = parse("{\"sha\":\"" C40 "\",\"siblings\":{\"rfilename\":\"a\"}}");
    CHECK("parse: siblings not an array is refused", rc && strstr(E.msg, "siblings"));
    rc = parse("{\"sha\":\"" C40 "\",\"siblings\":[{\"rfilename\":\"a\",\"size\":"
               "123456789012345678901234567890}]}");
    CHECK("parse: an integer beyond 64 bits fails the document, one line", rc &&
                                                                            !strchr(E.msg, '\n'));
    rc = parse("{\"sha\":\"" C40 "\",\"siblings\":[{\"rfilename\":\"a\\u0000b\"}]}");
    CHECK("parse: a NUL inside a name fails the document", rc);
    rc = hub_parse_model_info(NULL, 0, NULL, &L, &E);
    CHECK("parse: NULL text is an error with a default label",
          rc && strstr(E.msg, "the model info"));
    char deep[5000];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    rc = parse(deep);
    CHECK("parse: deep nesting is an error, not a crash", rc);
}

static void test_parse_hostile(void)
{
    const char *j =
        "{\"sha\":\"" C40 "\",\"gated\":42,\"siblings\":["
        "{\"rfilename\":\"../x.gguf\"},{\"rfilename\":\"/etc/passwd\"},"
        "{\"rfilename\":\"a//b.gguf\"},{\"rfilename\":\"a\\\\b.gguf\"},{\"rfilename\":\"\"},"
        "{\"rfilename\":\"./a.gguf\"},{\"rfilename\":\"a/../../b\"},{\"rfilename\":\"x\\ny\"},"
        "{\"rfilename\":5},{\"name\":\"nameless\"},7,null,\"str\",[],"
        "{\"rfilename\":\"ok-1.gguf\",\"size\":\"12\",\"blobId\":\"" B40 "0\","
        "\"lfs\":{\"sha256\":\"" S64 "x\"}},"
        "{\"rfilename\":\"ok-2.gguf\",\"size\":-5,\"lfs\":\"yes\"},"
        "{\"rfilename\":\"ok-3.gguf\",\"size\":9223372036854775807,"
        "\"lfs\":{\"sha256\":\"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855\"}},"
        "{\"rfilename\":\"ok-4.gguf\",\"size\":1e30,\"blobId\":\"zz\"},"
        "{\"rfilename\":\"ok-5.gguf\",\"size\":100,\"lfs\":{\"size\":200,\"sha256\":7}},"
        "{\"rfilename\":\"ok-6.gguf\",\"size\":1125899906842624},"
        "{\"rfilename\":\"ok-6.gguf\",\"size\":1},"
        "{\"rfilename\":\"ok-7.gguf\",\"size\":1125899906842625}]}";
    int rc = parse(j);
    CHECK("hostile: the document still parses", rc == 0);
    CHECK("hostile: unknown gated value", !strcmp(L.gated, "unknown"));
    CHECK("hostile: bad entries and paths are dropped, not kept", L.n == 7 && L.dropped == 15);
    int unsafe = 0;
    for (size_t i = 0; i < L.n; i++)
        unsafe += !hub_valid_path(L.files[i].path) || strstr(L.files[i].path, "..") != NULL;
    CHECK("hostile: every kept path is valid", unsafe == 0);
    const hub_file *f1 = find("ok-1.gguf"), *f2 = find("ok-2.gguf"), *f3 = find("ok-3.gguf"),
                   *f4 = find("ok-4.gguf"), *f5 = find("ok-5.gguf"), *f6 = find("ok-6.gguf"),
                   *f7 = find("ok-7.gguf");
    CHECK("hostile: a string size is unknown; a bad sha256 or blobId is empty",
          f1 && f1->size == -1 && !f1->sha256[0] && !f1->blob_id[0] && f1->lfs);
    CHECK("hostile: a negative size is unknown; lfs not an object is not LFS",
          f2 && f2->size == -1 && !f2->lfs);
    CHECK("hostile: INT64_MAX is unknown; an upper-case sha256 is refused",
          f3 && f3->size == -1 && !f3->sha256[0]);
    CHECK("hostile: a real-number size is unknown", f4 && f4->size == -1 && !f4->blob_id[0]);
    CHECK("hostile: size and lfs.size disagreeing is unknown", f5 && f5->size == -1);
    CHECK("hostile: a duplicate path keeps the first", f6 && f6->size == HUB_FILE_MAX_SIZE);
    CHECK("hostile: a size above HUB_FILE_MAX_SIZE is unknown", f7 && f7->size == -1);
    rc = parse("{\"sha\":\"" C40 "\",\"gated\":true,\"siblings\":[]}");
    CHECK("hostile: gated true reads as manual", rc == 0 && !strcmp(L.gated, "manual"));
    rc = parse("{\"sha\":\"" C40 "\",\"gated\":\"auto\",\"siblings\":[]}");
    CHECK("hostile: gated auto", rc == 0 && !strcmp(L.gated, "auto"));
    rc = parse("{\"sha\":\"" C40 "\",\"gated\":\"manualmanualmanualmanual\",\"siblings\":[]}");
    CHECK("hostile: a long gated string does not overflow", rc == 0 && !strcmp(L.gated, "unknown"));
}

/* ---- selection -------------------------------------------------------------------- */

/* A list from paths (NULL-terminated), through the parser so it is sorted as
 * a real one is. */
static int mk(const char *first, ...)
{
    char j[8192];
    size_t o = (size_t)snprintf(j, sizeof j, "{\"sha\":\"" C40 "\",\"siblings\":[");
    va_list ap;
    va_start(ap, first);
    for (const char *p = first; p; p = va_arg(ap, const char *))
        o += (size_t)snprintf(j + o, sizeof j - o, "%s{\"rfilename\":\"%s\",\"size\":1}",
                              p == first ? "" : ",", p);
    va_end(ap);
    snprintf(j + o, sizeof j - o, "]}");
    return parse(j);
}

static hub_gguf_pick P;

static int pick(const char *tag)
{
    memset(&E, 0, sizeof E);
    return hub_pick_gguf(&L, "org/repo", tag, &P, &E);
}

static int pick_path(const char *path)
{
    memset(&E, 0, sizeof E);
    return hub_pick_path(&L, "org/repo", path, &P, &E);
}

static int picked(const char *path)
{
    return P.n == 1 && !strcmp(P.shards[0]->path, path);
}

static void test_pick_default(void)
{
    mk("m-Q8_0.gguf", "README.md", "m-Q4_K_M.gguf", "m-BF16.gguf", NULL);
    int rc = pick(NULL);
    CHECK("pick: default is Q4_K_M", rc == 0 && picked("m-Q4_K_M.gguf"));
    CHECK("pick: ... says so", !strcmp(P.why, "Q4_K_M (default)") && !strcmp(P.quant, "Q4_K_M"));
    mk("m-Q8_0.gguf", "m-Q5_K_M.gguf", "m-BF16.gguf", NULL);
    rc = pick(NULL);
    CHECK("pick: no Q4_K_M: Q8_0", rc == 0 && picked("m-Q8_0.gguf") &&
                                       !strcmp(P.why, "Q8_0 (no Q4_K_M)") &&
                                       !strcmp(P.quant, "Q8_0"));
    mk("config.json", "b-Q5_K_M.gguf", "a-Q6_K.gguf", "c-Q2_K.gguf", NULL);
    rc = pick(NULL);
    CHECK("pick: neither: the first GGUF in path order", rc == 0 && picked("a-Q6_K.gguf"));
    CHECK("pick: ... says so, with the name's quant",
          !strcmp(P.why, "the first GGUF (no Q4_K_M or Q8_0)") && !strcmp(P.quant, "Q6_K"));
    mk("model.gguf", NULL);
    rc = pick(NULL);
    CHECK("pick: a name without a quant gives an empty quant", rc == 0 && picked("model.gguf") &&
                                                                 P.quant[0] == 0);
    mk("m-Q4_K_M.GGUF", "m-Q8_0.gguf", NULL);
    rc = pick(NULL);
    CHECK("pick: .GGUF is not a GGUF name (llama.cpp's case-sensitive suffix)",
          rc == 0 && picked("m-Q8_0.gguf"));
}

static void test_pick_not_models(void)
{
    mk("a-mmproj-Q4_K_M.gguf", "imatrix-Q4_K_M.gguf", "mtp-Q4_K_M.gguf", "eagle3-Q4_K_M.gguf",
       "dflash-Q4_K_M.gguf", "dspark-Q4_K_M.gguf", "z-Q4_K_M.gguf", NULL);
    int rc = pick(NULL);
    CHECK("not models: mmproj, imatrix, mtp-, eagle3-, dflash-, dspark- are skipped",
          rc == 0 && picked("z-Q4_K_M.gguf"));
    mk("mmproj-F16.gguf", "model-F16.gguf", NULL);
    rc = pick(NULL);
    CHECK("not models: the first-GGUF fallback skips a projector too",
          rc == 0 && picked("model-F16.gguf"));
    mk("mmproj-dir/m-Q4_K_M.gguf", NULL);
    rc = pick(NULL);
    CHECK("not models: only the file name counts, not the folder",
          rc == 0 && picked("mmproj-dir/m-Q4_K_M.gguf"));
    mk("mmproj-F16.gguf", "m.imatrix.gguf", "README.md", NULL);
    rc = pick(NULL);
    CHECK("not models: only projectors: no model GGUF",
          rc && E.code == KVP_EINPUT && strstr(E.msg, "org/repo has no model GGUF files"));
    mk("config.json", "model.safetensors", NULL);
    rc = pick(NULL);
    CHECK("no GGUF: the message names the repo and config.json",
          rc && E.code == KVP_EINPUT &&
              !strcmp(E.msg, "org/repo has no GGUF files; without :QUANT kvplan reads its "
                             "config.json"));
    rc = pick("Q4_K_M");
    CHECK("no GGUF, with a tag: the same message", rc && strstr(E.msg, "has no GGUF files"));
}

static void test_pick_tag(void)
{
    mk("m-Q4_K_M.gguf", "m-Q4_K_S.gguf", "m-Q8_0.gguf", "m-IQ2_XS.gguf", NULL);
    int rc = pick("q4_k_s");
    CHECK("tag: case-insensitive", rc == 0 && picked("m-Q4_K_S.gguf"));
    CHECK("tag: quant as in the path, why says asked",
          !strcmp(P.quant, "Q4_K_S") && !strcmp(P.why, "Q4_K_S (asked)"));
    rc = pick("Q4_K");
    CHECK("tag: Q4_K does not match Q4_K_M (must be followed by . or -)",
          rc && E.code == KVP_EINPUT && strstr(E.msg, ":Q4_K"));
    CHECK("tag: the error lists the repo's quants",
          strstr(E.msg, "Q4_K_M, Q4_K_S, Q8_0") && strstr(E.msg, "IQ2_XS") &&
              strstr(E.msg, "org/repo"));
    mk("m-Q4_K_M.gguf", "m-Q4_K.gguf", NULL);
    rc = pick("Q4_K");
    CHECK("tag: ... and matches Q4_K. exactly", rc == 0 && picked("m-Q4_K.gguf"));
    mk("m.Q5_K_M.gguf", "m-Q5_K_M-extra.gguf", NULL);
    rc = pick("Q5_K_M");
    CHECK("tag: '.' before and after works (TheBloke's names); the first in path order",
          rc == 0 && picked("m-Q5_K_M-extra.gguf"));
    mk("a-F16.gguf", "b-F16.gguf", "c-F16.gguf", "d-Q1.gguf", "e-Q2.gguf", "f-Q3.gguf",
       "g-Q4.gguf", "h-Q5.gguf", "i-Q6.gguf", "j-Q7.gguf", "k-Q8.gguf", "l-Q9.gguf", "m-Q10.gguf",
       "n-Q11.gguf", NULL);
    rc = pick("Q99");
    CHECK("tag: at most 10 quants listed, distinct, then how many more",
          rc && strstr(E.msg, "F16, Q1,") && !strstr(E.msg, "F16, F16") &&
              !strstr(E.msg, "Q10") && strstr(E.msg, "and 2 more"));
    rc = pick("Q4 K");
    CHECK("tag: a blank in a tag is a usage error", rc && E.code == KVP_EUSAGE);
    rc = pick("");
    CHECK("tag: an empty tag is a usage error", rc && E.code == KVP_EUSAGE);
    rc = pick("Q4_K_M_Q4_K_M_Q4_K_M_Q4_K_M_Q4_K_M_Q4_K_M_Q4_K_M_Q4_K_M");
    CHECK("tag: an overlong tag is a usage error", rc && E.code == KVP_EUSAGE);
}

static void test_pick_split(void)
{
    mk("Q4_K_M/m-Q4_K_M-00003-of-00003.gguf", "Q4_K_M/m-Q4_K_M-00001-of-00003.gguf",
       "z-Q8_0.gguf", "Q4_K_M/m-Q4_K_M-00002-of-00003.gguf", "Q4_K_M/README.md", NULL);
    int rc = pick(NULL);
    CHECK("split: shards in a folder collected, shard 1 first, in order",
          rc == 0 && P.n == 3 && !strcmp(P.shards[0]->path, "Q4_K_M/m-Q4_K_M-00001-of-00003.gguf") &&
              !strcmp(P.shards[1]->path, "Q4_K_M/m-Q4_K_M-00002-of-00003.gguf") &&
              !strcmp(P.shards[2]->path, "Q4_K_M/m-Q4_K_M-00003-of-00003.gguf"));
    CHECK("split: the shards point into the list", rc == 0 && P.shards[0] >= L.files &&
                                                       P.shards[0] < L.files + L.n);
    mk("m-Q4_K_M-00002-of-00002.gguf", "n-Q4_K_M.gguf", NULL);
    rc = pick(NULL);
    CHECK("split: shard 2 alone never qualifies", rc == 0 && picked("n-Q4_K_M.gguf"));
    mk("m-Q8_0-00001-of-00003.gguf", "m-Q8_0-00003-of-00003.gguf", NULL);
    rc = pick("Q8_0");
    CHECK("split: a missing shard is an error naming it",
          rc && E.code == KVP_EINPUT && strstr(E.msg, "m-Q8_0-00002-of-00003.gguf") &&
              strstr(E.msg, "org/repo"));
    mk("a/m-00001-of-00002.gguf", "b/m-00002-of-00002.gguf", NULL);
    rc = pick(NULL);
    CHECK("split: a shard in another folder is not the same set", rc && strstr(E.msg, "a/m-00002"));
    mk("m-00001-of-00002.gguf", "m-00002-of-00002.gguf", "m-00002-of-00003.gguf", NULL);
    rc = pick(NULL);
    CHECK("split: a shard of another count is not the same set", rc == 0 && P.n == 2 &&
                                                                 !strcmp(P.shards[1]->path,
                                                                         "m-00002-of-00002.gguf"));
    mk("m-00001-of-00065.gguf", NULL);
    rc = pick(NULL);
    CHECK("split: more than 64 shards is refused", rc && strstr(E.msg, "at most 64"));
    mk("m-Q4_K_M-00001-of-00001.gguf", NULL);
    rc = pick(NULL);
    CHECK("split: 1 of 1 is a single file", rc == 0 && picked("m-Q4_K_M-00001-of-00001.gguf"));
}

static void test_pick_path(void)
{
    mk("Q4_K_M/m-Q4_K_M-00001-of-00002.gguf", "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf",
       "m-Q8_0.gguf", "README.md", NULL);
    snprintf(L.revision, sizeof L.revision, "v2");
    int rc = pick_path("q4_k_m/M-q4_k_m-00001-of-00002.GGUF");
    CHECK("path: matched case-insensitively; shard 1 expands to all shards",
          rc == 0 && P.n == 2 && !strcmp(P.shards[1]->path, "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf"));
    CHECK("path: no quant, why says named", P.quant[0] == 0 && !strcmp(P.why, "the named file"));
    rc = pick_path("Q4_K_M/m-Q4_K_M-00002-of-00002.gguf");
    CHECK("path: naming shard 2 is an error saying to name shard 1",
          rc && E.code == KVP_EINPUT && strstr(E.msg, "shard 1") &&
              strstr(E.msg, "Q4_K_M/m-Q4_K_M-00001-of-00002.gguf"));
    rc = pick_path("m-Q8_0.gguf");
    CHECK("path: a single file", rc == 0 && picked("m-Q8_0.gguf"));
    rc = pick_path("m-Q6_K.gguf");
    CHECK("path: not found names the path and revision, lists nothing",
          rc && E.code == KVP_EINPUT && strstr(E.msg, "m-Q6_K.gguf") && strstr(E.msg, "v2") &&
              !strstr(E.msg, "Q8_0"));
    rc = pick_path("README.md");
    CHECK("path: a file that is not a GGUF is refused", rc && strstr(E.msg, "not a GGUF"));
    rc = pick_path("../m-Q8_0.gguf");
    CHECK("path: a path with .. is a usage error", rc && E.code == KVP_EUSAGE);
}

static void test_split_name(void)
{
    char p[64];
    unsigned no = 0, count = 0;
    int k = hub_split_name("BF16/Qwen3-8B-BF16-00001-of-00002.gguf", p, sizeof p, &no, &count);
    CHECK("split name: prefix with its folder, number, count",
          k == 1 && !strcmp(p, "BF16/Qwen3-8B-BF16") && no == 1 && count == 2);
    k = hub_split_name("x-00002-OF-00003.gguf", p, sizeof p, &no, &count);
    CHECK("split name: -OF- in any case", k == 1 && !strcmp(p, "x") && no == 2 && count == 3);
    CHECK("split name: not shards", hub_split_name("x.gguf", p, sizeof p, &no, &count) == 0 &&
                                        hub_split_name("x-00000-of-00002.gguf", p, 64, &no, &count) == 0 &&
                                        hub_split_name("x-00003-of-00002.gguf", p, 64, &no, &count) == 0 &&
                                        hub_split_name("-00001-of-00002.gguf", p, 64, &no, &count) == 0 &&
                                        hub_split_name("x-0001-of-00002.gguf", p, 64, &no, &count) == 0 &&
                                        hub_split_name("x-00001-of-00002.GGUF", p, 64, &no, &count) == 0 &&
                                        hub_split_name("x-00001_of-00002.gguf", p, 64, &no, &count) == 0 &&
                                        hub_split_name("x-00001-of-0000a.gguf", p, 64, &no, &count) == 0 &&
                                        hub_split_name("", p, 64, &no, &count) == 0 &&
                                        hub_split_name(NULL, p, 64, &no, &count) == 0);
    CHECK("split name: a prefix that does not fit is -1",
          hub_split_name("abcdefgh-00001-of-00002.gguf", p, 8, &no, &count) == -1 &&
              hub_split_name("abcdefgh-00001-of-00002.gguf", p, 9, &no, &count) == 1);
    CHECK("split name: prefix may be NULL",
          hub_split_name("abc-00002-of-00002.gguf", NULL, 0, &no, &count) == 1 && no == 2);
}

/* ---- against the fake Hub ------------------------------------------------------------ */

/* targetCommit of a branch or tag, from the refs route (not the code under test). */
static void ref_commit(const char *repo, const char *kind, const char *name, char out[41])
{
    char url[300];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/models/%s/refs", fr.hub_port, repo);
    net_request q = {0};
    q.url = url;
    q.allow_http = 1;
    net_result r;
    kvp_error e;
    out[0] = 0;
    if (net_fetch(NULL, &q, &r, &e) == 0 && r.status == 200 && r.body) {
        json_t *root = json_loadb((const char *)r.body, r.body_len, 0, NULL);
        json_t *v, *arr = json_object_get(root, kind);
        size_t i;
        json_array_foreach(arr, i, v) {
            const char *c = json_string_value(json_object_get(v, "targetCommit"));
            const char *nm = json_string_value(json_object_get(v, "name"));
            if (nm && c && !strcmp(nm, name) && strlen(c) == 40)
                memcpy(out, c, 41);
        }
        json_decref(root);
    }
    net_result_free(&r);
}

static hub_settings S;
static net_session *sess;

static int list(const char *repo, const char *rev)
{
    hub_file_list_free(&L);
    memset(&E, 0, sizeof E);
    int rc = hub_list_files(&S, sess, repo, rev, &L, &E);
    if (rc)
        printf("# %s: %s\n", repo, E.msg);
    return rc;
}

static int settings(void)
{
    kvp_error e;
    return hub_settings_from_env(&S, &e);
}

/* Every fixture GGUF of kvtest/Qwen3-8B-GGUF listed with its real size and sha256. */
static void check_fixture_hashes(void)
{
    const char *ggufs[] = {"Qwen3-8B-Q4_K_M.gguf", "Qwen3-8B-Q8_0.gguf",
                           "BF16/Qwen3-8B-BF16-00001-of-00002.gguf",
                           "BF16/Qwen3-8B-BF16-00002-of-00002.gguf"};
    int good = 0;
    for (size_t i = 0; i < 4; i++) {
        char p[700], cmd[800], want[128];
        struct stat st;
        snprintf(p, sizeof p, "%s/hf/kvtest/Qwen3-8B-GGUF/%s", fr.fx, ggufs[i]);
        snprintf(cmd, sizeof cmd, "sha256sum '%s'", p);
        fr_run_line(cmd, want, sizeof want);
        want[strcspn(want, " ")] = 0;
        const hub_file *f = find(ggufs[i]);
        if (f && stat(p, &st) == 0 && f->size == (int64_t)st.st_size && strlen(want) == 64 &&
            !strcmp(f->sha256, want) && f->lfs)
            good++;
        else
            printf("# %s: size %lld sha256 %s, want %s\n", ggufs[i], f ? (long long)f->size : -2LL,
                   f ? f->sha256 : "-", want);
    }
    CHECK("remote: each GGUF's size and sha256 are the fixture file's (stat, sha256sum)",
          good == 4);
    const hub_file *readme = find("README.md");
    struct stat st;
    char p[700];
    snprintf(p, sizeof p, "%s/hf/kvtest/Qwen3-8B-GGUF/README.md", fr.fx);
    CHECK("remote: a regular file: its size, a blobId, no sha256",
          readme && stat(p, &st) == 0 && readme->size == (int64_t)st.st_size &&
              hub_valid_commit(readme->blob_id) && !readme->sha256[0]);
}

static void test_remote_gguf_repo(void)
{
    int from = fr_log_lines();
    int rc = list("kvtest/Qwen3-8B-GGUF", NULL);
    char main_commit[41], v1[41];
    CHECK("remote: kvtest/Qwen3-8B-GGUF is listed", rc == 0);
    CHECK("remote: one GET of the model info with blobs=true, at revision main",
          fr_log_count(from, "\"path\":\"/api/models/kvtest/Qwen3-8B-GGUF/revision/main\"",
                       "blobs=true") == 1 &&
              fr_log_count(from, "", "") == 1 &&
              fr_log_count(from, "\"method\":\"GET\"", "") == 1);
    ref_commit("kvtest/Qwen3-8B-GGUF", "branches", "main", main_commit);
    CHECK("remote: its commit is what the refs route says for main",
          rc == 0 && main_commit[0] && !strcmp(L.commit, main_commit));
    CHECK("remote: the revision asked for is kept for messages", !strcmp(L.revision, "main"));
    CHECK("remote: gated false", !strcmp(L.gated, "false"));
    check_fixture_hashes();

    rc = pick(NULL);
    CHECK("remote: default pick is Q4_K_M", rc == 0 && picked("Qwen3-8B-Q4_K_M.gguf") &&
                                                 !strcmp(P.why, "Q4_K_M (default)"));
    rc = pick("Q8_0");
    CHECK("remote: :Q8_0", rc == 0 && picked("Qwen3-8B-Q8_0.gguf"));
    rc = pick("BF16");
    CHECK("remote: :BF16 is the two shards in BF16/",
          rc == 0 && P.n == 2 && !strcmp(P.shards[0]->path, "BF16/Qwen3-8B-BF16-00001-of-00002.gguf") &&
              !strcmp(P.shards[1]->path, "BF16/Qwen3-8B-BF16-00002-of-00002.gguf"));
    rc = pick("Q5_K_M");
    CHECK("remote: a missing quant lists Q4_K_M, Q8_0 and BF16",
          rc && strstr(E.msg, "BF16") && strstr(E.msg, "Q4_K_M") && strstr(E.msg, "Q8_0"));

    ref_commit("kvtest/Qwen3-8B-GGUF", "tags", "v1", v1);
    rc = list("kvtest/Qwen3-8B-GGUF", "v1");
    CHECK("remote: tag v1 lists its own commit", rc == 0 && v1[0] && !strcmp(L.commit, v1) &&
                                                     strcmp(v1, main_commit));
    rc = list("kvtest/Llama-3.2-1B-Instruct-GGUF", NULL);
    int prc = rc ? -1 : pick(NULL);
    CHECK("remote: a split Q4_K_M in a folder is the default, both shards",
          prc == 0 && P.n == 2 &&
              !strcmp(P.shards[0]->path, "Q4_K_M/Llama-3.2-1B-Instruct-Q4_K_M-00001-of-00002.gguf") &&
              !strcmp(P.shards[1]->path, "Q4_K_M/Llama-3.2-1B-Instruct-Q4_K_M-00002-of-00002.gguf"));
    rc = list("Qwen/Qwen3-8B", NULL);
    prc = rc ? 0 : hub_pick_gguf(&L, "Qwen/Qwen3-8B", NULL, &P, &E);
    CHECK("remote: a repo without GGUFs says to drop :QUANT",
          rc == 0 && prc && strstr(E.msg, "Qwen/Qwen3-8B has no GGUF files"));
}

static void test_remote_cases(void)
{
    int from = fr_log_lines();
    int rc = list("Qwen/Qwen3-8B", "refs/pr/1");
    CHECK("remote: refs/pr/1 is percent-encoded as huggingface_hub does",
          rc == 0 && !strncmp(L.commit, "2222", 4) &&
              fr_log_count(from, "revision/refs%2Fpr%2F1", "\"status\":200") == 1);
    rc = list("test/paginated", NULL);
    CHECK("remote: model info is not paginated: nested files are listed",
          rc == 0 && find("extra/notes.md") && find("Qwen3-8B-Q4_K_M.gguf"));
    rc = list("kvtest/Qwen3-8B-old-name", NULL);
    CHECK("remote: a renamed repo's same-origin 307 is followed",
          rc == 0 && find("config.json") && hub_valid_commit(L.commit));
    rc = list("kvtest/no-such-model", NULL);
    CHECK("remote: a missing repo gives RepoNotFound's line",
          rc && E.code == KVP_EINPUT && strstr(E.msg, "kvtest/no-such-model: no such model repository") &&
              strstr(E.msg, "private"));
    CHECK("remote: a failed list is empty", L.n == 0 && L.files == NULL);
    rc = list("meta-llama/Llama-3.2-1B-Instruct", NULL);
    CHECK("remote: a gated repo's model info is public, gated manual",
          rc == 0 && !strcmp(L.gated, "manual") && find("config.json"));
    rc = list("kvtest/Qwen3-8B-GGUF", "no-such-branch");
    CHECK("remote: an unknown revision is RevisionNotFound's line",
          rc && strstr(E.msg, "no revision no-such-branch"));
    rc = list("kvtest/private-model", NULL);
    CHECK("remote: a private repo without a token: not found", rc && strstr(E.msg, "no such model"));
    setenv("HF_TOKEN", "hf_user", 1);
    settings();
    from = fr_log_lines();
    rc = list("kvtest/private-model", NULL);
    CHECK("remote: ... with HF_TOKEN it is listed, the token sent to the hub",
          rc == 0 && find("config.json") &&
              fr_log_count(from, "\"listener\":\"hub\"", "\"auth\":true") == 1);
    setenv("HF_TOKEN", "hf_bad_secret", 1);
    settings();
    rc = list("kvtest/Qwen3-8B-GGUF", NULL);
    CHECK("remote: a rejected token is named by its variable, never shown",
          rc && strstr(E.msg, "HF_TOKEN") && !strstr(E.msg, "hf_bad_secret"));
    unsetenv("HF_TOKEN");
    settings();
    rc = list("test/rate-limited", NULL);
    CHECK("remote: a 429 with Retry-After: 1 is retried once", rc == 0 && find("config.json"));
    rc = list("test/always-429", NULL);
    CHECK("remote: 429 again says when to retry", rc && strstr(E.msg, "retry in 1 s"));
    rc = list("../etc", NULL);
    CHECK("remote: a bad repo id is a usage error", rc && E.code == KVP_EUSAGE);
    rc = list("kvtest/Qwen3-8B-GGUF", "../../x");
    CHECK("remote: a bad revision is a usage error", rc && E.code == KVP_EUSAGE);

    int before = fr_log_lines();
    setenv("HF_HUB_OFFLINE", "1", 1);
    settings();
    rc = list("kvtest/Qwen3-8B-GGUF", NULL);
    CHECK("remote: offline is refused", rc && E.code == KVP_EINPUT && strstr(E.msg, "HF_HUB_OFFLINE"));
    CHECK("remote: ... without a request", fr_log_lines() == before);
    unsetenv("HF_HUB_OFFLINE");
    setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);
    settings();
    rc = list("kvtest/Qwen3-8B-GGUF", NULL);
    CHECK("remote: an unreachable endpoint suggests --offline",
          rc && strstr(E.msg, "cannot reach") && strstr(E.msg, "--offline"));
}

int main(void)
{
    alarm(240);
    fr_clear_env((const char *const[]){FR_HF_VARS, NULL});

    test_parse_real();
    test_parse_refused();
    test_parse_hostile();
    test_pick_default();
    test_pick_not_models();
    test_pick_tag();
    test_pick_split();
    test_pick_path();
    test_split_name();

    if (fr_make_dir("hubfiles"))
        return 1;
    char home[300];
    snprintf(home, sizeof home, "%s/hf-home", fr.dir);
    int fx_ok = fr_fixtures() == 0;
    CHECK("fixtures built (tests/remote/mkfixtures.sh)", fx_ok);
    const char *const args[] = {"--token", "hf_user", "--gated-approved-token", "hf_approved",
                                NULL};
    int up = fx_ok && fr_start(args, 30) == 0; /* it hashes the fixtures first */
    CHECK("the fake Hub starts", up);
    kvp_error e;
    if (up && (sess = net_session_new(&e)) != NULL) {
        char ep[64];
        snprintf(ep, sizeof ep, "http://127.0.0.1:%d", fr.hub_port);
        setenv("HF_ENDPOINT", ep, 1);
        setenv("HF_HOME", home, 1);
        CHECK("settings from the environment", settings() == 0);
        test_remote_gguf_repo();
        test_remote_cases();
        net_session_free(sess);
    }
    hub_file_list_free(&L);
    fr_cleanup();
    return check_failures != 0;
}
