/* tstep grade for a course: the per-submission result files (--results DIR:
 * a Gradescope results.json, a JUnit XML report, a CSV row) and batch mode
 * (--submissions DIR: every submission graded in its own `tstep grade`
 * process, N at a time, one bad submission never stopping the others, and a
 * summary CSV).  Formats in docs/grading.md. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "cli_json.h"
#include "tstep/grade.h"

/* --- the result files of one submission ------------------------------------------- */

static FILE *open_in(const char *dir, const char *name)
{
    char path[8600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return fopen(path, "w");
}

/* One check as the line a student reads. */
static void check_text(const ts_grade_check *c, char *buf, size_t size)
{
    snprintf(buf, size, "expected %s, measured %s%s%s", c->expected, c->measured,
             *c->hint ? "; " : "", c->hint);
}

/* Gradescope's results.json: a test per check that ran or was skipped. */
static int write_gradescope(const char *dir, const ts_grade_report *r, int n)
{
    FILE *f = open_in(dir, "results.json");
    if (!f)
        return -1;
    int score = 0;
    for (int i = 0; i < n; i++)
        score += r[i].passed;
    cli_json j;
    cli_json_init(&j, f);
    cli_json_object(&j, NULL);
    cli_json_int(&j, "score", score);
    cli_json_string(&j, "visibility", "visible");
    cli_json_string(&j, "output", n ? r[0].output : "");
    cli_json_array(&j, "tests");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < TS_GRADE_CHECK_COUNT; k++) {
            const ts_grade_check *c = &r[i].check[k];
            char name[160], text[512];
            snprintf(name, sizeof name, "%s: %s", r[i].type->name, ts_grade_check_name(k));
            check_text(c, text, sizeof text);
            cli_json_object(&j, NULL);
            cli_json_string(&j, "name", name);
            cli_json_int(&j, "score", c->outcome == TS_GRADE_PASS);
            cli_json_int(&j, "max_score", c->outcome != TS_GRADE_SKIP);
            cli_json_string(&j, "output", text);
            cli_json_string(&j, "visibility", "visible");
            cli_json_close(&j);
        }
    cli_json_close(&j);
    cli_json_close(&j);
    return fclose(f);
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '<') fputs("&lt;", f);
        else if (ch == '>') fputs("&gt;", f);
        else if (ch == '&') fputs("&amp;", f);
        else if (ch == '"') fputs("&quot;", f);
        else if (ch < 0x20 && ch != '\n' && ch != '\t') fputc('?', f);
        else fputc(ch, f);
    }
}

/* JUnit XML: a test suite per stepper, a test case per check. */
static int write_junit(const char *dir, const ts_grade_report *r, int n, double seconds)
{
    FILE *f = open_in(dir, "junit.xml");
    if (!f)
        return -1;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites time=\"%.3f\">\n",
            seconds);
    for (int i = 0; i < n; i++) {
        fputs("  <testsuite name=\"", f);
        xml_text(f, r[i].type->name);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", TS_GRADE_CHECK_COUNT,
                r[i].failed, r[i].skipped);
        for (int k = 0; k < TS_GRADE_CHECK_COUNT; k++) {
            const ts_grade_check *c = &r[i].check[k];
            char text[512];
            check_text(c, text, sizeof text);
            fputs("    <testcase classname=\"", f);
            xml_text(f, r[i].type->name);
            fprintf(f, "\" name=\"%s\">", ts_grade_check_name(k));
            if (c->outcome != TS_GRADE_PASS) {
                fputs(c->outcome == TS_GRADE_FAIL ? "<failure message=\"" : "<skipped message=\"",
                      f);
                xml_text(f, text);
                fputs("\"/>", f);
            }
            fputs("</testcase>\n", f);
        }
        if (*r[i].output) {
            fputs("    <system-out>", f);
            xml_text(f, r[i].output);
            fputs("</system-out>\n", f);
        }
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
    return fclose(f);
}

/* summary.csv: a header and one row, score, out of, each check, seconds. */
static int write_row(const char *dir, const ts_grade_report *r, int n, double seconds)
{
    FILE *f = open_in(dir, "summary.csv");
    if (!f)
        return -1;
    int score = 0, out_of = 0;
    fputs("score,out_of", f);
    for (int i = 0; i < n; i++) {
        score += r[i].passed, out_of += r[i].passed + r[i].failed;
        for (int k = 0; k < TS_GRADE_CHECK_COUNT; k++)
            fprintf(f, ",%s:%s", r[i].type->name, ts_grade_check_name(k));
    }
    fprintf(f, ",seconds\n%d,%d", score, out_of);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < TS_GRADE_CHECK_COUNT; k++)
            fprintf(f, ",%s", r[i].check[k].outcome == TS_GRADE_PASS   ? "pass"
                              : r[i].check[k].outcome == TS_GRADE_FAIL ? "fail"
                                                                       : "skip");
    fprintf(f, ",%.2f\n", seconds);
    return fclose(f);
}

