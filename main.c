/* main.c - the tunefarm command: routes subcommands and MPI ranks.
 *
 * `tunefarm run` is SPMD: rank 0 becomes the coordinator, every other rank a
 * worker. Started without a launcher it re-executes itself under `mpirun` with
 * one worker per local device, so a laptop user and a Slurm job run the same
 * code path. `query` and `devices` need no MPI; `__runner` is the hidden
 * subcommand a worker spawns to own its device. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

extern char **environ;

#include "tools/exchange_tool.h"
#include "schema/version.h"
#include "coordinator/coordinator.h"
#include "coordinator/journal.h"
#include "coordinator/diffcmd.h"
#include "coordinator/progress.h"
#include "coordinator/report.h"
#include "coordinator/strategy.h"
#include "schema/archive.h"
#include "schema/exchange.h"
#include "schema/space.h"
#include "schema/wire.h"
#include "tools/best.h"
#include "tools/html_report.h"
#include "tools/space_tool.h"
#include "tools/t1_tool.h"
#include "worker/backend_replay.h"
#include "worker/compiler.h"
#include "worker/portability.h"
#include "worker/precompile.h"
#include "worker/runner.h"
#include "worker/worker.h"


static const char usage_main[] =
    "usage: tunefarm COMMAND [OPTIONS]\n"
    "\n"
    "Tune GPU and CPU kernels across every device of a machine or a cluster.\n"
    "\n"
    "commands:\n"
    "  run JOB.yaml [-o ARCHIVE]   tune a job; results go to an HDF5 archive\n"
    "  compile JOB.yaml --arch A   compile a job's variants ahead, on CPUs, into the cache\n"
    "  query ARCHIVE               best configuration per kernel, problem and device\n"
    "  status ARCHIVE              what each run measured, what an unfinished one has left\n"
    "  diff ARCHIVE                what got faster or slower between two runs, and why\n"
    "  merge OUT IN...             add the runs of archives IN to archive OUT\n"
    "  export ARCHIVE --format F   results as CSV, JSON, T4 or a Kernel Tuner cache\n"
    "  import ARCHIVE FILE...      add Kernel Tuner caches and T4 files to an archive\n"
    "  devices                     the devices this node offers\n"
    "  space KERNEL.yaml           count, list or sample a kernel's space (no device)\n"
    "  import-t1 FILE.json         a kernel folder from a T1 file (Kernel Tuner's input)\n"
    "  best ARCHIVE --kernel K     best configurations as a C header, JSON or -D flags\n"
    "  report ARCHIVE -o F.html    one self-contained HTML page of charts of an archive\n"
    "  header cuda|hip             print the portability header GPU kernels include\n"
    "  version                     print the version\n"
    "  help [COMMAND]              this text, or a command's\n"
    "  help strategies             the search strategies and their options\n"
    "\n"
    "`tunefarm COMMAND --help` explains each command and its exit codes.\n";

static const char usage_run[] =
    "usage: tunefarm run JOB.yaml [-o ARCHIVE] [-n WORKERS] [-q] [--fresh] [--grace S]\n"
    "                    [-c] [--replay SOURCE [--speed X]]\n"
    "       mpirun -np N tunefarm run JOB.yaml ...   (or srun)\n"
    "\n"
    "Tune every kernel x problem of JOB.yaml on every targeted device. Rank 0\n"
    "coordinates; every other rank is a worker bound to one device (GPUs first,\n"
    "then the host CPU). Without a launcher, tunefarm starts mpirun itself with\n"
    "one worker per local device. Progress goes to stderr, the summary table to\n"
    "stdout, every result to the archive (extended if it exists).\n"
    "\n"
    "Nothing measured is lost: each result goes to ARCHIVE.journal before it\n"
    "counts, and the archive is rewritten atomically at every checkpoint. If the\n"
    "job's last run in the archive is unfinished (killed, interrupted, out of\n"
    "time), running the same job on the same archive resumes it: the journal is\n"
    "folded in and finished configurations are not measured again.\n"
    "\n"
    "SIGTERM, SIGINT or SIGUSR1 to this process (passed on to rank 0) or to\n"
    "rank 0 stops handing out work, waits up to the grace period for work in\n"
    "flight, checkpoints and exits with 75; a second signal stops at once, a\n"
    "third kills the job. Under Slurm: #SBATCH --signal=B:USR1@180 (slurm/).\n"
    "\n"
    "options:\n"
    "  -o, --output ARCHIVE   archive path (default: the job's `archive`)\n"
    "  -n, --workers N        without a launcher: start N worker ranks\n"
    "                         (default: one per local device; with\n"
    "                         --replay, one)\n"
    "  -q, --quiet            no progress output\n"
    "  -F, --fresh            start a new run even if the job's last run in the\n"
    "                         archive is unfinished (it stays as it is)\n"
    "  -g, --grace SECONDS    after a signal, wait this long for work in flight\n"
    "                         (default 20: below Slurm's default KillWait of 30)\n"
    "  -c, --compile-rank     under a launcher: this rank takes no device and\n"
    "                         compiles ahead, into the shared compile cache, what\n"
    "                         the device ranks will measure (MPMD, e.g. mpirun\n"
    "                         -np 3 tunefarm run J : -np 2 tunefarm run J -c).\n"
    "                         A worker whose own device class is done does the\n"
    "                         same until the run ends.\n"
    "  -r, --replay SOURCE    no device: answer every configuration from SOURCE,\n"
    "                         a tunefarm archive or a Kernel Tuner cache (.json,\n"
    "                         .json.gz), with its recorded status and times; each\n"
    "                         worker is a simulated device of SOURCE's kind\n"
    "                         (backend `replay`), whatever the job's targets say.\n"
    "                         The job's kernels must describe SOURCE's parameters\n"
    "                         (names and values); the /runs row names SOURCE;\n"
    "                         `null:`: every configuration ok at once (benchmarks)\n"
    "  -s, --speed X          replay: simulated seconds per real second, 1e-6 to\n"
    "                         1e9 (each worker spends the recorded compile +\n"
    "                         benchmark time / X, at most an hour per\n"
    "                         configuration); 0 or `instant` (default): no waiting\n"
    "  -h, --help             this text\n";

/* The rest of `run --help` (one string would pass C99's 4095 characters). */
static const char usage_run_codes[] =
    "\n"
    "exit codes:\n"
    "  0  the job ran; every configuration has a status (failed variants included)\n"
    "  1  the run broke (a rank failed or was killed, the archive became\n"
    "     unwritable): the job is aborted; the archive keeps what its last\n"
    "     checkpoint held, the journal the results after it\n"
    "  2  bad command line, job file, kernel file or archive (or an archive path\n"
    "     that cannot be written); nothing was measured\n"
    "  3  no worker offers a device the job targets\n"
    "  75 interrupted by a signal after a checkpoint, or while the spaces were\n"
    "     counted (nothing measured yet): run the same command again to resume (a\n"
    "     requeue script resubmits on 75)\n"
    "\n"
    "environment:\n"
    "  TUNEFARM_FINALIZE_TIMEOUT   seconds a rank waits in MPI_Finalize, once its\n"
    "                              work is saved, before it exits without it\n"
    "                              (default 60; 0 waits for ever); without a\n"
    "                              launcher, an mpirun still running 10 s after\n"
    "                              that is stopped\n";

static void print_usage_run(FILE *out)
{
    fputs(usage_run, out);
    fputs(usage_run_codes, out);
}

