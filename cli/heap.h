/* How the commands that read profiles use the C library's heap. */
#ifndef OMPF_CLI_HEAP_H
#define OMPF_CLI_HEAP_H

/* For commands that read profiles one after another: memory a profile
 * frees stays in the heap and is reused by the next one, instead of going
 * back to the system as unmapped arrays and being faulted in again.
 * Measured: `show` of 10 profiles of 10^6 XUs 2.2 -> 1.45 s CPU (system
 * time 0.73 -> 0.08 s), which makes reading linear from 10^5 to 10^6;
 * evaluate at 10^6 halves its system time.  Not for combine: its inputs
 * are alive together, so nothing is reused. */
void ompf_cli_heap_reuse(void);

/* For combine, whose inputs are alive together: every large array is
 * mapped apart and goes back to the system when freed.  glibc otherwise
 * raises its mapping threshold to the size of each mapped array freed (up
 * to 32 MiB), after which arrays below that come from the heap and stay
 * resident when freed (reading's transient id maps, the strategies'
 * scratch).  Measured on BOTS nqueens (5.4 M input XUs, peak RSS): CTC
 * 520 -> 463 MiB, LGL 441 -> 419 MiB, BC 638 -> 629 MiB, CPU time alike. */
void ompf_cli_heap_return(void);

/* Transparent huge pages for a command that reads large profiles and
 * starts no program: where the kernel gives them on request (THP mode
 * "madvise") and the named input files hold at least 16 MB, the process
 * executes itself again once with GLIBC_TUNABLES glibc.malloc.hugetlb=1,
 * so that glibc asks for huge pages for its large arrays.  Measured on the
 * CI VM (AMD family 1Ah, a fault 13-21 us a page): 10 x 10^6 XUs,
 * combine lgl 3.4 -> 2.2 s CPU, ctc 3.5 -> 2.8, bc 9.4 -> 6.6, evaluate
 * (33 events) 10.3 -> 8.3, peak RSS +1 %.  Not done when GLIBC_TUNABLES
 * already names hugetlb, or OMPFUSE_NO_THP is set; returns when the exec
 * fails or is not wanted. */
void ompf_cli_heap_thp(char **argv);

#endif
