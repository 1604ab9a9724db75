// Cast and CastLike: element conversion, parallel over contiguous element blocks.
#include <algorithm>
#include <cctype>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/common/thresholded_parallel.h"
#include "native/kernels/tensor/cast_convert.h"
#include "native/kernels/tensor/onnx_types.h"

namespace onnx_light {
namespace {

constexpr std::initializer_list<int> kCastVersions = {1, 6, 9, 13, 19, 21, 23, 24, 25, 28};
constexpr std::initializer_list<int> kCastLikeVersions = {15, 19, 21, 23, 24, 25};

// Cast's T1/T2 at a given since_version: every non-complex type, strings from opset 9.
std::vector<DataType> CastTypesAt(int since_version) {
  TensorTypeSet set;
  set.complex = false;
  set.string = since_version >= 9;
  return TensorTypesAt(since_version, set);
}

StatusOr<ExponentRounding> ParseRoundMode(const KernelInfo& info) {
  OL_ASSIGN_OR_RETURN(std::string mode, info.GetString("round_mode", "up"));
  if (mode == "up") return ExponentRounding::kUp;
  if (mode == "down") return ExponentRounding::kDown;
  if (mode == "nearest") return ExponentRounding::kNearest;
  return InvalidArgument(info.Where(), ": round_mode must be 'up', 'down' or 'nearest', got '", mode, "'");
}

// Shared by Cast and CastLike: attributes, target check and the parallel conversion.
class CastBase : public OpKernel {
 protected:
  Status InitCommon(const KernelInfo& info, std::initializer_list<int> versions) {
    allowed_targets_ = CastTypesAt(CoveringVersion(versions, info.opset_version()));
    OL_ASSIGN_OR_RETURN(int64_t saturate, info.GetInt("saturate", 1));
    options_.saturate = saturate != 0;
    OL_ASSIGN_OR_RETURN(options_.e8m0_rounding, ParseRoundMode(info));
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    return Status::Ok();
  }

  Status CheckTarget(const std::string& where, DataType to) const {
    if (std::find(allowed_targets_.begin(), allowed_targets_.end(), to) == allowed_targets_.end()) {
      return InvalidArgument(where, ": cannot cast to ", DataTypeName(to), " at this opset");
    }
    return Status::Ok();
  }

  Status Convert(KernelContext& ctx, DataType to) const {
    OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(0));
    OL_RETURN_IF_ERROR(CheckTarget(ctx.Where(), to));
    if (x->dtype() == to) return ctx.SetOutput(0, Value(*x));  // nothing to convert: alias
    if (!CastSupported(x->dtype(), to)) {
      return InvalidArgument(ctx.Where(), ": cannot cast ", x->TypeAndShape(), " to ", DataTypeName(to));
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, to, x->shape()));
    const int64_t n = x->num_elements();
    auto convert = [&](int64_t begin, int64_t end) {
      Status s = CastElements(x->dtype(), x->raw_data(), to, y->raw_data(), begin, end, options_);
      return s.ok() ? s : s.WithContext(StrCat(ctx.Where(), ": "));
    };
    // Strings allocate per element: kept on the calling thread.
    const bool strings = x->dtype() == DataType::kString || to == DataType::kString;
    return parallel_.Run(ctx.parallel(), "cast.elements", n, 1, convert, /*serial=*/strings);
  }

 private:
  std::vector<DataType> allowed_targets_;
  CastOptions options_;
  ThresholdedParallel parallel_;
};

StatusOr<DataType> ParseCastTo(const KernelInfo& info) {
  const Attribute* to = info.FindAttribute("to");
  if (to != nullptr && to->type == Attribute::Type::kString) {  // Cast-1 names the type: "FLOAT"
    std::string name = to->s;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    auto type = DataTypeFromName(name);
    if (!type.ok()) return InvalidArgument(info.Where(), ": attribute 'to' names unknown type '", to->s, "'");
    return *type;
  }
  OL_ASSIGN_OR_RETURN(int64_t value, info.GetInt("to"));
  if (value > INT32_MAX || !IsValidDataType(static_cast<int32_t>(value))) {
    return InvalidArgument(info.Where(), ": attribute 'to' = ", value, " is not an ONNX element type");
  }
  return static_cast<DataType>(value);
}

class CastKernel : public CastBase {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(to_, ParseCastTo(info));
    OL_RETURN_IF_ERROR(InitCommon(info, kCastVersions));
    return CheckTarget(info.Where(), to_);
  }
  Status Compute(KernelContext& ctx) override { return Convert(ctx, to_); }

 private:
  DataType to_ = DataType::kUndefined;
};

class CastLikeKernel : public CastBase {
 public:
  Status Init(const KernelInfo& info) { return InitCommon(info, kCastLikeVersions); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* like, ctx.RequiredInput(1));
    return Convert(ctx, like->dtype());
  }
};

std::vector<ParamSpec> CastTuning() {
  return {MinimumElementsParam(262144, "elements below which the conversion runs on the calling thread"),
          ParamSpec::Int64(param::kBlockElements, 65536, 256, int64_t{1} << 40,
                           "smallest block of elements one participant converts")};
}

OL_REGISTER_KERNELS(tensor_cast) {
  Kernel("Cast")
      .SinceVersions(kCastVersions)
      .TypesAt(CastTypesAt)
      .Tuning(CastTuning())
      .Factory(MakeKernel<CastKernel>())
      .AddTo(registry);
  Kernel("CastLike")
      .SinceVersions(kCastLikeVersions)
      .TypesAt(CastTypesAt)
      .Tuning(CastTuning())
      .Factory(MakeKernel<CastLikeKernel>())
      .AddTo(registry);
}

}  // namespace
}  // namespace onnx_light