static const char usage_status[] =
    "usage: tunefarm status ARCHIVE\n"
    "\n"
    "Say what an archive holds and what is left: per run, whether it finished,\n"
    "the sessions it was measured in when it was resumed (and what changed on\n"
    "a device between them: driver, clocks, power limit...), and per kernel,\n"
    "problem and device class how many configurations it measured (by status)\n"
    "out of how many it planned. Results still in the journal (ARCHIVE.journal:\n"
    "a run going on, or killed) are counted too. Reads only; safe while a run\n"
    "writes the archive.\n"
    "\n"
    "exit codes: 0 printed; 1 the output could not be written; 2 bad arguments,\n"
    "unreadable archive or journal.\n";

static const char usage_query[] =
    "usage: tunefarm query ARCHIVE [--kernel NAME] [--run N]\n"
    "\n"
    "Print the best configuration per kernel, problem and device class of an\n"
    "archive, its time and metric, its speedup over that problem's default\n"
    "configuration and the counts by status (ok/total: configurations, each\n"
    "once with the status of its latest measurement, however many runs\n"
    "measured it). Results still in ARCHIVE.journal (a run going on, or one\n"
    "that was killed) count too.\n"
    "\n"
    "options:\n"
    "  -k, --kernel NAME   only this kernel\n"
    "  -r, --run N         only run N (0-based, see `tunefarm status`; its job,\n"
    "                      job hash and dates are printed); default: every run\n"
    "  -h, --help          this text\n"
    "\n"
    "exit codes: 0 printed; 1 the output could not be written; 2 bad arguments or\n"
    "unreadable archive.\n";

static const char usage_compile[] =
    "usage: tunefarm compile JOB.yaml --arch ARCH[,ARCH...] [-j N] [-q]\n"
    "       mpirun -np N tunefarm compile JOB.yaml --arch ...   (each rank takes a share)\n"
    "\n"
    "Compile every variant a run of JOB.yaml would measure on a GPU of each\n"
    "architecture (sm_80, sm_90, gfx942...) into the job's compile cache, with no\n"
    "GPU: a nominal device of the architecture selects the valid configurations\n"
    "and the random sample, as the run will (brute force with a budget: the first\n"
    "`budget` valid ones). A later `tunefarm run` sharing the cache finds the\n"
    "binaries and spends its GPU time measuring. An adaptive search (genetic,\n"
    "local, bayes, hybrid) decides during the run: it gets the default\n"
    "configuration and a seeded random sample, `budget` of them (256 without a\n"
    "budget). `host` compiles the C kernels for this machine's CPU (the host\n"
    "backend's binaries).\n"
    "\n"
    "options:\n"
    "  -a, --arch LIST     architectures, comma-separated (required)\n"
    "  -j, --jobs N        compiler processes (default: the online cores)\n"
    "  -q, --quiet         no progress output\n"
    "  -h, --help          this text\n"
    "\n"
    "exit codes: 0 done (variants that do not compile are cached as such); 1 the\n"
    "compiler is unusable here (nothing compiled); 2 bad job file or architecture.\n";

static const char usage_devices[] =
    "usage: tunefarm devices\n"
    "\n"
    "List the devices this node offers, in the order workers take them, and why a\n"
    "backend is unavailable.\n"
    "\n"
    "exit codes: 0 listed; 1 the list could not be written; 2 bad arguments.\n";

static const char usage_version[] =
    "usage: tunefarm version\n"
    "\n"
    "Print the version (the source's git revision, \"-dirty\" with local changes).\n"
    "\n"
    "exit codes: 0 printed; 1 it could not be written; 2 bad arguments.\n";

static const char usage_header[] =
    "usage: tunefarm header cuda|hip\n"
    "\n"
    "Print the header the farm injects as \"tunefarm.h\" when it compiles a GPU kernel,\n"
    "to compile one by hand (nvcc -I DIR).\n"
    "\n"
    "exit codes: 0 printed; 1 it could not be written; 2 bad arguments.\n";

static void self_path(char *out, size_t cap, const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n > 0)
        out[n] = '\0';
    else
        tf_strlcpy(out, argv0, cap);
}

/* Best effort: `value` and a newline into the file `path` (self_launch reads it). */
static void write_number(const char *path, long value)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", value);
        fclose(f);
    }
}

/* SIGTERM, SIGINT and SIGUSR1 received (the coordinator reads it). */
static volatile sig_atomic_t signals_received;

/* ---- long counts and samples (rank 0, while the run is planned) ----
 * Counting a huge space can take minutes: schema/space calls this hook every
 * 65536 steps. A signal stops the planning (the run exits 75 with nothing
 * measured), and past a second a progress line says what is going on. */
struct space_progress {
    bool quiet;
    bool interrupted;      /* the hook stopped a count or sample */
    double next_at;        /* elapsed seconds of the next progress line */
    double last_elapsed;
};

static bool space_poll(void *ctx, const char *kernel, const char *problem, const char *activity,
                       double fraction, double elapsed)
{
    struct space_progress *p = ctx;
    if (signals_received > 0) {
        p->interrupted = true;
        return true;
    }
    if (elapsed < p->last_elapsed || p->next_at == 0) /* a new count or sample */
        p->next_at = 1.0;
    p->last_elapsed = elapsed;
    if (!p->quiet && elapsed >= p->next_at) {
        fprintf(stderr, "tunefarm: %s of %s/%s: %.3g%% after %.0f s (SIGTERM or Ctrl-C "
                        "stops the run)\n",
                activity, kernel, problem, 100 * fraction, elapsed);
        p->next_at = elapsed < 10 ? elapsed + 2 : elapsed + 10;
    }
    return false;
}

static void on_signal(int sig)
{
    (void)sig;
    if (signals_received < 1000)
        signals_received++;
}

/* Every rank of a run counts these signals instead of dying: the coordinator
 * stops the run cleanly, the workers finish what they hold until it says STOP.
 * (SIGXFSZ is ignored by main for every command.) */
static void install_run_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
}

/* ---- a bounded MPI_Finalize ----
 * By the time a rank finalizes, its work is saved (a run's archive is written
 * and every result delivered; a compile's binaries are in the cache), so
 * nothing is lost if it leaves without finalizing. MPI_Finalize can still hang
 * for reasons outside tunefarm: its closing barrier goes through the
 * launcher's PMIx server (a collective lost between Slurm step daemons) or a
 * fabric that stalls on teardown. A hung rank would hold its nodes until the
 * job's time limit, and a nightly retune would miss its window; so SIGALRM
 * ends the rank after a grace period, saying why, with the exit code it would
 * have had. Output is flushed first: _exit does not. */
static char finalize_message[160];
static size_t finalize_message_len;
static volatile sig_atomic_t finalize_exit_code;

static void on_finalize_timeout(int sig)
{
    (void)sig;
    ssize_t ignored = write(STDERR_FILENO, finalize_message, finalize_message_len);
    (void)ignored;
    _exit(finalize_exit_code);
}

/* TUNEFARM_FINALIZE_TIMEOUT in seconds: default 60, 0 for no limit; a value
 * that is not a number is said (if `warn`) and replaced by the default. */
static long finalize_timeout(bool warn)
{
    const char *env = getenv("TUNEFARM_FINALIZE_TIMEOUT");
    char *end;
    long seconds = env && *env ? strtol(env, &end, 10) : 60;
    if (env && *env && (*end != '\0' || seconds < 0)) {
        if (warn)
            fprintf(stderr, "tunefarm: TUNEFARM_FINALIZE_TIMEOUT='%s' is not a number of "
                            "seconds (0 or more); using 60\n", env);
        seconds = 60;
    }
    return seconds > 86400 ? 86400 : seconds;
}

