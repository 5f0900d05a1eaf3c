"""Which global variables a program may change after their initializer (frontend/mutated.py): a
variable nothing writes holds its initializer, const or not, so every way of writing one must be
seen, and reads must not count as writes."""
from __future__ import annotations

import textwrap

from analyzers.frontend.mutated import mutated_globals
from analyzers.frontend.parse import ParseConfig, parse_file

HEADER = """
#pragma once
__device__ int written_in_header = 0;
__device__ inline void bump_in_header() { written_in_header += 1; }
"""

SOURCE = """
#include <cuda_runtime.h>
#include "counters.cuh"

struct Config { int rows; int cols; };

// Written, each in its own way.
__device__ int assigned[4] = {0, 1, 2, 3};
__device__ int compound[4] = {0, 1, 2, 3};
__device__ int counter = 0;
__device__ int atomic_target = 0;
__device__ int decayed[4] = {0, 1, 2, 3};
__device__ int by_reference = 1;
__device__ Config member_written = {1, 2};
__device__ int through_pointer[2] = {5, 6};
__constant__ int copied[2] = {1, 2};
int host_flag = 0;

// Only read.
__device__ int read_by_index[4] = {0, 1, 2, 3};
__device__ int read_whole = 7;
__device__ int sized[8] = {};
__device__ int const_bound = 3;
__device__ Config member_read = {4, 5};
__device__ int used_as_index = 1;
__device__ int copied_to_local = 2;
__device__ int min_of_const_refs = 9;
__device__ int* pointer_written_through = nullptr;  // what it points to changes, not the pointer
typedef int (*rule_fn)(int);
__device__ int twice(int x) { return 2 * x; }
__device__ rule_fn rules[1] = {twice};

__device__ void bump(int& x) { x += 1; }
__device__ int first(const int* p) { return p[0]; }
__device__ int peek(const int& x) { return x; }

__global__ void kernel(int* out, int i) {
  assigned[i] = 1;
  compound[i] *= 2;
  counter++;
  atomicAdd(&atomic_target, 1);
  out[0] = first(decayed);
  bump(by_reference);
  member_written.rows = 9;
  int* p = through_pointer;
  p[1] = 0;

  out[1] = read_by_index[i] + read_whole;
  out[2] = sizeof(sized);
  out[3] = peek(const_bound);
  out[4] = member_read.rows * member_read.cols;
  out[5] = read_by_index[used_as_index];
  int local = copied_to_local;
  out[6] = local;
  pointer_written_through[0] = 1;
  out[7] = rules[0](i);
  out[8] = peek(min_of_const_refs);
}

int main() {
  int values[2] = {3, 4};
  cudaMemcpyToSymbol(copied, values, sizeof(values));
  host_flag = 1;
  int* out;
  cudaMalloc(&out, 8 * sizeof(int));
  kernel<<<1, 1>>>(out, host_flag);
  return 0;
}
"""


def test_every_way_of_writing_a_global_is_seen_and_reads_are_not(tmp_path):
    path = tmp_path / "globals.cu"
    path.write_text(textwrap.dedent(SOURCE))
    (tmp_path / "counters.cuh").write_text(textwrap.dedent(HEADER))  # a repository header writes one
    parsed = parse_file(path, ParseConfig(tmp_path))
    assert not parsed.errors, [e.message for e in parsed.errors]
    from analyzers.frontend.includes import SHIM_ROOT
    written = mutated_globals(parsed.tu, str(parsed.path), str(SHIM_ROOT.resolve()))
    assert written == {"assigned", "compound", "counter", "atomic_target", "decayed", "by_reference",
                       "member_written", "through_pointer", "copied", "host_flag", "written_in_header"}
