// kernelvet shim: warp matrix multiply-accumulate (nvcuda::wmma). Fragments are opaque register
// tiles; loads and stores are declarations (the engine does not model their strided accesses).
#pragma once
#include <kernelvet_cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision { struct tf32 {}; struct u4 {}; struct s4 {}; struct b1 {}; }
namespace experimental { namespace precision { struct u4 {}; struct s4 {}; struct b1 {}; } }
template <class Use, int m, int n, int k, class T, class Layout = void>
class fragment {
 public:
  using element_type = T;
  using storage_element_type = T;
  enum { num_elements = (m * n) / 32 > 0 ? (m * n) / 32 : 1 };
  T x[num_elements];
};
template <class Use, int m, int n, int k, class T, class Layout, class V>
__device__ void fill_fragment(fragment<Use, m, n, k, T, Layout>& a, const V& v) {
  for (int i = 0; i < fragment<Use, m, n, k, T, Layout>::num_elements; ++i) a.x[i] = v;
}
template <class Use, int m, int n, int k, class T, class Layout, class P>
__device__ void load_matrix_sync(fragment<Use, m, n, k, T, Layout>& a, const P* mptr, unsigned ldm);
template <class Use, int m, int n, int k, class T, class Layout, class P>
__device__ void load_matrix_sync(fragment<Use, m, n, k, T, Layout>& a, const P* mptr, unsigned ldm, layout_t layout);
template <int m, int n, int k, class T, class P>
__device__ void store_matrix_sync(P* mptr, const fragment<accumulator, m, n, k, T, void>& a, unsigned ldm, layout_t layout);
template <int m, int n, int k, class Ta, class La, class Tb, class Lb, class Tc, class Td>
__device__ void mma_sync(fragment<accumulator, m, n, k, Td, void>& d, const fragment<matrix_a, m, n, k, Ta, La>& a,
                         const fragment<matrix_b, m, n, k, Tb, Lb>& b, const fragment<accumulator, m, n, k, Tc, void>& c);
__device__ float __float_to_tf32(float in);
}  // namespace wmma
}  // namespace nvcuda
