/* test_ollama.c - lib/net/ollama.c: names, manifest and params parsing from
 * strings (hostile ones included), then the registry client against
 * tests/remote/fake_remote.py and a local Ollama store laid out here.
 *
 * The fixtures come from tests/remote/mkfixtures.sh (using $KVPLAN, else
 * $UNIT_DIR/../kvplan), plus one tag added here whose blob store answers
 * 403 with a signed URL (the message must not show its query).  Expected
 * values are read from the fixture files (params, GGUF size and sha256),
 * never hard-coded.  Offline runs must add no line to the server's log.
 * Proxies are cleared and alarm() bounds the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fake_remote.h"
#include "net/http.h"
#include "net/ollama.h"

static char store[300], empty_store[300];

/* ---- parsing, no server ------------------------------------------------------ */

static int parses(const char *s, ollama_name *n)
{
    kvp_error e = {0};
    return ollama_parse_name(s, n, &e) == 0;
}

static int refused(const char *s)
{
    ollama_name n;
    kvp_error e = {0};
    int rc = ollama_parse_name(s, &n, &e);
    if (rc == 0)
        printf("# accepted: %s -> %s\n", s, n.display);
    return rc && e.code == KVP_EUSAGE && strstr(e.msg, "not a valid Ollama model name") &&
           !strchr(e.msg, '\n');
}

static void test_names(void)
{
    ollama_name n;
    CHECK("qwen3: defaults host, namespace and tag",
          parses("qwen3", &n) && !strcmp(n.host, "registry.ollama.ai") &&
              !strcmp(n.ns, "library") && !strcmp(n.model, "qwen3") && !strcmp(n.tag, "latest") &&
              !strcmp(n.display, "qwen3:latest"));
    CHECK("qwen3:8b: the tag, displayed as Ollama does",
          parses("qwen3:8b", &n) && !strcmp(n.tag, "8b") && !strcmp(n.display, "qwen3:8b"));
    CHECK("qwen2.5:7b-instruct-q4_K_M: dots in the model, mixed case in the tag",
          parses("qwen2.5:7b-instruct-q4_K_M", &n) && !strcmp(n.model, "qwen2.5") &&
              !strcmp(n.tag, "7b-instruct-q4_K_M"));
    CHECK("user/model: a user namespace on the default registry",
          parses("user/model", &n) && !strcmp(n.host, "registry.ollama.ai") &&
              !strcmp(n.ns, "user") && !strcmp(n.model, "model") && !strcmp(n.tag, "latest") &&
              !strcmp(n.display, "user/model:latest"));
    CHECK("hf.co/org/repo:Q4_K_M: host hf.co, namespace the org",
          parses("hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M", &n) && !strcmp(n.host, "hf.co") &&
              !strcmp(n.ns, "unsloth") && !strcmp(n.model, "Qwen3-8B-GGUF") &&
              !strcmp(n.tag, "Q4_K_M") && !strcmp(n.display, "hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M"));
    CHECK("host:port/ns/model:tag: the port stays in the host",
          parses("localhost:5000/team/m:v1", &n) && !strcmp(n.host, "localhost:5000") &&
              !strcmp(n.ns, "team") && !strcmp(n.model, "m") && !strcmp(n.tag, "v1"));
    CHECK("host:port/ns/model: a ':' before the last '/' is not a tag",
          parses("localhost:5000/team/m", &n) && !strcmp(n.host, "localhost:5000") &&
              !strcmp(n.tag, "latest"));
    CHECK("an explicit default host is left out of the display",
          parses("registry.ollama.ai/library/qwen3:8b", &n) && !strcmp(n.display, "qwen3:8b"));

    char longer[120];
    memset(longer, 'a', 81);
    longer[81] = 0;
    const char *bad[] = {"", "qwen3:", ":8b", "/qwen3", "user/", "a/b/c/d", "../x", "x/..",
                         "qwen3:../../etc", "a..b", "qw%en", "qwen3:8b\n", "qw\x01" "en",
                         "user.name/m", "-x", ".hidden", "host:99999/a/b", "host:/a/b",
                         "host:80x/a/b", "https://registry.ollama.ai/library/qwen3", "a b",
                         "x@sha256:00", "qwen3:8b:extra", "m\xc3\xa9", longer};
    int all = 1;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (!refused(bad[i])) {
            printf("# not refused as expected: [%s]\n", bad[i]);
            all = 0;
        }
    CHECK("bad names refused with KVP_EUSAGE (.., %, control chars, empty parts, ...)", all);
    kvp_error e = {0};
    ollama_parse_name("qw\ten:8b", &n, &e);
    CHECK("a refused name is shown without its control characters", !strchr(e.msg, '\t'));

    char base[512];
    int http = -1;
    unsetenv("KVPLAN_OLLAMA_REGISTRY");
    parses("qwen3:8b", &n);
    CHECK("registry.ollama.ai: https by default",
          ollama_base_url(&n, base, sizeof base, &http, &e) == 0 &&
              !strcmp(base, "https://registry.ollama.ai") && http == 0);
    setenv("KVPLAN_OLLAMA_REGISTRY", "http://127.0.0.1:9/", 1);
    CHECK("KVPLAN_OLLAMA_REGISTRY=http://...: http allowed, '/' trimmed",
          ollama_base_url(&n, base, sizeof base, &http, &e) == 0 &&
              !strcmp(base, "http://127.0.0.1:9") && http == 1);
    setenv("KVPLAN_OLLAMA_REGISTRY", "ftp://127.0.0.1/", 1);
    CHECK("KVPLAN_OLLAMA_REGISTRY=ftp://...: a usage error naming the variable",
          ollama_base_url(&n, base, sizeof base, &http, &e) && e.code == KVP_EUSAGE &&
              strstr(e.msg, "KVPLAN_OLLAMA_REGISTRY"));
    setenv("KVPLAN_OLLAMA_REGISTRY", "https://user:secret@registry.example", 1);
    CHECK("KVPLAN_OLLAMA_REGISTRY with credentials: refused, the password not shown",
          ollama_base_url(&n, base, sizeof base, &http, &e) && e.code == KVP_EUSAGE &&
              !strstr(e.msg, "secret"));
    unsetenv("KVPLAN_OLLAMA_REGISTRY");
    unsetenv("HF_ENDPOINT");
    parses("hf.co/org/repo:Q8_0", &n);
    CHECK("hf.co: the Hub's registry at https://huggingface.co",
          ollama_base_url(&n, base, sizeof base, &http, &e) == 0 &&
              !strcmp(base, "https://huggingface.co") && http == 0);
    parses("localhost:5000/team/m", &n);
    CHECK("another host: https://host:port, never http",
          ollama_base_url(&n, base, sizeof base, &http, &e) == 0 &&
              !strcmp(base, "https://localhost:5000") && http == 0);
    char ua[256];
    CHECK("default user agent is Ollama-style",
          ollama_user_agent(ua, sizeof ua, &e) == 0 && !strncmp(ua, "ollama/0.33.0 (", 15) &&
              strstr(ua, ") Go/go"));
}

