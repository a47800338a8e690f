// PBR_QUANT_V1 (vertexLayout 2, vertex_quant.hpp): the stated error bounds,
// files written with it (alone and with the meshopt compressions) read back
// within them, and its rules (R-VERTEX-LAYOUT, R-STRIDE, R-FINITE of the
// extent the positions scale).
#include "../support.hpp"

#include <untold/convert/from_untold.hpp>
#include <untold/vertex_quant.hpp>

#include <cmath>
#include <random>

using test::bytes;

namespace {

double angle_degrees(const std::array<float, 3>& a, const std::array<float, 3>& b) {
  const double la = std::sqrt(double(a[0]) * a[0] + double(a[1]) * a[1] + double(a[2]) * a[2]);
  const double lb = std::sqrt(double(b[0]) * b[0] + double(b[1]) * b[1] + double(b[2]) * b[2]);
  const double dot = (double(a[0]) * b[0] + double(a[1]) * b[1] + double(a[2]) * b[2]) / (la * lb);
  return std::acos(std::clamp(dot, -1.0, 1.0)) * 180.0 / 3.14159265358979323846;
}

/// `n` PBR_STATIC_V1 vertices with random positions in `box`, normals,
/// tangents (both handedness), UVs and colours.
bytes random_vertices(std::size_t n, const untold::aabb& box, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> gauss;
  bytes out(n * 32);
  for (std::size_t i = 0; i < n; ++i) {
    std::byte* v = out.data() + 32 * i;
    for (int axis = 0; axis < 3; ++axis)
      untold::store_le_unchecked<float>(
          v + 4 * axis, static_cast<float>(box.min[axis] + unit(rng) * (double(box.max[axis]) - box.min[axis])));
    untold::store_le_unchecked<std::uint32_t>(v + 12, untold::pack_normal_1010102(gauss(rng), gauss(rng), gauss(rng)));
    untold::store_le_unchecked<std::uint32_t>(
        v + 16, untold::pack_tangent_1010102(gauss(rng), gauss(rng), gauss(rng), i % 2 == 0 ? 1.0 : -1.0));
    for (int k = 20; k < 32; ++k) v[k] = static_cast<std::byte>(rng() & 0x3F);  // small halves, any colour
  }
  return out;
}

}  // namespace

TEST_CASE("quant: positions within extent / 65535 per axis, directions within 1 degree, UVs and colours exact") {
  const untold::aabb box{{-3.5f, 0.0f, 100.0f}, {12.25f, 0.001f, 100.5f}};
  const std::size_t n = 20000;
  const bytes source = random_vertices(n, box, 7);
  bytes quant(n * untold::quant_vertex_stride);
  REQUIRE(untold::quantize_vertices(source, box, quant));
  double worst_angle = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const untold::pbr_vertex want = untold::detail::decode_pbr_vertex(source.data() + 32 * i);
    const untold::pbr_vertex got = untold::decode_quant_vertex(quant.data() + 24 * i, box);
    for (int axis = 0; axis < 3; ++axis) {
      const double step = (double(box.max[axis]) - box.min[axis]) / 65535.0;
      CHECK(std::fabs(double(got.position[axis]) - want.position[axis]) <= step);
      CHECK(got.position[axis] >= box.min[axis]);
      CHECK(got.position[axis] <= box.max[axis]);
    }
    worst_angle = std::max({worst_angle, angle_degrees(got.normal, want.normal),
                            angle_degrees({got.tangent[0], got.tangent[1], got.tangent[2]},
                                          {want.tangent[0], want.tangent[1], want.tangent[2]})});
    CHECK(got.tangent[3] == want.tangent[3]);
    CHECK(got.uv0 == want.uv0);
    CHECK(got.uv1 == want.uv1);
    CHECK(got.color0 == want.color0);
  }
  CHECK(worst_angle <= 1.0);
  MESSAGE("largest direction error: " << worst_angle << " degrees over " << 2 * n << " directions");
  // Back to PBR_STATIC_V1: the same positions as decode_quant_vertex.
  bytes back(n * 32);
  REQUIRE(untold::dequantize_vertices(quant, box, back));
  CHECK(untold::detail::decode_pbr_vertex(back.data() + 32 * 5).position == untold::decode_quant_vertex(quant.data() + 24 * 5, box).position);
}