/* Poll `barrier` without spinning until it completes or, with `done_seen`
 * non-NULL, until rank 0's DONE has arrived (*done_seen set, the barrier
 * still pending). A compile rank or a worker whose class is done gets STOP
 * long before the run ends, and its core belongs to the ranks still
 * compiling and measuring. */
static void wait_barrier(MPI_Request *barrier, bool *done_seen)
{
    for (;;) {
        int done = 0;
        MPI_Test(barrier, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (done_seen != NULL) {
            int arrived = 0;
            MPI_Iprobe(0, TF_WIRE_TAG_DONE, MPI_COMM_WORLD, &arrived, MPI_STATUS_IGNORE);
            if (arrived) {
                MPI_Recv(NULL, 0, MPI_BYTE, 0, TF_WIRE_TAG_DONE, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                *done_seen = true;
                return;
            }
        }
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
}

/* Rank 0: DONE to every other rank (TF_WIRE_TAG_DONE). A rank that died
 * mid-run cannot take it: errors are returned, not fatal, and ignored. */
static void tell_run_over(void)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int r = 1; r < size; r++) {
        MPI_Request req;
        if (MPI_Isend(NULL, 0, MPI_BYTE, r, TF_WIRE_TAG_DONE, MPI_COMM_WORLD, &req) ==
            MPI_SUCCESS)
            MPI_Request_free(&req);
    }
}

/* MPI_Finalize, or _exit(exit_code) if it has not returned after
 * TUNEFARM_FINALIZE_TIMEOUT seconds. With `wait_for_all`, every rank first
 * waits until every rank is done (a barrier): a worker without limit until
 * rank 0 says the run is over (DONE), then within the timeout, since a rank
 * that died mid-run (its work taken over: `mpirun --enable-recovery`) never
 * arrives; rank 0, which ends the run and so is normally the last to arrive,
 * counts its whole wait in the timeout. The timeout bounds the closing
 * handshake only: armed before the others are done, it would end a rank that
 * is merely early, and mpirun would take that for a failure and stop the
 * whole job (seen on an H100: a warm-cache run whose compile rank got STOP at
 * once died 60 s later). */
static void arm_finalize_timeout(int rank, int exit_code)
{
    long seconds = finalize_timeout(rank == 0);
    if (seconds <= 0)
        return;
    int n = snprintf(finalize_message, sizeof finalize_message,
                     "tunefarm: rank %d: MPI_Finalize has not returned after %ld s; "
                     "exiting without it (everything is saved)\n", rank, seconds);
    finalize_message_len = n > 0 ? (size_t)n : 0;
    finalize_exit_code = exit_code;
    struct sigaction sa = {.sa_handler = on_finalize_timeout};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    fflush(NULL);
    alarm((unsigned)seconds);
}

static void finalize_bounded(int rank, int exit_code, bool wait_for_all)
{
    MPI_Request barrier = MPI_REQUEST_NULL;
    bool done_seen = rank == 0;
    /* Rank 0 arms the timeout first: sending DONE to a rank that died may
     * itself hang (TCP connects to a dead peer are retried). */
    if (rank == 0)
        arm_finalize_timeout(rank, exit_code);
    if (wait_for_all) {
        if (rank == 0)
            tell_run_over();
        MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
        if (rank != 0)
            wait_barrier(&barrier, &done_seen);
    }
    if (rank != 0)
        arm_finalize_timeout(rank, exit_code);
    if (barrier != MPI_REQUEST_NULL)
        wait_barrier(&barrier, NULL);
    /* Rank 0 sent DONE before the barrier: take it, so no message is left. */
    if (wait_for_all && !done_seen)
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TF_WIRE_TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    alarm(0);
}

static bool under_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE", "MPI_LOCALNRANKS", NULL};
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

/* No launcher: run `mpirun -np 1+W exe run ...` (W = one worker per device) as a
 * child and exit with the coordinator's code, which it leaves in a temporary
 * file: the ranks themselves then exit 0, so mpirun adds no abort banner to a
 * plain "bad job file" error. */
/* The smallest file size limit (ulimit -f) self_launch starts mpirun under.
 * Open MPI writes shared-memory segments of 4 MiB per rank and a PMIx store at
 * start-up; under a smaller limit it does not fail but hangs after aborting
 * (Open MPI 4.1: SIGTERM does not end it, and it outlives a killed parent).
 * A tuning farm's archives and binaries need more than this anyway. */
#define SELF_LAUNCH_FSIZE_MIN (UINT64_C(64) << 20)

/* Why mpirun may not have started the ranks, into out[cap] ("" if nothing
 * is known): the folder Open MPI makes its session directory in (its
 * orte_tmpdir_base, else TMPDIR, TEMP, TMP, else /tmp, as opal_tmp_directory
 * picks it) nearly full. A folder that is missing or read-only is not the
 * cause: Open MPI falls back to another then. */
static void session_dir_trouble(char *out, size_t cap)
{
    static const char *const vars[] = {"OMPI_MCA_orte_tmpdir_base", "TMPDIR", "TEMP", "TMP"};
    const char *dir = "/tmp", *var = "TMPDIR";
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && v[0] != '\0') {
            dir = v;
            var = vars[i];
            break;
        }
    }
    struct statvfs vfs;
    out[0] = '\0';
    if (statvfs(dir, &vfs) != 0)
        return;
    const uint64_t avail = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
    if (vfs.f_files > 0 && vfs.f_favail == 0)
        snprintf(out, cap, "%s ('%s'), where Open MPI makes its session directory, has no free "
                 "inodes: free some there, or set TMPDIR to a folder with room", var, dir);
    else if (avail < SELF_LAUNCH_FSIZE_MIN)
        snprintf(out, cap, "%s ('%s'), where Open MPI makes its session directory, has %llu KiB "
                 "free: free space there, or set TMPDIR to a folder with room", var, dir,
                 (unsigned long long)(avail >> 10));
}

