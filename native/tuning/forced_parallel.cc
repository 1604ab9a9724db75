#include "native/tuning/forced_parallel.h"

#include <cstdint>
#include <cstring>

namespace onnx_light {

ResolvedTuning ForcedParallelTuning::Resolve(std::shared_ptr<const KernelTuningSchema> schema) const {
  ResolvedTuning tuning = ResolvedTuning::Defaults(schema);
  if (!schema) return tuning;
  for (const ParamSpec& param : schema->params) {
    if (param.name.compare(0, std::strlen(kForcedParallelPrefix), kForcedParallelPrefix) != 0) continue;
    ParamValue minimum;
    if (param.type == ParamType::kInt64) {
      minimum = static_cast<int64_t>(param.minimum);
    } else if (param.type == ParamType::kDouble) {
      minimum = param.minimum;
    } else {
      continue;
    }
    // The minimum is within the schema's bounds by construction (Register checks them).
    (void)tuning.Set(param.name, minimum, ValueSource::kExplicitProfile);
  }
  return tuning;
}

}  // namespace onnx_light
