#pragma once
// POSIX wall-clock time, as benchmarks in plain CUDA programs read it (gettimeofday around a launch).
#include <time.h>
typedef long suseconds_t;
struct timeval { time_t tv_sec; suseconds_t tv_usec; };
struct timezone { int tz_minuteswest; int tz_dsttime; };
extern "C" {
int gettimeofday(struct timeval* tv, void* tz);
}
