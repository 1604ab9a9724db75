// Test-only kernels in domain "test.session": enough to exercise planning, lifetimes,
// errors, events, cancellation and subgraphs without any real kernel family.
#include <algorithm>
#include <chrono>
#include <new>
#include <optional>
#include <thread>

#include "native/registry/kernel.h"

namespace onnx_light {
namespace {

// C = A + B for float tensors of equal shape; parallel above a tunable threshold.
class TestAdd : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(minimum_elements_, info.tuning().Int64(param::kMinimumElements));
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequiredInput(0));
    OL_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequiredInput(1));
    if (a->shape() != b->shape()) {
      return InvalidArgument(ctx.Where(), ": shapes differ: ", a->TypeAndShape(), " vs ", b->TypeAndShape());
    }
    OL_ASSIGN_OR_RETURN(Tensor * c, ctx.AllocateOutput(0, DataType::kFloat, a->shape()));
    const float* x = a->data<float>();
    const float* y = b->data<float>();
    float* z = c->data<float>();
    auto add = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) z[i] = x[i] + y[i];
      return Status::Ok();
    };
    if (a->num_elements() < minimum_elements_) return add(0, a->num_elements());
    return ParallelFor(ctx.parallel(), a->num_elements(), ParallelPlan{"test_add.blocks", 1}, add);
  }

 private:
  int64_t minimum_elements_ = 0;
};

// Always fails with InvalidArgument (a kernel error must reach the caller with the node).
class TestFail : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext&) override { return InvalidArgument("TestFail always fails"); }
};

// Runs `steps` small regions that each sleep `step_ms` per item: a long-running kernel
// that only cancellation (polled when a region starts) stops early. Output = input.
class TestSlow : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(steps_, info.GetInt("steps", 1000));
    OL_ASSIGN_OR_RETURN(step_ms_, info.GetInt("step_ms", 1));
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    for (int64_t step = 0; step < steps_; ++step) {
      OL_RETURN_IF_ERROR(
          ParallelFor(ctx.parallel(), 2, ParallelPlan{"test_slow.step", 1}, [&](int64_t begin, int64_t end) {
            std::this_thread::sleep_for(std::chrono::milliseconds(step_ms_ * (end - begin)));
            return Status::Ok();
          }));
    }
    return ctx.SetOutput(0, *ctx.input_value(0));
  }

 private:
  int64_t steps_ = 0, step_ms_ = 0;
};

// Runs its "body" subgraph on its inputs and returns the body's outputs.
class TestCall : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    OL_ASSIGN_OR_RETURN(body_, info.GetGraph("body"));
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    std::vector<Value> inputs;
    for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(*ctx.input_value(i));
    OL_ASSIGN_OR_RETURN(std::vector<Value> outputs, ctx.subgraphs()->Run(*body_, inputs));
    for (int i = 0; i < ctx.num_outputs() && i < static_cast<int>(outputs.size()); ++i) {
      OL_RETURN_IF_ERROR(ctx.SetOutput(i, outputs[i]));
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<const Graph> body_;
};

// Output: per input, the first float of the constant it saw at creation, or -1 when
// KernelInfo offered none (a feed, or an initializer a feed may override).
class TestConstants : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    for (int i = 0; i < info.num_inputs(); ++i) {
      const Tensor* constant = info.constant_input(i);
      seen_.push_back(constant != nullptr && constant->num_elements() > 0 ? constant->data<float>()[0] : -1.0f);
    }
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(Tensor * y,
                        ctx.AllocateOutput(0, DataType::kFloat, Shape({static_cast<int64_t>(seen_.size())})));
    std::copy(seen_.begin(), seen_.end(), y->data<float>());
    return Status::Ok();
  }

 private:
  std::vector<float> seen_;
};