static int self_launch(const char *exe, int argc, char **argv, int workers)
{
    struct rlimit fsize;
    if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
        (uint64_t)fsize.rlim_cur < SELF_LAUNCH_FSIZE_MIN) {
        fprintf(stderr,
                "tunefarm: the file size limit (ulimit -f) is %llu KiB: under %llu MiB, Open "
                "MPI's start-up files do not fit, and mpirun then hangs instead of failing. "
                "Raise it (ulimit -f unlimited), or start tunefarm under your own launcher "
                "(mpirun, srun)\n",
                (unsigned long long)(fsize.rlim_cur / 1024),
                (unsigned long long)(SELF_LAUNCH_FSIZE_MIN >> 20));
        return TF_EXIT_FAILURE;
    }
    if (workers <= 0) {
        struct tf_device devs[64];
        const char *backends[64];
        int ordinals[64];
        workers = tf_worker_devices(devs, backends, ordinals, 64, NULL, 0);
        if (workers <= 0)
            workers = 1;
    }
    char np[16], status_path[] = "/tmp/tunefarm-status.XXXXXX";
    snprintf(np, sizeof np, "%d", workers + 1);
    int fd = mkstemp(status_path);
    if (fd < 0) {
        fprintf(stderr, "tunefarm: cannot create a temporary file in /tmp: %s\n", strerror(errno));
        return TF_EXIT_FAILURE;
    }
    close(fd);
    char **args = tf_xcalloc((size_t)argc + 12, sizeof *args);
    int n = 0;
    args[n++] = "mpirun";
    args[n++] = "-np";
    args[n++] = np;
    args[n++] = "--oversubscribe";
    /* Compile pools and runners must be free to use every core, not the rank's one. */
    args[n++] = "--bind-to";
    args[n++] = "none";
    if (geteuid() == 0)
        args[n++] = "--allow-run-as-root";
    args[n++] = (char *)exe;
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    setenv("TUNEFARM_STATUS_FILE", status_path, 1);
    /* mpirun gets its own process group, so a terminal's Ctrl-C reaches only
     * us (mpirun would kill the ranks at once), and no stdin, which a
     * background process group may not read. We forward signals as SIGUSR1,
     * which mpirun passes on to every rank: checkpoint and stop. */
    /* fork + exec rather than posix_spawn: the child asks the kernel for
     * SIGTERM when we die (PR_SET_PDEATHSIG), so a `tunefarm run` killed
     * with SIGKILL (a batch system's timeout, an OOM kill) takes mpirun and
     * its ranks along instead of leaving them running with the journal
     * locked; their results so far are in the journal, and the same command
     * resumes. The exec's failure comes back through a close-on-exec pipe. */
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    const pid_t parent = getpid();
    int report[2] = {-1, -1};
    int rc = pipe2(report, O_CLOEXEC) != 0 ? errno : 0;
    pid_t pid = -1;
    if (rc == 0 && (pid = fork()) < 0)
        rc = errno;
    if (rc == 0 && pid == 0) {
        int e = 0;
        /* Our handler only counts signals: the death signal must kill. */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGUSR1, SIG_DFL);
        if (setpgid(0, 0) != 0 || prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
            e = errno;
        if (e == 0 && getppid() != parent) /* the parent died before the prctl */
            _exit(TF_EXIT_FAILURE);
        const int null = e == 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
        if (e == 0 && (null < 0 || dup2(null, 0) < 0)) /* dup2's copy is inherited */
            e = errno;
        if (e == 0 && null == 0 && fcntl(0, F_SETFD, 0) < 0) /* stdin was closed: it is ours */
            e = errno;
        if (e == 0)
            execvp("mpirun", args);
        e = e ? e : errno;
        (void)!write(report[1], &e, sizeof e);
        _exit(127);
    }
    if (report[1] >= 0)
        close(report[1]);
    if (rc == 0) {
        int e = 0;
        ssize_t got;
        while ((got = read(report[0], &e, sizeof e)) < 0 && errno == EINTR)
            ;
        if (got == (ssize_t)sizeof e) {
            rc = e;
            waitpid(pid, NULL, 0);
        }
    }
    if (report[0] >= 0)
        close(report[0]);
    free(args);
    if (rc != 0) {
        unlink(status_path);
        fprintf(stderr,
                "tunefarm: cannot start mpirun (%s): install Open MPI (openmpi-bin) or start "
                "tunefarm under your launcher (mpirun, srun)\n",
                strerror(rc));
        return TF_EXIT_FAILURE;
    }
    /* A signal goes to the coordinator itself, as SIGUSR1, once it has said
     * where it is: not every mpirun forwards SIGUSR1 (Open MPI 4 does). A
     * third signal gives up on a clean stop and has mpirun kill the job. */
    char pid_path[sizeof status_path + 8];
    snprintf(pid_path, sizeof pid_path, "%s.pid", status_path);
    /* The coordinator writes its exit code once the run is saved, just before
     * it finalizes; the ranks leave by their finalize timeout at the latest. An
     * mpirun still running well after that is stuck itself (Open MPI 4.1's
     * mpirun can deadlock in its PMIx server's finalize when ranks left without
     * finalizing): it is stopped rather than waited for, the code is known. */
    const long grace = finalize_timeout(false);
    double saved_at = 0, stopped_at = 0;
    int status = 0, forwarded = 0;
    bool killed = false, stop_forced = false;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        if (signals_received >= 3 && !killed) {
            kill(pid, SIGTERM);
            killed = true;
        }
        struct stat saved;
        if (grace > 0 && saved_at == 0 && stat(status_path, &saved) == 0 && saved.st_size > 0)
            saved_at = tf_now();
        if (saved_at > 0 && stopped_at == 0 && tf_now() - saved_at > grace + 10) {
            fprintf(stderr, "tunefarm: mpirun has not exited %ld s after the run was saved; "
                            "stopping it\n", grace + 10);
            kill(-pid, SIGTERM); /* its process group: mpirun and the ranks it started */
            stopped_at = tf_now();
        }
        if (stopped_at > 0 && !stop_forced && tf_now() - stopped_at > 5) {
            kill(-pid, SIGKILL);
            stop_forced = true;
        }
        while (forwarded < signals_received) {
            long coordinator = 0;
            FILE *pf = fopen(pid_path, "r");
            if (pf) {
                if (fscanf(pf, "%ld", &coordinator) != 1)
                    coordinator = 0;
                fclose(pf);
            }
            if (coordinator <= 0)
                break; /* not started yet: forwarded when it has */
            kill((pid_t)coordinator, SIGUSR1);
            forwarded++;
        }
        struct timespec nap = {0, 50000000};
        nanosleep(&nap, NULL);
    }
    /* The coordinator writes its pid file once MPI has started (cmd_run),
     * before it opens the archive's journal: none means no rank got that
     * far, and nothing of the run was done. (A /tmp that cannot hold even
     * that file, which mkstemp just made beside it, would hide a run that
     * did start: the advice, to run the command again, holds either way.) */
    struct stat pid_file;
    const bool coordinator_started = stat(pid_path, &pid_file) == 0;
    unlink(pid_path);
    int code = -1;
    FILE *f = fopen(status_path, "r");
    if (f) {
        if (fscanf(f, "%d", &code) != 1)
            code = -1;
        fclose(f);
    }
    unlink(status_path);
    if (code >= 0)
        return code;
    /* No code from the coordinator: it did not get to the end of the run, so
     * the run broke (exit 1 as documented), whatever mpirun exits with: 137
     * when it saw a rank die of SIGKILL (128 + 9), the OOM killer's included. */
    char how[96];
    if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "mpirun was killed by signal %d", WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status) > 128)
        snprintf(how, sizeof how, "mpirun exited with %d: a rank died of signal %d",
                 WEXITSTATUS(status), WEXITSTATUS(status) - 128);
    else
        snprintf(how, sizeof how, "mpirun exited with %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (!coordinator_started) {
        /* Nothing to resume: say what stopped it (a TMPDIR too full for
         * mpirun itself was called resumable, though nothing had run). */
        if (signals_received > 0) {
            fprintf(stderr, "tunefarm: interrupted before the run started (%s): nothing ran, "
                            "and the archive and its journal are as they were (exit %d)\n",
                    how, TF_EXIT_FAILURE);
            return TF_EXIT_FAILURE;
        }
        char trouble[1024];
        session_dir_trouble(trouble, sizeof trouble);
        fprintf(stderr,
                "tunefarm: mpirun could not start the run (%s): the ranks did not get through "
                "MPI's start-up, so nothing ran, and the archive and its journal are as they "
                "were. %s; then run the same command again (exit %d)\n",
                how, trouble[0] ? trouble : "mpirun's messages above say why: fix that",
                TF_EXIT_FAILURE);
        return TF_EXIT_FAILURE;
    }
    fprintf(stderr, "tunefarm: the run ended before its coordinator finished (%s); exit %d: "
                    "the archive keeps its last checkpoint and its journal the results after "
                    "it; run the same command again to resume\n",
            how, TF_EXIT_FAILURE);
    return TF_EXIT_FAILURE;
}

