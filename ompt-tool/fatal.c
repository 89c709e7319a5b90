/* Fatal endings (docs/tool.md, "Fatal endings"): on SIGSEGV, SIGBUS,
 * SIGABRT, SIGFPE and SIGILL the tool writes every completed XU still in
 * the threads' buffers to the temporary profile, then lets the signal do
 * what it would have done without the tool (the program's own handler, or
 * the default action with its exit status and core dump).
 *
 * Everything on the handler path is async-signal-safe: atomics, syscalls
 * (membarrier, nanosleep, clock_gettime, write, mmap, pwrite, sigaction,
 * tgkill) and the malloc-free salvage of profile/stream_salvage.c. */
#include <errno.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"
#include "wstream.h"

static const int fatal_sig[FT_NFATAL] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
/* The disposition the program set (or found): what it would have had
 * without the tool.  Updated by the sigaction/signal hooks (hook.c). */
static struct sigaction prev[FT_NFATAL];
static int installed[FT_NFATAL];
static int salvage_state; /* 0 not yet, 1 running, 2 done */
static pid_t salvage_tid;

int ft_fatal_slot(int sig)
{
    for (int k = 0; k < FT_NFATAL; k++)
        if (fatal_sig[k] == sig && installed[k])
            return k;
    return -1;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nap(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* write(2) of a message built without stdio. */
static void say(const char *a, const char *b, unsigned long n, const char *c)
{
    char msg[600];
    size_t len = 0;
    const char *parts[2] = {a, b};
    for (int i = 0; i < 2; i++)
        for (const char *p = parts[i]; p && *p && len < 400; p++)
            msg[len++] = *p;
    char digits[24];
    int nd = 0;
    do
        digits[nd++] = (char)('0' + n % 10);
    while ((n /= 10) && nd < 20);
    while (nd)
        msg[len++] = digits[--nd];
    for (const char *p = c; p && *p && len < sizeof msg - 1; p++)
        msg[len++] = *p;
    msg[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, msg, len);
    (void)w;
}

void ft_salvage(const char *why)
{
    if (!ft_g.active || !ft_g.writer || getpid() != ft_g.pid)
        return;
    pid_t me = (pid_t)syscall(SYS_gettid);
    int expect = 0;
    if (!__atomic_compare_exchange_n(&salvage_state, &expect, 1, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST)) {
        /* another thread salvages: let it finish before this one dies */
        uint64_t end = mono_ns() + 5000000000u;
        while (salvage_tid != me && __atomic_load_n(&salvage_state, __ATOMIC_ACQUIRE) == 1 &&
               mono_ns() < end)
            nap(1000000);
        return;
    }
    salvage_tid = me;
    /* stop the other threads at their next callback, as finalize does */
    __atomic_store_n(&ft_g.closing, 1, __ATOMIC_SEQ_CST);
    if (ft_g.use_membarrier)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    ft_thread_t *self = ft_self;
    ft_thread_t *all = __atomic_load_n(&ft_g.threads, __ATOMIC_ACQUIRE);
    /* 2 s for all threads: a preempted thread on a loaded machine needs
     * its time slice to leave a callback; a dying process can wait */
    uint64_t end = mono_ns() + 2000000000u;
    for (ft_thread_t *t = all; t; t = t->next_all)
        while (t != self && __atomic_load_n(&t->in_cb, __ATOMIC_ACQUIRE) && mono_ns() < end)
            nap(50000);
    unsigned long skipped = 0, failed = 0;
    for (ft_thread_t *t = all; t; t = t->next_all) {
        if (t != self && __atomic_load_n(&t->in_cb, __ATOMIC_ACQUIRE)) {
            skipped++;
            continue;
        }
        /* this thread may have been interrupted inside the tool */
        int drop = t == self && t->in_cb;
        ompf_wstream_t *s[2] = {t->stream, t->stream2};
        for (int i = 0; i < 2; i++)
            if (s[i] && fmt_ws_salvage(s[i], drop) != 0)
                failed++;
    }
    __atomic_store_n(&salvage_state, 2, __ATOMIC_RELEASE);
    if (skipped || failed)
        say(why, ": the buffered XUs of ", skipped + failed,
            " thread(s) could not be saved to the temporary profile");
    else if (ft_g.verbose)
        say(why, ": buffered XUs saved to the temporary profile (threads: ",
            ft_g.nthreads, ")");
}

static const char *why_of(int sig)
{
    switch (sig) {
    case SIGSEGV: return "ompfuse: SIGSEGV";
    case SIGBUS: return "ompfuse: SIGBUS";
    case SIGABRT: return "ompfuse: SIGABRT";
    case SIGFPE: return "ompfuse: SIGFPE";
    default: return "ompfuse: SIGILL";
    }
}

/* The program's handler, run as the kernel would have run it. */
static void call_prev(int sig, siginfo_t *si, void *uc, const struct sigaction *p)
{
    sigset_t mask = p->sa_mask, old;
    if (!(p->sa_flags & SA_NODEFER))
        sigaddset(&mask, sig);
    pthread_sigmask(SIG_BLOCK, &mask, &old);
    if (p->sa_flags & SA_SIGINFO)
        p->sa_sigaction(sig, si, uc);
    else
        p->sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    int k = ft_fatal_slot(sig);
    struct sigaction p;
    memset(&p, 0, sizeof p);
    if (k >= 0)
        p = prev[k];
    else
        p.sa_handler = SIG_DFL;
    /* sent by kill/raise/abort (not a fault that recurs on return) */
    int sent = !si || si->si_code <= 0;
    if (p.sa_handler == SIG_IGN && sent) {
        errno = saved_errno;
        return; /* ignored, as without the tool */
    }
    if (p.sa_handler != SIG_IGN && p.sa_handler != SIG_DFL) {
        /* abort() ends the process whatever its handler does */
        if (sig == SIGABRT)
            ft_salvage(why_of(sig));
        if (p.sa_flags & SA_RESETHAND && k >= 0) {
            prev[k].sa_handler = SIG_DFL;
            prev[k].sa_flags &= ~SA_SIGINFO;
        }
        /* The program's handler may recover (siglongjmp, mprotect); if it
         * returns and the signal recurs or was re-raised, this handler
         * runs again and sees the disposition it left. */
        call_prev(sig, si, uc, &p);
        errno = saved_errno;
        return;
    }
    /* The default action (a fault ignored by the program also kills). */
    ft_salvage(why_of(sig));
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* A fault recurs when the instruction runs again on return (the core
     * then shows the original fault); a sent signal is sent again, pending
     * until this handler returns. */
    if (sent)
        syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
    errno = saved_errno;
}

int ft_fatal_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int k = ft_fatal_slot(sig);
    if (k < 0)
        return 0;
    if (old)
        *old = prev[k];
    if (act)
        prev[k] = *act;
    return 1;
}

void ft_fatal_init(void)
{
    for (int k = 0; k < FT_NFATAL; k++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        /* SA_ONSTACK: a program with an alternate stack (stack overflow
         * handlers) keeps it for its own handler too */
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        installed[k] = 1; /* before: the handler may run at once */
        if (sigaction(fatal_sig[k], &sa, &prev[k]) != 0)
            installed[k] = 0;
    }
    ft_hooks_install();
}
