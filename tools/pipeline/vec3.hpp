// tools/pipeline/vec3.hpp - the little 3-vector arithmetic the importers use
// to repair normals and tangents (import_assimp.cpp, import_gltf.cpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include <untold/detail/checks.hpp>

namespace untold::tools::vec3 {

struct v3 {
  float x = 0, y = 0, z = 0;
};
[[nodiscard]] inline v3 sub(v3 a, v3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
[[nodiscard]] inline v3 add(v3 a, v3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
[[nodiscard]] inline v3 mul(v3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
[[nodiscard]] inline float dot(v3 a, v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
[[nodiscard]] inline v3 cross(v3 a, v3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
/// Every component finite (by bits: a -ffast-math build keeps the check).
[[nodiscard]] inline bool finite(v3 v) {
  return untold::detail::is_finite(v.x) && untold::detail::is_finite(v.y) && untold::detail::is_finite(v.z);
}
/// Finite and long enough to normalise.
[[nodiscard]] inline bool usable(v3 v) { return finite(v) && dot(v, v) > 1e-12f; }
/// Precondition: usable(v).
[[nodiscard]] inline v3 unit(v3 v) { return mul(v, 1.0f / std::sqrt(dot(v, v))); }
/// A unit vector perpendicular to the unit vector n (for a missing tangent).
[[nodiscard]] inline v3 any_perpendicular(v3 n) {
  const v3 axis = std::fabs(n.x) < 0.9f ? v3{1, 0, 0} : v3{0, 1, 0};
  const v3 t = sub(axis, mul(n, dot(n, axis)));
  return usable(t) ? unit(t) : v3{1, 0, 0};
}
/// Vertex v of a flat xyz stream. Precondition: 3 * v + 2 < s.size().
[[nodiscard]] inline v3 at3(const std::vector<float>& s, std::size_t v) { return {s[3 * v], s[3 * v + 1], s[3 * v + 2]}; }

}  // namespace untold::tools::vec3
