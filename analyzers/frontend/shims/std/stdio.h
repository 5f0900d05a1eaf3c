#pragma once
#include <stddef.h>
#include <stdarg.h>
#include <kernelvet_cuda.h>
typedef struct __kv_FILE FILE;
extern "C" {
// The standard streams as values the engine holds (an opaque FILE*, as fopen's), not globals
// read from memory it does not track.
FILE* __kv_std_stream(int fd);
#define stdin (__kv_std_stream(0))
#define stdout (__kv_std_stream(1))
#define stderr (__kv_std_stream(2))
int fprintf(FILE* f, const char* fmt, ...);
int snprintf(char* buf, size_t n, const char* fmt, ...);
int sprintf(char* buf, const char* fmt, ...);
// The va_list forms (a library's own logging: ggml_log_internal_v).
int vprintf(const char* fmt, va_list ap);
int vfprintf(FILE* f, const char* fmt, va_list ap);
int vsnprintf(char* buf, size_t n, const char* fmt, va_list ap);
int vsprintf(char* buf, const char* fmt, va_list ap);
int puts(const char* s);
int getchar(void);
int putchar(int c);
int fflush(FILE* f);
#define EOF (-1)
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
FILE* fopen(const char* path, const char* mode);
int fclose(FILE* f);
int scanf(const char* fmt, ...);
int fscanf(FILE* f, const char* fmt, ...);
int sscanf(const char* s, const char* fmt, ...);
char* fgets(char* buf, int n, FILE* f);
int fgetc(FILE* f); int getc(FILE* f); int fputc(int c, FILE* f); int putc(int c, FILE* f);
int fputs(const char* s, FILE* f);
size_t fread(void* ptr, size_t size, size_t count, FILE* f);
size_t fwrite(const void* ptr, size_t size, size_t count, FILE* f);
int feof(FILE* f); int ferror(FILE* f);
int fseek(FILE* f, long off, int whence); long ftell(FILE* f); void rewind(FILE* f);
void perror(const char* s);
int remove(const char* path); int rename(const char* from, const char* to);
}
