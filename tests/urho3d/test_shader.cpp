// USHD shader caches (SM3 and SM4) and ASBC scripts: built by the writer and
// by hand, read back, byte-exact round trips, one crafted file per rule.
#include <untold/urho3d/shader.hpp>

#include "u3d_support.hpp"

namespace u3 = untold::urho3d;
using namespace u3d_test;
using untold::errc;

namespace {

bytes hand_shader(std::uint16_t type, std::uint16_t model) {
  gen g;
  g.id("USHD").u16(type).u16(model);
  if (model == 4) g.u32(type == 0 ? 0xABCD1234u : 0);
  g.u32(2);
  if (model == 4) {
    g.cstr("MatDiffColor").u8(1).u32(16).u32(16);
    g.cstr("Model").u8(0).u32(0).u32(48);
  } else {
    g.cstr("MatDiffColor").u8(20).u8(1);
    g.cstr("Model").u8(0).u8(3);
  }
  g.u32(1).cstr("DiffMap").u8(0);
  g.u32(5).u8(0xDE).u8(0xAD).u8(0xBE).u8(0xEF).u8(0x00);
  return g.b;
}

}  // namespace

TEST_CASE("urho3d shader: hand-made SM3 and SM4 caches read and round-trip, the writer builds the same bytes") {
  for (std::uint16_t model : {3, 4})
    for (std::uint16_t type : {0, 1}) {
      const bytes file = hand_shader(type, model);
      auto sh = u3::open_shader(file);
      REQUIRE_MESSAGE(sh.has_value(), sh.error().describe());
      CHECK(sh->type == type);
      CHECK(sh->model == model);
      REQUIRE(sh->parameters.size() == 2);
      CHECK(sh->parameters[0].name == "MatDiffColor");
      CHECK(sh->texture_units[0].name == "DiffMap");
      CHECK(sh->bytecode.size() == 5);
      CHECK(sh->bytecode.data() == file.data() + file.size() - 5);  // a view
      auto again = u3::write_shader(*sh);
      REQUIRE(again);
      CHECK(*again == file);
      // From values.
      const bytes code{std::byte{0xDE}, std::byte{0xAD}, std::byte{0xBE}, std::byte{0xEF}, std::byte{0}};
      u3::shader built;
      built.type = type;
      built.model = model;
      built.element_hash = model == 4 && type == 0 ? 0xABCD1234u : 0;
      if (model == 4) {
        built.parameters = {{.name = "MatDiffColor", .index = 1, .offset = 16, .size = 16},
                            {.name = "Model", .index = 0, .offset = 0, .size = 48}};
      } else {
        built.parameters = {{.name = "MatDiffColor", .index = 20, .register_count = 1},
                            {.name = "Model", .index = 0, .register_count = 3}};
      }
      built.texture_units = {{.name = "DiffMap", .sampler = 0}};
      built.bytecode = code;
      auto written = u3::write_shader(built);
      REQUIRE(written);
      CHECK(*written == file);
    }
}

TEST_CASE("urho3d shader: one crafted file per rule") {
  const bytes file = hand_shader(1, 4);
  for (std::size_t n = 0; n < file.size(); ++n) {
    auto r = u3::open_shader(bytes(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(n)));
    REQUIRE_FALSE(r);
    const errc e = r.error().code;
    CHECK((e == errc::u3d_truncated || e == errc::u3d_count_too_large || e == errc::u3d_missing_nul ||
           e == errc::u3d_bad_magic));
  }
  bytes b = file;
  b[4] = std::byte{2};
  U3D_CHECK_ERR(u3::open_shader(b), errc::u3d_shader_type);
  b = file;
  b[6] = std::byte{5};
  U3D_CHECK_ERR(u3::open_shader(b), errc::u3d_shader_model);
  b = file;
  put_u32(b, 12, 0x00FFFFFF);
  U3D_CHECK_ERR(u3::open_shader(b), errc::u3d_count_too_large);
  put_u32(b, 12, 0x7FFFFFFF);
  U3D_CHECK_ERR(u3::open_shader(b), errc::limit_exceeded);
  b = file;
  b.push_back(std::byte{1});
  U3D_CHECK_ERR(u3::open_shader(b), errc::u3d_trailing_bytes);
  b = file;
  b[0] = std::byte{'u'};
  U3D_CHECK_ERR(u3::open_shader(b), errc::u3d_bad_magic);
}

TEST_CASE("urho3d script: ASBC recognised, bytecode view, round trip") {
  gen g;
  g.id("ASBC").u8(1).u8(2).u8(3);
  auto sc = u3::open_script(g.b);
  REQUIRE(sc);
  CHECK(sc->bytecode.size() == 3);
  CHECK(u3::write_script(*sc) == g.b);
  U3D_CHECK_ERR(u3::open_script(bytes{std::byte{'A'}}), errc::u3d_bad_magic);
  CHECK_FALSE(u3::is_script(bytes{}));
}