#define SHA_A "sha256:" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "sha256:" "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SHA_C "sha256:" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEAD_ "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution." \
              "manifest.v2+json\",\"config\":{\"mediaType\":\"application/vnd.docker." \
              "container.image.v1+json\",\"digest\":\"" SHA_C "\",\"size\":486},"
#define LAYER(type, dg, size) "{\"mediaType\":\"application/vnd.ollama.image." type "\"," \
                              "\"digest\":\"" dg "\",\"size\":" size "}"

static int manifest_fails(const char *text, const char *want)
{
    ollama_manifest m;
    kvp_error e = {0};
    int rc = ollama_parse_manifest(text, strlen(text), "ollama:t:x", &m, &e);
    int ok = rc && e.code == KVP_EINPUT && !strncmp(e.msg, "ollama:t:x: ", 12) &&
             (!want || strstr(e.msg, want));
    if (!ok)
        printf("# %s -> rc %d: %s\n", text, rc, e.msg);
    return ok;
}

static void test_manifests(void)
{
    const char *real = HEAD_ "\"layers\":[" LAYER("model", SHA_A, "5027783808") ","
                       LAYER("template", SHA_B, "1723") "," LAYER("license", SHA_B, "11338") ","
                       LAYER("params", SHA_C, "148") "]}";
    ollama_manifest m;
    kvp_error e = {0};
    int rc = ollama_parse_manifest(real, strlen(real), "ollama:qwen3:8b", &m, &e);
    CHECK("a real-shaped manifest: model layer digest and 64-bit size",
          rc == 0 && m.has_model && !strcmp(m.model.digest, SHA_A) &&
              m.model.size == 5027783808ull);
    CHECK("... its params layer and config blob",
          rc == 0 && m.has_params && !strcmp(m.params.digest, SHA_C) && m.params.size == 148 &&
              m.has_config && m.config.size == 486 && !m.has_config_json &&
              m.n_tensor_layers == 0 && m.n_layers == 4);
    CHECK("... and what kinds of layer it has",
          rc == 0 && !strcmp(m.layer_kinds, "model, template, license, params"));

    const char *st = HEAD_ "\"layers\":[" LAYER("tensor", SHA_A, "10") "," LAYER("tensor", SHA_B,
                     "20") "," LAYER("tensor", SHA_C, "30") ","
                     "{\"mediaType\":\"application/vnd.ollama.image.json\",\"digest\":\"" SHA_B
                     "\",\"size\":9,\"name\":\"tokenizer.json\"},"
                     "{\"mediaType\":\"application/vnd.ollama.image.json\",\"digest\":\"" SHA_C
                     "\",\"size\":700,\"name\":\"config.json\"}]}";
    rc = ollama_parse_manifest(st, strlen(st), "ollama:st", &m, &e);
    CHECK("a safetensors manifest: tensor layers counted, config.json found by name",
          rc == 0 && !m.has_model && m.n_tensor_layers == 3 && m.has_config_json &&
              !strcmp(m.config_json.digest, SHA_C) && m.config_json.size == 700 &&
              !strcmp(m.config_json.name, "config.json"));
    const char *two = HEAD_ "\"layers\":[" LAYER("model", SHA_A, "1") "," LAYER("model", SHA_B,
                      "2") "]}";
    rc = ollama_parse_manifest(two, strlen(two), "ollama:two", &m, &e);
    CHECK("two model layers: the last one, as Ollama's GetModel",
          rc == 0 && !strcmp(m.model.digest, SHA_B) && m.model.size == 2);
    const char *noconfig = "{\"schemaVersion\":2,\"layers\":[" LAYER("model", SHA_A, "1") "]}";
    rc = ollama_parse_manifest(noconfig, strlen(noconfig), "ollama:nc", &m, &e);
    CHECK("no config and no mediaType: still a manifest", rc == 0 && !m.has_config && m.has_model);

    CHECK("not JSON", manifest_fails("<html>502 Bad Gateway</html>", "not JSON"));
    CHECK("empty body", manifest_fails("", "not JSON"));
    CHECK("a JSON array", manifest_fails("[]", "not a JSON object"));
    CHECK("schemaVersion 1", manifest_fails("{\"schemaVersion\":1,\"layers\":[]}", "schemaVersion 2"));
    CHECK("schemaVersion as a string",
          manifest_fails("{\"schemaVersion\":\"2\",\"layers\":[]}", "schemaVersion 2"));
    CHECK("a manifest list",
          manifest_fails("{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution"
                         ".manifest.list.v2+json\",\"manifests\":[]}", "not an image manifest"));
    CHECK("no layers", manifest_fails("{\"schemaVersion\":2}", "no layers"));
    CHECK("layers not an array", manifest_fails("{\"schemaVersion\":2,\"layers\":{}}", "no layers"));
    CHECK("a layer that is not an object",
          manifest_fails("{\"schemaVersion\":2,\"layers\":[7]}", "not an object"));
    CHECK("a layer without mediaType",
          manifest_fails("{\"schemaVersion\":2,\"layers\":[{\"digest\":\"" SHA_A "\",\"size\":1}]}",
                         "mediaType"));
    CHECK("upper-case digest", manifest_fails(
        HEAD_ "\"layers\":[" LAYER("model", "sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "1") "]}",
        "bad digest"));
    CHECK("short digest", manifest_fails(HEAD_ "\"layers\":[" LAYER("model", "sha256:abc", "1") "]}",
                                         "bad digest"));
    CHECK("a path in the digest", manifest_fails(
        HEAD_ "\"layers\":[" LAYER("model", "sha256:../../../../etc/passwd", "1") "]}", "bad digest"));
    CHECK("sha512 digest", manifest_fails(
        HEAD_ "\"layers\":[" LAYER("model", "sha512:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1") "]}",
        "bad digest"));
    CHECK("bad config digest", manifest_fails(
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"sha256:zz\",\"size\":1},"
        "\"layers\":[]}", "config has a bad digest"));
    CHECK("negative size", manifest_fails(HEAD_ "\"layers\":[" LAYER("model", SHA_A, "-1") "]}",
                                          "bad size"));
    CHECK("absurd size (2^60)", manifest_fails(
        HEAD_ "\"layers\":[" LAYER("model", SHA_A, "1152921504606846976") "]}", "bad size"));
    CHECK("size beyond int64", manifest_fails(
        HEAD_ "\"layers\":[" LAYER("model", SHA_A, "99999999999999999999999") "]}", "not JSON"));
    CHECK("fractional size", manifest_fails(HEAD_ "\"layers\":[" LAYER("model", SHA_A, "1.5") "]}",
                                            "bad size"));
    CHECK("size as a string", manifest_fails(HEAD_ "\"layers\":[" LAYER("model", SHA_A, "\"1\"") "]}",
                                             "bad size"));
    CHECK("duplicate keys", manifest_fails("{\"schemaVersion\":2,\"schemaVersion\":2,\"layers\":[]}",
                                           "not JSON"));
    CHECK("cut short", manifest_fails(HEAD_ "\"layers\":[" LAYER("model", SHA_A, "1"), "not JSON"));
}

