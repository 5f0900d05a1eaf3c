#pragma once
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef long double max_align_t;
#ifndef NULL
#define NULL nullptr
#endif
#define offsetof(t, d) __builtin_offsetof(t, d)
