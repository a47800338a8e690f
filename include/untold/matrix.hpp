// untold/matrix.hpp - the 4x4 matrix arithmetic the library needs: product
// and affine inverse of column-major matrices (element (r, c) is [c * 4 + r],
// translation in 12..14). Total functions: any input gives some output.
#pragma once

#include "detail/lean_std.hpp"
#include "records.hpp"

namespace untold {

/// a x b for column-major 4x4 matrices.
[[nodiscard]] inline mat4 multiply(const mat4& a, const mat4& b) noexcept {
  mat4 out{};
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) {
      float sum = 0;
      for (int k = 0; k < 4; ++k) sum += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = sum;
    }
  return out;
}

/// Inverse of an affine matrix (last row 0 0 0 1, which is assumed); the
/// identity when the 3x3 part is singular or not finite.
[[nodiscard]] inline mat4 inverse_affine(const mat4& m) noexcept {
  const float a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6], i = m[10];
  const float A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
  const float det = a * A + b * B + c * C;
  if (det == 0 || !detail::is_finite(det)) return identity_matrix;
  const float s = 1.0f / det;
  mat4 r{};
  r[0] = A * s;
  r[1] = B * s;
  r[2] = C * s;
  r[4] = -(b * i - c * h) * s;
  r[5] = (a * i - c * g) * s;
  r[6] = -(a * h - b * g) * s;
  r[8] = (b * f - c * e) * s;
  r[9] = -(a * f - c * d) * s;
  r[10] = (a * e - b * d) * s;
  for (int row = 0; row < 3; ++row) r[12 + row] = -(r[row] * m[12] + r[4 + row] * m[13] + r[8 + row] * m[14]);
  r[15] = 1;
  return r;
}

}  // namespace untold
