// Writes the fuzz corpus seeds of the Urho3D targets when UNTOLD_U3D_SEED_DIR
// names a directory (fuzz/corpus holds the committed ones; see
// docs/urho3d.md, "Tests, fuzzing, benchmarks"). Always checks that every
// seed reads back.
#include <cstdlib>
#include <fstream>

#include <untold/urho3d/urho3d.hpp>

#include "u3d_support.hpp"

namespace u3 = untold::urho3d;
using namespace u3d_test;

TEST_CASE("urho3d seeds: writer-made and hand-made files for the fuzz corpus") {
  std::vector<std::pair<std::string, bytes>> seeds;
  seeds.push_back({"fuzz_urho3d_model/seed-Box.mdl", load(data_dir() / "Models/Box.mdl")});
  seeds.push_back({"fuzz_urho3d_model/seed-Basis-lines.mdl", load(data_dir() / "Models/LinePrimitives/Basis.mdl")});
  seeds.push_back({"fuzz_urho3d_model/seed-CloudPlane.mdl", load(data_dir() / "Models/NinjaSnowWar/CloudPlane.mdl")});
  seeds.push_back({"fuzz_urho3d_model/seed-skinned-morph.umd2", make_tiny().file});
  seeds.push_back({"fuzz_urho3d_model/seed-umd3-v2.mdl", make_tiny({.id = "UMD3", .version = 2}).file});
  seeds.push_back({"fuzz_urho3d_model/seed-no-centers.mdl", make_tiny({.centers = false}).file});
  seeds.push_back({"fuzz_urho3d_model/seed-Box-2011-nan-centre.mdl", load(data_dir() / "Models/History2011/Box.mdl")});

  gen ani;
  ani.id("UANI").cstr("Walk").f32(1).u32(2);
  ani.cstr("root").u8(7).u32(2);
  for (int k = 0; k < 2; ++k) ani.f32(static_cast<float>(k)).f32(0).f32(1).f32(2).f32(1).f32(0).f32(0).f32(0).f32(1).f32(1).f32(1);
  ani.cstr("child").u8(2).u32(1).f32(0).f32(0.7071f).f32(0.7071f).f32(0).f32(0);
  seeds.push_back({"fuzz_urho3d_animation/seed-walk.ani", ani.b});
  gen ani2;
  ani2.id("UAN2").u32(3).cstr("Blink").f32(0.5f).u32(1).cstr("root").u8(1).f32(1).u32(1).f32(0).f32(1).f32(2).f32(3);
  ani2.u32(2).cstr("Light/brightness").u8(3).u8(1).f32(0.5f).f32(1).u32(2).f32(0).f32(0).f32(0.5f).f32(1);
  ani2.cstr("Text").u8(9).u8(3).f32(0.5f).f32(1).u32(1).f32(0).cstr("a").cstr("b").cstr("c");
  seeds.push_back({"fuzz_urho3d_animation/seed-uan2-v3.ani", ani2.b});

  const bytes box = load(data_dir() / "Models/Box.mdl"), plane = load(data_dir() / "Models/Plane.mdl");
  const std::vector<u3::package_input> in = {{"Models/Box.mdl", box}, {"Models/Plane.mdl", plane}, {"empty.txt", {}}};
  seeds.push_back({"fuzz_urho3d_package/seed-upak.pak", *u3::write_package(in)});
  seeds.push_back({"fuzz_urho3d_package/seed-ulz4.pak", *u3::write_package(in, {.compress = true, .block_size = 512})});

  gen sm3;
  sm3.id("USHD").u16(0).u16(3).u32(1).cstr("Model").u8(0).u8(3).u32(1).cstr("DiffMap").u8(0).u32(4).u32(0xFFFE0300u);
  seeds.push_back({"fuzz_urho3d_shader/seed-sm3.vs3", sm3.b});
  gen sm4;
  sm4.id("USHD").u16(1).u16(4).u32(0).u32(1).cstr("MatDiffColor").u8(1).u32(0).u32(16).u32(0).u32(4).u32(0x43425844u);
  seeds.push_back({"fuzz_urho3d_shader/seed-sm4.ps4", sm4.b});
  gen asc;
  asc.id("ASBC").u32(0).u32(1);
  seeds.push_back({"fuzz_urho3d_shader/seed-script.asc", asc.b});

  for (const auto& seed : seeds) {
    CAPTURE(seed.first);
    const untold::byte_span s = seed.second;
    if (u3::is_model(s)) CHECK(u3::open_model(s, {.deep_checks = true}).has_value());
    if (u3::is_animation(s)) CHECK(u3::open_animation(s, {.deep_checks = true}).has_value());
    if (u3::is_package(s)) CHECK(u3::open_package(s, {.deep_checks = true}).has_value());
    if (u3::is_shader(s)) CHECK(u3::open_shader(s).has_value());
    if (u3::is_script(s)) CHECK(u3::open_script(s).has_value());
  }
  if (const char* dir = std::getenv("UNTOLD_U3D_SEED_DIR"); dir != nullptr && *dir != '\0') {
    for (const auto& [name, b] : seeds) {
      const auto path = std::filesystem::path(dir) / name;
      std::filesystem::create_directories(path.parent_path());
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
      REQUIRE(out.good());
    }
  }
}
