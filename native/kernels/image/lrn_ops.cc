// LRN: y[n, c, ...] = x[n, c, ...] / (bias + alpha / size * sum of x^2 over the channels
// c - floor((size-1)/2) .. c + ceil((size-1)/2))^beta. Every output element sums its own
// window in channel order, so elements are independent and split across participants.
#include <algorithm>
#include <cmath>

#include "native/kernels/reduce_util/numeric.h"
#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

class LrnKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(size_, info.GetInt("size"));
    if (size_ < 1) return InvalidArgument(info.Where(), ": size must be positive, got ", size_);
    OL_ASSIGN_OR_RETURN(alpha_, info.GetFloat("alpha", 0.0001f));
    OL_ASSIGN_OR_RETURN(beta_, info.GetFloat("beta", 0.75f));
    OL_ASSIGN_OR_RETURN(bias_, info.GetFloat("bias", 1.0f));
    OL_ASSIGN_OR_RETURN(minimum_elements_, info.tuning().Int64("parallel.minimum_elements"));
    OL_ASSIGN_OR_RETURN(grain_elements_, info.tuning().Int64("parallel.grain_elements"));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequiredInput(0));
    const Shape& s = input->shape();
    if (s.rank() < 3) return InvalidArgument(ctx.Where(), ": input must be [N, C, spatial...], got ", s.ToString());
    OL_ASSIGN_OR_RETURN(Tensor * output, ctx.AllocateOutput(0, input->dtype(), s));
    const int64_t total = s.num_elements();
    if (total == 0) return Status::Ok();
    const int64_t channels = s[1], inner = s.SizeFrom(2);
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    return VisitType(FloatTypes{}, input->dtype(), ctx.Where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using N = Numeric<T>;
      using A = typename N::Acc;
      const T* x = input->data<T>();
      T* y = output->data<T>();
      const A scale = static_cast<A>(alpha_) / static_cast<A>(size_);
      auto elements = [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t c = (i / inner) % channels;
          const int64_t lane = i - c * inner;  // element i at channel 0
          A square_sum = 0;
          for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(channels - 1, c + after); ++k) {
            const A v = N::Load(x[lane + k * inner]);
            square_sum += v * v;
          }
          const A denominator = std::pow(static_cast<A>(bias_) + scale * square_sum, static_cast<A>(beta_));
          y[i] = N::Store(N::Load(x[i]) / denominator);
        }
        return Status::Ok();
      };
      if (total < minimum_elements_) return elements(0, total);
      return ParallelFor(ctx.parallel(), total, ParallelPlan{"lrn.elements", grain_elements_}, elements);
    });
  }

 private:
  int64_t size_ = 1;
  float alpha_ = 0, beta_ = 0, bias_ = 0;
  int64_t minimum_elements_ = 0, grain_elements_ = 1;
};

}  // namespace

OL_REGISTER_KERNELS(lrn_family) {
  const int spans[][2] = {{1, 12}, {13, kOpenEnded}};
  for (const auto& span : spans) {
    KernelDef def;
    def.op = "LRN";
    def.since_version = span[0];
    def.end_version = span[1];
    def.family = "lrn";
    def.element_types = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
    if (span[0] >= 13) def.element_types.push_back(DataType::kBFloat16);
    def.tuning = {MinimumElementsParam(16384, "elements below which the op runs serially"),
                  ParamSpec::Int64("parallel.grain_elements", 4096, 1, int64_t{1} << 40,
                                   "smallest parallel block, in elements")};
    def.factory = MakeKernel<LrnKernel>();
    registry.Add(std::move(def));
  }
}

}  // namespace onnx_light
