// `untold cook` on assimp inputs: the conversion report, --strict, texture
// placement (path escapes, missing images, --copy-textures), instancing,
// animation files and --format-version.
#include "cli_support.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include <untold/images.hpp>
#include <untold/untold.hpp>

#include "cook.hpp"

using namespace cli_test;
using json = nlohmann::json;

namespace {

/// The bundled sample in `dir` (with its buffer) and its image URI replaced.
fs::path sample_with_image(const fs::path& dir, const std::string& uri) {
  fs::create_directories(dir);
  auto gltf = json::parse(read_text(sample_model()));
  gltf["images"][0]["uri"] = uri;
  fs::copy_file(fs::path(UNTOLD_SAMPLE_DIR) / "sample.bin", dir / "sample.bin", fs::copy_options::overwrite_existing);
  const fs::path p = dir / "model.gltf";
  std::ofstream(p) << gltf.dump();
  return p;
}

const json* entry(const json& report, const std::string& what) {
  for (const json& e : report)
    if (e["what"] == what) return &e;
  return nullptr;
}

std::string texture_uri(const fs::path& file) {
  auto opened = untold::open_file(file);
  REQUIRE(opened.has_value());
  const untold::asset& a = opened->asset;
  REQUIRE(a.textures().size() == 1);
  return std::string(a.string(a.textures()[0].uri_offset));
}

}  // namespace

TEST_CASE("cook: a texture URI that leaves the output directory is refused and reported, --strict exits 1") {
  const fs::path dir = scratch("cook_escape");
  fs::create_directories(dir / "src");
  fs::copy_file(fs::path(UNTOLD_SAMPLE_DIR) / "checker.png", dir / "checker.png");
  // The image exists (one level up from the source), but the output sits beside the source.
  const fs::path model = sample_with_image(dir / "src", "../checker.png");
  const fs::path out = dir / "src" / "out.untold";
  const run_result r = run_untold("cook --json " + quoted(model) + " -o " + quoted(out));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json j = json::parse(r.out);
  const json* refused = entry(j["report"], "texture reference");
  REQUIRE(refused != nullptr);
  CHECK((*refused)["severity"] == "dropped");
  CHECK((*refused)["reason"].get<std::string>().find("'../checker.png' would leave the output directory") !=
        std::string::npos);
  CHECK(j["textures"] == 0);
  CHECK(run_untold("validate --deep " + quoted(out)).exit_code == 0);

  // --strict: the same loss is an error and nothing is written.
  const fs::path strict_out = dir / "src" / "strict.untold";
  const run_result strict = run_untold("cook --strict " + quoted(model) + " -o " + quoted(strict_out));
  CHECK(strict.exit_code == 1);
  CHECK(strict.err.find("--strict") != std::string::npos);
  CHECK(strict.err.find("texture reference") != std::string::npos);  // the entries that made it fail
  CHECK(!fs::exists(strict_out));

  // --copy-textures: copied next to the output under a normalised relative URI.
  const fs::path copied_out = dir / "out" / "copied.untold";
  const run_result copied = run_untold("cook --mkdir --copy-textures " + quoted(model) + " -o " + quoted(copied_out));
  REQUIRE_MESSAGE(copied.exit_code == 0, copied.err);
  CHECK(texture_uri(copied_out) == "checker.png");
  CHECK(read_text(dir / "out" / "checker.png") == read_text(dir / "checker.png"));

  // An image inside the output's directory tree is referenced where it is.
  const fs::path inside = dir / "inside.untold";
  REQUIRE(run_untold("cook " + quoted(sample_with_image(dir / "src2", "../checker.png")) + " -o " + quoted(inside))
              .exit_code == 0);
  CHECK(texture_uri(inside) == "checker.png");
}

TEST_CASE("cook: absolute and backslash image paths never reach the file") {
  const fs::path dir = scratch("cook_uri_forms");
  for (const std::string& uri : {std::string("C:\\tex\\a.png"), (dir / "abs.png").string()}) {
    CAPTURE(uri);
    fs::copy_file(fs::path(UNTOLD_SAMPLE_DIR) / "checker.png", dir / "abs.png", fs::copy_options::overwrite_existing);
    const fs::path model = sample_with_image(dir / "src", uri);
    const fs::path out = dir / "out.untold";
    const run_result r = run_untold("cook --json " + quoted(model) + " -o " + quoted(out));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto opened = untold::open_file(out);
    REQUIRE(opened.has_value());
    for (const untold::texture_record& t : opened->asset.textures()) {
      const std::string written(opened->asset.string(t.uri_offset));
      CHECK(untold::tools::portable_relative_uri(written));
    }
  }
}

