// kernelvet shim: ATen's TensorIterator, declared. The engine does not model it: an op that builds
// one and hands it to gpu_kernel is inconclusive at that call (it may write through the iterator's
// tensors), and the file's other ops are verified as usual.
#pragma once
#include <kernelvet_torch.h>

namespace at {
class TensorIteratorBase {
 public:
  int64_t numel() const;
  int ndim() const;
  int ntensors() const;
  int noutputs() const;
  int ninputs() const;
  ScalarType dtype(int arg = 0) const;
  ScalarType common_dtype() const;
  ScalarType input_dtype(int arg = 0) const;
  Device device(int arg = 0) const;
  bool can_use_32bit_indexing() const;
  bool is_contiguous() const;
  bool is_cpu_scalar(int arg) const;
  void* data_ptr(int arg) const;
  const Tensor& output(int arg = 0) const;
  const Tensor& input(int arg = 0) const;
  IntArrayRef shape() const;
  IntArrayRef strides(int arg) const;
  template <typename T> T scalar_value(int arg) const;
};
class TensorIterator : public TensorIteratorBase {
 public:
  static TensorIterator unary_op(Tensor& out, const Tensor& a);
  static TensorIterator binary_op(Tensor& out, const Tensor& a, const Tensor& b);
  static TensorIterator borrowing_binary_op(const Tensor& out, const Tensor& a, const Tensor& b);
  static TensorIterator nullary_op(Tensor& out);
};
class TensorIteratorConfig {
 public:
  TensorIteratorConfig();
  TensorIteratorConfig& add_output(const Tensor& t);
  TensorIteratorConfig& add_owned_output(const Tensor& t);
  TensorIteratorConfig& add_input(const Tensor& t);
  TensorIteratorConfig& add_const_input(const Tensor& t);
  TensorIteratorConfig& add_owned_input(const Tensor& t);
  TensorIteratorConfig& add_owned_const_input(const Tensor& t);
  TensorIteratorConfig& set_check_mem_overlap(bool v);
  TensorIteratorConfig& check_all_same_dtype(bool v);
  TensorIteratorConfig& check_all_same_device(bool v);
  TensorIteratorConfig& resize_outputs(bool v);
  TensorIteratorConfig& allow_cpu_scalars(bool v);
  TensorIteratorConfig& is_reduction(bool v);
  TensorIteratorConfig& promote_inputs_to_common_dtype(bool v);
  TensorIteratorConfig& promote_integer_inputs_to_float(bool v);
  TensorIteratorConfig& cast_common_dtype_to_outputs(bool v);
  TensorIteratorConfig& enforce_safe_casting_to_output(bool v);
  TensorIteratorConfig& declare_static_dtype_and_device(ScalarType dtype, Device device);
  TensorIteratorConfig& declare_static_shape(IntArrayRef shape);
  TensorIterator build();
};
}  // namespace at
