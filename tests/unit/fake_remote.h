/* fake_remote.h - what the unit tests that talk to a loopback server share:
 * a temporary directory, tests/remote/mkfixtures.sh's fixtures, the server
 * (tests/remote/fake_remote.py, or any script that writes "<hub> <cdn>" to
 * its ports file) forked and waited for and stopped at exit, its request log,
 * and proxy variables cleared so a CI proxy cannot take the traffic.  One
 * copy, so each test keeps only its own checks; static inline because every
 * test is its own program and uses only part of it. */
#ifndef KVPLAN_FAKE_REMOTE_H
#define KVPLAN_FAKE_REMOTE_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static struct fake_remote {
    char dir[256];                 /* the test's temporary directory */
    char fx[300], ports[300], log[300]; /* fixtures, ports file, request log in it */
    pid_t pid;                     /* the server; 0 when not running */
    int hub_port, cdn_port;        /* 127.0.0.1 and 127.0.0.2 */
} fr;

/* Variables that would point the Hub client at another cache, token or mode. */
#define FR_HF_VARS                                                                          \
    "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",          \
        "HF_TOKEN_PATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",                          \
        "HF_HUB_DISABLE_IMPLICIT_TOKEN"

/* Unsets the proxy variables and vars (NULL-terminated; NULL for none), and
 * keeps loopback away from any proxy. */
static inline void fr_clear_env(const char *const *vars)
{
    const char *proxies[] = {"http_proxy", "https_proxy", "HTTP_PROXY",
                             "HTTPS_PROXY", "ALL_PROXY", "all_proxy"};
    for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++)
        unsetenv(proxies[i]);
    for (; vars && *vars; vars++)
        unsetenv(*vars);
    setenv("NO_PROXY", "127.0.0.1,127.0.0.2,localhost", 1);
    setenv("no_proxy", "127.0.0.1,127.0.0.2,localhost", 1);
}

/* $TMPDIR/kvplan-TAG-XXXXXX (else under /tmp), and fr.fx, fr.ports and
 * fr.log named in it; -1 (after perror) when it cannot be made. */
static inline int fr_make_dir(const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(fr.dir, sizeof fr.dir, "%s/kvplan-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    if (!mkdtemp(fr.dir)) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(fr.fx, sizeof fr.fx, "%s/fx", fr.dir);
    snprintf(fr.ports, sizeof fr.ports, "%s/ports", fr.dir);
    snprintf(fr.log, sizeof fr.log, "%s/log", fr.dir);
    return 0;
}

/* tests/remote/mkfixtures.sh into fr.fx with the kvplan binary of this
 * build ($KVPLAN, else $UNIT_DIR/../kvplan), its output in mk.log; 0 when
 * it succeeded. */
static inline int fr_fixtures(void)
{
    char kvplan[300], cmd[1400];
    const char *k = getenv("KVPLAN"), *u = getenv("UNIT_DIR");
    if (k && *k)
        snprintf(kvplan, sizeof kvplan, "%s", k);
    else
        snprintf(kvplan, sizeof kvplan, "%s/../kvplan", u && *u ? u : "build/tests");
    snprintf(cmd, sizeof cmd,
             "timeout 120 bash tests/remote/mkfixtures.sh '%s' '%s' >'%s/mk.log' 2>&1", fr.fx,
             kvplan, fr.dir);
    return system(cmd) == 0 ? 0 : -1;
}

static inline void fr_stop(void)
{
    if (fr.pid > 0) {
        kill(fr.pid, SIGTERM);
        waitpid(fr.pid, NULL, 0);
        fr.pid = 0;
    }
}

/* Forks argv (argv[0] found on PATH) with stdin and stdout on /dev/null and
 * stderr into err_path (NULL: /dev/null), the child dying with the test, then
 * polls fr.ports for "<hub> <cdn>" for up to `seconds`.  fr_stop runs at
 * exit.  -1 when the server cannot start, exits or never writes its ports. */
static inline int fr_spawn(const char *const argv[], const char *err_path, int seconds)
{
    static int registered;
    if (!registered && atexit(fr_stop) == 0)
        registered = 1;
    fr.pid = fork();
    if (fr.pid < 0)
        return -1;
    if (fr.pid == 0) {
        /* dies with the test, and never holds the runner's stdout open */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        int null = open("/dev/null", O_RDWR);
        int errfd = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
        dup2(null, 0);
        dup2(null, 1);
        dup2(errfd >= 0 ? errfd : null, 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < seconds * 20; i++) { /* every 50 ms */
        FILE *f = fopen(fr.ports, "r");
        if (f) {
            int ok = fscanf(f, "%d %d", &fr.hub_port, &fr.cdn_port) == 2;
            fclose(f);
            if (ok)
                return 0;
        }
        if (waitpid(fr.pid, NULL, WNOHANG) == fr.pid) {
            fr.pid = 0;
            return -1;
        }
        usleep(50000);
    }
    return -1;
}

/* tests/remote/fake_remote.py serving fr.fx, with the extra arguments
 * (NULL-terminated; NULL for none); as fr_spawn. */
static inline int fr_start(const char *const *extra, int seconds)
{
    const char *argv[24] = {"python3", "tests/remote/fake_remote.py", "--fixtures", fr.fx,
                            "--ports-file", fr.ports, "--log", fr.log};
    size_t n = 8;
    for (; extra && *extra && n + 1 < sizeof argv / sizeof *argv; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    return fr_spawn(argv, NULL, seconds);
}

/* Stops the server and removes fr.dir. */
static inline void fr_cleanup(void)
{
    char cmd[300];
    fr_stop();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fr.dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", fr.dir);
}

/* A file's first MiB, NUL-terminated (free it); *len its length if len. */
static inline char *fr_slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    char *b = malloc(1 << 20);
    size_t n = b ? fread(b, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (b)
        b[n] = 0;
    if (len)
        *len = n;
    return b;
}

/* Lines of fake_remote.py's log so far; it is written when an answer ends,
 * so let it settle. */
static inline int fr_log_lines(void)
{
    usleep(300000);
    char *t = fr_slurp(fr.log, NULL);
    int n = 0;
    for (char *c = t; c && *c; c++)
        n += *c == '\n';
    free(t);
    return n;
}

/* Lines of the log from line `from` on that contain both a and b. */
static inline int fr_log_count(int from, const char *a, const char *b)
{
    usleep(300000);
    char *t = fr_slurp(fr.log, NULL), *save = NULL;
    int n = 0, i = 0;
    for (char *l = t ? strtok_r(t, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save), i++)
        n += i >= from && strstr(l, a) && strstr(l, b);
    free(t);
    return n;
}

/* First line of a command's output, without its newline ("" if none). */
static inline void fr_run_line(const char *cmd, char *out, size_t n)
{
    out[0] = 0;
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    if (!fgets(out, (int)n, p))
        out[0] = 0;
    pclose(p);
    out[strcspn(out, "\n")] = 0;
}

#endif
