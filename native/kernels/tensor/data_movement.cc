#include "native/kernels/tensor/data_movement.h"

namespace onnx_light {

std::vector<ParamSpec> ElementBlockTuning(int64_t minimum, int64_t grain) {
  return {MinimumElementsParam(minimum, "output elements below which the kernel runs on the calling thread"),
          ParamSpec::Int64(param::kBlockElements, grain, 1, int64_t{1} << 40,
                           "smallest number of output elements one participant handles")};
}

std::vector<int64_t> DenseStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  for (int d = shape.rank() - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dim(d + 1);
  return strides;
}

void FillElements(DataType type, size_t element_size, const void* value, void* dst, int64_t dst_index, int64_t n) {
  if (n <= 0) return;
  if (type == DataType::kString) {
    auto* d = static_cast<std::string*>(dst) + dst_index;
    std::fill(d, d + n, *static_cast<const std::string*>(value));
    return;
  }
  char* d = static_cast<char*>(dst) + dst_index * element_size;
  auto fill = [&](auto word) {
    std::memcpy(&word, value, sizeof word);
    std::fill(reinterpret_cast<decltype(word)*>(d), reinterpret_cast<decltype(word)*>(d) + n, word);
  };
  switch (element_size) {
    case 1:
      fill(uint8_t{});
      break;
    case 2:
      fill(uint16_t{});
      break;
    case 4:
      fill(uint32_t{});
      break;
    case 8:
      fill(uint64_t{});
      break;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * element_size, value, element_size);
  }
}

Status CopyThroughOffsets(const KernelContext& ctx, const ThresholdedParallel& parallelism, const char* label,
                          const Tensor& in, Tensor* out, const std::vector<std::vector<int64_t>>& offsets,
                          const void* fill) {
  const Shape& shape = out->shape();
  const DataType type = in.dtype();
  const size_t size = ElementSize(type);
  if (out->num_elements() == 0) return Status::Ok();
  if (shape.rank() == 0) {  // a scalar input yields a scalar output: nothing to pad or map
    CopyElements(type, size, in.raw_data(), 0, out->raw_data(), 0, 1);
    return Status::Ok();
  }
  const int last = shape.rank() - 1;
  const int64_t cols = shape.dim(last);
  // Runs along the last dimension: [column, column + length) reads input offsets
  // last_offsets[column] + 0, 1, ... (consecutive), or is all fill.
  struct Run {
    int64_t column, length;
  };
  const std::vector<int64_t>& last_offsets = offsets[last];
  std::vector<Run> runs;
  for (int64_t c = 0; c < cols;) {
    int64_t e = c + 1;
    if (last_offsets[c] == kFillOffset) {
      while (e < cols && last_offsets[e] == kFillOffset) ++e;
    } else {
      while (e < cols && last_offsets[e] != kFillOffset && last_offsets[e] == last_offsets[e - 1] + 1) ++e;
    }
    runs.push_back({c, e - c});
    c = e;
  }
  const int64_t rows = shape.SizeTo(last);
  return parallelism.Run(
      ctx.parallel(), label, rows, cols,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t base = 0;
          bool fill_row = false;
          for (int64_t d = last - 1, rest = r; d >= 0; --d) {
            const int64_t offset = offsets[d][rest % shape.dim(static_cast<int>(d))];
            fill_row = fill_row || offset == kFillOffset;
            base += offset == kFillOffset ? 0 : offset;
            rest /= shape.dim(static_cast<int>(d));
          }
          if (fill_row) {
            FillElements(type, size, fill, out->raw_data(), r * cols, cols);
            continue;
          }
          for (const Run& run : runs) {
            if (last_offsets[run.column] == kFillOffset) {
              FillElements(type, size, fill, out->raw_data(), r * cols + run.column, run.length);
            } else {
              CopyElements(type, size, in.raw_data(), base + last_offsets[run.column], out->raw_data(),
                           r * cols + run.column, run.length);
            }
          }
        }
        return Status::Ok();
      },
      SerialPayload(type));
}

}  // namespace onnx_light
