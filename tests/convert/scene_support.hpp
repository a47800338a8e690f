// A skinned mesh for the scene round-trip tests (tests/convert and
// tests/urho3d): a strip of two quads over three rows of vertices, each row
// weighted from the first joint towards the second.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <untold/convert/model.hpp>

namespace scene_test {

/// The report's entry about `what`, or nullptr.
inline const untold::convert::report_entry* find(const untold::convert::conversion_report& r, std::string_view what) {
  for (const auto& e : r.entries)
    if (e.what == what) return &e;
  return nullptr;
}

/// Six vertices at height z with normals (0, 0, 1) and uv0, joints {0, 1},
/// four triangles; skin 0, material 0.
inline untold::convert::mesh skinned_strip(std::string name, float z) {
  untold::convert::mesh m;
  m.name = std::move(name);
  m.material = 0;
  m.skin = 0;
  for (int i = 0; i < 6; ++i) {
    const float y = static_cast<float>(i / 2), x = static_cast<float>(i % 2);
    m.positions.insert(m.positions.end(), {x, y, z});
    m.normals.insert(m.normals.end(), {0, 0, 1});
    m.uv0.insert(m.uv0.end(), {x * 0.5f, y * 0.25f});
    m.joints.push_back({0, 1, 0, 0});
    m.weights.push_back({1 - y / 2, y / 2, 0, 0});
  }
  m.indices = {0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4};
  return m;
}

}  // namespace scene_test
