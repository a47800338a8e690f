// The foreign formats through the `untold` commands: info, validate and dump
// dispatch on magic to the format's handler (tools/pipeline/formats.hpp), cook goes
// importer -> neutral scene -> convert::to_untold and prints the conversion
// report, --strict refuses a lossy conversion. Urho3D models (tests/data/urho3d),
// Pragma UDM models (tests/data/udm), assetc meshes (tests/data/assetc).
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <untold/untold.hpp>
#include <untold/urho3d/animation.hpp>

using namespace cli_test;
using json = nlohmann::json;

namespace {


fs::path urho3d_model(const std::string& name) { return test_data("urho3d/Models/" + name); }

}  // namespace

TEST_CASE("info, validate and dump dispatch a Urho3D model by its magic") {
  const fs::path box = urho3d_model("Box.mdl");
  const run_result info = run_untold("info --json " + quoted(box));
  REQUIRE_MESSAGE(info.exit_code == 0, info.err);
  const json i = parse_json(info.out);
  CHECK(i[0]["file"] == box.string());
  CHECK(i[0]["format"] == "urho3d-model");
  CHECK(i[0]["valid"] == true);

  const run_result text = run_untold("info " + quoted(box));
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("format: urho3d-model\n") != std::string::npos);
  CHECK(text.out.find("valid: true\n") != std::string::npos);

  const run_result v = run_untold("validate --deep " + quoted(box) + " " + quoted(test_data("minimal_v1.untold")));
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("ok    " + box.string() + "\n") != std::string::npos);
  CHECK(v.out.find("2 passed, 0 failed") != std::string::npos);

  const run_result d = run_untold("dump --json " + quoted(box));
  CHECK(d.exit_code == 0);
  CHECK(parse_json(d.out)["format"] == "urho3d-model");

  // -v names the handler; the extension plays no part (a .untold name, .mdl bytes).
  const fs::path dir = scratch("formats_dispatch");
  fs::copy_file(box, dir / "box.untold");
  const run_result renamed = run_untold("info -v " + quoted(dir / "box.untold"));
  CHECK(renamed.exit_code == 0);
  CHECK(renamed.err.find("format urho3d-model (") != std::string::npos);
}

TEST_CASE("a truncated Urho3D model fails with the family's rule, exit 1") {
  const fs::path dir = scratch("formats_truncated");
  const std::string bytes = read_text(urho3d_model("Box.mdl"));
  const fs::path cut = dir / "cut.mdl";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, 40);
  const run_result v = run_untold("validate --json " + quoted(cut));
  CHECK(v.exit_code == 1);
  const json r = parse_json(v.out)["results"][0];
  CHECK(r["format"] == "urho3d-model");
  CHECK(r["valid"] == false);
  CHECK(r["error"]["rule"].get<std::string>().rfind("U3D-", 0) == 0);
  const run_result d = run_untold("dump " + quoted(cut));
  CHECK(d.exit_code == 1);
  CHECK(d.err.find("U3D-") != std::string::npos);
}

TEST_CASE("cook a Urho3D model: scene -> to_untold, with the conversion report") {
  const fs::path dir = scratch("formats_cook");
  const fs::path out = dir / "box.untold";
  const run_result r = run_untold("cook " + quoted(urho3d_model("Box.mdl")) + " -o " + quoted(out));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("1 entities, 1 meshes, 24 vertices, 12 triangles") != std::string::npos);
  CHECK(r.out.find("conversion report: 0 dropped, 1 changed") != std::string::npos);
  CHECK(r.out.find("  changed coordinate system: ") != std::string::npos);
  CHECK(run_untold("validate --deep " + quoted(out)).exit_code == 0);

  const run_result j = run_untold("cook --json --compress zstd " + quoted(urho3d_model("Box.mdl")) + " -o " + quoted(out));
  REQUIRE(j.exit_code == 0);
  const json report = parse_json(j.out);
  CHECK(report["format"] == "urho3d-model");
  CHECK(report["dropped"] == 0);
  CHECK(report["changed"] == 1);
  CHECK(report["report"][0]["severity"] == "changed");
  CHECK(report["report"][0]["what"] == "coordinate system");
  CHECK(report["report"][0]["count"] == 1);

  // Standard input works for a format known by its magic.
  const run_result piped = run_untold("cook - -o " + quoted(dir / "piped.untold") + " < " + quoted(urho3d_model("Box.mdl")));
  CHECK(piped.exit_code == 0);
  REQUIRE(run_untold("cook " + quoted(urho3d_model("Box.mdl")) + " -o " + quoted(dir / "path.untold")).exit_code == 0);
  // Same geometry (the root entity is named after the input, "-" here).
  const auto geometry = [](const fs::path& p) { return parse_json(run_untold("info --json " + quoted(p)).out)[0]["geometry"]; };
  CHECK(geometry(dir / "piped.untold") == geometry(dir / "path.untold"));
  CHECK(geometry(dir / "piped.untold")["triangles"] == 12);
  CHECK(run_untold("validate --deep " + quoted(dir / "piped.untold")).exit_code == 0);
}

