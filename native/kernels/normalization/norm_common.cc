#include "native/kernels/normalization/norm_common.h"

namespace onnx_light {

std::vector<ParamSpec> NormTuningParams(int64_t minimum_elements) {
  return {MinimumElementsParam(minimum_elements, "input elements below which the normalization runs serially"),
          ParamSpec::Int64("parallel.grain_elements", 16384, 1, int64_t{1} << 40,
                           "smallest parallel block, in input elements")};
}

StatusOr<NormTuning> ReadNormTuning(const KernelInfo& info) {
  NormTuning t;
  OL_ASSIGN_OR_RETURN(t.minimum_elements, info.tuning().Int64("parallel.minimum_elements"));
  OL_ASSIGN_OR_RETURN(t.grain_elements, info.tuning().Int64("parallel.grain_elements"));
  return t;
}

}  // namespace onnx_light
