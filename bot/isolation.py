"""Running work that calls into native libraries (libclang, z3) so that their crashes, runaway
memory and hangs become a clear verdict for that unit instead of killing the run.

- ``limit_memory``: an address-space cap (RLIMIT_AS) for worker processes: a macro that expands to
  millions of tokens ends in a failed allocation inside the worker, not in the machine's memory.
- ``run_isolated``: one call in a forked child with the cap and a wall-clock limit; a signal (a
  SIGSEGV or SIGILL in libclang), an exit, or the limit is reported as ``IsolatedFailure``.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal

DEFAULT_MEMORY_GB = 8.0


class IsolatedFailure(Exception):
    """The isolated call did not return: why, in words (the signal's name, the limit); ``kind``:
    'timeout' (the limit), 'crash' (a signal or an exit) or 'error' (an exception in the child)."""

    def __init__(self, message: str, kind: str = "crash"):
        super().__init__(message)
        self.kind = kind


def memory_limit_bytes() -> int | None:
    try:
        gb = float(os.environ.get("KERNELVET_WORKER_MEMORY_GB", DEFAULT_MEMORY_GB))
    except ValueError:
        gb = DEFAULT_MEMORY_GB
    return None if gb <= 0 else int(gb * 2**30)


def limit_memory() -> None:
    limit = memory_limit_bytes()
    if limit is None:
        return
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the wall-clock limit and the OS still bound it


def describe_exit(code: int | None) -> str:
    if code is None:
        return "it did not finish"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"it was killed by {name} (a crash in a native library: libclang or z3)"
    return f"it exited with status {code}"


def _child(conn, fn, args) -> None:
    limit_memory()
    # libclang prints its own crash reports (with every argument) on stderr: the parent reports
    # the failure in one line instead.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        conn.send(("ok", fn(*args)))
    except MemoryError:
        conn.send(("error", f"it ran out of memory (the worker's limit is {memory_limit_bytes() or 0:,} bytes)"))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as this unit's failure
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_isolated(fn, *args, timeout: float):
    """``fn(*args)`` in a forked child (fork keeps what the parent has parsed and imported). Its
    result must be picklable. Raises IsolatedFailure when the child does not return one."""
    if "fork" not in mp.get_all_start_methods():
        return fn(*args)  # no fork here: run in process, as before
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    proc.start()
    send.close()
    status, value = "died", None
    try:
        if recv.poll(timeout):
            try:
                status, value = recv.recv()
            except (EOFError, OSError):
                status, value = "died", None
        else:
            status, value = "timeout", None
    finally:
        if status == "timeout" or proc.is_alive():
            proc.kill()
        proc.join(5)
        recv.close()
    if status == "ok":
        return value
    if status == "error":
        raise IsolatedFailure(value, "error")
    if status == "timeout":
        raise IsolatedFailure(f"it ran past its hard time limit of {timeout:g} s and was stopped", "timeout")
    raise IsolatedFailure(describe_exit(proc.exitcode), "crash")