TEST_CASE("cook: a missing image is a warning, and an error with --strict") {
  const fs::path dir = scratch("cook_missing_image");
  const fs::path model = sample_with_image(dir, "nowhere.png");
  const run_result r = run_untold("cook " + quoted(model) + " -o " + quoted(dir / "out.untold"));
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning: image nowhere.png not found") != std::string::npos);
  CHECK(r.out.find("dropped image file") != std::string::npos);
  const run_result strict = run_untold("cook --strict " + quoted(model) + " -o " + quoted(dir / "strict.untold"));
  CHECK(strict.exit_code == 1);
  CHECK(!fs::exists(dir / "strict.untold"));
}

TEST_CASE("cook: the report is printed per input and emitted with --json") {
  const fs::path dir = scratch("cook_report_json");
  const fs::path model = assimp_model("glTF2/simple_skin/simple_skin.gltf");
  const run_result text = run_untold("cook " + quoted(model) + " -o " + quoted(dir / "skin.untold"));
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(text.out.find("conversion report: ") != std::string::npos);
  const run_result r = run_untold("cook --json " + quoted(model) + " -o " + quoted(dir / "skin.untold"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json j = json::parse(r.out);
  CHECK(j["report"].is_array());
  for (const json& e : j["report"]) {
    CHECK(e.contains("severity"));
    CHECK(e.contains("what"));
    CHECK(e.contains("where"));
    CHECK(e.contains("reason"));
    CHECK(e["count"].get<std::uint64_t>() > 0);
  }
  // Skeleton, skin and clip land in the extension tables; info lists them.
  const json info = json::parse(run_untold("info --json " + quoted(dir / "skin.untold")).out);
  const std::string dumped = info.dump();
  CHECK(dumped.find("skeletonTable") != std::string::npos);
  auto opened = untold::open_file(dir / "skin.untold", {.deep_checks = true});
  REQUIRE(opened.has_value());
  CHECK(opened->asset.table<untold::skin_record>().size() == 1);
  CHECK(opened->asset.table<untold::skeleton_joint_record>().size() == 2);
  CHECK(opened->asset.table<untold::animation_clip_record>().size() == 1);
}

TEST_CASE("cook: --split-animations and --animations-only write fileType-animation files") {
  const fs::path dir = scratch("cook_animation_files");
  const fs::path model = assimp_model("glTF2/simple_skin/simple_skin.gltf");
  const run_result split = run_untold("cook " + quoted(model) + " -o " + quoted(dir / "skin.untold") + " --split-animations");
  REQUIRE_MESSAGE(split.exit_code == 0, split.err);
  {
    auto main = untold::open_file(dir / "skin.untold", {.deep_checks = true});
    REQUIRE(main.has_value());
    CHECK(main->asset.table<untold::animation_clip_record>().size() == 0);
    CHECK(main->asset.table<untold::skin_record>().size() == 1);
    auto clip = untold::open_file(dir / "skin.clip0.untold", {.deep_checks = true});
    REQUIRE_MESSAGE(clip.has_value(), clip.error().describe());
    CHECK(clip->asset.header().file_type == static_cast<std::uint32_t>(untold::file_type::animation));
    CHECK(clip->asset.table<untold::animation_clip_record>().size() == 1);
    CHECK(clip->asset.table<untold::animation_channel_record>().size() > 0);
    CHECK(clip->asset.meshes().size() == 0);
  }
  const run_result only = run_untold("cook " + quoted(model) + " -o " + quoted(dir / "anim.untold") + " --animations-only");
  REQUIRE_MESSAGE(only.exit_code == 0, only.err);
  auto anim = untold::open_file(dir / "anim.untold", {.deep_checks = true});
  REQUIRE(anim.has_value());
  CHECK(anim->asset.header().file_type == static_cast<std::uint32_t>(untold::file_type::animation));
  CHECK(anim->asset.table<untold::animation_clip_record>().size() == 1);
  CHECK(run_untold("validate --deep " + quoted(dir / "anim.untold")).exit_code == 0);
  CHECK(run_untold("cook " + quoted(model) + " -o " + quoted(dir / "x.untold") + " --animations-only --split-animations")
            .exit_code == 2);
}

TEST_CASE("cook: instanced meshes are stored once (2CylinderEngine)") {
  const fs::path dir = scratch("cook_instancing");
  const fs::path out = dir / "engine.untold";
  REQUIRE(run_untold("cook " + quoted(assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb")) + " -o " +
                     quoted(out))
              .exit_code == 0);
  auto opened = untold::open_file(out, {.deep_checks = true});
  REQUIRE(opened.has_value());
  std::set<std::uint64_t> geometries;
  for (const untold::mesh_record& m : opened->asset.meshes()) geometries.insert(m.vertex_data_offset);
  CHECK(opened->asset.meshes().size() > geometries.size());  // records share geometry
  CHECK(geometries.size() <= 34);                            // the file's unique primitives
  untold::tools::cook_options o;
  o.input = assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb");
  o.output = dir / "again.untold";
  const auto r = untold::tools::cook(o);
  REQUIRE_MESSAGE(r, r.error);
  bool instanced = false;
  for (const auto& e : r.conversion.entries) instanced |= e.what == "instanced meshes" && e.count > 0;
  CHECK(instanced);
}

TEST_CASE("cook: --format-version") {
  const fs::path dir = scratch("cook_format_version");
  const fs::path model = sample_with_image(dir, "nowhere.png");
  const run_result v = run_untold("cook " + quoted(model) + " -o " + quoted(dir / "v.untold") + " --format-version 2");
  REQUIRE_MESSAGE(v.exit_code == 0, v.err);
  auto opened = untold::open_file(dir / "v.untold");
  REQUIRE(opened.has_value());
  CHECK(opened->asset.header().format_version == 2);
  const run_result bad = run_untold("cook " + quoted(model) + " -o " + quoted(dir / "b.untold") + " --format-version 60");
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("cannot convert") != std::string::npos);
  CHECK(!fs::exists(dir / "b.untold"));
}

TEST_CASE("cook: glTF morph targets reach the morph target tables (AnimatedMorphCube)") {
  const fs::path dir = scratch("cook_morphs");
  const fs::path out = dir / "morph.untold";
  const run_result r = run_untold("cook --json " +
                                  quoted(assimp_model("glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf")) +
                                  " -o " + quoted(out));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto opened = untold::open_file(out, {.deep_checks = true});
  REQUIRE(opened.has_value());
  const untold::asset& a = opened->asset;
  const auto targets = a.table<untold::morph_target_record>();
  REQUIRE(targets.size() == 2);
  CHECK(a.table<untold::morph_target_entry>().size() > 0);
  // The weight animation has no place: reported with its channel count.
  const json j = json::parse(r.out);
  const json* weights = entry(j["report"], "morph weight channels");
  REQUIRE(weights != nullptr);
  CHECK((*weights)["count"] == 1);
}

TEST_CASE("cook --embed stores the image inside the output, doubleSided reaches material flags bit 2") {
  const fs::path dir = scratch("cook_embed");
  fs::create_directories(dir / "src");
  fs::copy_file(fs::path(UNTOLD_SAMPLE_DIR) / "checker.png", dir / "src" / "checker.png",
                fs::copy_options::overwrite_existing);
  const fs::path model = sample_with_image(dir / "src", "checker.png");
  {
    auto gltf = json::parse(read_text(model));
    REQUIRE(!gltf["materials"].empty());
    gltf["materials"][0]["doubleSided"] = true;
    std::ofstream(model) << gltf.dump();
  }
  const fs::path out = dir / "out" / "embedded.untold";
  const run_result r = run_untold("cook --json --mkdir --embed " + quoted(model) + " -o " + quoted(out));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json j = json::parse(r.out);
  CHECK(entry(j["report"], "double-sided flag") == nullptr);
  CHECK(j["written"].size() == 1);              // the .untold file only
  CHECK(!fs::exists(dir / "out" / "checker.png"));  // nothing next to it
  CHECK(texture_uri(out) == "#checker.png");
  auto opened = untold::open_file(out);
  REQUIRE(opened.has_value());
  const untold::asset& a = opened->asset;
  REQUIRE(!a.materials().empty());
  CHECK(a.materials()[0].double_sided());
  auto images = untold::embedded_images(a);
  REQUIRE(images);
  const auto bytes = untold::find_embedded_image(*images, texture_uri(out));
  REQUIRE(bytes);
  const std::string want = read_text(dir / "src" / "checker.png");
  CHECK(std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()) == want);  // exact bytes
  CHECK(a.textures()[0].width > 0);  // from the PNG header
  CHECK(run_untold("validate --deep " + quoted(out)).exit_code == 0);
}