/* --replay: the job loaded and matched against SOURCE. Every rank prepares it
 * (workers answer from it; rank 0 refuses a mismatch before anything runs,
 * then lets it go). A job that does not load is left to the coordinator to
 * report. */
struct replay_prep {
    struct tf_bundle *bundle;
    struct tf_job *job;
    struct tf_replay *replay;
};

/* An exit code; on TF_EXIT_USAGE `err` says why. */
static int replay_prepare(const char *job_path, const char *source, double speed,
                          struct replay_prep *rp, struct tf_error *err)
{
    rp->bundle = tf_bundle_create();
    rp->job = tf_job_load(job_path, rp->bundle, err);
    if (rp->job == NULL) {
        tf_error_clear(err);
        return TF_EXIT_OK;
    }
    rp->replay = tf_replay_open(source, rp->job, err);
    if (rp->replay == NULL)
        return TF_EXIT_USAGE;
    tf_replay_set_active(rp->replay, speed);
    return TF_EXIT_OK;
}

static void replay_prep_destroy(struct replay_prep *rp)
{
    tf_replay_set_active(NULL, 0);
    tf_replay_destroy(rp->replay);
    tf_job_destroy(rp->job);
    tf_bundle_destroy(rp->bundle);
    *rp = (struct replay_prep){0};
}

/* Every rank of a --replay run prepares the source (collective); the worst
 * code of all ranks is returned. A rank that fails says why, with its rank
 * and host, unless rank 0 said the same (a mismatch every rank finds): a
 * source that one node cannot read is named by that node. Rank 0 answers
 * nothing, so it lets the source go at once (a large archive or cache stays
 * in the workers' memory only). */
static int replay_prepare_all(const char *job_path, const char *source, double speed, int rank,
                              struct replay_prep *rp)
{
    struct tf_error err = {0};
    int code = replay_prepare(job_path, source, speed, rp, &err), worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    char said[sizeof err.message];
    tf_strlcpy(said, code != TF_EXIT_OK ? err.message : "", sizeof said);
    MPI_Bcast(said, (int)sizeof said, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0 && code != TF_EXIT_OK) {
        tf_error_print(&err, "tunefarm run --replay", stderr);
    } else if (code != TF_EXIT_OK && strcmp(said, err.message) != 0) {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        char prog[320];
        snprintf(prog, sizeof prog, "tunefarm run --replay: rank %d on %s", rank, host);
        tf_error_print(&err, prog, stderr);
    }
    if (rank == 0)
        replay_prep_destroy(rp);
    return worst;
}