TEST_CASE("cook --strict: anything dropped fails, nothing written") {
  const fs::path dir = scratch("formats_strict");
  const fs::path lines = urho3d_model("LinePrimitives/Basis.mdl");
  const fs::path out = dir / "basis.untold";
  const run_result lax = run_untold("cook --json " + quoted(lines) + " -o " + quoted(out));
  REQUIRE_MESSAGE(lax.exit_code == 0, lax.err);
  CHECK(parse_json(lax.out)["dropped"].get<int>() > 0);
  fs::remove(out);

  const run_result strict = run_untold("cook --strict " + quoted(lines) + " -o " + quoted(out));
  CHECK(strict.exit_code == 1);
  CHECK(strict.err.find("--strict: the conversion drops content") != std::string::npos);
  CHECK(strict.err.find("  dropped line_list primitives") != std::string::npos);
  CHECK(!fs::exists(out));

  // A lossless conversion passes --strict.
  CHECK(run_untold("cook --strict " + quoted(urho3d_model("Box.mdl")) + " -o " + quoted(out)).exit_code == 0);
  // --animations belongs to formats with separate clip files, not assimp.
  CHECK(run_untold("cook " + quoted(sample_model()) + " --animations x.ani -o " + quoted(out)).exit_code == 2);
}

TEST_CASE("the families' own subcommands are wired") {
  const run_result help = run_untold("help");
  CHECK(help.out.find("  pak ") != std::string::npos);
  CHECK(run_untold("help pak").exit_code == 0);
}

TEST_CASE("cook --animations hands clip files to the importer") {
  const fs::path dir = scratch("formats_animations");
  // One clip whose only track names no bone of Box.mdl (it has none): the
  // importer reports it as dropped, which shows the file reached it.
  const std::array<std::byte, 0> no_keys{};
  untold::urho3d::animation clip;
  clip.name = "walk";
  clip.length = 1;
  clip.tracks.push_back({.name = "nobone", .mask = untold::urho3d::channel_position, .keyframe_count = 0, .keys = no_keys});
  const auto ani = untold::urho3d::write_animation(clip);
  REQUIRE_MESSAGE(ani.has_value(), ani.error().describe());
  REQUIRE(untold::write_file(dir / "walk.ani", *ani).has_value());

  const fs::path out = dir / "box.untold";
  const run_result r = run_untold("cook --json " + quoted(urho3d_model("Box.mdl")) + " -o " + quoted(out) +
                                  " --animations " + quoted(dir / "walk.ani"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  bool reported = false;
  const json report = parse_json(r.out);
  for (const json& e : report["report"])
    if (e["what"] == "tracks without a matching bone" && e["where"] == "animation 'walk'") reported = e["count"] == 1;
  CHECK(reported);
  // --strict refuses that loss.
  CHECK(run_untold("cook --strict " + quoted(urho3d_model("Box.mdl")) + " -o " + quoted(out) + " --animations " +
                   quoted(dir / "walk.ani"))
            .exit_code == 1);
  // A clip file that cannot be read is an I/O error naming it.
  const run_result missing = run_untold("cook " + quoted(urho3d_model("Box.mdl")) + " -o " + quoted(out) +
                                        " --animations " + quoted(dir / "missing.ani"));
  CHECK(missing.exit_code == 3);
  CHECK(missing.err.find("missing.ani") != std::string::npos);
}

TEST_CASE("Pragma UDM and assetc files dispatch by magic, a UDM model cooks") {
  const fs::path cube = test_data("udm/models/cube.pmdl_b");
  const fs::path quad = test_data("assetc/quad.hmesh");
  const run_result v = run_untold("validate --json --deep " + quoted(cube) + " " + quoted(quad));
  REQUIRE_MESSAGE(v.exit_code == 0, v.out);
  const json results = parse_json(v.out)["results"];
  CHECK(results[0]["format"] == "udm-binary");
  CHECK(results[1]["format"] == "assetc-hmesh");
  CHECK(parse_json(run_untold("info --json " + quoted(quad)).out)[0]["triangles"] == 2);
  CHECK(run_untold("dump " + quoted(cube)).out.find("format: udm-binary\n") != std::string::npos);

  const fs::path dir = scratch("formats_udm_assetc");
  const run_result cooked = run_untold("cook --json " + quoted(cube) + " -o " + quoted(dir / "cube.untold"));
  REQUIRE_MESSAGE(cooked.exit_code == 0, cooked.err);
  const json report = parse_json(cooked.out);
  CHECK(report["format"] == "udm-binary");
  CHECK(report["triangles"] == 12);
  CHECK(report["dropped"].get<int>() > 0);  // collision meshes, model properties
  CHECK(run_untold("validate --deep " + quoted(dir / "cube.untold")).exit_code == 0);
  const run_result strict = run_untold("cook --strict " + quoted(cube) + " -o " + quoted(dir / "strict.untold"));
  CHECK(strict.exit_code == 1);
  CHECK(!fs::exists(dir / "strict.untold"));

  // A format without an importer (a clip alone).
  const fs::path clip = test_data("urho3d/Models/Jack_Walk.ani");
  const run_result no_import = run_untold("cook " + quoted(clip) + " -o " + quoted(dir / "walk.untold"));
  CHECK(no_import.exit_code == 1);
  CHECK(no_import.err ==
        "untold: " + quoted(clip) + ": cook cannot import this format (Urho3D animation (.ani: UANI, rbfx UAN2))\n");
  // The assetc mesh has one (assetc/import.hpp).
  const run_result hmesh = run_untold("cook -q " + quoted(quad) + " -o " + quoted(dir / "quad.untold"));
  CHECK_MESSAGE(hmesh.exit_code == 0, hmesh.err);
  CHECK(run_untold("validate --deep " + quoted(dir / "quad.untold")).exit_code == 0);
}
