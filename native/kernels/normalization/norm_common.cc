#include "native/kernels/normalization/norm_common.h"

namespace onnx_light {

std::vector<ParamSpec> NormTuningParams(int64_t minimum_elements) {
  return {MinimumElementsParam(minimum_elements, "input elements below which the normalization runs serially"),
          ParamSpec::Int64(param::kBlockElements, 16384, 1, int64_t{1} << 40,
                           "smallest parallel block, in input elements")};
}

}  // namespace onnx_light