int cli_grade_write_results(const char *cmd, const char *dir, const ts_grade_report *r, int n,
                            double seconds)
{
    if (mkdir(dir, 0755) && errno != EEXIST)
        return cli_usage_error(cmd, "--results: cannot make '%s': %s", dir, strerror(errno));
    if (write_gradescope(dir, r, n) || write_junit(dir, r, n, seconds) ||
        write_row(dir, r, n, seconds)) {
        fprintf(stderr, "tstep %s: --results: cannot write in '%s'\n", cmd, dir);
        return 1;
    }
    return 0;
}

/* --- batch mode --------------------------------------------------------------------- */

#define BATCH_MAX_FILES 32

/* One submission: its name (the entry's, without .c/.so), its files, and
 * whether they are sources to compile. */
typedef struct {
    char name[256];
    char *files[BATCH_MAX_FILES];
    int nfiles, compile;
} submission;

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

static void add_file(submission *s, const char *dir, const char *name)
{
    if (s->nfiles < BATCH_MAX_FILES && asprintf(&s->files[s->nfiles], "%s/%s", dir, name) > 0)
        s->nfiles++;
}

/* A .so, a .c, or a folder of .so files (else of .c files); 0 when the
 * entry is none of these. */
static int find_submission(const char *root, const char *entry, submission *s)
{
    char path[4400];
    struct stat st;
    memset(s, 0, sizeof *s);
    snprintf(path, sizeof path, "%s/%s", root, entry);
    if (*entry == '.' || lstat(path, &st)) /* lstat: a symbolic link is no submission */
        return 0;
    snprintf(s->name, sizeof s->name, "%s", entry);
    for (char *c = s->name; *c; c++) /* a name that stays one CSV field */
        if (*c == ',' || *c == '"' || (unsigned char)*c < 0x20)
            *c = '_';
    if (S_ISREG(st.st_mode) && (has_suffix(entry, ".so") || has_suffix(entry, ".c"))) {
        s->compile = has_suffix(entry, ".c");
        s->name[strlen(s->name) - (s->compile ? 2 : 3)] = '\0';
        add_file(s, root, entry);
        return 1;
    }
    if (!S_ISDIR(st.st_mode))
        return 0;
    for (int pass = 0; pass < 2 && !s->nfiles; pass++) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char f[8192];
            snprintf(f, sizeof f, "%s/%s", path, e->d_name);
            if (!lstat(f, &st) && S_ISREG(st.st_mode) && has_suffix(e->d_name, pass ? ".c" : ".so"))
                add_file(s, path, e->d_name);
        }
        if (d)
            closedir(d);
        s->compile = pass == 1;
    }
    return s->nfiles > 0;
}

