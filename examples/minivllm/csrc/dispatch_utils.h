// Dtype dispatch for minivllm kernels, built on torch's AT_DISPATCH_SWITCH / AT_DISPATCH_CASE.
#pragma once

#include <torch/all.h>

#define MV_DISPATCH_CASE_FLOATING_TYPES(...)              \
  AT_DISPATCH_CASE(at::ScalarType::Float, __VA_ARGS__)    \
  AT_DISPATCH_CASE(at::ScalarType::Half, __VA_ARGS__)     \
  AT_DISPATCH_CASE(at::ScalarType::BFloat16, __VA_ARGS__)

#define MV_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, MV_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))
