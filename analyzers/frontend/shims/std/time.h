#pragma once
#include <stddef.h>
typedef long time_t;
typedef long clock_t;
struct timespec { time_t tv_sec; long tv_nsec; };
#define CLOCKS_PER_SEC 1000000L
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
// clock() is declared with the device intrinsics (kernelvet/device.h), for host and device.
extern "C" {
time_t time(time_t* t); int clock_gettime(int clk, struct timespec* ts);
int nanosleep(const struct timespec* req, struct timespec* rem);
}