static int params_ok(const char *text, ollama_params *p)
{
    kvp_error e = {0};
    int rc = ollama_parse_params(text, strlen(text), "ollama:p", p, &e);
    if (rc)
        printf("# %s -> %s\n", text, e.msg);
    return rc == 0;
}

static int params_fail(const char *text, const char *want)
{
    ollama_params p;
    kvp_error e = {0};
    int rc = ollama_parse_params(text, strlen(text), "ollama:p", &p, &e);
    int ok = rc && e.code == KVP_EINPUT && !strncmp(e.msg, "ollama:p: ", 10) && strstr(e.msg, want);
    if (!ok)
        printf("# %s -> rc %d: %s\n", text, rc, e.msg);
    return ok;
}

static void test_params(void)
{
    ollama_params p;
    CHECK("params: num_ctx read, other keys ignored",
          params_ok("{\"num_ctx\":16384,\"stop\":[\"<|im_end|>\"],\"temperature\":0.6}", &p) &&
              p.has_num_ctx && p.num_ctx == 16384 && !p.has_num_batch && !p.has_num_gpu);
    CHECK("params: num_batch, num_gpu -1, a float num_ctx as Ollama truncates it",
          params_ok("{\"num_ctx\":8192.0,\"num_batch\":1024,\"num_gpu\":-1}", &p) &&
              p.has_num_ctx && p.num_ctx == 8192 && p.has_num_batch && p.num_batch == 1024 &&
              p.has_num_gpu && p.num_gpu == -1);
    CHECK("params: null is not set", params_ok("{\"num_ctx\":null}", &p) && !p.has_num_ctx);
    CHECK("params: no options at all", params_ok("{}", &p) && !p.has_num_ctx);
    CHECK("params: odd types of unknown keys ignored",
          params_ok("{\"temperature\":\"hot\",\"num_ctx\":4096,\"x\":{\"y\":[]}}", &p) &&
              p.num_ctx == 4096);
    CHECK("params: num_ctx as a string", params_fail("{\"num_ctx\":\"16384\"}", "num_ctx must be a number"));
    CHECK("params: num_ctx as a boolean", params_fail("{\"num_ctx\":true}", "num_ctx"));
    CHECK("params: num_batch as an array", params_fail("{\"num_batch\":[1]}", "num_batch"));
    CHECK("params: num_gpu as an object", params_fail("{\"num_gpu\":{}}", "num_gpu"));
    CHECK("params: num_ctx 1e30", params_fail("{\"num_ctx\":1e30}", "out of range"));
    CHECK("params: num_ctx 2^51", params_fail("{\"num_ctx\":2251799813685248}", "out of range"));
    CHECK("params: negative num_ctx", params_fail("{\"num_ctx\":-1}", "out of range"));
    CHECK("params: num_gpu -2", params_fail("{\"num_gpu\":-2}", "out of range"));
    CHECK("params: a JSON array", params_fail("[16384]", "not a JSON object"));
    CHECK("params: not JSON", params_fail("num_ctx 16384", "not JSON"));

    ollama_config c;
    kvp_error e = {0};
    const char *cloud = "{\"model_format\":\"\",\"model_family\":\"gptoss\","
                        "\"remote_host\":\"https://ollama.com:443\",\"remote_model\":\"gpt-oss\"}";
    CHECK("config: remote_host makes a cloud model",
          ollama_parse_config(cloud, strlen(cloud), "ollama:c", &c, &e) == 0 && c.is_remote &&
              !strcmp(c.family, "gptoss"));
    const char *gguf = "{\"model_format\":\"gguf\",\"model_family\":\"qwen3\",\"model_type\":7,"
                       "\"file_type\":\"Q4_K_M\"}";
    CHECK("config: strings taken, a number where a string belongs left empty",
          ollama_parse_config(gguf, strlen(gguf), "ollama:c", &c, &e) == 0 && !c.is_remote &&
              !strcmp(c.file_type, "Q4_K_M") && c.model_type[0] == 0);
}

