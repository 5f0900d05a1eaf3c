#pragma once
#include <stddef.h>
extern "C" {
__host__ __device__ void* memcpy(void* dst, const void* src, size_t n);
__host__ __device__ void* memset(void* dst, int value, size_t n);
void* memmove(void* dst, const void* src, size_t n);
int memcmp(const void* a, const void* b, size_t n);
size_t strlen(const char* s);
int strcmp(const char* a, const char* b);
int strncmp(const char* a, const char* b, size_t n);
char* strcpy(char* d, const char* s);
char* strncpy(char* d, const char* s, size_t n);
char* strcat(char* d, const char* s);
char* strncat(char* d, const char* s, size_t n);
const char* strchr(const char* s, int c);
const char* strstr(const char* s, const char* t);
}
