// Fixture (text only, never compiled): a serial-only family. The words ParallelFor( in
// this comment and in the string below are not call sites.
namespace fixture {

const char* kNote = "no ParallelFor(here)";

Status ShapeKernel::Compute(KernelContext& ctx) {
  return WriteShape(ctx);  /* metadata only */
}

Status PadKernel::Compute(KernelContext& ctx) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i];
  return Status::Ok();
}

OL_REGISTER_KERNELS(fx_serial) {
  registry.Add(KernelDef{"", "Shape", 1, 14, "fx_serial", {}});
  registry.Add(KernelDef{"", "Shape", 15, kOpenEnded, "fx_serial", {}});
  registry.Add(KernelDef{"", "RandomUniform", 1, kOpenEnded, "fx_serial", {DataType::kFloat, DataType::kDouble}});
  registry.Add(KernelDef{"", "Pad", 13, kOpenEnded, "fx_serial", {DataType::kFloat}});
  registry.Add(KernelDef{"", "SequenceAt", 11, kOpenEnded, "fx_serial", {}});
}

}  // namespace fixture