static int cmd_run(int argc, char **argv, const char *exe)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"workers", required_argument, NULL, 'n'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"compile-rank", no_argument, NULL, 'c'},
                                             {"fresh", no_argument, NULL, 'F'},
                                             {"grace", required_argument, NULL, 'g'},
                                             {"replay", required_argument, NULL, 'r'},
                                             {"speed", required_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct tf_run_options opt = {.grace = 20, .interrupts = &signals_received};
    int workers = 0, compile_rank = 0, c;
    const char *replay = NULL;
    double speed = 0;
    bool speed_given = false;
    optind = 2;
    while ((c = getopt_long(argc, argv, "o:n:qcFg:r:s:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            replay = optarg;
            break;
        case 's': {
            char *end;
            double v = strcmp(optarg, "instant") == 0 ? 0 : strtod(optarg, &end);
            /* Below 1e-6 a recorded millisecond is a quarter of an hour: a typo. */
            /* end == optarg: strtod read nothing ('' from an unset variable
             * was 0, instant). */
            if ((strcmp(optarg, "instant") != 0 && (*end || end == optarg)) ||
                !(v >= 0 && v <= 1e9) ||
                (v > 0 && v < 1e-6)) {
                fprintf(stderr, "tunefarm run: --speed wants simulated seconds per real second "
                                "(1e-6 to 1e9), or 0 or 'instant', got '%s'\n", optarg);
                return TF_EXIT_USAGE;
            }
            speed = v;
            speed_given = true;
            break;
        }
        case 'o':
            opt.archive = optarg;
            break;
        case 'n': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 4096) {
                fprintf(stderr, "tunefarm run: --workers wants a number from 1 to 4096, got "
                                "'%s'\n", optarg);
                return TF_EXIT_USAGE;
            }
            workers = (int)v;
            break;
        }
        case 'q':
            opt.quiet = true;
            break;
        case 'c':
            compile_rank = 1;
            break;
        case 'F':
            opt.fresh = true;
            break;
        case 'g': {
            char *end;
            double v = strtod(optarg, &end);
            /* end == optarg: strtod read nothing ('' from an unset variable
             * was 0: a signal then dropped the work in flight at once). */
            if (*end || end == optarg || !(v >= 0 && v <= 86400)) {
                fprintf(stderr, "tunefarm run: --grace wants seconds from 0 to 86400, got "
                                "'%s'\n", optarg);
                return TF_EXIT_USAGE;
            }
            opt.grace = v;
            break;
        }
        case 'h':
            print_usage_run(stdout);
            return TF_EXIT_OK;
        default:
            print_usage_run(stderr);
            return TF_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "tunefarm run: expected one job file, got %d arguments\n\n",
                argc - optind);
        print_usage_run(stderr);
        return TF_EXIT_USAGE;
    }
    opt.job_path = argv[optind];
    if (compile_rank && !under_launcher()) {
        fprintf(stderr, "tunefarm run: --compile-rank names ranks of a launcher's job "
                        "(mpirun -np N tunefarm run JOB : -np M tunefarm run JOB "
                        "--compile-rank)\n");
        return TF_EXIT_USAGE;
    }
    if (speed_given && replay == NULL) {
        fprintf(stderr, "tunefarm run: --speed sets a replay's clock: give --replay SOURCE too, "
                        "or drop --speed\n");
        return TF_EXIT_USAGE;
    }
    char replay_path[PATH_MAX];
    struct replay_prep rp = {0};
    if (replay != NULL) {
        if (compile_rank) {
            fprintf(stderr, "tunefarm run: --replay compiles nothing: drop --compile-rank\n");
            return TF_EXIT_USAGE;
        }
        /* The /runs row names the source by its absolute path (provenance). */
        if (strcmp(replay, TF_REPLAY_NULL) == 0 || realpath(replay, replay_path) == NULL)
            tf_strlcpy(replay_path, replay, sizeof replay_path);
        opt.replay_source = replay_path;
    }
    if (!under_launcher()) {
        /* A mismatched source is refused here, before mpirun starts ranks. */
        if (replay != NULL) {
            struct tf_error err = {0};
            int code = replay_prepare(opt.job_path, replay, speed, &rp, &err);
            if (code != TF_EXIT_OK)
                tf_error_print(&err, "tunefarm run --replay", stderr);
            replay_prep_destroy(&rp);
            if (code != TF_EXIT_OK)
                return code;
        }
        return self_launch(exe, argc, argv, workers > 0 ? workers : replay ? 1 : 0);
    }

    char command[512];
    int used = 0;
    for (int i = 0; i < argc && used < (int)sizeof command; i++)
        used += snprintf(command + used, sizeof command - (size_t)used, "%s%s", i ? " " : "",
                         argv[i]);
    opt.command_line = command;

    /* Serialized: a worker's heartbeat thread sends while its main thread
     * waits on its device (worker.c); the two never call MPI at once. */
    int thread_level;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &thread_level);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* A worker's index among the device workers of its node picks its device
     * (the coordinator and compile ranks take none). The ranks' roles and CPU
     * masks give each compile pool its share of the node's CPUs once the job
     * says which devices it targets: worker.h. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size, node_rank;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_rank(node, &node_rank);
    int mine[3] = {rank, compile_rank, rank != 0 && replay == NULL}; /* the last: has a pool */
    int *ranks = tf_xcalloc((size_t)node_size * 3, sizeof *ranks);
    MPI_Allgather(mine, 3, MPI_INT, ranks, 3, MPI_INT, node);
    cpu_set_t my_cpus;
    CPU_ZERO(&my_cpus);
    if (sched_getaffinity(0, sizeof my_cpus, &my_cpus) != 0)
        CPU_ZERO(&my_cpus);
    unsigned char *masks = tf_xcalloc((size_t)node_size, sizeof my_cpus);
    MPI_Allgather(&my_cpus, (int)sizeof my_cpus, MPI_BYTE, masks, (int)sizeof my_cpus, MPI_BYTE,
                  node);
    int *roles = tf_xcalloc((size_t)node_size * 2, sizeof *roles), *device_index = roles + node_size;
    for (int i = 0; i < node_size; i++) {
        const bool worker = ranks[3 * i] != 0 && !ranks[3 * i + 1]; /* device or replay */
        roles[i] = ranks[3 * i] == 0  ? TF_NODE_NONE /* the coordinator, even with -c */
                   : ranks[3 * i + 1] ? TF_NODE_COMPILE
                   : ranks[3 * i + 2] ? TF_NODE_DEVICE
                                      : TF_NODE_NONE;
        device_index[i] = -1;
        if (!worker)
            continue;
        device_index[i] = 0;
        for (int j = 0; j < node_size; j++)
            device_index[i] += ranks[3 * j] != 0 && ranks[3 * j] < ranks[3 * i] && !ranks[3 * j + 1];
    }
    const struct tf_worker_node node_info = {
        .n = node_size, .me = node_rank, .role = roles, .device_index = device_index,
        /* an empty mask (sched_getaffinity failed) leaves every pool all it is allowed */
        .masks = CPU_COUNT(&my_cpus) > 0 ? masks : NULL, .mask_bytes = sizeof my_cpus};
    free(ranks);
    MPI_Comm_free(&node);
    if (replay != NULL) {
        int worst = replay_prepare_all(opt.job_path, replay, speed, rank, &rp);
        if (worst != TF_EXIT_OK) {
            const char *sp = getenv("TUNEFARM_STATUS_FILE");
            if (rank == 0 && sp != NULL)
                write_number(sp, worst);
            replay_prep_destroy(&rp);
            free(roles);
            free(masks);
            finalize_bounded(rank, worst, false);
            return sp == NULL ? worst : 0;
        }
    }
    install_run_signals();
    /* Started by self_launch: tell the parent where to send signals. */
    const char *status_file = getenv("TUNEFARM_STATUS_FILE");
    if (rank == 0 && status_file != NULL) {
        char pid_path[4200];
        snprintf(pid_path, sizeof pid_path, "%s.pid", status_file);
        write_number(pid_path, (long)getpid());
    }

    bool abort_others = false;
    struct space_progress progress = {.quiet = opt.quiet};
    if (rank == 0)
        tf_space_set_poll(space_poll, &progress);
    int code = rank == 0 ? tf_coordinator_run(&opt, &abort_others)
                         : tf_worker_run(exe, &node_info);
    tf_space_set_poll(NULL, NULL);
    free(roles);
    free(masks);
    /* A signal stopped the planning (the coordinator refused the job with
     * the stop's message): nothing was measured, and running the same
     * command again starts or resumes the run, as for any interruption. */
    if (rank == 0 && progress.interrupted && code == TF_EXIT_USAGE && !abort_others) {
        fprintf(stderr, "tunefarm: interrupted while planning: nothing was measured; run the "
                        "same command again to resume (exit %d)\n", TF_EXIT_INTERRUPTED);
        code = TF_EXIT_INTERRUPTED;
    }
    /* A worker that cannot go on, or a coordinator whose run broke or was cut
     * short with work in flight, would leave the others waiting for messages
     * that never come: end the whole job (the archive keeps its last
     * checkpoint, the journal everything after; the rank said why). */
    const char *status_path = getenv("TUNEFARM_STATUS_FILE");
    if ((rank != 0 && code != 0) || (rank == 0 && abort_others)) {
        if (rank == 0 && status_path != NULL) {
            write_number(status_path, code);
        }
        if (code != TF_EXIT_INTERRUPTED)
            fprintf(stderr, "tunefarm: rank %d ends the run (exit %d)\n", rank, code);
        fflush(NULL);
        MPI_Abort(MPI_COMM_WORLD, rank == 0 ? code : TF_EXIT_FAILURE);
    }
    /* Started by self_launch: hand the coordinator's code to the parent (before
     * finalizing, so that a rank ended by the finalize timeout has said it). */
    if (status_path != NULL && rank == 0)
        write_number(status_path, code);
    const int exit_code = status_path == NULL && rank == 0 ? code : 0;
    finalize_bounded(rank, exit_code, true);
    replay_prep_destroy(&rp);
    return exit_code;
}

/* The job's search strategy and options, checked as `tunefarm run` checks
 * them (tf_strategy_check_job): the loader keeps them raw and precompile is
 * the worker's (which must not call the coordinator), so main does it. A job
 * that does not load is left to tf_precompile to report. Prints on `loud`
 * (rank 0); returns an exit code. */
static int compile_check_search(const char *job_path, bool loud)
{
    struct tf_error err = {0};
    struct tf_bundle *bundle = tf_bundle_create();
    struct tf_job *job = tf_job_load(job_path, bundle, &err);
    int code = TF_EXIT_OK;
    if (job != NULL && tf_strategy_check_job(job, &err) != 0) {
        if (loud)
            tf_error_print(&err, "tunefarm compile", stderr);
        code = TF_EXIT_USAGE;
    }
    tf_job_destroy(job);
    tf_bundle_destroy(bundle);
    return code;
}

static int cmd_compile(int argc, char **argv, const char *exe)
{
    static const struct option longopts[] = {{"arch", required_argument, NULL, 'a'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct tf_precompile_options opt = {.nranks = 1, .exe = exe};
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "a:j:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            opt.archs = optarg;
            break;
        case 'j': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 4096) {
                fprintf(stderr, "tunefarm compile: --jobs wants a number from 1 to 4096, got "
                                "'%s'\n", optarg);
                return TF_EXIT_USAGE;
            }
            opt.processes = (int)v;
            break;
        }
        case 'q':
            opt.quiet = true;
            break;
        case 'h':
            fputs(usage_compile, stdout);
            return TF_EXIT_OK;
        default:
            fputs(usage_compile, stderr);
            return TF_EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || opt.archs == NULL) {
        fprintf(stderr, "tunefarm compile: expected one job file and --arch\n\n%s",
                usage_compile);
        return TF_EXIT_USAGE;
    }
    if (strspn(opt.archs, ",") == strlen(opt.archs)) {
        fprintf(stderr, "tunefarm compile: --arch '%s' names no architecture (sm_90, gfx90a, "
                        "host...)\n", opt.archs);
        return TF_EXIT_USAGE;
    }
    opt.job_path = argv[optind];
    if (!under_launcher()) {
        int code = compile_check_search(opt.job_path, true);
        return code != TF_EXIT_OK ? code : tf_precompile(&opt);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &opt.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &opt.nranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &opt.node_ranks);
    MPI_Comm_free(&node);
    int code = compile_check_search(opt.job_path, opt.rank == 0);
    if (code == TF_EXIT_OK)
        code = tf_precompile(&opt);
    int worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    finalize_bounded(opt.rank, worst, false);
    return worst;
}

