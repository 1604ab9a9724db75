// QLinearConcat (com.microsoft, 1): inputs Y_scale, Y_zero_point, then (X, X_scale,
// X_zero_point) per tensor; every X is requantized to (Y_scale, Y_zero_point) through a
// 256-entry table (a copy when its parameters are Y's) and concatenated along `axis`.
#include <cstring>
#include <string>
#include <vector>

#include "native/kernels/common/kernel_registration.h"
#include "native/kernels/qlinear_ms/qlinear_util.h"

namespace onnx_light {
namespace qlinear_ms {
namespace {

class QLinearConcatKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_RETURN_IF_ERROR(parallel_.Init(info));
    OL_ASSIGN_OR_RETURN(axis_, info.GetInt("axis"));
    if (info.num_inputs() < 5 || (info.num_inputs() - 2) % 3 != 0) {
      return InvalidArgument(info.Where(), ": takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got ",
                             info.num_inputs(), " inputs");
    }
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    const std::string where = ctx.Where();
    OL_ASSIGN_OR_RETURN(const Tensor* y_zp, ctx.RequiredInput(1));
    OL_RETURN_IF_ERROR(CheckEightBit(*y_zp, where, "Y_zero_point"));
    const DataType type = y_zp->dtype();
    OL_ASSIGN_OR_RETURN(const QParams py, ReadQParams(ctx.input(0), y_zp, type, where, "Y_scale", "Y_zero_point"));
    const int count = (ctx.num_inputs() - 2) / 3;
    if (count < 1 || (ctx.num_inputs() - 2) % 3 != 0) {
      return InvalidArgument(where, ": inputs after Y_zero_point must be (X, X_scale, X_zero_point) triples, got ",
                             ctx.num_inputs() - 2);
    }
    struct Part {
      const Tensor* x;
      QParams params;
      bool copy;
      std::vector<uint8_t> table;  // bytes of the Q table
      int64_t row;                 // elements per outer index
    };
    std::vector<Part> parts(count);
    int rank = 0;
    int axis = 0;
    std::vector<int64_t> out_dims;
    for (int i = 0; i < count; ++i) {
      Part& p = parts[i];
      const std::string what = "input " + std::to_string(2 + 3 * i);
      OL_ASSIGN_OR_RETURN(p.x, ctx.RequiredInput(2 + 3 * i));
      if (p.x->dtype() != type) {
        return InvalidArgument(where, ": ", what, " ", p.x->TypeAndShape(), " must have Y_zero_point's type ",
                               DataTypeName(type));
      }
      OL_ASSIGN_OR_RETURN(
          p.params, ReadQParams(ctx.input(3 + 3 * i), ctx.input(4 + 3 * i), type, where, "X_scale", "X_zero_point"));
      const Shape& s = p.x->shape();
      if (i == 0) {
        rank = s.rank();
        const StatusOr<int> normalized = NormalizeAxis(axis_, rank);
        if (!normalized.ok()) {
          return InvalidArgument(where, ": axis ", axis_, " is out of range for input 2's shape ", s.ToString());
        }
        axis = *normalized;
        out_dims = s.dims();
        out_dims[axis] = 0;
      }
      bool same = s.rank() == rank;
      for (int d = 0; same && d < rank; ++d) same = d == axis || s[d] == out_dims[d];
      if (!same) {
        return InvalidArgument(where, ": ", what, " shape ", s.ToString(), " does not match input 2's ",
                               parts[0].x->shape().ToString(), " outside axis ", axis);
      }
      out_dims[axis] += s[axis];
      p.copy = p.params.scale == py.scale && p.params.zero_point == py.zero_point;
      if (!p.copy) p.table = TableBytes(type, p.params, py);
    }
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, type, Shape(out_dims)));
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= out_dims[d];
    for (int d = axis + 1; d < rank; ++d) inner *= out_dims[d];
    int64_t out_row = 0;
    for (Part& p : parts) {
      p.row = p.x->shape()[axis] * inner;
      out_row += p.row;
    }
    if (y->num_elements() == 0) return Status::Ok();
    return DispatchType(EightBit{}, type, where, [&](auto tag) -> Status {
      using Q = typename decltype(tag)::type;
      Q* yv = y->data<Q>();
      // One unit = one outer index: the output row built from every input's row.
      return parallel_.Run(ctx.parallel(), "qlinear_concat.rows", outer, out_row, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          Q* dst = yv + r * out_row;
          for (const Part& p : parts) {
            const Q* src = p.x->template data<Q>() + r * p.row;
            if (p.copy) {
              std::memcpy(dst, src, sizeof(Q) * p.row);
            } else {
              const Q* t = reinterpret_cast<const Q*>(p.table.data());
              for (int64_t e = 0; e < p.row; ++e) dst[e] = t[TableIndex(src[e])];
            }
            dst += p.row;
          }
        }
      });
    });
  }

 private:
  static std::vector<uint8_t> TableBytes(DataType type, const QParams& x, const QParams& y) {
    const auto identity = [](float v) { return v; };
    std::vector<uint8_t> bytes(256);
    if (type == DataType::kInt8) {
      const std::vector<int8_t> t = BuildTable<int8_t>(x, y, identity);
      for (int i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(t[i]);
    } else {
      bytes = BuildTable<uint8_t>(x, y, identity);
    }
    return bytes;
  }

  int64_t axis_ = 0;
  ThresholdedParallel parallel_;
};

}  // namespace

OL_REGISTER_KERNELS(qlinear_concat_op) {
  // The output type is Y_zero_point's (input 1).
  Kernel("QLinearConcat")
      .Domain("com.microsoft")
      .Opsets({Since(1, EightBit{})})
      .DispatchInput(1)
      .Tuning(ElementTuning())
      .Factory(MakeKernel<QLinearConcatKernel>())
      .AddTo(registry);
}

}  // namespace qlinear_ms
}  // namespace onnx_light
