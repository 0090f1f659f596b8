"""The header every rendered kernel starts with: the few things CUDA and HIP spell
differently (16-bit float types and conversions, warp shuffles), behind one set of names,
and the helpers whose semantics the kernel IR fixes (NaN-propagating min and max).

The renderer writes `#define JL_HIP 1` (HIP) or `#define JL_HIP 0` (CUDA) above it; the
rest of a kernel's source is the same for both.
"""

HEADER = r"""
#if JL_HIP
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#if __has_include(<hip/hip_bf16.h>)
#include <hip/hip_bf16.h>
typedef __hip_bfloat16 jl_bf16;
#define JL_BF16_TO_F32(x) __bfloat162float(x)
#define JL_F32_TO_BF16(x) __float2bfloat16(x)
#else
/* ROCm before 5.7 has only the class hip_bfloat16 (rounding to nearest even too). */
#include <hip/hip_bfloat16.h>
typedef hip_bfloat16 jl_bf16;
#define JL_BF16_TO_F32(x) static_cast<float>(x)
#define JL_F32_TO_BF16(x) hip_bfloat16(x)
#endif
/* AMD wavefronts: no lane mask, the width defaults to warpSize (64 on CDNA). */
#define JL_SHFL_DOWN(v, d) __shfl_down((v), (d))
#define JL_SHFL_XOR(v, m) __shfl_xor((v), (m))
#else
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef __nv_bfloat16 jl_bf16;
#define JL_BF16_TO_F32(x) __bfloat162float(x)
#define JL_F32_TO_BF16(x) __float2bfloat16(x)
/* Every lane of the warp takes part in a shuffle: the kernel IR requires it. */
#define JL_SHFL_DOWN(v, d) __shfl_down_sync(0xffffffffu, (v), (d))
#define JL_SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, (v), (m))
#endif
typedef __half jl_f16;
#define JL_F16_TO_F32(x) __half2float(x)
#define JL_F32_TO_F16(x) __float2half(x)
#define JL_INF_F32 __int_as_float(0x7f800000)
#define JL_NAN_F32 __int_as_float(0x7fc00000)
#define JL_INF_F64 __longlong_as_double(0x7ff0000000000000ll)
#define JL_NAN_F64 __longlong_as_double(0x7ff8000000000000ll)

/* HLO's maximum and minimum: a NaN operand gives NaN (fmaxf would drop it). Kernels
   name the type, jl_max<float>(a, b), so that narrow integers never meet overloads. */
template <typename T> __device__ __forceinline__ T jl_max(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T jl_min(T a, T b) { return a < b ? a : b; }
template <> __device__ __forceinline__ float jl_max<float>(float a, float b) {
  return (a != a || b != b) ? a + b : fmaxf(a, b);
}
template <> __device__ __forceinline__ float jl_min<float>(float a, float b) {
  return (a != a || b != b) ? a + b : fminf(a, b);
}
template <> __device__ __forceinline__ double jl_max<double>(double a, double b) {
  return (a != a || b != b) ? a + b : fmax(a, b);
}
template <> __device__ __forceinline__ double jl_min<double>(double a, double b) {
  return (a != a || b != b) ? a + b : fmin(a, b);
}
template <typename T> __device__ __forceinline__ T jl_abs(T a) { return a < 0 ? -a : a; }
/* Compare-and-swap of a 1- or 2-byte element (T: unsigned char or unsigned short), as
   atomicCAS returns: through the aligned 32-bit word holding it, since HIP before ROCm 6
   has no 16-bit atomicCAS and neither CUDA nor HIP has an 8-bit one. */
template <typename T> __device__ __forceinline__ T jl_cas_narrow(T* address, T compare, T value) {
  const unsigned long long at = reinterpret_cast<unsigned long long>(address);
  unsigned int* word = reinterpret_cast<unsigned int*>(at & ~3ull);
  const unsigned int shift = static_cast<unsigned int>(at & 3ull) * 8u;
  const unsigned int mask = ((1u << (8u * sizeof(T))) - 1u) << shift;
  unsigned int seen = *word;
  for (;;) {
    const T current = static_cast<T>((seen & mask) >> shift);
    if (current != compare) return current;
    const unsigned int want = (seen & ~mask) | (static_cast<unsigned int>(value) << shift);
    const unsigned int found = atomicCAS(word, seen, want);
    if (found == seen) return compare;
    seen = found;  /* a neighbour in the word changed: try again with its value */
  }
}
/* HLO's bitcast-convert: the same bits read as another type of the same width
   (__builtin_bit_cast: NVRTC knows no __builtin_memcpy). */
template <typename To, typename From> __device__ __forceinline__ To jl_bitcast(From x) {
  return __builtin_bit_cast(To, x);
}
"""