/* ---- against the fake registry ------------------------------------------------ */

/* sha256 hex and size of a fixture file, computed by python3, not by the code under test. */
static void file_facts(const char *rel, char sha[80], unsigned long long *size)
{
    char cmd[900], line[200];
    snprintf(cmd, sizeof cmd, "python3 -c \"import hashlib,os,sys;p=sys.argv[1];h=hashlib.sha256()"
             "\nwith open(p,'rb') as f:\n  for b in iter(lambda: f.read(1<<20), b''): h.update(b)"
             "\nprint(h.hexdigest(), os.path.getsize(p))\" '%s/%s'", fr.fx, rel);
    fr_run_line(cmd, line, sizeof line);
    sha[0] = 0;
    *size = 0;
    if (sscanf(line, "%64s %llu", sha, size) != 2)
        sha[0] = 0;
}

/* The num_ctx a fixture's params file sets (python3 reads it). */
static long long fixture_num_ctx(const char *rel)
{
    char cmd[700], line[64];
    snprintf(cmd, sizeof cmd, "python3 -c \"import json,sys;print(json.load(open(sys.argv[1]))"
             "['num_ctx'])\" '%s/%s'", fr.fx, rel);
    fr_run_line(cmd, line, sizeof line);
    return line[0] ? atoll(line) : -1;
}

