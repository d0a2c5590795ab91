/* Unit tests for src/common/output.c (the output guard) and its one-call
 * forms rpx_write_file_atomic / rpx_json_write_file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpxprof/error.h"
#include "common/output.h"
#include "common/json.h"

static char g_dir[64];

static int setup(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/rpxoutXXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **st)
{
    char cmd[256];
    (void)st;
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", g_dir, g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *get(const char *path)
{
    static char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n;
    if (!f) return NULL;
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Entries of a folder whose name contains ".tmp." */
static int temps_in(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static rpx_output_options report_opts(void)
{
    rpx_output_options o = {RPX_OUTPUT_REPORT, "rpxprof.profile/1", 0, NULL, 0, "--output"};
    return o;
}

static const char *REPORT = "{\n  \"schema\": \"rpxprof.profile/1\",\n  \"x\": 1\n}\n";

static void test_new_file_temp_before_work(void **st)
{
    rpx_output_options opt = report_opts();
    rpx_output *o;
    rpx_error err = {0};
    (void)st;
    assert_int_equal(rpx_output_open(at("a/b/r.json"), &opt, &o, &err), 0);
    /* the folders and the temporary file exist before any work */
    assert_int_equal(temps_in(at("a/b")), 1);
    assert_null(get(at("a/b/r.json")));
    assert_false(rpx_output_is_stdout(o));
    assert_string_equal(rpx_output_path(o), at("a/b/r.json"));
    assert_int_equal(rpx_output_commit(o, REPORT, strlen(REPORT), &err), 0);
    assert_string_equal(get(at("a/b/r.json")), REPORT);
    assert_int_equal(temps_in(at("a/b")), 0);
    /* a discarded output leaves nothing */
    assert_int_equal(rpx_output_open(at("a/c.json"), &opt, &o, &err), 0);
    assert_int_equal(temps_in(at("a")), 1);
    rpx_output_discard(o);
    assert_int_equal(temps_in(at("a")), 0);
    assert_null(get(at("a/c.json")));
    rpx_output_discard(NULL);
}

static void test_replace_rules(void **st)
{
    rpx_output_options opt = report_opts();
    rpx_output *o;
    rpx_error err = {0};
    (void)st;
    /* our own report of the same schema: replaced */
    put(at("r.json"), REPORT);
    assert_int_equal(rpx_output_open(at("r.json"), &opt, &o, &err), 0);
    assert_int_equal(rpx_output_commit(o, "{\"schema\": \"rpxprof.profile/1\"}\n", 32, &err), 0);
    assert_string_equal(get(at("r.json")), "{\"schema\": \"rpxprof.profile/1\"}\n");
    /* a report of another kind: refused, saying which */
    put(at("v.json"), "{\"schema\": \"rpxprof.validation/1\"}\n");
    assert_int_equal(rpx_output_open(at("v.json"), &opt, &o, &err), RPX_EINVAL);
    assert_null(o);
    assert_non_null(strstr(err.message, "rpxprof.validation/1"));
    assert_non_null(strstr(err.message, "--force"));
    /* an unrelated file: refused with its first bytes and the way out */
    put(at("important.txt"), "my notes\nline 2\n");
    assert_int_equal(rpx_output_open(at("important.txt"), &opt, &o, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "exists and is not a file rpxprof wrote"));
    assert_non_null(strstr(err.message, "first bytes: \"my notes\\nline 2\\n\""));
    assert_non_null(strstr(err.message, "choose another --output path or pass --force"));
    assert_string_equal(get(at("important.txt")), "my notes\nline 2\n");
    assert_int_equal(temps_in(g_dir), 0);
    /* ... unless forced */
    opt.force = 1;
    assert_int_equal(rpx_output_open(at("important.txt"), &opt, &o, &err), 0);
    assert_int_equal(rpx_output_commit(o, REPORT, strlen(REPORT), &err), 0);
    assert_string_equal(get(at("important.txt")), REPORT);
    opt.force = 0;
    /* a read-only file, even our own: refused; forced keeps its mode */
    put(at("ro.json"), REPORT);
    assert_int_equal(chmod(at("ro.json"), 0444), 0);
    assert_int_equal(rpx_output_open(at("ro.json"), &opt, &o, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "read-only (mode 0444)"));
    opt.force = 1;
    assert_int_equal(rpx_output_open(at("ro.json"), &opt, &o, &err), 0);
    assert_int_equal(rpx_output_commit(o, "{}\n", 3, &err), 0);
    {
        struct stat s;
        assert_int_equal(stat(at("ro.json"), &s), 0);
        assert_int_equal(s.st_mode & 0777, 0444);
    }
    opt.force = 0;
    /* an empty file: nothing to lose */
    put(at("empty.json"), "");
    assert_int_equal(rpx_output_open(at("empty.json"), &opt, &o, &err), 0);
    assert_int_equal(rpx_output_commit(o, REPORT, strlen(REPORT), &err), 0);
    /* any rpxprof schema when none is asked */
    opt.schema = NULL;
    assert_int_equal(rpx_output_open(at("v.json"), &opt, &o, &err), 0);
    rpx_output_discard(o);
    assert_int_equal(temps_in(g_dir), 0);
}

static void test_protected_even_forced(void **st)
{
    rpx_output_options opt = report_opts();
    const char *prot[2];
    rpx_output *o;
    rpx_error err = {0};
    (void)st;
    put(at("in.npz"), "inputs");
    assert_int_equal(symlink(at("in.npz"), at("link.npz")), 0);
    assert_int_equal(link(at("in.npz"), at("hard.npz")), 0);
    prot[0] = NULL;
    prot[1] = at("in.npz");
    opt.protect = prot;
    opt.n_protect = 2;
    opt.force = 1;
    /* a usage error (exit 2): the output option names a file the command reads */
    assert_int_equal(rpx_output_open(at("in.npz"), &opt, &o, &err), RPX_EUSAGE);
    assert_non_null(strstr(err.message, "even with --force"));
    assert_int_equal(rpx_output_open(at("link.npz"), &opt, &o, &err), RPX_EUSAGE);
    assert_int_equal(rpx_output_open(at("hard.npz"), &opt, &o, &err), RPX_EUSAGE);
    assert_string_equal(get(at("in.npz")), "inputs");
    assert_int_equal(temps_in(g_dir), 0);
}

static void test_symlink_followed(void **st)
{
    rpx_output_options opt = report_opts();
    rpx_output *o;
    rpx_error err = {0};
    struct stat s;
    (void)st;
    assert_int_equal(mkdir(at("real"), 0777), 0);
    put(at("real/r.json"), REPORT);
    assert_int_equal(symlink("real/r.json", at("link.json")), 0);
    assert_int_equal(rpx_output_open(at("link.json"), &opt, &o, &err), 0);
    assert_int_equal(temps_in(at("real")), 1); /* beside the target */
    assert_int_equal(rpx_output_commit(o, "{\"schema\":\"rpxprof.profile/1\",\"new\":1}\n", 38,
                                       &err),
                     0);
    assert_int_equal(lstat(at("link.json"), &s), 0);
    assert_true(S_ISLNK(s.st_mode));
    assert_non_null(strstr(get(at("real/r.json")), "\"new\""));
    /* a dangling link: its target is created */
    assert_int_equal(symlink("real/new.json", at("dangling.json")), 0);
    assert_int_equal(rpx_output_open(at("dangling.json"), &opt, &o, &err), 0);
    assert_int_equal(rpx_output_commit(o, REPORT, strlen(REPORT), &err), 0);
    assert_int_equal(lstat(at("dangling.json"), &s), 0);
    assert_true(S_ISLNK(s.st_mode));
    assert_string_equal(get(at("real/new.json")), REPORT);
    /* a link to an unrelated file: refused, naming the target */
    put(at("real/notes.txt"), "notes");
    assert_int_equal(symlink("real/notes.txt", at("notes.json")), 0);
    assert_int_equal(rpx_output_open(at("notes.json"), &opt, &o, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "a link to"));
}

/* Write to the null and full devices named; the nodes must stay devices. */
static void check_devices(const char *null, const char *full)
{
    rpx_output_options opt = report_opts();
    rpx_output *o;
    rpx_error err = {0};
    struct stat s;
    char want[256];
    assert_int_equal(rpx_output_open(null, &opt, &o, &err), 0);
    assert_int_equal(rpx_output_commit(o, REPORT, strlen(REPORT), &err), 0);
    assert_int_equal(stat(null, &s), 0);
    assert_true(S_ISCHR(s.st_mode));
    assert_int_equal(rpx_output_open(full, &opt, &o, &err), 0);
    assert_int_not_equal(rpx_output_commit(o, REPORT, strlen(REPORT), &err), 0);
    snprintf(want, sizeof want, "%s: write failed: No space left on device", full);
    assert_non_null(strstr(err.message, want));
    assert_int_equal(stat(full, &s), 0);
    assert_true(S_ISCHR(s.st_mode));
}

static void test_devices_streamed(void **st)
{
    rpx_output_options opt = report_opts();
    rpx_output *o;
    rpx_error err = {0};
    (void)st;
    /* private nodes first (when this user may make them), so that a regression
     * replaces the test's own node, never the real /dev/null */
    if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) == 0 &&
        mknod(at("full"), S_IFCHR | 0666, makedev(1, 7)) == 0)
        check_devices(at("null"), at("full"));
    check_devices("/dev/null", "/dev/full");
    assert_int_equal(temps_in("/dev"), 0);
    /* a writer that writes its own file (libzip), to a device */
    assert_int_equal(rpx_output_open("/dev/null", &opt, &o, &err), 0);
    {
        const char *tmp = rpx_output_temp_path(o);
        char keep[512];
        assert_non_null(tmp);
        snprintf(keep, sizeof keep, "%s", tmp);
        put(tmp, "zip");
        assert_int_equal(rpx_output_commit_written(o, &err), 0);
        assert_int_equal(access(keep, F_OK), -1);
    }
    /* "-" is standard output */
    assert_int_equal(rpx_output_open("-", &opt, &o, &err), 0);
    assert_true(rpx_output_is_stdout(o));
    rpx_output_discard(o);
}

