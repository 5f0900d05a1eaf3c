"""CUDA hardware limits, read by the engine (what a valid launch is) and by the checks (what a
launch may not exceed): one place, so that the two never disagree."""

MAX_BLOCK = (1024, 1024, 64)  # blockDim.x, .y, .z
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = ((1 << 31) - 1, 65535, 65535)  # gridDim.x, .y, .z
DEFAULT_SMEM = 48 * 1024  # dynamic shared memory a kernel may use without opting in
MAX_SMEM_OPTIN = 227 * 1024  # H100/H200: the most a block may opt in to
WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF  # every lane of a warp
# A program's command line on Linux: at most ARG_MAX (2 MiB by default) of strings and pointers,
# so no more arguments than this (each takes a pointer and at least its terminating byte).
MAX_ARGC = (2 << 20) // 9
# GPU memory a witness's tensors may take for a reproducer to run it: an 80 GB card, less what the
# CUDA context and PyTorch take. Witnesses are minimised under it where a failing input fits.
WITNESS_MEMORY_GIB = 72.0