static int fetch(const char *name, int offline, ollama_model *m, kvp_error *e)
{
    ollama_name n;
    memset(e, 0, sizeof *e);
    int rc = ollama_parse_name(name, &n, e);
    if (rc == 0)
        rc = ollama_fetch(NULL, &n, offline, m, e);
    else
        memset(m, 0, sizeof *m);
    if (rc)
        printf("# %s%s: %s\n", name, offline ? " (offline)" : "", e->msg);
    return rc;
}

static void test_online(void)
{
    char sha[80], base[64], want[200];
    unsigned long long size;
    ollama_model m;
    kvp_error e;
    snprintf(base, sizeof base, "http://127.0.0.1:%d", fr.hub_port);
    file_facts("ollama/library/qwen3/8b/model.gguf", sha, &size);
    long long want_ctx = fixture_num_ctx("ollama/library/qwen3/8b/params");
    int from = fr_log_lines();

    int rc = fetch("qwen3:8b", 0, &m, &e);
    CHECK("qwen3:8b is fetched", rc == 0);
    CHECK("its model layer: the fixture GGUF's sha256 and size",
          rc == 0 && m.manifest.has_model && sha[0] && !strcmp(m.model_sha256, sha) &&
              m.model_size == size && size > 0);
    snprintf(want, sizeof want, "%s/v2/library/qwen3/blobs/sha256:%s", base, sha);
    CHECK("model_url is the registry's blob URL", rc == 0 && !strcmp(m.model_url, want));
    CHECK("params num_ctx is the fixture params file's",
          rc == 0 && want_ctx > 0 && m.params.has_num_ctx && m.params.num_ctx == (uint64_t)want_ctx);
    CHECK("the config blob: family qwen3, the fixture's model_type, Q4_K_M",
          rc == 0 && !strcmp(m.family, "qwen3") && !strcmp(m.model_type, "8.2B") &&
              !strcmp(m.file_type, "Q4_K_M"));
    CHECK("base is the configured registry", rc == 0 && !strcmp(m.base, base) && m.allow_http);
    CHECK("no local blob in an empty store", rc == 0 && m.local_blob[0] == 0);
    CHECK("the manifest was asked for with an ollama/ agent and the Docker v2 Accept",
          fr_log_count(from, "/v2/library/qwen3/manifests/8b",
                       "\"user_agent\":\"ollama/0.33.0 (") == 1 &&
              fr_log_count(from, "/v2/library/qwen3/manifests/8b",
                           "\"accept\":\"application/vnd.docker.distribution.manifest.v2+json\"") == 1);
    CHECK("the params blob came from the cdn after the registry's redirect",
          fr_log_count(from, "\"listener\":\"cdn\"", "\"status\":200") >= 1 &&
              fr_log_count(from, "/v2/library/qwen3/blobs/sha256:", "\"status\":307") >= 1);
    /* the caller's part: a range read of model_url lands on the GGUF */
    if (rc == 0) {
        net_request q = {0};
        net_result r;
        kvp_error ne;
        q.url = m.model_url;
        q.range = "0-3";
        q.allow_http = 1;
        int frc = net_fetch(NULL, &q, &r, &ne);
        CHECK("a range read of model_url gives the GGUF magic",
              frc == 0 && r.status == 206 && r.body_len == 4 && !memcmp(r.body, "GGUF", 4));
        net_result_free(&r);
    }
    ollama_model_free(&m);

    ollama_model l;
    rc = fetch("qwen3", 0, &l, &e);
    CHECK("qwen3 (latest) resolves to the same blob as 8b",
          rc == 0 && sha[0] && !strcmp(l.model_sha256, sha) && !strcmp(l.name.tag, "latest"));
    ollama_model_free(&l);

    rc = fetch("test/ollama-ua", 0, &m, &e);
    CHECK("a model that wants an ollama/ agent works with the default agent",
          rc == 0 && m.manifest.has_model && m.params.has_num_ctx);
    ollama_model_free(&m);
    from = fr_log_lines();
    setenv("KVPLAN_OLLAMA_USER_AGENT", "curl/8", 1);
    rc = fetch("test/ollama-ua", 0, &m, &e);
    unsetenv("KVPLAN_OLLAMA_USER_AGENT");
    CHECK("... and fails with KVPLAN_OLLAMA_USER_AGENT=curl/8: 412, naming the variable",
          rc && e.code == KVP_EINPUT && strstr(e.msg, "ollama:test/ollama-ua:latest: ") &&
              strstr(e.msg, "412") && strstr(e.msg, "KVPLAN_OLLAMA_USER_AGENT") &&
              strstr(e.msg, "newer Ollama"));
    CHECK("... having sent that agent",
          fr_log_count(from, "\"user_agent\":\"curl/8\"", "\"status\":412") == 1);
    ollama_model_free(&m);

    snprintf(want, sizeof want, "no such model or tag on %s", base);
    rc = fetch("nosuchmodel:1b", 0, &m, &e);
    CHECK("unknown model: no such model or tag on BASE",
          rc && e.code == KVP_EINPUT && strstr(e.msg, "ollama:nosuchmodel:1b: ") && strstr(e.msg, want));
    rc = fetch("qwen3:999b", 0, &m, &e);
    CHECK("unknown tag: the same", rc && strstr(e.msg, "ollama:qwen3:999b: ") && strstr(e.msg, want));

    /* a tag added below whose blob store answers 403 to a signed URL */
    rc = fetch("test/expired-blob", 0, &m, &e);
    CHECK("a blob store's 403 is reported as the blob store's, not as a private model",
          rc && strstr(e.msg, "403") && strstr(e.msg, "blob store") && !strstr(e.msg, "private") &&
              strstr(e.msg, "AccessDenied: Request has expired"));
    CHECK("... without the signed URL's query",
          rc && !strstr(e.msg, "Signature") && !strstr(e.msg, "Expires") && !strstr(e.msg, "?"));

    /* the Hub's own registry for GGUF repos */
    char hf_sha[80];
    unsigned long long hf_size;
    file_facts("hf/kvtest/Qwen3-8B-GGUF/Qwen3-8B-Q8_0.gguf", hf_sha, &hf_size);
    setenv("HF_ENDPOINT", base, 1);
    rc = fetch("hf.co/kvtest/Qwen3-8B-GGUF:Q8_0", 0, &m, &e);
    unsetenv("HF_ENDPOINT");
    CHECK("hf.co/org/repo:Q8_0 through HF_ENDPOINT: the Q8_0 file's sha256 and size",
          rc == 0 && hf_sha[0] && !strcmp(m.model_sha256, hf_sha) && m.model_size == hf_size &&
              !strcmp(m.file_type, "Q8_0") && !m.manifest.has_params);
    ollama_model_free(&m);

    setenv("KVPLAN_OLLAMA_REGISTRY", "http://127.0.0.1:1", 1);
    rc = fetch("qwen3:8b", 0, &m, &e);
    setenv("KVPLAN_OLLAMA_REGISTRY", base, 1);
    CHECK("unreachable registry: cannot reach BASE, suggests --offline",
          rc && strstr(e.msg, "ollama:qwen3:8b: cannot reach http://127.0.0.1:1 (") &&
              strstr(e.msg, "--offline"));
}