static int cmd_query(int argc, char **argv)
{
    static const struct option longopts[] = {{"kernel", required_argument, NULL, 'k'},
                                             {"run", required_argument, NULL, 'r'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *kernel = NULL;
    int run = -1, c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "k:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'k':
            kernel = optarg;
            break;
        case 'r': {
            /* Digits only: strtol reads "" (a script's unset $RUN) as run 0,
             * which printed run 0 as if asked for; a second --run would
             * silently replace the first. */
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (optarg[0] < '0' || optarg[0] > '9' || *end || errno != 0 || v > INT_MAX ||
                run >= 0) {
                fprintf(stderr, "tunefarm query: --run wants one run number (0, 1, ...; "
                                "`tunefarm status` lists them), once; got '%s'\n", optarg);
                return TF_EXIT_USAGE;
            }
            run = (int)v;
            break;
        }
        case 'h':
            fputs(usage_query, stdout);
            return TF_EXIT_OK;
        default:
            fputs(usage_query, stderr);
            return TF_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "tunefarm query: expected one archive, got %d arguments\n\n%s",
                argc - optind, usage_query);
        return TF_EXIT_USAGE;
    }
    struct tf_error err = {0};
    /* With the results still in its journal (a run going on, or killed),
     * as status, export and diff count them. */
    struct tf_journal_replay replay;
    struct tf_archive *a = tf_journal_read_archive(argv[optind], &replay, &err);
    if (a == NULL) {
        tf_error_print(&err, "tunefarm query", stderr);
        return TF_EXIT_USAGE;
    }
    if (run >= a->nruns) {
        fprintf(stderr, "tunefarm query: %s has %d run(s); --run %d does not exist\n",
                argv[optind], a->nruns, run);
        tf_archive_destroy(a);
        return TF_EXIT_USAGE;
    }
    if (kernel && tf_archive_find_kernel(a, kernel) == NULL) {
        fprintf(stderr, "tunefarm query: %s has no kernel '%s'\n", argv[optind], kernel);
        tf_archive_destroy(a);
        return TF_EXIT_USAGE;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out == NULL) {
        fprintf(stderr, "tunefarm query: out of memory\n");
        tf_archive_destroy(a);
        return TF_EXIT_FAILURE;
    }
    fprintf(out, "%s: %d run(s), %d device(s), %d kernel(s)\n", argv[optind], a->nruns,
            a->ndevices, tf_report_kernels_with_rows(a));
    if (run >= 0)
        tf_report_run_line(a, run, out);
    fprintf(out, "\n");
    tf_report_best(a, run, kernel, out);
    tf_report_cross(a, run, kernel, out);
    fprintf(out, "\n");
    tf_report_quality(a, run, kernel, out);
    tf_archive_destroy(a);
    fclose(out);
    /* Names, values and messages are the archive's (an imported file's):
     * no control byte of theirs reaches the terminal. */
    tf_exchange_terminal_write(text, stdout);
    free(text);
    return TF_EXIT_OK;
}

static int cmd_status(int argc, char **argv)
{
    if (argc == 3 && (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0)) {
        fputs(usage_status, stdout);
        return TF_EXIT_OK;
    }
    if (argc != 3) {
        fprintf(stderr, "tunefarm status: expected one archive\n\n%s", usage_status);
        return TF_EXIT_USAGE;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out == NULL) {
        fprintf(stderr, "tunefarm status: out of memory\n");
        return TF_EXIT_FAILURE;
    }
    const int rc = tf_coordinator_status(argv[2], out);
    fclose(out);
    /* As query: the archive's names, commands and messages, repaired. */
    tf_exchange_terminal_write(text, stdout);
    free(text);
    return rc;
}

static const char usage_merge[] =
    "usage: tunefarm merge [-q] [--] OUT.h5 IN.h5 [IN.h5...]\n"
    "\n"
    "Add every run of the IN archives (with the results their journals hold) to\n"
    "OUT, created if missing (with its folders): devices are matched, kernels\n"
    "must have the same parameters, sizes and metrics, runs OUT already has are\n"
    "skipped (merging twice changes nothing). OUT is written once, atomically,\n"
    "after every input was read; the inputs are only read. OUT keeps its\n"
    "permissions, and a symbolic link OUT stays one (its file is rewritten).\n"
    "For job arrays and per-node archives.\n"
    "\n"
    "exit codes: 0 merged (also when only this report could not be printed);\n"
    "1 OUT could not be written, or a run is writing it (it is as it was); 2 bad\n"
    "arguments, an unreadable input (truncated, foreign) or a kernel that does\n"
    "not match: nothing written.\n";

static int cmd_merge(int argc, char **argv)
{
    bool quiet = false, options_end = false;
    char **paths = tf_xcalloc((size_t)argc + 1, sizeof *paths);
    int n = 0;
    for (int i = 2; i < argc; i++) {
        if (!options_end && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
            fputs(usage_merge, stdout);
            free(paths);
            return TF_EXIT_OK;
        }
        if (!options_end && (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0)) {
            quiet = true;
        } else if (!options_end && strcmp(argv[i], "--") == 0) {
            options_end = true; /* what follows are paths, even `-x.h5` */
        } else if (!options_end && argv[i][0] == '-' && argv[i][1] != '\0') {
            /* A misspelt option must not become the archive written. */
            fprintf(stderr, "tunefarm merge: unknown option '%s' (a path that begins with "
                            "'-': put `--` before it, or write ./%s)\n\n%s",
                    argv[i], argv[i], usage_merge);
            free(paths);
            return TF_EXIT_USAGE;
        } else {
            paths[n++] = argv[i];
        }
    }
    if (n < 2) {
        fprintf(stderr, "tunefarm merge: expected an output and at least one input\n\n%s",
                usage_merge);
        free(paths);
        return TF_EXIT_USAGE;
    }
    int code = tf_coordinator_merge(paths[0], paths + 1, n - 1, quiet);
    free(paths);
    return code;
}

