// Python bindings of the minivllm ops.
#include <torch/extension.h>

#include "ops.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rms_norm", &rms_norm);
  m.def("fused_add_rms_norm", &fused_add_rms_norm);
  m.def("silu_and_mul", &silu_and_mul);
  m.def("gelu_and_mul", &gelu_and_mul);
  m.def("rotary_embedding", &rotary_embedding);
  m.def("reshape_and_cache_flash", &reshape_and_cache_flash);
  m.def("static_scaled_int8_quant", &static_scaled_int8_quant);
  m.def("dynamic_per_token_int8_quant", &dynamic_per_token_int8_quant);
}
