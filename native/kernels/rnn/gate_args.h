// The arguments of GateRows::lstm and GateRows' GRU rows (gate_rows.h), shared by the
// per-ISA files.
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

// One batch row's GRU gates for n hidden units with the default activations (sigmoid,
// tanh) and no clip. product, projection and bias hold the gates z, r, h one after another
// (n values each): the recurrent product, the input projection X_t W^T and the bias
// (Wb + Rb for z and r, Wb alone for h); bias_rh is h's Rb. Per unit j (fused
// multiply-adds where the ISA has them):
//   z = sigmoid(sum_z)   r = sigmoid(sum_r)   with sum_g = (product_g + projection_g) + bias_g
//   h = (1 - z) h~ + z h_prev   (as z h_prev + ((1 - z) h~))
// and h~ by the three rows:
//  - gru_linear (linear_before_reset = 1, one round; product_h = H_{t-1} R_h^T):
//      h~ = tanh((projection_h + bias_h) + r (product_h + bias_rh));
//  - gru_reset (linear_before_reset = 0, round 1; product z and r only): writes z to `z`
//    and r h_prev to `reset` (the next round's product is (r H_{t-1}) R_h^T); no h;
//  - gru_hidden (linear_before_reset = 0, round 2; product_h = (r H_{t-1}) R_h^T, z read
//    from `z`):  h~ = tanh(((projection_h + bias_h) + product_h) + bias_rh).
// `z` may be the product's own z row (gru_reset reads a unit before it writes it).
struct GruRowArgs {
  int64_t n;
  const float *product, *projection, *bias;
  const float* bias_rh;
  const float* h_prev;
  float* z;
  float* reset;
  float* hidden;
};

}  // namespace rnn
}  // namespace onnx_light