static void test_fifo_streamed(void **st)
{
    rpx_output_options opt = report_opts();
    rpx_output *o;
    rpx_error err = {0};
    int p[2];
    pid_t pid;
    char buf[256];
    ssize_t n, got = 0;
    struct stat s;
    (void)st;
    assert_int_equal(mkfifo(at("fifo"), 0666), 0);
    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the reader: copy the FIFO to the pipe */
        int fd;
        char b[256];
        ssize_t k;
        alarm(20); /* never outlive a failed test */
        fd = open(at("fifo"), O_RDONLY);
        close(p[0]);
        while (fd >= 0 && (k = read(fd, b, sizeof b)) > 0)
            if (write(p[1], b, (size_t)k) != k) break;
        _exit(0);
    }
    close(p[1]);
    assert_int_equal(rpx_output_open(at("fifo"), &opt, &o, &err), 0);
    assert_int_equal(rpx_output_commit(o, REPORT, strlen(REPORT), &err), 0);
    while ((n = read(p[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0) got += n;
    buf[got] = '\0';
    close(p[0]);
    waitpid(pid, NULL, 0);
    assert_string_equal(buf, REPORT);
    assert_int_equal(stat(at("fifo"), &s), 0);
    assert_true(S_ISFIFO(s.st_mode));
    assert_int_equal(temps_in(g_dir), 0);
}

static void test_not_files_refused(void **st)
{
    rpx_output_options opt = report_opts();
    rpx_output *o;
    rpx_error err = {0};
    struct sockaddr_un sa;
    int fd;
    (void)st;
    assert_int_equal(mkdir(at("dir"), 0777), 0);
    opt.force = 1;
    assert_int_equal(rpx_output_open(at("dir"), &opt, &o, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "is a folder"));
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", at("sock"));
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(rpx_output_open(at("sock"), &opt, &o, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "is a socket"));
    close(fd);
    assert_int_not_equal(rpx_output_open("", &opt, &o, &err), 0);
    assert_int_not_equal(rpx_output_open(at("nodir/"), &opt, &o, &err), 0);
    /* a place nobody can create a file in: refused at open, before any work */
    assert_int_equal(rpx_output_open("/proc/rpxprof-test/out.json", &opt, &o, &err), RPX_EIO);
    assert_non_null(strstr(err.message, "/proc/rpxprof-test/out.json: cannot create"));
    assert_non_null(strstr(err.message, "choose a"));
    assert_int_equal(temps_in(g_dir), 0);
}

static void test_kinds(void **st)
{
    rpx_output_options opt = {RPX_OUTPUT_SVG, NULL, 0, NULL, 0, "-o"};
    rpx_output *o;
    rpx_error err = {0};
    static const char zip_ours[] = "PK\005\006\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\023\0"
                                   "rpxprof inputs make";
    static const char zip_other[] = "PK\005\006\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    FILE *f;
    (void)st;
    put(at("ours.svg"), "<?xml version=\"1.0\"?>\n" RPX_OUTPUT_SVG_MARK "\n<svg/>\n");
    put(at("other.svg"), "<?xml version=\"1.0\"?>\n<svg/>\n");
    assert_int_equal(rpx_output_open(at("ours.svg"), &opt, &o, &err), 0);
    rpx_output_discard(o);
    assert_int_equal(rpx_output_open(at("other.svg"), &opt, &o, &err), RPX_EINVAL);
    /* an NPZ made by inputs make carries its archive comment */
    opt.kind = RPX_OUTPUT_NPZ;
    f = fopen(at("ours.npz"), "wb");
    fwrite(zip_ours, 1, sizeof zip_ours - 1, f);
    fclose(f);
    f = fopen(at("other.npz"), "wb");
    fwrite(zip_other, 1, sizeof zip_other - 1, f);
    fclose(f);
    assert_int_equal(rpx_output_open(at("ours.npz"), &opt, &o, &err), 0);
    {
        const char *tmp = rpx_output_temp_path(o);
        assert_non_null(tmp);
        put(tmp, "new");
        assert_int_equal(rpx_output_commit_written(o, &err), 0);
        assert_string_equal(get(at("ours.npz")), "new");
    }
    assert_int_equal(rpx_output_open(at("other.npz"), &opt, &o, &err), RPX_EINVAL);
    /* an aggregate folder's text: ours when validation.json is rpxprof's */
    opt.kind = RPX_OUTPUT_TEXT;
    assert_int_equal(mkdir(at("agg"), 0777), 0);
    put(at("agg/summary.csv"), "task,model\n");
    assert_int_equal(rpx_output_open(at("agg/summary.csv"), &opt, &o, &err), RPX_EINVAL);
    assert_non_null(strstr(err.message, "first bytes: \"task,model\\n\""));
    put(at("agg/validation.json"), "{\"schema\": \"rpxprof.other/1\"}");
    assert_int_equal(rpx_output_open(at("agg/summary.csv"), &opt, &o, &err), RPX_EINVAL);
    put(at("agg/validation.json"), "{\n  \"schema\": \"rpxprof.validation/1\"\n}\n");
    assert_int_equal(rpx_output_open(at("agg/summary.csv"), &opt, &o, &err), 0);
    rpx_output_discard(o);
    assert_int_equal(temps_in(g_dir), 0);
    assert_int_equal(temps_in(at("agg")), 0);
}

static void test_one_call_writers(void **st)
{
    rpx_error err = {0};
    json_t *r = json_pack("{s:s,s:i}", "schema", "rpxprof.profile/1", "x", 1);
    json_t *c = json_pack("{s:s}", "schema", "rpxprof.system_card/1");
    (void)st;
    assert_int_equal(rpx_json_write_file(at("j/r.json"), r, &err), 0);
    assert_int_equal(rpx_json_write_file(at("j/r.json"), r, &err), 0); /* same schema */
    assert_int_not_equal(rpx_json_write_file(at("j/r.json"), c, &err), 0);
    assert_non_null(strstr(err.message, "rpxprof.profile/1"));
    put(at("j/notes.txt"), "notes");
    assert_int_not_equal(rpx_json_write_file(at("j/notes.txt"), r, &err), 0);
    assert_string_equal(get(at("j/notes.txt")), "notes");
    assert_int_not_equal(rpx_write_file_atomic(at("j/notes.txt"), "x", 1, &err), 0);
    /* an SVG of ours replaces one of ours only */
    assert_int_equal(rpx_write_file_atomic(at("j/f.svg"), RPX_OUTPUT_SVG_MARK "<svg/>", 29, &err), 0);
    assert_int_equal(rpx_write_file_atomic(at("j/f.svg"), RPX_OUTPUT_SVG_MARK "<svg/>", 29, &err), 0);
    assert_int_equal(temps_in(at("j")), 0);
    json_decref(r);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_file_temp_before_work, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protected_even_forced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_devices_streamed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_streamed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_files_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_call_writers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