static int cmd_devices(int argc, char **argv)
{
    if (argc > 2 && (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0)) {
        fputs(usage_devices, stdout);
        return TF_EXIT_OK;
    }
    if (argc > 2) {
        fprintf(stderr, "tunefarm devices: unexpected argument '%s'\n\n%s", argv[2],
                usage_devices);
        return TF_EXIT_USAGE;
    }
    struct tf_device devs[64];
    const char *backends[64];
    int ordinals[64];
    char why[2048];
    int n = tf_worker_devices(devs, backends, ordinals, 64, why, sizeof why);
    for (int i = 0; i < n; i++) {
        char key[256];
        tf_device_class_key(&devs[i], key, sizeof key);
        printf("%d  %-6s %d  %s\n    class %s, %u compute units, %.1f GiB, compiler %s\n", i,
               backends[i], ordinals[i], devs[i].name, key, devs[i].compute_units,
               (double)devs[i].memory_bytes / (1024.0 * 1024.0 * 1024.0),
               devs[i].compiler_version);
        printf("    driver %s, runtime %s, clock %.0f MHz, memory clock %.0f MHz, power limit "
               "%.0f W, clock policy %s (0: unknown)\n",
               devs[i].driver_version[0] ? devs[i].driver_version : "?",
               devs[i].runtime_version[0] ? devs[i].runtime_version : "?", devs[i].clock_mhz,
               devs[i].memory_clock_mhz, devs[i].power_limit_w,
               devs[i].clock_policy[0] ? devs[i].clock_policy : "?");
        printf("    properties:");
        for (int p = 0; p < TF_DEVPROP_COUNT; p++)
            printf(" %s=%lld", tf_devprop_name(p), (long long)devs[i].props[p]);
        printf("\n");
    }
    if (why[0])
        printf("unavailable:\n%s", why);
    return TF_EXIT_OK;
}

/* The command `cmd` (argv[1]); its exit code. */
static int dispatch(int argc, char **argv, const char *cmd, const char *exe)
{
    if (strcmp(cmd, "__runner") == 0)
        return tf_runner_main(argc, argv);
    if (strcmp(cmd, "__compiler") == 0)
        return tf_compiler_main(argc, argv);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc, argv, exe);
    if (strcmp(cmd, "query") == 0)
        return cmd_query(argc, argv);
    if (strcmp(cmd, "compile") == 0)
        return cmd_compile(argc, argv, exe);
    if (strcmp(cmd, "devices") == 0)
        return cmd_devices(argc, argv);
    if (strcmp(cmd, "status") == 0)
        return cmd_status(argc, argv);
    if (strcmp(cmd, "merge") == 0)
        return cmd_merge(argc, argv);
    if (strcmp(cmd, "space") == 0)
        return tf_space_tool_main(argc, argv);
    if (strcmp(cmd, "import-t1") == 0)
        return tf_t1_tool_main(argc, argv);
    if (strcmp(cmd, "export") == 0)
        return tf_cmd_export(argc, argv);
    if (strcmp(cmd, "import") == 0)
        return tf_cmd_import(argc, argv);
    if (strcmp(cmd, "diff") == 0)
        return tf_diff_command(argc, argv);
    if (strcmp(cmd, "best") == 0)
        return tf_best_main(argc, argv);
    if (strcmp(cmd, "report") == 0)
        return tf_html_report_main(argc, argv);
    if (strcmp(cmd, "header") == 0) {
        if (argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
            fputs(usage_header, stdout);
            return TF_EXIT_OK;
        }
        const char *text = argc == 3 ? tf_portability_header(argv[2]) : NULL;
        if (text == NULL) {
            if (argc == 3)
                fprintf(stderr, "tunefarm header: expected cuda or hip, found '%s'\n\n",
                        argv[2]);
            else
                fprintf(stderr, "tunefarm header: expected one argument, cuda or hip\n\n");
            fputs(usage_header, stderr);
            return TF_EXIT_USAGE;
        }
        fputs(text, stdout);
        return TF_EXIT_OK;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        if (argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
            fputs(usage_version, stdout);
            return TF_EXIT_OK;
        }
        if (argc > 2) {
            fprintf(stderr, "tunefarm version: unexpected argument '%s'\n\n%s", argv[2],
                    usage_version);
            return TF_EXIT_USAGE;
        }
        printf("tunefarm %s\n", tf_version);
        return TF_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        const char *topic = argc > 2 ? argv[2] : "";
        if (strcmp(topic, "strategies") == 0) {
            tf_strategy_help(stdout);
            return TF_EXIT_OK;
        }
        if (strcmp(topic, "run") == 0) {
            print_usage_run(stdout);
            return TF_EXIT_OK;
        }
        /* One table: the topics `help` knows are the texts it prints. */
        const struct {
            const char *name, *text;
        } topics[] = {{"", usage_main},
                      {"help", usage_main},
                      {"--help", usage_main}, /* `help --help`: every command has it */
                      {"-h", usage_main},
                      {"compile", usage_compile},
                      {"query", usage_query},
                      {"status", usage_status},
                      {"merge", usage_merge},
                      {"export", tf_usage_export},
                      {"import", tf_usage_import},
                      {"diff", tf_diff_usage},
                      {"devices", usage_devices},
                      {"space", tf_space_tool_usage},
                      {"import-t1", tf_t1_tool_usage},
                      {"best", tf_best_usage},
                      {"report", tf_html_report_usage},
                      {"header", usage_header},
                      {"version", usage_version}};
        const char *text = NULL;
        for (size_t t = 0; t < sizeof topics / sizeof *topics && !text; t++)
            if (strcmp(topic, topics[t].name) == 0)
                text = topics[t].text;
        if (text == NULL || argc > 3) {
            fprintf(stderr, "tunefarm help: %s '%s'\n\n%s",
                    text ? "one topic at a time, found also" : "no command or topic",
                    text ? argv[3] : topic, usage_main);
            return TF_EXIT_USAGE;
        }
        fputs(text, stdout);
        return TF_EXIT_OK;
    }
    fprintf(stderr, "tunefarm: unknown command '%s'\n\n%s", cmd, usage_main);
    return TF_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    char exe[PATH_MAX];
    self_path(exe, sizeof exe, argv[0]);
    const char *cmd = argc > 1 ? argv[1] : "help";
    tf_archive_no_atexit();
    /* A file size limit (ulimit -f) must fail a write with EFBIG, which every
     * writer reports and cleans up after, not kill the command half-way
     * through with SIGXFSZ (a temporary file and a journal left behind). */
    if (strncmp(cmd, "__", 2) != 0)
        signal(SIGXFSZ, SIG_IGN);
    /* Merge and import print a report of the archive they write: a reader
     * that went away (`| head`) must cost the report, not the rest of the
     * work after it (the journal's removal), nor turn success into 141. */
    const bool reports_archive = strcmp(cmd, "merge") == 0 || strcmp(cmd, "import") == 0;
    if (reports_archive)
        signal(SIGPIPE, SIG_IGN);
    int rc = dispatch(argc, argv, cmd, exe);
    if (strncmp(cmd, "__", 2) == 0)
        return rc; /* a runner's or compiler's exit code is its parent's protocol */
    /* A listing into a full disk or a closed pipe must not end "0 printed":
     * the commands print through stdio, whose errors only the end sees. Merge
     * and import print only a report of the archive they wrote: 1 would say
     * "the archive is as it was", which is not so. */
    errno = 0;
    const bool flushed = fflush(stdout) == 0;
    /* A command that failed has said why (export: "cannot write the output:
     * No space left on device"); diff's 1 is a finding, not a failure. */
    const bool said = rc == TF_EXIT_FAILURE && strcmp(cmd, "diff") != 0;
    if ((!flushed || ferror(stdout)) && !said) {
        const bool wrote_archive = rc == TF_EXIT_OK && reports_archive;
        fprintf(stderr, "tunefarm %s: cannot write to standard output: %s%s\n", cmd,
                !flushed && errno ? strerror(errno) : "a write failed",
                wrote_archive ? " (the archive was written; only this report is lost)" : "");
        if (rc == TF_EXIT_OK && !wrote_archive)
            rc = strcmp(cmd, "diff") == 0 ? TF_EXIT_USAGE : TF_EXIT_FAILURE;
    }
    return rc;
}