// Output: per input, the sum of its elements. A constant input is consumed and summed at
// creation (KernelInfo::ConsumeConstantInput: its pages are released once summed, when the
// session allows it): Compute reads only its type and shape then.
class TestAbsorb : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    absorbed_.assign(info.num_inputs(), std::nullopt);
    for (int i = 0; i < info.num_inputs(); ++i) {
      const Tensor* constant = info.constant_input(i);
      if (constant == nullptr || constant->dtype() != DataType::kFloat) continue;
      ConstantConsumer consumer = info.ConsumeConstantInput(i);
      absorbed_[i] = Sum(*constant);
      consumer.ReleaseThrough(constant->byte_size());
      OL_RETURN_IF_ERROR(info.AbsorbConstantInput(i, sizeof(float)));
    }
    return Status::Ok();
  }
  Status Compute(KernelContext& ctx) override {
    const int n = ctx.num_inputs();
    OL_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat, Shape({n})));
    for (int i = 0; i < n; ++i) {
      OL_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequiredInput(i));
      if (x->dtype() != DataType::kFloat) return InvalidArgument(ctx.Where(), ": input ", i, " is ", x->TypeAndShape());
      y->data<float>()[i] = absorbed_[i].has_value() ? *absorbed_[i] : Sum(*x);
    }
    return Status::Ok();
  }

 private:
  static float Sum(const Tensor& t) {
    float sum = 0.0f;
    for (int64_t e = 0; e < t.num_elements(); ++e) sum += t.data<float>()[e];
    return sum;
  }
  std::vector<std::optional<float>> absorbed_;
};

// Throws std::bad_alloc as a kernel whose own index tables outgrow the heap would (the
// session must turn it into ResourceExhausted naming the node).
class TestBadAlloc : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext&) override { throw std::bad_alloc(); }
};

// What the context shows the node: output 0 = float[3] {inputs, outputs, copies recorded
// so far}; then records 5 copies and leaves every other output unset. A runner that
// reuses one context across nodes must show the next node its own counts and zero copies.
class TestArity : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::Ok(); }
  Status Compute(KernelContext& ctx) override {
    OL_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kFloat, Shape({3})));
    out->data<float>()[0] = static_cast<float>(ctx.num_inputs());
    out->data<float>()[1] = static_cast<float>(ctx.num_outputs());
    out->data<float>()[2] = static_cast<float>(ctx.copies());
    ctx.RecordCopy(5);
    return Status::Ok();
  }
};

KernelDef Def(const char* op, KernelFactory factory, std::vector<ParamSpec> tuning = {}) {
  KernelDef def;
  def.domain = "test.session";
  def.op = op;
  def.family = "session_test_kernels";
  def.tuning = std::move(tuning);
  def.factory = std::move(factory);
  return def;
}

}  // namespace

OL_REGISTER_KERNELS(session_test_kernels) {
  KernelDef add = Def("TestAdd", MakeKernel<TestAdd>(), {MinimumElementsParam(1 << 16)});
  add.element_types = {DataType::kFloat};
  KernelDef add_in_place = add;  // the same kernel, allowed to write over its input 0
  add_in_place.op = "TestAddInPlace";
  add_in_place.output_may_overwrite_input = 0;
  registry.Add(std::move(add));
  registry.Add(std::move(add_in_place));
  registry.Add(Def("TestFail", MakeKernel<TestFail>()));
  registry.Add(Def("TestSlow", MakeKernel<TestSlow>()));
  registry.Add(Def("TestConstants", MakeKernel<TestConstants>()));
  registry.Add(Def("TestBadAlloc", MakeKernel<TestBadAlloc>()));
  KernelDef arity = Def("TestArity", MakeKernel<TestArity>());
  arity.dispatch_input = -1;
  registry.Add(std::move(arity));
  KernelDef absorb = Def("TestAbsorb", MakeKernel<TestAbsorb>());
  absorb.element_types = {DataType::kFloat};  // input 0's type picks it: unknown -> created at run time
  registry.Add(std::move(absorb));
  KernelDef call = Def("TestCall", MakeKernel<TestCall>());
  call.dispatch_input = -1;
  registry.Add(std::move(call));
}

}  // namespace onnx_light
