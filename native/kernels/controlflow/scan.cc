// Scan: iterates a body over slices of its scan inputs, carrying state, and stacks the
// per-iteration outputs. Opset 8 adds a leading batch axis (each batch item is scanned
// on its own); opset 9 and later choose an axis and a direction per input and output.
#include "native/kernels/controlflow/axis_copy.h"
#include "native/kernels/controlflow/subgraph_util.h"

namespace onnx_light {
namespace controlflow {
namespace {

struct ScanSpec {
  int num_states = 0;
  int num_scan_inputs = 0;
  int num_scan_outputs = 0;
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
};

std::vector<int64_t> OrZeros(std::vector<int64_t> values, int count) {
  if (values.empty()) values.assign(count, 0);
  return values;
}

Status CheckCount(const KernelInfo& info, const char* attribute, const std::vector<int64_t>& values, int expected) {
  if (static_cast<int>(values.size()) == expected) return Status::Ok();
  return InvalidArgument(info.Where(), ": attribute '", attribute, "' has ", values.size(), " entries, expected ",
                         expected);
}

struct ScanResult {
  std::vector<Value> states;
  std::vector<Tensor> outputs;
};

// One scan over `scan_inputs` (already without any batch axis).
StatusOr<ScanResult> RunScan(KernelContext& ctx, const Graph& body, const ScanSpec& spec, std::vector<Value> states,
                             const std::vector<const Tensor*>& scan_inputs) {
  int64_t length = -1;
  std::vector<int> axes(spec.num_scan_inputs);
  for (int j = 0; j < spec.num_scan_inputs; ++j) {
    const Tensor& input = *scan_inputs[j];
    auto axis = NormalizeAxis(spec.input_axes[j], input.shape().rank());
    if (!axis.ok()) return axis.status().WithContext(StrCat(ctx.Where(), ": scan input ", j, ": "));
    axes[j] = *axis;
    const int64_t n = input.shape()[axes[j]];
    if (length >= 0 && n != length) {
      return InvalidArgument(ctx.Where(), ": scan inputs disagree on the sequence length: ", length, " vs ", n,
                             " (scan input ", j, " is ", input.TypeAndShape(), ")");
    }
    length = n;
  }
  if (length < 0) return InvalidArgument(ctx.Where(), ": needs at least one scan input");

  std::vector<std::vector<Tensor>> per_iteration(spec.num_scan_outputs, std::vector<Tensor>(length));
  std::vector<Value> inputs(spec.num_states + spec.num_scan_inputs);
  for (int64_t t = 0; t < length; ++t) {
    OL_RETURN_IF_ERROR(CheckCancelled(ctx, t));
    for (int i = 0; i < spec.num_states; ++i) inputs[i] = std::move(states[i]);
    for (int j = 0; j < spec.num_scan_inputs; ++j) {
      const int64_t index = spec.input_directions[j] ? length - 1 - t : t;
      OL_ASSIGN_OR_RETURN(Tensor slice, axis_copy::Slice(*scan_inputs[j], axes[j], index, 1, false, ctx.allocator()));
      inputs[spec.num_states + j] = Value(std::move(slice));
      ctx.RecordCopy();
    }
    OL_ASSIGN_OR_RETURN(std::vector<Value> outputs,
                        RunBody(ctx, body, inputs, spec.num_states + spec.num_scan_outputs));
    for (int i = 0; i < spec.num_states; ++i) states[i] = std::move(outputs[i]);
    for (int k = 0; k < spec.num_scan_outputs; ++k) {
      const Value& v = outputs[spec.num_states + k];
      if (!v.is_tensor()) {
        return InvalidArgument(ctx.Where(), ": scan output ", k, " must be a tensor, got ", v.Describe());
      }
      const int64_t position = spec.output_directions[k] ? length - 1 - t : t;
      per_iteration[k][position] = v.tensor();
    }
  }

  ScanResult result;
  result.states = std::move(states);
  for (int k = 0; k < spec.num_scan_outputs; ++k) {
    if (length == 0) {
      OL_ASSIGN_OR_RETURN(Tensor empty, EmptyScanOutput(ctx, body, spec.num_states + k));
      result.outputs.push_back(std::move(empty));
      continue;
    }
    const Tensor& first = per_iteration[k].front();
    auto axis = NormalizeAxis(spec.output_axes[k], first.shape().rank() + 1);
    if (!axis.ok()) return axis.status().WithContext(StrCat(ctx.Where(), ": scan output ", k, ": "));
    auto stacked = axis_copy::Stack(per_iteration[k], *axis, first.dtype(), first.shape(), ctx.allocator());
    if (!stacked.ok()) return stacked.status().WithContext(StrCat(ctx.Where(), ": scan output ", k, ": "));
    ctx.RecordCopy();
    result.outputs.push_back(std::move(stacked).value());
  }
  return result;
}

StatusOr<const Tensor*> TensorInput(const KernelContext& ctx, int i) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) return InvalidArgument(ctx.Where(), ": input ", i, " must be a tensor");
  return t;
}

// Opset 9+: inputs are N states then M scan inputs.
class Scan9 : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(body_, info.GetGraph("body"));
    OL_ASSIGN_OR_RETURN(int64_t m, info.GetInt("num_scan_inputs"));
    if (m < 1 || m > info.num_inputs()) {
      return InvalidArgument(info.Where(), ": num_scan_inputs = ", m, " but the node has ", info.num_inputs(),
                             " inputs");
    }
    spec_.num_scan_inputs = static_cast<int>(m);
    spec_.num_states = info.num_inputs() - spec_.num_scan_inputs;
    spec_.num_scan_outputs = info.num_outputs() - spec_.num_states;
    if (spec_.num_scan_outputs < 0) {
      return InvalidArgument(info.Where(), ": has fewer outputs (", info.num_outputs(), ") than states (",
                             spec_.num_states, ")");
    }
    OL_ASSIGN_OR_RETURN(auto input_axes, info.GetInts("scan_input_axes", {}));
    OL_ASSIGN_OR_RETURN(auto input_directions, info.GetInts("scan_input_directions", {}));
    OL_ASSIGN_OR_RETURN(auto output_axes, info.GetInts("scan_output_axes", {}));
    OL_ASSIGN_OR_RETURN(auto output_directions, info.GetInts("scan_output_directions", {}));
    spec_.input_axes = OrZeros(input_axes, spec_.num_scan_inputs);
    spec_.input_directions = OrZeros(input_directions, spec_.num_scan_inputs);
    spec_.output_axes = OrZeros(output_axes, spec_.num_scan_outputs);
    spec_.output_directions = OrZeros(output_directions, spec_.num_scan_outputs);
    OL_RETURN_IF_ERROR(CheckCount(info, "scan_input_axes", spec_.input_axes, spec_.num_scan_inputs));
    OL_RETURN_IF_ERROR(CheckCount(info, "scan_input_directions", spec_.input_directions, spec_.num_scan_inputs));
    OL_RETURN_IF_ERROR(CheckCount(info, "scan_output_axes", spec_.output_axes, spec_.num_scan_outputs));
    OL_RETURN_IF_ERROR(CheckCount(info, "scan_output_directions", spec_.output_directions, spec_.num_scan_outputs));
    return Status::Ok();
  }

  Status Compute(KernelContext& ctx) override {
    std::vector<Value> states;
    for (int i = 0; i < spec_.num_states; ++i) {
      if (ctx.input_value(i) == nullptr) return InvalidArgument(ctx.Where(), ": state input ", i, " is absent");
      states.push_back(*ctx.input_value(i));
    }
    std::vector<const Tensor*> scan_inputs;
    for (int j = 0; j < spec_.num_scan_inputs; ++j) {
      OL_ASSIGN_OR_RETURN(const Tensor* t, TensorInput(ctx, spec_.num_states + j));
      scan_inputs.push_back(t);
    }
    OL_ASSIGN_OR_RETURN(ScanResult result, RunScan(ctx, *body_, spec_, std::move(states), scan_inputs));
    for (int i = 0; i < spec_.num_states; ++i) OL_RETURN_IF_ERROR(ctx.SetOutput(i, std::move(result.states[i])));
    for (int k = 0; k < spec_.num_scan_outputs; ++k) {
      OL_RETURN_IF_ERROR(ctx.SetOutput(spec_.num_states + k, Value(std::move(result.outputs[k]))));
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<const Graph> body_;
  ScanSpec spec_;
};

// Opset 8: input 0 is the optional sequence_lens, states are [batch, ...] and scan inputs
// [batch, sequence, ...]; every batch item is scanned on its own.
class Scan8 : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(body_, info.GetGraph("body"));
    OL_ASSIGN_OR_RETURN(int64_t m, info.GetInt("num_scan_inputs"));
    if (m < 1 || m > info.num_inputs() - 1) {
      return InvalidArgument(info.Where(), ": num_scan_inputs = ", m, " but the node has ", info.num_inputs(),
                             " inputs");
    }
    spec_.num_scan_inputs = static_cast<int>(m);
    spec_.num_states = info.num_inputs() - 1 - spec_.num_scan_inputs;
    spec_.num_scan_outputs = info.num_outputs() - spec_.num_states;
    if (spec_.num_scan_outputs < 0) {
      return InvalidArgument(info.Where(), ": has fewer outputs than states");
    }
    OL_ASSIGN_OR_RETURN(auto directions, info.GetInts("directions", {}));
    spec_.input_axes.assign(spec_.num_scan_inputs, 0);
    spec_.input_directions = OrZeros(directions, spec_.num_scan_inputs);
    spec_.output_axes.assign(spec_.num_scan_outputs, 0);
    spec_.output_directions.assign(spec_.num_scan_outputs, 0);
    return CheckCount(info, "directions", spec_.input_directions, spec_.num_scan_inputs);
  }

  Status Compute(KernelContext& ctx) override {
    std::vector<const Tensor*> batched;  // states, then scan inputs
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      OL_ASSIGN_OR_RETURN(const Tensor* t, TensorInput(ctx, i));
      if (t->shape().rank() < 1)
        return InvalidArgument(ctx.Where(), ": input ", i, " needs a batch axis, got ", t->TypeAndShape());
      batched.push_back(t);
    }
    const int64_t batch = batched.front()->shape()[0];
    for (const Tensor* t : batched) {
      if (t->shape()[0] != batch) {
        return InvalidArgument(ctx.Where(), ": inputs disagree on the batch size: ", batch, " vs ", t->TypeAndShape());
      }
    }
    if (const Tensor* lens = ctx.input(0); lens != nullptr) {
      const Tensor* first_scan = batched[spec_.num_states];
      const int64_t full = first_scan->shape().rank() > 1 ? first_scan->shape()[1] : 0;
      if (lens->dtype() != DataType::kInt64 || lens->num_elements() != batch) {
        return InvalidArgument(ctx.Where(), ": sequence_lens must be int64[", batch, "], got ", lens->TypeAndShape());
      }
      for (int64_t b = 0; b < batch; ++b) {
        if (lens->data<int64_t>()[b] != full) {
          return NotImplemented(ctx.Where(), ": sequence_lens shorter than the sequence axis (",
                                lens->data<int64_t>()[b], " < ", full, ") is not supported");
        }
      }
    }
    std::vector<std::vector<Tensor>> states_by_batch(spec_.num_states), outputs_by_batch(spec_.num_scan_outputs);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> states;
      std::vector<Tensor> slices;
      for (size_t i = 0; i < batched.size(); ++i) {
        OL_ASSIGN_OR_RETURN(Tensor slice, axis_copy::Slice(*batched[i], 0, b, 1, false, ctx.allocator()));
        if (static_cast<int>(i) < spec_.num_states) {
          states.push_back(Value(std::move(slice)));
        } else {
          slices.push_back(std::move(slice));
        }
      }
      std::vector<const Tensor*> scan_inputs;
      for (const Tensor& s : slices) scan_inputs.push_back(&s);
      OL_ASSIGN_OR_RETURN(ScanResult result, RunScan(ctx, *body_, spec_, std::move(states), scan_inputs));
      for (int i = 0; i < spec_.num_states; ++i) {
        if (!result.states[i].is_tensor()) return InvalidArgument(ctx.Where(), ": state ", i, " must stay a tensor");
        states_by_batch[i].push_back(result.states[i].tensor());
      }
      for (int k = 0; k < spec_.num_scan_outputs; ++k) outputs_by_batch[k].push_back(std::move(result.outputs[k]));
    }
    const auto stack = [&](int output, const std::vector<Tensor>& parts) -> Status {
      if (parts.empty()) return InvalidArgument(ctx.Where(), ": a batch of size 0 has no outputs to stack");
      OL_ASSIGN_OR_RETURN(Tensor t, axis_copy::Stack(parts, 0, parts[0].dtype(), parts[0].shape(), ctx.allocator()));
      return ctx.SetOutput(output, Value(std::move(t)));
    };
    for (int i = 0; i < spec_.num_states; ++i) OL_RETURN_IF_ERROR(stack(i, states_by_batch[i]));
    for (int k = 0; k < spec_.num_scan_outputs; ++k)
      OL_RETURN_IF_ERROR(stack(spec_.num_states + k, outputs_by_batch[k]));
    return Status::Ok();
  }

 private:
  std::shared_ptr<const Graph> body_;
  ScanSpec spec_;
};

KernelDef ScanDef(int since, int end, KernelFactory factory) {
  KernelDef def;
  def.op = "Scan";
  def.since_version = since;
  def.end_version = end;
  def.family = OL_KERNEL_FAMILY;
  def.dispatch_input = -1;
  def.factory = std::move(factory);
  return def;
}

}  // namespace

OL_REGISTER_KERNELS(controlflow_scan) {
  registry.Add(ScanDef(8, 8, MakeKernel<Scan8>()));
  // 9 replaced the batch axis by per-input axes and directions; later versions only widen types.
  registry.Add(ScanDef(9, kOpenEnded, MakeKernel<Scan9>()));
}

}  // namespace controlflow
}  // namespace onnx_light
