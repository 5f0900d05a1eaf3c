#pragma once
#include <stddef.h>
extern "C" {
void* malloc(size_t n); void* calloc(size_t n, size_t m); void free(void* p);
[[noreturn]] void abort(void); [[noreturn]] void exit(int code);
char* getenv(const char* name); int atoi(const char* s); long atol(const char* s); double atof(const char* s);
int rand(void); void srand(unsigned s);
}
