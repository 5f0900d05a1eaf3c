"""The C library a plain CUDA program's host code calls: time, console and file I/O, strings.
What each writes is stored as a value the engine does not compute (remembered as run-time input,
so a finding that needs a particular one is inconclusive, never a bug); what each reads or
writes of a buffer it is given a size for is checked like any access."""
from __future__ import annotations

from ...kir import types as T
from ..memory import PathEnd
from ..state import fresh_value
from ..values import IntV, OpaqueV, PtrV, const_int
from . import model
from .cuda import _check_range, fresh_result, untracked_result

VOID = OpaqueV("void")


def _write_unknown(interp, st, ptr, call) -> None:
    """``*ptr`` becomes a value the library chose (a time, a number read from a file)."""
    if not isinstance(ptr, PtrV) or ptr.region.kind == "null":
        return  # NULL (gettimeofday's time zone, time(NULL)), or a pointer the engine does not follow
    pointee = ptr.pointee if not isinstance(ptr.pointee, T.VoidType) else None
    if pointee is None or isinstance(pointee, T.OpaqueType):
        if ptr.region.tracked:
            interp.forget_content(st, ptr.region, call.span)
        return
    loc = interp.deref(ptr, pointee, call.span)
    v = fresh_value(pointee, call.name, interp.ctx.counter)
    if v is None:
        if ptr.region.tracked:
            interp.forget_content(st, ptr.region, call.span)
        return
    interp.ctx.remember_untracked(v, "input", f"what `{call.name}` at {call.span.file}:{call.span.line} stores")
    interp.store(st, loc, v, call.span)


def _status(interp, call):
    """The function's integer result (a status, a count, a number read): any value, remembered."""
    return untracked_result(interp, call, "input")


@model("gettimeofday", "clock_gettime", "time", "getrusage")
def time_of_day(interp, st, call, this, args):
    """Writes the time (a struct timeval / timespec, a time_t) through its pointer arguments."""
    for a in args:
        _write_unknown(interp, st, a, call)
    return _status(interp, call)


@model("scanf", "fscanf", "sscanf")
def scan_values(interp, st, call, this, args):
    """Every pointer after the format receives a value read from the input: any value."""
    first = {"scanf": 1, "fscanf": 2, "sscanf": 2}[call.name]
    for a in args[first:]:
        _write_unknown(interp, st, a, call)
    return _status(interp, call)


@model("fopen", "tmpfile", "fdopen", "__kv_std_stream")
def open_file(interp, st, call, this, args):
    """A FILE* (a file opened, or stdin/stdout/stderr): opaque to the engine (it is only passed back
    to the library)."""
    return OpaqueV("FILE*", T.strip_ref(call.ty))


@model("fclose", "fflush", "feof", "ferror", "fseek", "rewind", "fgetc", "getc", "fputc", "putc", "fputs",
       "remove", "rename", "ftell")
def file_status(interp, st, call, this, args):
    return _status(interp, call)


@model("fread", "fwrite")
def file_items(interp, st, call, this, args):
    """fread / fwrite(ptr, size, count, f): up to size * count bytes written (fread) or read
    (fwrite) at ptr."""
    ptr, size, count = args[0], args[1], args[2]
    write = call.name == "fread"
    if isinstance(ptr, PtrV) and isinstance(size, IntV) and isinstance(count, IntV):
        from .. import ints
        n = ints.arith("*", ints.convert(size, T.UINT64, call.span), ints.convert(count, T.UINT64, call.span),
                       T.UINT64, call.span, interp.stack_spans(st))
        _check_range(interp, st, ptr, n, write, call.span)
        if write and ptr.region.tracked:
            interp.forget_content(st, ptr.region, call.span)
    return _status(interp, call)


@model("fgets")
def read_line(interp, st, call, this, args):
    """fgets(buf, n, f): up to n bytes written at buf (n - 1 characters and the terminator)."""
    buf, n = args[0], args[1]
    if isinstance(buf, PtrV) and isinstance(n, IntV):
        _check_range(interp, st, buf, n, True, call.span)
        if buf.region.tracked:
            interp.forget_content(st, buf.region, call.span)
    return buf


@model("strcpy", "strcat", "strncpy", "strncat")
def copy_string(interp, st, call, this, args):
    """The destination's content changes; how far it is written depends on the source's length,
    which the engine does not track: with a count (strncpy), [dst, dst + n) is checked."""
    dst = args[0]
    if call.name == "strncpy" and isinstance(dst, PtrV) and isinstance(args[2], IntV):
        _check_range(interp, st, dst, args[2], True, call.span)
    if isinstance(dst, PtrV) and dst.region.tracked:
        interp.forget_content(st, dst.region, call.span)
    return dst


@model("strlen", "strcmp", "strncmp", "atoi", "atol", "atoll", "rand", "random", "getchar")
def string_number(interp, st, call, this, args):
    """A number computed from a string or the input: any value, remembered as unknown."""
    return _status(interp, call)


@model("strtol", "strtoul", "strtoll", "strtoull", "strtod", "strtof")
def parse_number(interp, st, call, this, args):
    """The number, and (through ``end`` when it is not NULL) where the parse stopped."""
    if len(args) > 1:
        _write_unknown(interp, st, args[1], call)
    if isinstance(T.strip_ref(call.ty), T.FloatType):
        return fresh_result(interp, call, call.name)
    return _status(interp, call)


@model("atof")
def string_float(interp, st, call, this, args):
    return fresh_result(interp, call, call.name)


@model("srand", "srandom", "perror", "puts", "putchar", "fprintf",
       # A variadic function's argument list and the console output formatted from it: the list's
       # state is the library's (what va_arg reads is a body-less builtin's value).
       "__builtin_va_start", "__builtin_va_end", "__builtin_va_copy", "vprintf", "vfprintf")
def no_memory(interp, st, call, this, args):
    """Touches no memory the engine tracks."""
    ty = T.strip_ref(call.ty)
    return VOID if isinstance(ty, T.VoidType) else _status(interp, call)


@model("snprintf", "vsnprintf")
def format_bounded(interp, st, call, this, args):
    """snprintf / vsnprintf(buf, n, fmt, ...): up to n bytes written at buf (n = 0 writes none, and
    buf may then be NULL)."""
    buf, n = args[0], args[1]
    if isinstance(buf, PtrV) and isinstance(n, IntV) and buf.region.kind != "null":
        _check_range(interp, st, buf, n, True, call.span)
        if buf.region.tracked:
            interp.forget_content(st, buf.region, call.span)
    return _status(interp, call)


@model("sqrt", "sqrtf", "std::sqrt")
def square_root(interp, st, call, this, args):
    """The square root of an exactly known perfect square, on the host (libm rounds correctly; a
    kernel may be built with the approximate one): ``(int)sqrtf(16)`` is 4. Any other is a float
    the engine does not compute."""
    from ..values import FloatV
    ty = T.strip_ref(call.ty)
    x = args[0].exact if args and isinstance(args[0], FloatV) else args[0].concrete() if args and isinstance(args[0], IntV) else None
    root = None
    if st.thread is None and x is not None and x >= 0:
        r = int(round(x ** 0.5))
        root = float(r) if r * r == x else None
    return FloatV(ty if isinstance(ty, T.FloatType) else T.FLOAT, exact=root)
