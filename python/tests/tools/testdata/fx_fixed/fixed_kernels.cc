// Fixture (text only, never compiled): Where calls ParallelFor without a tuning schema.
namespace fixture {

Status WhereKernel::Compute(KernelContext& ctx) {
  return ParallelForWithParticipant(ctx.parallel(), n, ParallelPlan{"where", 1024},
                                    [&](int p, int64_t begin, int64_t end) { return Select(begin, end); });
}

OL_REGISTER_KERNELS(fx_fixed) {
  registry.Add(KernelDef{"", "Cast", 19, kOpenEnded, "fx_fixed", {DataType::kFloat}});
  registry.Add(KernelDef{"", "Where", 16, kOpenEnded, "fx_fixed", {DataType::kFloat}});
}

}  // namespace fixture
