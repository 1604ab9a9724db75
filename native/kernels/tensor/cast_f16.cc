// float <-> float16 codecs per ISA, chosen at run time: committed builds target baseline
// x86-64, the F16C one is in cast_f16_avx2.cc (an isa_library). A NEON path is future work.
#include "native/core/narrow_float.h"
#include "native/kernels/tensor/cast_convert.h"

namespace onnx_light::cast_internal {

#if defined(__x86_64__)
void FloatToHalfAvx2(const float* src, uint16_t* dst, int64_t n);
void HalfToFloatAvx2(const uint16_t* src, float* dst, int64_t n);
#endif

namespace {

void FloatToHalfPortable(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = FloatToHalfBits(src[i]);
}

void HalfToFloatPortable(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = HalfBitsToFloat(src[i]);
}

const IsaVariant<HalfCodec>& Best() {
  static const IsaVariant<HalfCodec>& best = BestVariant(HalfCodecVariants());
  return best;
}

}  // namespace

const std::vector<IsaVariant<HalfCodec>>& HalfCodecVariants() {
  static const auto* variants = new std::vector<IsaVariant<HalfCodec>> {
#if defined(__x86_64__)
    {"avx2", Isa::kAvx2, HalfCodec{FloatToHalfAvx2, HalfToFloatAvx2}},
#endif
        {"portable", Isa::kPortable, HalfCodec{FloatToHalfPortable, HalfToFloatPortable}},
  };
  return *variants;
}

bool FloatToHalfFast(const float* src, uint16_t* dst, int64_t n) {
  if (Best().isa == Isa::kPortable) return false;
  Best().impl.float_to_half(src, dst, n);
  return true;
}

bool HalfToFloatFast(const uint16_t* src, float* dst, int64_t n) {
  if (Best().isa == Isa::kPortable) return false;
  Best().impl.half_to_float(src, dst, n);
  return true;
}

}  // namespace onnx_light::cast_internal
