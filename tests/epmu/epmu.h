/* The emulated PMU's one entry point for test programs (docs/epmu.md).
 *
 * A program declares it weak and calls it only when libepmu.so is
 * preloaded, so it runs unchanged without the emulator:
 *
 *     #include "epmu.h"
 *     if (epmu_signal) epmu_signal(n);
 *
 * Every emulated event of the calling thread that is counting right now
 * (enabled and on a counter) grows by n times its weight; events off the
 * counters miss it, as a real counter misses what happens while it is
 * multiplexed out.  The weight of each event is in the emulator's log. */
#ifndef EPMU_H
#define EPMU_H

void epmu_signal(unsigned long n) __attribute__((weak));

#endif