/* Lays out a local Ollama store the way `ollama pull` leaves it: qwen3:8b
 * (its manifest and config from the fake registry, its other blobs from the
 * fixture files), a cloud model, and a model whose params blob does not
 * match its digest. */
static const char *store_py =
    "import hashlib, json, os, sys, urllib.request\n"
    "fx, store, port = sys.argv[1:]\n"
    "ua = {'User-Agent': 'ollama/0.33.0 (amd64 linux) Go/go1.24.0'}\n"
    "def get(path):\n"
    "    req = urllib.request.Request('http://127.0.0.1:%s%s' % (port, path), headers=ua)\n"
    "    with urllib.request.urlopen(req, timeout=20) as r:\n"
    "        return r.read()\n"
    "def blob(hexd, data=None, link=None):\n"
    "    p = os.path.join(store, 'blobs', 'sha256-' + hexd)\n"
    "    os.makedirs(os.path.dirname(p), exist_ok=True)\n"
    "    if link:\n"
    "        try:\n"
    "            os.link(link, p)\n"
    "        except OSError:\n"
    "            os.symlink(link, p)\n"
    "    else:\n"
    "        open(p, 'wb').write(data)\n"
    "def manifest(ns, model, tag, text):\n"
    "    d = os.path.join(store, 'manifests', 'registry.ollama.ai', ns, model)\n"
    "    os.makedirs(d, exist_ok=True)\n"
    "    open(os.path.join(d, tag), 'wb').write(text)\n"
    "def put(data):\n"
    "    h = hashlib.sha256(data).hexdigest()\n"
    "    blob(h, data=data)\n"
    "    return {'digest': 'sha256:' + h, 'size': len(data)}\n"
    "raw = get('/v2/library/qwen3/manifests/8b')\n"
    "man = json.loads(raw)\n"
    "manifest('library', 'qwen3', '8b', raw)\n"
    "tdir = os.path.join(fx, 'ollama', 'library', 'qwen3', '8b')\n"
    "small = {}\n"
    "for f in os.listdir(tdir):\n"
    "    if not f.endswith('.gguf') and not f.startswith('.'):\n"
    "        d = open(os.path.join(tdir, f), 'rb').read()\n"
    "        small['sha256:' + hashlib.sha256(d).hexdigest()] = d\n"
    "for l in man['layers']:\n"
    "    if l['mediaType'].endswith('.model'):\n"
    "        blob(l['digest'][7:], link=os.path.join(tdir, 'model.gguf'))\n"
    "    else:\n"
    "        blob(l['digest'][7:], data=small[l['digest']])\n"
    "cfg = man['config']['digest']\n"
    "blob(cfg[7:], data=get('/v2/library/qwen3/blobs/' + cfg))\n"
    "V2 = 'application/vnd.docker.distribution.manifest.v2+json'\n"
    "CT = 'application/vnd.docker.container.image.v1+json'\n"
    "IM = 'application/vnd.ollama.image.'\n"
    "c = put(b'{\"model_format\":\"\",\"remote_host\":\"https://ollama.com:443\",'\n"
    "        b'\"remote_model\":\"gpt-oss:120b\"}')\n"
    "t = put(b'{{ .Prompt }}')\n"
    "manifest('library', 'cloudy', 'latest', json.dumps({'schemaVersion': 2, 'mediaType': V2,\n"
    "    'config': dict(mediaType=CT, **c), 'layers': [dict(mediaType=IM + 'template', **t)]}).encode())\n"
    "good, bad = b'{\"num_ctx\": 4096}', b'{\"num_ctx\": 9999}'\n"
    "h = hashlib.sha256(good).hexdigest()\n"
    "blob(h, data=bad)\n"
    "model = [l for l in man['layers'] if l['mediaType'].endswith('.model')][0]\n"
    "manifest('library', 'tampered', 'latest', json.dumps({'schemaVersion': 2, 'mediaType': V2,\n"
    "    'config': man['config'], 'layers': [model, {'mediaType': IM + 'params',\n"
    "    'digest': 'sha256:' + h, 'size': len(good)}]}).encode())\n";

