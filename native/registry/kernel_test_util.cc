#include "native/registry/kernel_test_util.h"

namespace onnx_light {
namespace testing {

void ExpectIdentical(const Value& a, const Value& b, const std::string& what) {
  ASSERT_EQ(a.kind(), b.kind()) << what;
  if (a.is_sequence()) {
    ASSERT_EQ(a.items().size(), b.items().size()) << what;
    for (size_t i = 0; i < a.items().size(); ++i) ExpectIdentical(a.items()[i], b.items()[i], what);
    return;
  }
  if (!a.is_tensor()) return;
  const Tensor& x = a.tensor();
  const Tensor& y = b.tensor();
  ASSERT_EQ(x.dtype(), y.dtype()) << what;
  ASSERT_EQ(x.shape(), y.shape()) << what;
  if (x.dtype() == DataType::kString) {
    for (int64_t i = 0; i < x.num_elements(); ++i) ASSERT_EQ(x.data<std::string>()[i], y.data<std::string>()[i]) << what;
    return;
  }
  ASSERT_EQ(0, std::memcmp(x.raw_data(), y.raw_data(), x.byte_size())) << what << ": outputs differ bitwise";
}

KernelTester::KernelTester(std::string op, int opset_version, std::string domain)
    : runner_(std::move(op), opset_version, std::move(domain)) {}

KernelTester& KernelTester::Input(Tensor tensor) {
  runner_.Input(std::move(tensor));
  return *this;
}
KernelTester& KernelTester::InputValue(Value value) {
  runner_.InputValue(std::move(value));
  return *this;
}
KernelTester& KernelTester::ConstantInput(Tensor tensor) {
  runner_.ConstantInput(std::move(tensor));
  return *this;
}
KernelTester& KernelTester::MissingInput() {
  runner_.MissingInput();
  return *this;
}
KernelTester& KernelTester::Outputs(int n) {
  runner_.Outputs(n);
  return *this;
}
KernelTester& KernelTester::NodeName(std::string name) {
  runner_.NodeName(std::move(name));
  return *this;
}
KernelTester& KernelTester::Tuning(const std::string& name, ParamValue value) {
  runner_.Tuning(name, std::move(value));
  return *this;
}

#define OL_ATTR(Arg)                                                     \
  KernelTester& KernelTester::Attr(const std::string& name, Arg value) { \
    runner_.Attr(name, std::move(value));                                \
    return *this;                                                        \
  }
OL_ATTR(int64_t)
OL_ATTR(float)
OL_ATTR(const std::string&)
OL_ATTR(std::vector<int64_t>)
OL_ATTR(std::vector<float>)
OL_ATTR(std::vector<std::string>)
OL_ATTR(Tensor)
#undef OL_ATTR

StatusOr<KernelRunResult> KernelTester::RunWithDetails(int num_threads, const CancellationToken* cancel) {
  OL_ASSIGN_OR_RETURN(KernelRunResult result, runner_.Run(num_threads, cancel));
  allocators_.push_back(result.allocator);
  return result;
}

StatusOr<std::vector<Value>> KernelTester::Run(int num_threads) {
  OL_ASSIGN_OR_RETURN(KernelRunResult r, RunWithDetails(num_threads));
  return std::move(r.outputs);
}

}  // namespace testing
}  // namespace onnx_light
