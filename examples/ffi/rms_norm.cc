// Example FFI handlers for jaxlite and JAX, written against XLA's typed FFI header
// (xla/ffi/api/ffi.h, shipped in jaxlib's include directory: jax.ffi.include_dir()).
//
// Build: g++ -std=c++17 -O2 -shared -fPIC -I<include dir> rms_norm.cc -o librms_norm.so
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// y = x / sqrt(mean(x * x over the last axis) + eps), row by row.
static ffi::Error RmsNormImpl(float eps, ffi::Buffer<ffi::F32> x,
                              ffi::ResultBuffer<ffi::F32> y) {
  auto dims = x.dimensions();
  if (dims.size() == 0) {
    return ffi::Error::InvalidArgument("rms_norm: x must have at least one axis");
  }
  const int64_t width = dims.back();
  const int64_t rows = width == 0 ? 0 : x.element_count() / width;
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int64_t i = 0; i < width; ++i) sum += in[r * width + i] * in[r * width + i];
    const float scale = 1.0f / std::sqrt(sum / width + eps);
    for (int64_t i = 0; i < width; ++i) out[r * width + i] = in[r * width + i] * scale;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// The vector-Jacobian product of rms_norm: dx from x and the cotangent dy.
static ffi::Error RmsNormBwdImpl(float eps, ffi::Buffer<ffi::F32> x,
                                 ffi::Buffer<ffi::F32> dy,
                                 ffi::ResultBuffer<ffi::F32> dx) {
  auto dims = x.dimensions();
  if (dims.size() == 0) {
    return ffi::Error::InvalidArgument("rms_norm_bwd: x must have at least one axis");
  }
  const int64_t width = dims.back();
  const int64_t rows = width == 0 ? 0 : x.element_count() / width;
  const float* in = x.typed_data();
  const float* ct = dy.typed_data();
  float* out = dx->typed_data();
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f, dot = 0.0f;
    for (int64_t i = 0; i < width; ++i) {
      sum += in[r * width + i] * in[r * width + i];
      dot += in[r * width + i] * ct[r * width + i];
    }
    const float s = 1.0f / std::sqrt(sum / width + eps);
    for (int64_t i = 0; i < width; ++i) {
      out[r * width + i] = s * ct[r * width + i] - s * s * s * in[r * width + i] * dot / width;
    }
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNormBwd, RmsNormBwdImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// Attributes of every kind: out = x * sum(factors) + offset (+ 1 when mode is
// "plus_one", negated when flip), and the count of x's elements as a second result.
static ffi::Error AffineImpl(ffi::Span<const int64_t> factors, bool flip,
                             std::string_view mode, int32_t offset,
                             ffi::AnyBuffer x, ffi::ResultBuffer<ffi::F64> out,
                             ffi::ResultBuffer<ffi::S64> count) {
  if (x.element_type() != ffi::F64) {
    return ffi::Error::InvalidArgument("affine: x must be float64");
  }
  double scale = 0.0;
  for (int64_t f : factors) scale += static_cast<double>(f);
  const double shift = offset + (mode == "plus_one" ? 1.0 : 0.0);
  const double* in = x.typed_data<double>();
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) {
    const double v = in[i] * scale + shift;
    out->typed_data()[i] = flip ? -v : v;
  }
  count->typed_data()[0] = static_cast<int64_t>(n);
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(Affine, AffineImpl,
                              ffi::Ffi::Bind()
                                  .Attr<ffi::Span<const int64_t>>("factors")
                                  .Attr<bool>("flip")
                                  .Attr<std::string_view>("mode")
                                  .Attr<int32_t>("offset")
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::Buffer<ffi::F64>>()
                                  .Ret<ffi::Buffer<ffi::S64>>());

// A handler with state: the instantiate stage makes a counter starting at the attribute
// "base" (once per call site, as XLA instantiates when it compiles); each execution
// returns the counter and increments it.
struct Counter {
  static ffi::TypeId id;
  int64_t next;
};
ffi::TypeId Counter::id = {};

static ffi::ErrorOr<std::unique_ptr<Counter>> CounterInstantiateImpl(int64_t base) {
  return std::unique_ptr<Counter>(new Counter{base});
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(CounterInstantiate, CounterInstantiateImpl,
                              ffi::Ffi::BindInstantiate().Attr<int64_t>("base"));

static ffi::Error CounterExecuteImpl(Counter* counter, ffi::ResultBuffer<ffi::S32> out) {
  out->typed_data()[0] = static_cast<int32_t>(counter->next++);
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(CounterExecute, CounterExecuteImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::State<Counter>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

// The counter's type, for jax.ffi.register_ffi_type (before the handlers are registered).
static const XLA_FFI_TypeInfo kCounterInfo = ffi::MakeTypeInfo<Counter>();
extern "C" XLA_FFI_TypeId* CounterTypeId() { return &Counter::id; }
extern "C" const XLA_FFI_TypeInfo* CounterTypeInfo() { return &kCounterInfo; }
