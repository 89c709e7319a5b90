/* Programs that end badly after their tasks (tool_fatal_* tests).
 *   fatal_end MODE [N]
 * A team of two runs `single` + N empty tasks (N XUs with N >= 2 threads,
 * default 1000), prints "fatal_end MODE tasks = N" and flushes, then:
 *   none          returns 0
 *   abort         abort()                      (SIGABRT, exit status 134)
 *   abort_task    a further task calls abort() while the team is live
 *   abort_handler a SIGABRT handler installed after the tool prints
 *                 "handler" and returns; abort() then ends the process
 *   segv          writes through a null pointer (SIGSEGV)
 *   segv_handler  a SIGSEGV handler installed after the tool (sigaction)
 *                 prints "handler", restores SIG_DFL with signal() and
 *                 returns: the fault recurs and kills (SIGSEGV)
 *   fpe           integer division by zero (SIGFPE)
 *   ill           __builtin_trap() (SIGILL on x86-64)
 *   _exit         _exit(3): no atexit handlers run
 *   exec          execl("/bin/echo", "echo", "exec'd", NULL)
 *   exec_le       execle("/bin/echo", ..., NULL, environ)
 *   exec_vp       execvp("echo", argv)
 *   exec_fail     execl and execvp of files that do not exist fail; the
 *                 program runs N more tasks and returns 0 (2N XUs)
 *   exec_task     a further task calls execlp("echo", ...) while the team
 *                 is live
 * The N tasks complete before the ending in every mode: a tool must keep
 * all N. */
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static volatile int sink;

static void say_handler(int sig)
{
    (void)sig;
    static const char m[] = "handler\n";
    ssize_t w = write(STDOUT_FILENO, m, sizeof m - 1);
    (void)w;
}

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    say_handler(sig);
    signal(SIGSEGV, SIG_DFL);
}

static void run_tasks(int n)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        for (int i = 0; i < n; i++) {
#pragma omp task
            sink = i;
        }
#pragma omp taskwait
    }
}

static void end_in_task(const char *mode)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task
        {
            if (!strcmp(mode, "abort_task"))
                abort();
            execlp("echo", "echo", "exec'd", (char *)NULL);
            _exit(99);
        }
#pragma omp taskwait
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "none";
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    /* the first construct starts the tool: handlers installed later must
     * not displace it */
    if (!strcmp(mode, "abort_handler")) {
        omp_get_max_threads();
        signal(SIGABRT, say_handler);
    } else if (!strcmp(mode, "segv_handler")) {
        omp_get_max_threads();
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = segv_handler;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
    }
    run_tasks(n);
    printf("fatal_end %s tasks = %d\n", mode, n);
    fflush(stdout);
    if (!strcmp(mode, "abort") || !strcmp(mode, "abort_handler"))
        abort();
    if (!strcmp(mode, "segv") || !strcmp(mode, "segv_handler")) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (!strcmp(mode, "fpe")) {
        volatile int z = 0;
#if defined(__x86_64__)
        /* a real fault: the compiler may drop a C division by zero (UB) */
        int a = 1, d = z;
        __asm__ volatile("cltd\n\tidivl %1" : "+a"(a) : "r"(d) : "edx");
        sink = a;
#else
        raise(SIGFPE);
#endif
    }
    if (!strcmp(mode, "ill"))
        __builtin_trap();
    if (!strcmp(mode, "_exit"))
        _exit(3);
    if (!strcmp(mode, "exec")) {
        execl("/bin/echo", "echo", "exec'd", (char *)NULL);
        return 99;
    }
    if (!strcmp(mode, "exec_le")) {
        execle("/bin/echo", "echo", "exec'd", (char *)NULL, environ);
        return 99;
    }
    if (!strcmp(mode, "exec_vp")) {
        char *args[] = {"echo", "exec'd", NULL};
        execvp("echo", args);
        return 99;
    }
    if (!strcmp(mode, "exec_fail")) {
        char *args[] = {"x", NULL};
        execl("/nonexistent/ompfuse-x", "x", (char *)NULL);
        execvp("ompfuse-no-such-program", args);
        run_tasks(n);
        return 0;
    }
    if (!strcmp(mode, "abort_task") || !strcmp(mode, "exec_task"))
        end_in_task(mode);
    return strcmp(mode, "none") ? 98 : 0;
}