static int make_store(void)
{
    char py[320], cmd[1400];
    snprintf(py, sizeof py, "%s/store.py", fr.dir);
    FILE *f = fopen(py, "w");
    if (!f)
        return -1;
    fputs(store_py, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "timeout 60 python3 '%s' '%s' '%s' %d >'%s/store.log' 2>&1", py,
             fr.fx, store, fr.hub_port, fr.dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_offline(void)
{
    char sha[80], want[700];
    unsigned long long size;
    ollama_model m;
    kvp_error e;
    file_facts("ollama/library/qwen3/8b/model.gguf", sha, &size);
    long long want_ctx = fixture_num_ctx("ollama/library/qwen3/8b/params");
    int made = make_store() == 0;
    CHECK("a local Ollama store is laid out", made);
    if (!made)
        return;
    setenv("OLLAMA_MODELS", store, 1);
    snprintf(want, sizeof want, "%s/blobs/sha256-%s", store, sha);

    int before = fr_log_lines();
    int rc = fetch("qwen3:8b", 1, &m, &e);
    CHECK("offline: qwen3:8b from the local store", rc == 0 && m.offline);
    CHECK("offline: the model blob is found there, with the registry's digest and size",
          rc == 0 && sha[0] && !strcmp(m.local_blob, want) && !strcmp(m.model_sha256, sha) &&
              m.model_size == size);
    CHECK("offline: params from the local blob",
          rc == 0 && want_ctx > 0 && m.params.has_num_ctx && m.params.num_ctx == (uint64_t)want_ctx);
    CHECK("offline: the config blob read locally", rc == 0 && !strcmp(m.family, "qwen3"));
    ollama_model_free(&m);

    rc = fetch("qwen3:4b", 1, &m, &e);
    CHECK("offline, not pulled: neither local nor fetchable offline",
          rc && e.code == KVP_EINPUT && strstr(e.msg, "ollama:qwen3:4b: not pulled locally") &&
              strstr(e.msg, "offline"));
    rc = fetch("cloudy", 1, &m, &e);
    CHECK("a cloud model: nothing runs locally",
          rc && strstr(e.msg, "ollama:cloudy:latest is an Ollama cloud model") &&
              strstr(e.msg, "no local KV cache to plan"));
    rc = fetch("tampered", 1, &m, &e);
    CHECK("a params blob that does not match its digest is refused",
          rc && strstr(e.msg, "ollama:tampered:latest: ") && strstr(e.msg, "does not match its digest"));
    CHECK("offline: no request reached the server", fr_log_lines() == before);

    rc = fetch("qwen3:8b", 0, &m, &e);
    CHECK("online with the model pulled: local_blob is filled too",
          rc == 0 && !strcmp(m.local_blob, want));
    ollama_model_free(&m);
    setenv("OLLAMA_MODELS", empty_store, 1);
}

/* A tag whose blobs the cdn answers with 403 (an expired signature). */
static int add_expired_tag(void)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "d='%s/ollama/test/expired-blob/latest' && mkdir -p \"$d\" && "
             "ln '%s/ollama/library/qwen3/8b/model.gguf' \"$d/model.gguf\" && "
             "cp '%s/ollama/library/qwen3/8b/params' \"$d/params\" && "
             "echo '{\"cdn_mode\": \"expired\"}' >\"$d/.meta.json\"", fr.fx, fr.fx, fr.fx);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    alarm(180);
    fr_clear_env((const char *const[]){"KVPLAN_OLLAMA_REGISTRY", "KVPLAN_OLLAMA_USER_AGENT",
                                       "OLLAMA_MODELS", "HF_ENDPOINT", NULL});

    test_names();
    test_manifests();
    test_params();

    if (fr_make_dir("ollama"))
        return 1;
    snprintf(store, sizeof store, "%s/ollama-store", fr.dir);
    snprintf(empty_store, sizeof empty_store, "%s/empty-store", fr.dir);
    mkdir(empty_store, 0755);
    setenv("OLLAMA_MODELS", empty_store, 1); /* never the user's own store */
    int fx_ok = fr_fixtures() == 0 && add_expired_tag() == 0;
    CHECK("fixtures built (tests/remote/mkfixtures.sh)", fx_ok);
    int up = fx_ok && fr_start(NULL, 15) == 0;
    CHECK("the fake registry starts", up);
    if (up) {
        char base[64];
        snprintf(base, sizeof base, "http://127.0.0.1:%d/", fr.hub_port); /* the '/' is trimmed */
        setenv("KVPLAN_OLLAMA_REGISTRY", base, 1);
        test_online();
        test_offline();
    }
    fr_cleanup();
    return check_failures != 0;
}
