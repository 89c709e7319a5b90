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

#endif