TEST_CASE("quant: extents that overflow float, flat axes and the bounds' corners") {
  const untold::aabb flat{{1.0f, 2.0f, 3.0f}, {1.0f, 5.0f, 3.0f}};  // x and z have no extent
  bytes one = test::raw_vertices({{1.0f, 5.0f, 3.0f}, {1.0f, 2.0f, 3.0f}});
  bytes quant(2 * 24);
  REQUIRE(untold::quantize_vertices(one, flat, quant));
  CHECK(untold::decode_quant_vertex(quant.data(), flat).position == std::array<float, 3>{1.0f, 5.0f, 3.0f});
  CHECK(untold::decode_quant_vertex(quant.data() + 24, flat).position == std::array<float, 3>{1.0f, 2.0f, 3.0f});
  const untold::aabb huge{{-3e38f, 0, 0}, {3e38f, 1, 1}};
  const auto refused = untold::quantize_vertices(one, huge, quant);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().context.field == std::string("localBounds"));
  // Wrong sizes are refused, never read past.
  CHECK_FALSE(untold::quantize_vertices(bytes(31), flat, quant));
  bytes short_out(47);
  CHECK_FALSE(untold::quantize_vertices(one, flat, short_out));
}

TEST_CASE("quant: a file written with PBR_QUANT_V1 stores 24-byte vertices and reads back within the bounds") {
  for (const auto method : {untold::compression::none, untold::compression::meshopt_zstd}) {
    if (!untold::compression_available(method)) continue;
    untold::write_options options;
    options.vertex_layout = untold::vertex_layout::pbr_quant_v1;
    options.compression.data = {method, 3};
    const bytes f = test::write_scene(true, options);
    const bytes plain = test::write_scene(true);
    const auto a = untold::open(f, {.limits = test::roomy_limits(), .deep_checks = true, .integrity = untold::integrity::full});
    REQUIRE_MESSAGE(a, a.error().describe());
    const auto p = untold::open(plain);
    REQUIRE(p);
    CHECK(a->header().vertex_layout == 2);
    REQUIRE(a->meshes().size() == p->meshes().size());
    for (std::uint32_t i = 0; i < a->meshes().size(); ++i) {
      const untold::mesh_record m = a->meshes()[i], pm = p->meshes()[i];
      CHECK(m.vertex_stride_bytes == 24);
      CHECK(m.vertex_data_size_bytes == std::uint64_t{m.vertex_count} * 24);
      CHECK(m.local_bounds == pm.local_bounds);
      const auto got = a->vertices(m), want = p->vertices(pm);
      for (std::uint32_t v = 0; v < m.vertex_count; ++v) {
        const auto q = untold::decode_stored_vertex(got, v, 2, m.local_bounds);
        const auto s = untold::decode_stored_vertex(want, v, 1, pm.local_bounds);
        for (int axis = 0; axis < 3; ++axis)
          CHECK(std::fabs(q.position[axis] - s.position[axis]) <=
                (double(m.local_bounds.max[axis]) - m.local_bounds.min[axis]) / 65535.0);
      }
      const auto gi = a->indices(m), wi = p->indices(pm);
      CHECK(std::equal(gi.begin(), gi.end(), wi.begin(), wi.end()));
    }
    // The scene a converter reads from it: positions within the bounds.
    const auto s = untold::convert::from_untold(*a);
    REQUIRE_MESSAGE(s, s.error().describe());
    CHECK_FALSE(s->meshes.empty());
  }
}

TEST_CASE("quant: R-VERTEX-LAYOUT, R-STRIDE and R-FINITE of the extent") {
  untold::write_options options;
  options.vertex_layout = untold::vertex_layout::pbr_quant_v1;
  const bytes f = test::write_scene(false, options);
  CHECK(test::rejection(f, {.deep_checks = true}) == "accepted");
  {
    bytes bad = f;
    test::put_u32(bad, 44, 3);  // vertexLayout
    CHECK(test::rejection(bad) == "R-VERTEX-LAYOUT");
  }
  {
    bytes bad = f;  // a 24-byte layout file claiming PBR_STATIC_V1
    test::put_u32(bad, 44, 1);
    CHECK(test::rejection(bad) == "R-STRIDE");
  }
  {
    bytes bad = f;  // mesh 0's localBounds: a finite box whose x extent overflows float
    const std::size_t mesh = test::record_offset(bad, 3, 0, 104);
    test::put_f32(bad, mesh + 80, -3e38f);
    test::put_f32(bad, mesh + 92, 3e38f);
    CHECK(test::rejection(bad) == "accepted");  // the record rules hold
    CHECK(test::rejection(bad, {.deep_checks = true}) == "R-FINITE");
  }
}
