// The views' iterator claims (random access, borrowed ranges) and
// make_or_empty. The concept checks live here rather than in the headers:
// checking a ranges concept costs every translation unit that includes the
// header (docs/compile-time.md).
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <vector>

#include "untold/records.hpp"
#include "untold/vertex.hpp"
#include "untold/view.hpp"

static_assert(std::random_access_iterator<untold::pbr_vertex_view::iterator>);
static_assert(std::random_access_iterator<untold::gpu_vertex_view::iterator>);
static_assert(std::ranges::random_access_range<untold::pbr_vertex_view>);
static_assert(std::ranges::random_access_range<untold::gpu_vertex_view>);
static_assert(std::ranges::borrowed_range<untold::pbr_vertex_view>);
static_assert(std::ranges::borrowed_range<untold::gpu_vertex_view>);
static_assert(std::random_access_iterator<untold::record_view<untold::mesh_record>::iterator>);
static_assert(std::ranges::random_access_range<untold::record_view<untold::mesh_record>>);
static_assert(std::random_access_iterator<untold::index_view::iterator>);
static_assert(std::ranges::random_access_range<untold::index_view>);

TEST_CASE("views: std::ranges algorithms walk a vertex view as random access") {
  const std::array<float, 9> positions = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<std::byte> bytes(3 * untold::pbr_vertex_stride);
  REQUIRE(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions}, bytes));
  const auto view = untold::pbr_vertex_view::from_bytes(bytes);
  REQUIRE(view);
  CHECK(std::ranges::distance(*view) == 3);
  const auto last = std::ranges::next(view->begin(), 2);
  CHECK((*last).position == std::array<float, 3>{7, 8, 9});
  std::vector<float> xs;
  for (auto it = view->end(); it != view->begin();) xs.push_back((*--it).position[0]);
  CHECK(xs == std::vector<float>{7, 4, 1});
}

TEST_CASE("views: make_or_empty is make, or an empty view where make refuses") {
  std::vector<std::byte> two_meshes(2 * untold::record_traits<untold::mesh_record>::size());
  const auto made = untold::record_view<untold::mesh_record>::make(two_meshes);
  REQUIRE(made);
  const auto or_empty = untold::record_view<untold::mesh_record>::make_or_empty(two_meshes);
  CHECK(or_empty.size() == 2);
  CHECK(or_empty.bytes().data() == made->bytes().data());
  const std::span<const std::byte> ragged(two_meshes.data(), two_meshes.size() - 1);
  CHECK_FALSE(untold::record_view<untold::mesh_record>::make(ragged));
  CHECK(untold::record_view<untold::mesh_record>::make_or_empty(ragged).empty());

  const std::array<std::byte, 6> three_u16{std::byte{1}, std::byte{0}, std::byte{2}, std::byte{0}, std::byte{3},
                                           std::byte{0}};
  const auto indices = untold::index_view::make_or_empty(three_u16, 1);
  REQUIRE(indices.size() == 3);
  CHECK(indices[2] == 3);
  CHECK(untold::index_view::make_or_empty(three_u16, 2).empty());  // 6 bytes are not whole uint32 indices
  CHECK(untold::index_view::make_or_empty(three_u16, 7).empty());  // unknown index type
  CHECK_FALSE(untold::index_view::make(three_u16, 2));
}
