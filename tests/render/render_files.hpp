// Generated inputs of the render tests.
#pragma once

#include <doctest/doctest.h>

#include <untold/untold.hpp>

#include <cstdint>
#include <vector>

namespace render_test {

/// A flat grid of 10 x `rows` vertices, `spacing` apart on x and z, as one
/// PBR_STATIC_V1 mesh in a .untold (32 bytes a vertex).
inline std::vector<std::byte> grid_untold(std::uint32_t rows, float spacing = 1) {
  constexpr std::uint32_t columns = 10;
  std::vector<float> positions, normals;
  std::vector<std::uint32_t> indices;
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t c = 0; c < columns; ++c) {
      positions.insert(positions.end(), {float(c) * spacing, 0.0f, float(r) * spacing});
      normals.insert(normals.end(), {0.0f, 1.0f, 0.0f});
      if (r + 1 < rows && c + 1 < columns) {
        const std::uint32_t a = r * columns + c, b = a + columns;
        indices.insert(indices.end(), {a, b, b + 1, a, b + 1, a + 1});
      }
    }
  untold::pbr_vertex_input in;
  in.positions = positions;
  in.normals = normals;
  auto vertices = untold::encode_pbr_vertices(in);
  REQUIRE(vertices);
  untold::builder b{untold::file_type::tile};
  const auto e = b.add_entity({.name = "grid"});
  b.add_mesh({.entity = e, .name = "grid", .vertices = *vertices, .indices = indices});
  auto file = b.finish();
  REQUIRE(file);
  return std::move(*file);
}

}  // namespace render_test
