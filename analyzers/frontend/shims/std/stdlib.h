#pragma once
#include <stddef.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
extern "C" {
void* malloc(size_t n); void* calloc(size_t n, size_t m); void* realloc(void* p, size_t n); void free(void* p);
void* aligned_alloc(size_t alignment, size_t size); int posix_memalign(void** p, size_t alignment, size_t size);
[[noreturn]] void abort(void); [[noreturn]] void exit(int code); [[noreturn]] void _Exit(int code);
int atexit(void (*fn)(void));
char* getenv(const char* name); int setenv(const char* name, const char* value, int overwrite);
int unsetenv(const char* name); int system(const char* command);
int atoi(const char* s); long atol(const char* s); long long atoll(const char* s); double atof(const char* s);
long strtol(const char* s, char** end, int base); long long strtoll(const char* s, char** end, int base);
unsigned long strtoul(const char* s, char** end, int base);
unsigned long long strtoull(const char* s, char** end, int base);
double strtod(const char* s, char** end); float strtof(const char* s, char** end);
int rand(void); void srand(unsigned s);
long random(void); void srandom(unsigned s);  // POSIX, declared by glibc's <stdlib.h> as g++ compiles
void qsort(void* base, size_t n, size_t size, int (*cmp)(const void*, const void*));
typedef struct { int quot; int rem; } div_t;
typedef struct { long quot; long rem; } ldiv_t;
div_t div(int a, int b); ldiv_t ldiv(long a, long b);
}
