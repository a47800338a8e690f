// `untold convert` to and from Pragma models (.pmdl_b, convert::to_pmdl):
// a sample PMDL to glTF, a Urho3D model to PMDL and that PMDL on to a
// Urho3D model, each read back by the library's strict readers; --to pmdl;
// --strict refuses the lossy PMDL -> PMDL trip (the sample's collision
// meshes and model properties have no place in the scene).
#include "cli_support.hpp"

#include <cstring>

#include <untold/udm/pmdl.hpp>
#include <untold/urho3d/import.hpp>

using namespace cli_test;
namespace u = untold::udm;

TEST_CASE("convert: a sample PMDL to .glb, a Urho3D model to .pmdl_b and on to .mdl") {
  const fs::path dir = scratch("convert_pmdl");
  const fs::path cube = test_data("udm/models/cube.pmdl_b");

  const run_result glb = run_untold("convert -q " + quoted(cube) + " " + quoted(dir / "cube.glb"));
  REQUIRE_MESSAGE(glb.exit_code == 0, glb.err);
  const std::vector<std::byte> g = read_bytes(dir / "cube.glb");
  REQUIRE(g.size() >= 12);
  CHECK(std::memcmp(g.data(), "glTF", 4) == 0);
  std::uint32_t length = 0;
  std::memcpy(&length, g.data() + 8, 4);
  CHECK(length == g.size());

  const fs::path box = test_data("urho3d/Models/Box.mdl");
  const run_result to_pmdl = run_untold("convert -q " + quoted(box) + " " + quoted(dir / "box.pmdl_b"));
  REQUIRE_MESSAGE(to_pmdl.exit_code == 0, to_pmdl.err);
  CHECK(run_untold("validate --deep " + quoted(dir / "box.pmdl_b")).exit_code == 0);
  const auto source = untold::urho3d::import_files(read_bytes(box), {});
  REQUIRE(source);
  const auto written = u::import_pmdl(read_bytes(dir / "box.pmdl_b"));
  REQUIRE_MESSAGE(written, (written ? "" : written.error().describe()));
  REQUIRE(written->meshes.size() == source->meshes.size());
  for (std::size_t i = 0; i < source->meshes.size(); ++i) {
    CHECK(written->meshes[i].vertex_count() == source->meshes[i].vertex_count());
    CHECK(written->meshes[i].indices.size() == source->meshes[i].indices.size());
  }

  const run_result to_mdl = run_untold("convert -q " + quoted(dir / "box.pmdl_b") + " " + quoted(dir / "back.mdl"));
  REQUIRE_MESSAGE(to_mdl.exit_code == 0, to_mdl.err);
  CHECK(run_untold("validate --deep " + quoted(dir / "back.mdl")).exit_code == 0);
  const auto back = untold::urho3d::import_files(read_bytes(dir / "back.mdl"), {});
  REQUIRE(back);
  REQUIRE(back->meshes.size() == source->meshes.size());
  CHECK(back->meshes[0].vertex_count() == source->meshes[0].vertex_count());
}

TEST_CASE("convert --to pmdl names the target, --strict refuses the lossy PMDL -> PMDL trip") {
  const fs::path dir = scratch("convert_pmdl_to");
  const fs::path cube = test_data("udm/models/cube.pmdl_b");
  const run_result named = run_untold("convert -q --to pmdl " + quoted(cube) + " " + quoted(dir / "cube.bin"));
  REQUIRE_MESSAGE(named.exit_code == 0, named.err);
  const auto model = u::import_pmdl(read_bytes(dir / "cube.bin"));
  REQUIRE(model);
  CHECK(model->meshes[0].vertex_count() == 36);
  const run_result strict = run_untold("convert --strict " + quoted(cube) + " " + quoted(dir / "strict.pmdl_b"));
  CHECK(strict.exit_code == 1);
  CHECK(!fs::exists(dir / "strict.pmdl_b"));
  const run_result unknown = run_untold("convert --to pmdlx " + quoted(cube) + " " + quoted(dir / "x.pmdl_b"));
  CHECK(unknown.err.find("(untold, urho3d, glb, gltf, assetc, pmdl)") != std::string::npos);
}
