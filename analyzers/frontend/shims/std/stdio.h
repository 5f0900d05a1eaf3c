#pragma once
#include <stddef.h>
#include <kernelvet_cuda.h>
typedef struct __kv_FILE FILE;
extern "C" {
extern FILE* stderr; extern FILE* stdout;
int fprintf(FILE* f, const char* fmt, ...);
int snprintf(char* buf, size_t n, const char* fmt, ...);
int sprintf(char* buf, const char* fmt, ...);
int puts(const char* s);
int getchar(void);
int putchar(int c);
int fflush(FILE* f);
}
