#include "native/kernels/tensor/data_movement.h"

namespace onnx_light {

std::vector<ParamSpec> ElementBlockTuning(int64_t minimum, int64_t grain) {
  return {MinimumElementsParam(minimum, "output elements below which the kernel runs on the calling thread"),
          ParamSpec::Int64("parallel.grain_elements", grain, 1, int64_t{1} << 40,
                           "smallest number of output elements one participant handles")};
}

Status ElementParallelism::Init(const KernelInfo& info) {
  OL_ASSIGN_OR_RETURN(minimum_elements_, info.tuning().Int64("parallel.minimum_elements"));
  OL_ASSIGN_OR_RETURN(grain_elements_, info.tuning().Int64("parallel.grain_elements"));
  return Status::Ok();
}

Status ElementParallelism::Run(const KernelContext& ctx, const char* label, int64_t units, int64_t unit_elements,
                               FunctionRef<Status(int64_t, int64_t)> fn, bool serial) const {
  if (units <= 0) return Status::Ok();
  const int64_t per_unit = std::max<int64_t>(unit_elements, 1);
  // units * per_unit is at most the output's element count, which fits int64.
  if (serial || units * per_unit < minimum_elements_) return fn(0, units);
  const int64_t grain_units = std::max<int64_t>(1, grain_elements_ / per_unit);
  return ParallelFor(ctx.parallel(), units, ParallelPlan{label, grain_units}, fn);
}

}  // namespace onnx_light