/* Wait for pid at most `secs` seconds, then kill it: its exit status. */
static int wait_deadline(pid_t pid, int secs)
{
    int st = 0;
    for (int ms = 0; ms < secs * 1000; ms += 20) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        struct timespec d = {0, 20000000};
        nanosleep(&d, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return st;
}

/* Compile the sources into dir/submission.so: in bubblewrap (no network,
 * the submissions' folder hidden, only the headers and the sources bound),
 * 2 GB of address space, 60 s of CPU, 120 s in all; the log in dir/build.log. */
static int compile_submission(const cli_grade_batch *b, const submission *s, const char *dir,
                              const char *include)
{
    static char inside[BATCH_MAX_FILES][32];
    const char *argv[4 * BATCH_MAX_FILES + 64];
    int a = 0;
    if (b->sandbox) {
        /* of the host only the compiler's folders (not /usr/local): no other
           file reaches the log; none of the grader's environment (bwrap
           itself is started without it, below) */
        const char *pre[] = {"bwrap", "--ro-bind", "/usr", "/usr", "--ro-bind-try", "/lib", "/lib",
                             "--ro-bind-try", "/lib64", "/lib64", "--ro-bind-try", "/bin", "/bin",
                             "--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
                             "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
                             "--tmpfs", "/usr/local", "--clearenv", "--setenv", "PATH",
                             "/usr/bin:/bin", "--dev", "/dev", "--proc", "/proc",
                             "--tmpfs", "/tmp", "--ro-bind", include,
                             "/tmp/include", "--bind", dir, "/tmp/out", "--unshare-all",
                             "--die-with-parent", "--new-session", "--cap-drop", "ALL", NULL};
        for (int i = 0; pre[i]; i++)
            argv[a++] = pre[i];
        for (int i = 0; i < s->nfiles; i++) {
            snprintf(inside[i], sizeof inside[i], "/tmp/src/%d.c", i);
            argv[a++] = "--ro-bind", argv[a++] = s->files[i], argv[a++] = inside[i];
        }
        argv[a++] = "--";
    }
    const char *cc[] = {"sh", "-c", "ulimit -v 2097152; ulimit -t 60; ulimit -f 65536; exec \"$@\"",
                        "sh", "cc", "-O2", "-shared", "-fPIC", "-Wl,-Bsymbolic", NULL};
    for (int i = 0; cc[i]; i++)
        argv[a++] = cc[i];
    char inc[4400], out[4600];
    snprintf(inc, sizeof inc, "-I%s", b->sandbox ? "/tmp/include" : include);
    snprintf(out, sizeof out, "%s/submission.so", b->sandbox ? "/tmp/out" : dir);
    argv[a++] = inc;
    for (int i = 0; i < s->nfiles; i++)
        argv[a++] = b->sandbox ? inside[i] : s->files[i];
    argv[a++] = "-o", argv[a++] = out, argv[a] = NULL;
    FILE *log = open_in(dir, "build.log");
    pid_t pid = fork();
    if (pid == 0) {
        static char *const no_env[] = {NULL};
        if (log)
            dup2(fileno(log), 1), dup2(fileno(log), 2);
        if (b->sandbox)
            execvpe(argv[0], (char *const *)argv, no_env);
        else
            execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (log)
        fclose(log);
    int st = pid > 0 ? wait_deadline(pid, 120) : -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* A submission that does not build: score 0, the compiler's log as output. */
static void write_build_failure(const char *dir)
{
    char log[4096] = "", path[4600];
    snprintf(path, sizeof path, "%s/build.log", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        log[fread(log, 1, sizeof log - 1, f)] = '\0';
        fclose(f);
    }
    if (!(f = open_in(dir, "results.json")))
        return;
    cli_json j;
    cli_json_init(&j, f);
    cli_json_object(&j, NULL);
    cli_json_int(&j, "score", 0);
    cli_json_string(&j, "output", "the submission does not build");
    cli_json_array(&j, "tests");
    cli_json_object(&j, NULL);
    cli_json_string(&j, "name", "build");
    cli_json_int(&j, "score", 0);
    cli_json_int(&j, "max_score", 1);
    cli_json_string(&j, "output", log);
    cli_json_string(&j, "visibility", "visible");
    cli_json_close(&j);
    cli_json_close(&j);
    cli_json_close(&j);
    fclose(f);
    if ((f = open_in(dir, "junit.xml"))) {
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
              "name=\"build\" tests=\"1\" failures=\"1\">\n    <testcase classname=\"build\" "
              "name=\"build\"><failure message=\"the submission does not build\">", f);
        xml_text(f, log);
        fputs("</failure></testcase>\n  </testsuite>\n</testsuites>\n", f);
        fclose(f);
    }
}

/* In a child: build the submission if need be, then become `tstep grade`
 * on it with --results in its folder. */
static void grade_one(const cli_grade_batch *b, const submission *s, const char *exe,
                      const char *include)
{
    char dir[4400], so[4500], path[4500];
    snprintf(dir, sizeof dir, "%s/%s", b->out_dir, s->name);
    if (mkdir(dir, 0755) && errno != EEXIST)
        _exit(2);
    const char *argv[2 * BATCH_MAX_FILES + 64] = {exe, "grade"};
    int a = 2;
    if (s->compile) {
        if (compile_submission(b, s, dir, include)) {
            write_build_failure(dir);
            _exit(1);
        }
        snprintf(so, sizeof so, "%s/submission.so", dir);
        argv[a++] = "--plugin", argv[a++] = so;
    } else {
        for (int i = 0; i < s->nfiles; i++)
            argv[a++] = "--plugin", argv[a++] = s->files[i];
    }
    argv[a++] = "--spec", argv[a++] = b->spec, argv[a++] = "--results", argv[a++] = dir;
    for (int i = 0; i < b->npass; i++)
        argv[a++] = b->pass[i];
    argv[a] = NULL;
    snprintf(path, sizeof path, "%s/report.txt", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    int fe = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        dup2(fd, 1);
    if (fe >= 0)
        dup2(fe, 2);
    execv(exe, (char *const *)argv);
    _exit(127);
}

/* The summary: a row per submission from its summary.csv (the header from
 * the first that has one); a submission without one (it did not build, or
 * its grade could not run) scores 0 with its checks "none". */
static int write_summary(const cli_grade_batch *b, submission *subs, int n)
{
    char path[4200], header[1 << 14] = "", line[1 << 14];
    int columns = 0;
    static char rows[1 << 20];
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s/summary.csv", b->out_dir, subs[i].name);
        FILE *f = fopen(path, "r");
        int ok = f && fgets(line, sizeof line, f);
        if (ok && !*header)
            snprintf(header, sizeof header, "%s", line);
        if (ok && fgets(line, sizeof line, f))
            used += (size_t)snprintf(rows + used, sizeof rows - used, "%s,%s", subs[i].name, line);
        else
            used += (size_t)snprintf(rows + used, sizeof rows - used, "%s,0,0,\x01\n",
                                     subs[i].name);
        if (f)
            fclose(f);
        if (used >= sizeof rows)
            used = sizeof rows - 1;
    }
    for (const char *c = header; *c; c++)
        columns += *c == ',';
    FILE *f = open_in(b->out_dir, "summary.csv");
    if (!f)
        return -1;
    fprintf(f, "student,%s", *header ? header : "score,out_of,seconds\n");
    for (char *r = rows, *next; *r; r = next) { /* \x01: the missing columns */
        next = strchr(r, '\n') + 1;
        char *hash = memchr(r, '\x01', (size_t)(next - r));
        if (!hash) {
            fwrite(r, 1, (size_t)(next - r), f);
            continue;
        }
        fwrite(r, 1, (size_t)(hash - r), f);
        for (int k = 0; k < columns - 2; k++)
            fputs("none,", f);
        fputs("0\n", f);
    }
    return fclose(f);
}

static void progress(int done, int n)
{
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\rtstep grade: %d of %d submission%s graded", done, n, n == 1 ? "" : "s");
}

/* tstep's headers for compiling a submission: next to the program
 * (build/tstep: include/; bin/tstep: include/). */
static int find_include(const char *exe, char *include, size_t size)
{
    char dir[4096], probe[4400];
    snprintf(dir, sizeof dir, "%s", exe);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    snprintf(include, size, "%s/../include", dir);
    snprintf(probe, sizeof probe, "%s/tstep/tstep.h", include);
    return access(probe, R_OK) == 0;
}

int cli_grade_batch_run(const char *cmd, const cli_grade_batch *given)
{
    char exe[4096], include[4200], subs_dir[4096], out_dir[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0)
        return cli_usage_error(cmd, "cannot find this program (/proc/self/exe)");
    exe[k] = '\0';
    if (mkdir(given->out_dir, 0755) && errno != EEXIST)
        return cli_usage_error(cmd, "--out-dir: cannot make '%s': %s", given->out_dir,
                               strerror(errno));
    /* absolute paths: the sandbox binds them */
    if (!realpath(given->out_dir, out_dir) || !realpath(given->submissions, subs_dir))
        return cli_usage_error(cmd, "--submissions '%s' or --out-dir '%s': %s",
                               given->submissions, given->out_dir, strerror(errno));
    cli_grade_batch copy = *given, *b = &copy;
    copy.out_dir = out_dir, copy.submissions = subs_dir;
    struct dirent **list;
    int nlist = scandir(b->submissions, &list, NULL, alphasort);
    if (nlist < 0)
        return cli_usage_error(cmd, "--submissions: cannot read '%s': %s", b->submissions,
                               strerror(errno));
    submission *subs = calloc((size_t)nlist + 1, sizeof *subs);
    int n = 0, compile = 0;
    for (int i = 0; i < nlist; i++) {
        if (subs && find_submission(b->submissions, list[i]->d_name, &subs[n]))
            compile |= subs[n++].compile;
        free(list[i]);
    }
    free(list);
    if (!subs || n == 0) {
        free(subs);
        return cli_usage_error(cmd, "--submissions: no submission (.c, .so, or a folder of "
                                    "them) in '%s'", b->submissions);
    }
    if (compile && !find_include(exe, include, sizeof include)) {
        free(subs);
        return cli_usage_error(cmd, "--submissions: a source submission needs tstep's headers, "
                                    "not found in '%s'", include);
    }
    int running = 0, done = 0, failed = 0;
    for (int i = 0; i < n || running; ) {
        if (i < n && running < b->jobs) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid == 0)
                grade_one(b, &subs[i], exe, include);
            running += pid > 0;
            failed += pid < 0;
            i++;
            continue;
        }
        int st;
        if (wait(&st) < 0)
            break;
        running--, done++;
        failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        progress(done, n);
    }
    if (isatty(STDERR_FILENO))
        fputc('\n', stderr);
    int rc = write_summary(b, subs, n);
    for (int i = 0; i < n; i++)
        for (int f = 0; f < subs[i].nfiles; f++)
            free(subs[i].files[f]);
    free(subs);
    if (rc)
        return cli_usage_error(cmd, "cannot write '%s/summary.csv'", b->out_dir);
    fprintf(stderr, "tstep %s: %d submission%s graded, %d with a failed check or not graded; "
                    "summary in %s/summary.csv\n", cmd, n, n == 1 ? "" : "s", failed, b->out_dir);
    return failed ? 1 : 0;
}
