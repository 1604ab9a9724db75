// The arguments of GateRows::lstm (gate_rows.h), shared by the per-ISA files.
#pragma once

#include <cstdint>

namespace onnx_light {
namespace rnn {

// One batch row's LSTM gates for n hidden units with the default activations (sigmoid,
// tanh, tanh), no clip and no input_forget. product, projection and bias hold the gates
// i, o, f, c one after another (n values each): the recurrent product H_{t-1} R^T, the
// input projection X_t W^T and Wb + Rb. Per unit j (fused multiply-adds where the ISA
// has them):
//   i = sigmoid(sum_i + peep_i c)   f = sigmoid(sum_f + peep_f c)   z = tanh(sum_c)
//   c' = f c + i z                  o = sigmoid(sum_o + peep_o c')   h = o tanh(c')
// with sum_g = (product_g + projection_g) + bias_g; cell is updated in place to c'.
struct LstmRowArgs {
  int64_t n;
  const float *product, *projection, *bias;
  const float *peep_i, *peep_o, *peep_f;
  float* cell;
  float* hidden;
};

}  // namespace rnn
}  // namespace onnx_light
