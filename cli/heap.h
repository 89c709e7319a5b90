/* How the commands that read profiles use the C library's heap. */
#ifndef OMPF_CLI_HEAP_H
#define OMPF_CLI_HEAP_H

/* For commands that read profiles: memory a profile (or a reader's
 * transients: id maps, label scratch) frees stays in the heap and serves
 * the next one, instead of going back to the system as unmapped arrays and
 * being faulted in again.  Measured: `show` of 10 profiles of 10^6 XUs
 * 2.2 -> 1.45 s CPU (system time 0.73 -> 0.08 s), which makes reading
 * linear from 10^5 to 10^6; evaluate at 10^6 halves its system time.
 * combine keeps its inputs alive together, yet each input's transients
 * serve the next and huge pages cover one heap rather than many arrays of
 * 2^k bytes plus a page, mapped apart (mostly 4 KiB pages).  Measured on
 * the CI VM (a fault 13-21 us a page), 10 runs x 10^6 XUs with huge pages:
 * page faults 63 k -> 3.8 k, CPU lgl 3.2 -> 1.9 s, ctc 2.8 -> 1.95, bc
 * 7.1 -> 5.9, peak RSS +12 %; at 10 x 10^7 lgl 35.7 -> 29.8 s (4.09 ->
 * 4.53 GB), ctc 31.0 -> 27.6 s (4.87 -> 5.15 GB); without huge pages lgl
 * 4.4 -> 3.2 s, bc 9.3 -> 7.7.  (On the previous VM, where faults cost a
 * fifth, returning arrays had saved 5-11 % of RSS at the same CPU time.) */
void ompf_cli_heap_reuse(void);

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
