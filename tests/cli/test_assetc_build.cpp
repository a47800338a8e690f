// `untold build` (tools/pipeline/assetc_build.hpp): a small tree of real models from
// Debian's assimp-testmodels (static multi-material, textured, skinned +
// animated, morph) compiled into temp dirs: determinism across runs and -j,
// the cache, part A's validators and cross-file check, meshlet coverage,
// counts against the importer, naming rules, KTX2 pixels, configuration.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <zstd.h>

#include <untold/assetc/assetc.hpp>

#include "assetc_build.hpp"
#include "assetc_ktx2.hpp"
#include "cli_support.hpp"
#include "import_model.hpp"

namespace fs = std::filesystem;
namespace ab = untold::tools::assetc_build;
namespace ac = untold::assetc;
using bytes_t = std::vector<std::byte>;

namespace {

using cli_test::copy_into;


/// assets/ with a textured glTF (+ .bin + .png), a static multi-material GLB,
/// a skinned + animated glTF, a morph-target glTF and a standalone PNG.
fs::path make_tree(const std::string& name) {
  const fs::path root = cli_test::scratch(name);
  const fs::path a = root / "assets";
  for (const char* f : {"BoxTextured.gltf", "BoxTextured0.bin", "CesiumLogoFlat.png"})
    copy_into(cli_test::assimp_model(std::string("glTF2/BoxTextured-glTF/") + f), a / "models/box" / f);
  copy_into(cli_test::assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"), a / "models/engine.glb");
  copy_into(cli_test::assimp_model("glTF2/simple_skin/simple_skin.gltf"), a / "models/skin.gltf");
  copy_into(cli_test::assimp_model("glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf"), a / "models/morph/cube.gltf");
  copy_into(cli_test::assimp_model("glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.bin"), a / "models/morph/AnimatedMorphCube.bin");
  copy_into(cli_test::assimp_model("glTF2/textureTransform/UV.png"), a / "ui/uv.png");
  return root;
}

ab::build_options options_for(const fs::path& root, const std::string& out, unsigned jobs = 1) {
  ab::build_options o;
  o.input = root / "assets";
  o.output = root / out;
  o.jobs = jobs;
  return o;
}

/// Every file under `dir` but the cache: relative path -> bytes.
std::map<std::string, bytes_t> snapshot(const fs::path& dir) {
  std::map<std::string, bytes_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != ".assetc-cache")
      out[e.path().lexically_relative(dir).generic_string()] = cli_test::read_bytes(e.path());
  return out;
}

std::size_t count_state(const ab::build_result& r, ab::asset_result::status s) {
  return static_cast<std::size_t>(
      std::count_if(r.assets.begin(), r.assets.end(), [s](const ab::asset_result& a) { return a.state == s; }));
}

std::string errors_of(const ab::build_result& r) {
  std::string s;
  for (const auto& e : r.errors) s += e + "\n";
  for (const auto& a : r.assets)
    if (!a.error.empty()) s += a.source + ": " + a.error + "\n";
  return s;
}

ac::open_options deep() {
  ac::open_options o;
  o.deep_checks = true;
  return o;
}

using triangle = std::array<std::uint32_t, 3>;
triangle canonical(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  // Rotate so the smallest index leads; winding is kept.
  if (b < a && b <= c) return {b, c, a};
  if (c < a && c < b) return {c, a, b};
  return {a, b, c};
}

}  // namespace

TEST_CASE("build: deterministic across runs and -j, second run all cached, verified") {
  const fs::path root = make_tree("build_determinism");
  auto o1 = options_for(root, "runtime", 1);
  o1.verify = true;
  const ab::build_result first = ab::build(o1);
  REQUIRE_MESSAGE(first.exit_code(false) == 0, errors_of(first));
  CHECK(first.assets.size() == 6);
  CHECK(count_state(first, ab::asset_result::status::compiled) == 6);
  CHECK(first.verified_files > 10);
  CHECK(first.manifest_entries == 1);  // the box's CesiumLogoFlat image
  const auto files1 = snapshot(root / "runtime");
  CHECK(files1.count("models/box/BoxTextured.hmesh") == 1);
  CHECK(files1.count("models/box/BoxTextured/tex_0.ktx2") == 1);
  CHECK(files1.count("models/skin.hanim") == 1);
  CHECK(files1.count("models/engine.hanim") == 0);
  CHECK(files1.count("ui/uv.ktx2") == 1);
  CHECK(files1.count("assets.hman") == 1);

  const ab::build_result second = ab::build(o1);
  REQUIRE_MESSAGE(second.exit_code(false) == 0, errors_of(second));
  CHECK(count_state(second, ab::asset_result::status::cached) == 6);
  CHECK(snapshot(root / "runtime") == files1);
  // The cache replays each asset's report and outputs.
  for (std::size_t i = 0; i < first.assets.size(); ++i) {
    CHECK(second.assets[i].outputs == first.assets[i].outputs);
    CHECK(second.assets[i].report.entries.size() == first.assets[i].report.entries.size());
    CHECK(second.assets[i].triangles == first.assets[i].triangles);
  }

  auto o2 = options_for(root, "runtime2", 2);
  o2.use_cache = false;
  o2.pack = true;
  const ab::build_result parallel = ab::build(o2);
  REQUIRE_MESSAGE(parallel.exit_code(false) == 0, errors_of(parallel));
  CHECK(snapshot(root / "runtime2") == files1);

  o1.pack = true;
  const ab::build_result packed = ab::build(o1);
  REQUIRE_MESSAGE(packed.exit_code(false) == 0, errors_of(packed));
  REQUIRE(fs::is_regular_file(root / "runtime.hpack"));
  CHECK(cli_test::read_bytes(root / "runtime.hpack") == cli_test::read_bytes(root / "runtime2.hpack"));
  const bytes_t pack_bytes = cli_test::read_bytes(root / "runtime.hpack");
  auto pack = ac::open_hpack(pack_bytes, deep());
  REQUIRE(pack);
  CHECK(pack->entries().size() == files1.size());
  for (const auto& e : pack->entries()) {
    REQUIRE(files1.count(std::string(e.path)) == 1);
    const bytes_t& want = files1.at(std::string(e.path));
    CHECK(std::equal(want.begin(), want.end(), pack_bytes.begin() + static_cast<std::ptrdiff_t>(e.offset),
                     pack_bytes.begin() + static_cast<std::ptrdiff_t>(e.offset + e.size)));
  }
}

TEST_CASE("build: outputs deep-validate, pass the cross-file check, meshlets cover LOD0 exactly once") {
  const fs::path root = make_tree("build_meshlets");
  const ab::build_result r = ab::build(options_for(root, "runtime"));
  REQUIRE_MESSAGE(r.exit_code(false) == 0, errors_of(r));
  const auto files = snapshot(root / "runtime");
  std::vector<std::string> paths;
  for (const auto& [p, b] : files) paths.push_back(p);
  const auto check = ac::check_files(
      paths, [&files](std::string_view p) -> std::optional<untold::byte_span> { return untold::byte_span(files.at(std::string(p))); },
      deep());
  for (const auto& pr : check.problems) FAIL_CHECK(pr.file << ": " << pr.err.describe());
  CHECK(check.meshes == 4);
  CHECK(check.materials == 4);

  std::size_t meshes = 0;
  for (const auto& [name, bytes] : files) {
    const std::string p = name;  // a structured binding cannot be captured (clang 14)
    if (!p.ends_with(".hmesh")) continue;
    CAPTURE(p);
    ++meshes;
    auto m = ac::open_hmesh(bytes, deep());
    REQUIRE_MESSAGE(m, m.error().describe());
    CHECK(m->desc().meshlet_max_vertices == ab::meshlet_max_vertices);
    CHECK(m->desc().meshlet_max_triangles == ab::meshlet_max_triangles);
    const auto idx = m->indices();
    const auto mlvr = m->meshlet_vertices();
    const auto mltr = m->meshlet_triangles();
    for (std::size_t s = 0; s < m->submeshes().size(); ++s) {
      const ac::submesh sm = m->submeshes()[s];
      std::vector<triangle> lod0, from_meshlets;
      for (std::uint32_t i = sm.first_index; i + 2 < sm.first_index + sm.index_count; i += 3)
        lod0.push_back(canonical(idx[i], idx[i + 1], idx[i + 2]));
      for (std::uint32_t k = sm.first_meshlet; k < sm.first_meshlet + sm.meshlet_count; ++k) {
        const ac::meshlet ml = m->meshlets()[k];
        CHECK(ml.vertex_count <= ab::meshlet_max_vertices);
        CHECK(ml.triangle_count <= ab::meshlet_max_triangles);
        for (std::uint32_t t = 0; t < ml.triangle_count; ++t) {
          const auto tri = mltr[ml.triangle_offset + t].v;
          from_meshlets.push_back(canonical(mlvr[ml.vertex_offset + tri[0]], mlvr[ml.vertex_offset + tri[1]],
                                            mlvr[ml.vertex_offset + tri[2]]));
        }
      }
      std::sort(lod0.begin(), lod0.end());
      std::sort(from_meshlets.begin(), from_meshlets.end());
      CHECK(lod0 == from_meshlets);
      // LODs: each level smaller than the last non-stalled one, or 0 (stalled).
      REQUIRE(m->lod_count() == 2);
      std::uint32_t previous = sm.index_count;
      for (const ac::mesh_lod lod : m->lods(s)) {
        CHECK(lod.index_count % 3 == 0);
        if (lod.index_count == 0) continue;
        CHECK(lod.index_count < previous);
        previous = lod.index_count;
      }
    }
  }
  CHECK(meshes == 4);
  // The big engine has levels that really shrink.
  auto engine = ac::open_hmesh(files.at("models/engine.hmesh"), deep());
  REQUIRE(engine);
  CHECK(engine->lod_indices().size() > 0);
  CHECK(engine->lod_indices().size() < engine->indices().size());
}

TEST_CASE("build: LODs follow cook's policy: a seam-locked mesh gets levels from the sloppy fallback") {
  // A 100 x 100 grid whose every triangle has texture coordinates of its own:
  // welding keeps the copies apart, so every edge is a seam and the
  // topology-preserving pass stalls. cook's policy (simplify_levels) falls
  // back to the sloppy simplifier; the compiler used to store stalled levels.
  const fs::path root = cli_test::scratch("build_lod_policy");
  fs::create_directories(root / "assets");
  std::ofstream obj(root / "assets/seams.obj");
  constexpr int n = 100;
  for (int z = 0; z <= n; ++z)
    for (int x = 0; x <= n; ++x) obj << "v " << x << " 0 " << z << "\n";
  obj << "vt 0 0\nvt 1 0\nvt 0 1\nvt 1 1\nvt 0.5 0.5\nvt 0.25 0.75\nvn 0 1 0\n";
  for (int z = 0; z < n; ++z)
    for (int x = 0; x < n; ++x) {
      const int a = z * (n + 1) + x + 1, b = a + 1, c = a + n + 1, d = c + 1;
      obj << "f " << a << "/1/1 " << c << "/3/1 " << b << "/2/1\n";
      obj << "f " << b << "/4/1 " << c << "/5/1 " << d << "/6/1\n";
    }
  obj.close();
  const ab::build_result r = ab::build(options_for(root, "runtime"));
  REQUIRE_MESSAGE(r.exit_code(false) == 0, errors_of(r));
  const bytes_t bytes = cli_test::read_bytes(root / "runtime/seams.hmesh");
  auto m = ac::open_hmesh(bytes, deep());
  REQUIRE_MESSAGE(m, m.error().describe());
  REQUIRE(m->submeshes().size() == 1);
  const std::uint32_t lod0 = m->submeshes()[0].index_count;
  CHECK(lod0 == 6 * n * n);
  std::uint32_t last = lod0;
  std::size_t kept = 0;
  for (const ac::mesh_lod lod : m->lods(0)) {
    if (lod.index_count == 0) continue;
    CHECK(lod.index_count <= last * 4 / 5);  // the policy's max_kept_fraction
    last = lod.index_count;
    ++kept;
  }
  CHECK(kept > 0);
}

TEST_CASE("build: vertex and index counts match the imported source after welding") {
  const fs::path root = make_tree("build_counts");
  std::ofstream(root / "assetc.yml") << "default:\n  rules:\n    - match: \"models/engine*\"\n      mesh:\n        merge: false\n";
  ab::config cfg;
  REQUIRE_FALSE(ab::load_config(root / "assetc.yml", cfg));
  auto o = options_for(root, "runtime");
  o.cfg = cfg;
  const ab::build_result r = ab::build(o);
  REQUIRE_MESSAGE(r.exit_code(false) == 0, errors_of(r));
  const auto imported = untold::tools::import_model(root / "assets/models/engine.glb");
  REQUIRE(imported);
  std::size_t vertices = 0, indices = 0, submeshes = 0;
  for (const auto& m : imported.scene.meshes) {
    if (m.primitive != untold::convert::topology::triangle_list || m.indices.empty()) continue;
    vertices += std::set<std::uint32_t>(m.indices.begin(), m.indices.end()).size();
    indices += m.indices.size();
    ++submeshes;
  }
  const bytes_t bytes = cli_test::read_bytes(root / "runtime/models/engine.hmesh");
  auto mesh = ac::open_hmesh(bytes, deep());
  REQUIRE(mesh);
  CHECK(mesh->desc().vertex_count == vertices);
  CHECK(mesh->desc().index_count == indices);
  CHECK(mesh->desc().submesh_count == submeshes);
  CHECK(mesh->desc().index_width == (vertices <= 65536 ? 2 : 4));

  // merge: true (the box) bakes its node: one submesh per drawn instance.
  const bytes_t box = cli_test::read_bytes(root / "runtime/models/box/BoxTextured.hmesh");
  auto boxmesh = ac::open_hmesh(box, deep());
  REQUIRE(boxmesh);
  CHECK(boxmesh->desc().vertex_count == 24);
  CHECK(boxmesh->desc().index_count == 36);
  CHECK(boxmesh->desc().index_width == 2);
  CHECK((boxmesh->desc().flags & ac::desc_flag_tangents) != 0);
}

TEST_CASE("build: material refs, texture refs and the manifest follow the seed's naming") {
  const fs::path root = make_tree("build_names");
  const ab::build_result r = ab::build(options_for(root, "runtime"));
  REQUIRE_MESSAGE(r.exit_code(false) == 0, errors_of(r));
  const bytes_t mesh_bytes = cli_test::read_bytes(root / "runtime/models/box/BoxTextured.hmesh");
  const bytes_t mat_bytes = cli_test::read_bytes(root / "runtime/models/box/BoxTextured.hmat");
  const bytes_t man_bytes = cli_test::read_bytes(root / "runtime/assets.hman");
  auto mesh = ac::open_hmesh(mesh_bytes, deep());
  auto mat = ac::open_hmat(mat_bytes, deep());
  auto man = ac::open_hman(man_bytes, deep());
  REQUIRE(mesh);
  REQUIRE(mat);
  REQUIRE(man);
  REQUIRE(mesh->materials().size() == 1);
  CHECK(mesh->materials()[0] == ac::hash_ref("models/box/boxtextured/texture"));  // material named "Texture"
  REQUIRE(mat->size() == 1);
  const ac::material row = mat->rows()[0];
  CHECK(row.base_color_tex == ac::hash_ref("models/box/boxtextured/tex_0"));
  CHECK(row.metallic == 0.0f);  // the file's metallicFactor
  CHECK(row.normal_tex == 0);
  const ac::manifest_entry* e = man->find(row.base_color_tex);
  REQUIRE(e != nullptr);
  CHECK(e->path == "models/box/BoxTextured/tex_0.ktx2");
  CHECK(e->colorspace == 1);  // base colour: sRGB

  // The engine's names repeat ("Material_17" x several): those get material_<index>.
  auto engine = untold::tools::import_model(root / "assets/models/engine.glb");
  REQUIRE(engine);
  std::vector<std::string_view> names;
  for (const auto& m : engine.scene.materials) names.push_back(m.name);
  const bytes_t eng_bytes = cli_test::read_bytes(root / "runtime/models/engine.hmesh");
  auto eng = ac::open_hmesh(eng_bytes, deep());
  REQUIRE(eng);
  std::set<std::uint64_t> expected;
  for (std::size_t i = 0; i < names.size(); ++i) expected.insert(ac::hash_ref(ac::material_ref("models/engine", names, i)));
  CHECK(expected.count(ac::hash_ref("models/engine/material_2")) == 1);
  CHECK(ac::material_leaf(names, 2) == "material_2");  // "Material_17" is not unique
  for (std::size_t i = 0; i < eng->materials().size(); ++i) CHECK(expected.count(eng->materials()[i]) == 1);
  // Dense slots: every slot used by some submesh, in first-use order.
  std::vector<std::uint32_t> first_use;
  for (const ac::submesh s : eng->submeshes())
    if (std::find(first_use.begin(), first_use.end(), s.material_slot) == first_use.end()) first_use.push_back(s.material_slot);
  for (std::size_t i = 0; i < first_use.size(); ++i) CHECK(first_use[i] == i);
  CHECK(first_use.size() == eng->materials().size());
}

TEST_CASE("build: skinned + animated glTF gets SKIN, SKEL and a .hanim") {
  const fs::path root = make_tree("build_skin");
  const ab::build_result r = ab::build(options_for(root, "runtime"));
  REQUIRE_MESSAGE(r.exit_code(false) == 0, errors_of(r));
  const bytes_t mesh_bytes = cli_test::read_bytes(root / "runtime/models/skin.hmesh");
  auto mesh = ac::open_hmesh(mesh_bytes, deep());
  REQUIRE(mesh);
  REQUIRE(mesh->skeleton().size() == 2);
  CHECK(mesh->skeleton()[0].parent == -1);
  CHECK(mesh->skeleton()[1].parent == 0);
  CHECK(mesh->skeleton()[0].inverse_bind[13] == doctest::Approx(-1.0));
  REQUIRE(mesh->skin().size() == mesh->desc().vertex_count);
  for (const ac::skin_vertex v : mesh->skin()) {
    CHECK(v.weights[0] + v.weights[1] + v.weights[2] + v.weights[3] == doctest::Approx(1.0));
    for (auto j : v.joints) CHECK(j < 2);
  }
  const bytes_t anim_bytes = cli_test::read_bytes(root / "runtime/models/skin.hanim");
  auto anim = ac::open_hanim(anim_bytes, deep());
  REQUIRE(anim);
  REQUIRE(anim->clips().size() == 1);
  CHECK(anim->clips()[0].duration == doctest::Approx(5.5));
  REQUIRE(anim->channels(0).size() == 1);
  CHECK(anim->channels(0)[0].joint == 1);
  CHECK(anim->channels(0)[0].path == ac::anim_path::rotation);
  CHECK(anim->channels(0)[0].key_count == 12);
  // The morph cube: its morph targets and weight channel are reported, no .hanim.
  CHECK_FALSE(fs::exists(root / "runtime/models/morph/cube.hanim"));
  const auto morph = std::find_if(r.assets.begin(), r.assets.end(), [](const auto& a) { return a.source == "models/morph/cube.gltf"; });
  REQUIRE(morph != r.assets.end());
  std::uint64_t morph_targets = 0, weight_channels = 0;
  for (const auto& e : morph->report.entries) {
    if (e.what == "morph targets") morph_targets += e.count;
    if (e.what == "morph weight channels") weight_channels += e.count;
  }
  CHECK(morph_targets == 2);
  CHECK(weight_channels == 1);
}

TEST_CASE("build: textures are raw RGBA8 + zstd KTX2, pixel-exact, with the fallback noted") {
  const fs::path root = make_tree("build_ktx2");
  const ab::build_result r = ab::build(options_for(root, "runtime"));
  REQUIRE_MESSAGE(r.exit_code(false) == 0, errors_of(r));
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("UASTC") != std::string::npos);
  CHECK(r.encoder == "raw-rgba8-zstd");
  const bytes_t ktx = cli_test::read_bytes(root / "runtime/ui/uv.ktx2");
  untold::tools::ktx2_info info;
  REQUIRE_FALSE(untold::tools::check_ktx2(ktx, &info));
  CHECK(info.srgb);
  CHECK(info.supercompression == 2);
  CHECK(info.width == 256);
  untold::tools::rgba8_image png;
  REQUIRE_FALSE(untold::tools::decode_image(cli_test::read_bytes(root / "assets/ui/uv.png"), png));
  // Level 0: offset and length from the level index at byte 80.
  auto u64 = [&](std::size_t at) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<std::uint8_t>(ktx[at + static_cast<std::size_t>(i)]);
    return v;
  };
  std::vector<std::uint8_t> pixels(png.pixels.size());
  const std::size_t n = ZSTD_decompress(pixels.data(), pixels.size(), ktx.data() + u64(80), u64(88));
  REQUIRE(n == pixels.size());
  CHECK(pixels == png.pixels);
  // A normal map suffix is linear.
  copy_into(root / "assets/ui/uv.png", root / "assets/ui/bumps.n.png");
  REQUIRE(ab::build(options_for(root, "runtime")).exit_code(false) == 0);
  REQUIRE_FALSE(untold::tools::check_ktx2(cli_test::read_bytes(root / "runtime/ui/bumps.n.ktx2"), &info));
  CHECK_FALSE(info.srgb);
  // check_ktx2 refuses a truncated file.
  CHECK(untold::tools::check_ktx2(untold::byte_span(ktx).first(ktx.size() - 10)));
}

TEST_CASE("check_ktx2: the DFD's colour model and transfer, level sizes of RGBA8 and UASTC, mip count, global data") {
  namespace ut = untold::tools;
  // A 5x3 raw RGBA8 + Zstandard file, then one field changed per case.
  ut::rgba8_image image;
  image.width = 5;
  image.height = 3;
  image.pixels.assign(5 * 3 * 4, std::uint8_t{7});
  bytes_t good;
  REQUIRE_FALSE(ut::make_raw_ktx2_encoder()->encode(image, true, ut::texture_mode::color, good));
  ut::ktx2_info info;
  REQUIRE_FALSE(ut::check_ktx2(good, &info));
  CHECK(info.color_model == ut::ktx2_model_rgbsda);
  CHECK(info.transfer == 2);
  CHECK(info.srgb);
  CHECK(info.levels == 1);
  const auto get32 = [](const bytes_t& b, std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<std::uint8_t>(b[at + static_cast<std::size_t>(i)]);
    return v;
  };
  const auto set = [](bytes_t& b, std::size_t at, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
  };
  const std::size_t dfd_at = get32(good, 48);
  const auto refused = [&](const bytes_t& b, const std::string& why) {
    const auto problem = ut::check_ktx2(b);
    REQUIRE(problem);
    CHECK_MESSAGE(problem->find(why) != std::string::npos, *problem);
  };
  bytes_t b = good;
  set(b, 40, 4, 4);  // levelCount 4: a 5x3 image has 3 levels
  refused(b, "more mip levels");
  b = good;
  set(b, 44, ut::ktx2_scheme_basislz, 4);
  refused(b, "BasisLZ without global data");
  b = good;
  set(b, 64, b.size() - 4, 8);  // sgdByteOffset, sgdByteLength 8: past the end
  set(b, 72, 8, 8);
  refused(b, "global data past the end");
  b = good;
  set(b, 48 + 4, 4, 4);  // dfdByteLength and dfdTotalSize 4: no basic block
  set(b, dfd_at, 4, 4);
  refused(b, "shorter than a basic descriptor block");
  b = good;
  set(b, 20, std::uint64_t{1} << 31, 4);  // 2^31 x 3 x 4 bytes is more than the check decompresses
  refused(b, "larger than the 1 GiB");
  b = good;
  b[static_cast<std::size_t>(get32(b, 80)) + 5] ^= std::byte{0xFF};  // inside the Zstandard frame
  CHECK(ut::check_ktx2(b));

  // UASTC: VK_FORMAT_UNDEFINED and DFD model 166; a level holds 16 bytes per 4x4 block.
  bytes_t uastc = good;
  set(uastc, 12, 0, 4);
  uastc[dfd_at + 12] = std::byte{ut::ktx2_model_uastc};
  refused(uastc, "uncompressed size 60 is not its 5x3 size 32");
  set(uastc, 44, ut::ktx2_scheme_none, 4);
  set(uastc, 80, uastc.size(), 8);  // level 0: 32 bytes appended, not supercompressed
  set(uastc, 88, 32, 8);
  set(uastc, 96, 32, 8);
  uastc.resize(uastc.size() + 32);
  REQUIRE_FALSE(ut::check_ktx2(uastc, &info));
  CHECK(info.vk_format == 0);
  CHECK(info.color_model == ut::ktx2_model_uastc);
  CHECK(info.srgb);  // from the DFD's transfer function
  set(uastc, 88, 31, 8);
  refused(uastc, "level 0 has 31 bytes, not 32");
}

TEST_CASE("build: the cache rebuilds exactly what changed (source, dependency, settings)") {
  const fs::path root = make_tree("build_cache");
  auto o = options_for(root, "runtime");
  REQUIRE(ab::build(o).exit_code(false) == 0);
  const bytes_t box_tex = cli_test::read_bytes(root / "runtime/models/box/BoxTextured/tex_0.ktx2");
  // A dependency of the box (its image) changes: only the box recompiles (and the png itself).
  copy_into(cli_test::assimp_model("glTF2/textureTransform/Arrow.png"), root / "assets/models/box/CesiumLogoFlat.png");
  const ab::build_result r = ab::build(o);
  REQUIRE_MESSAGE(r.exit_code(false) == 0, errors_of(r));
  std::set<std::string> compiled;
  for (const auto& a : r.assets)
    if (a.state == ab::asset_result::status::compiled) compiled.insert(a.source);
  CHECK(compiled == std::set<std::string>{"models/box/BoxTextured.gltf", "models/box/CesiumLogoFlat.png"});
  CHECK(cli_test::read_bytes(root / "runtime/models/box/BoxTextured/tex_0.ktx2") != box_tex);
  // A rule changes one source's settings: only it recompiles.
  ab::config cfg;
  REQUIRE_FALSE(ab::parse_config("default:\n  rules:\n    - match: \"*skin*\"\n      mesh: {merge: false}\n", cfg));
  o.cfg = cfg;
  const ab::build_result r2 = ab::build(o);
  REQUIRE(r2.exit_code(false) == 0);
  compiled.clear();
  for (const auto& a : r2.assets)
    if (a.state == ab::asset_result::status::compiled) compiled.insert(a.source);
  CHECK(compiled == std::set<std::string>{"models/skin.gltf"});
  // A deleted output is rebuilt; --no-cache rebuilds everything.
  fs::remove(root / "runtime/ui/uv.ktx2");
  const ab::build_result r3 = ab::build(o);
  CHECK(count_state(r3, ab::asset_result::status::compiled) == 1);
  CHECK(fs::exists(root / "runtime/ui/uv.ktx2"));
  o.use_cache = false;
  CHECK(count_state(ab::build(o), ab::asset_result::status::compiled) == 6);
}

TEST_CASE("build: losses, --strict, collisions, failures") {
  SUBCASE("an OBJ whose images are missing: reported, an error only with strict") {
    const fs::path root = cli_test::scratch("build_strict");
    copy_into(cli_test::assimp_model("OBJ/spider.obj"), root / "assets/spider.obj");
    copy_into(cli_test::assimp_model("OBJ/spider.mtl"), root / "assets/spider.mtl");
    const ab::build_result r = ab::build(options_for(root, "runtime"));
    REQUIRE(r.assets.size() == 1);
    CHECK(r.assets[0].state == ab::asset_result::status::compiled);
    CHECK(r.lost_anything());
    CHECK(r.exit_code(false) == 0);
    CHECK(r.exit_code(true) == 1);
  }
  SUBCASE("two sources with one output stem") {
    const fs::path root = cli_test::scratch("build_collision");
    copy_into(cli_test::assimp_model("glTF2/simple_skin/simple_skin.gltf"), root / "assets/a.gltf");
    copy_into(cli_test::assimp_model("glTF2/BoxTextured-glTF-Binary/BoxTextured.glb"), root / "assets/a.glb");
    const ab::build_result r = ab::build(options_for(root, "runtime"));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].find("collision") != std::string::npos);
    CHECK(r.exit_code(false) == 1);
  }
  SUBCASE("a broken source fails its asset, the manifest is not written") {
    const fs::path root = cli_test::scratch("build_broken");
    copy_into(cli_test::assimp_model("glTF2/wrongTypes/badArray.gltf"), root / "assets/bad.gltf");
    copy_into(cli_test::assimp_model("glTF2/textureTransform/UV.png"), root / "assets/uv.png");
    const ab::build_result r = ab::build(options_for(root, "runtime"));
    CHECK(count_state(r, ab::asset_result::status::failed) == 1);
    CHECK(count_state(r, ab::asset_result::status::compiled) == 1);
    CHECK(r.exit_code(false) == 1);
    CHECK_FALSE(fs::exists(root / "runtime/assets.hman"));
  }
}

TEST_CASE("assetc.yml: glob semantics, layer precedence, unknown keys") {
  CHECK(ab::glob_match("ui/*", "ui/button.png"));
  CHECK(ab::glob_match("ui/*", "ui/icons/a.png"));  // '*' spans '/'
  CHECK_FALSE(ab::glob_match("ui/*", "models/ui/a.png"));  // whole-path match
  CHECK(ab::glob_match("*.png", "a/b/c.png"));
  CHECK(ab::glob_match("a?c", "abc"));
  CHECK_FALSE(ab::glob_match("a?c", "ac"));
  CHECK_FALSE(ab::glob_match("a?c", "abbc"));
  CHECK(ab::glob_match("*", ""));
  CHECK(ab::glob_match("**x*", "abxcd"));
  CHECK_FALSE(ab::glob_match("x", "xx"));

  ab::config c;
  const char* yaml = R"(
input: src
output: out
pack: true
preset: desktop
colour: blue
default:
  mesh:
    merge: true
  texture:
    compress: true
    quality: 5
  rules:
    - match: "ui/*"
      texture:
        compress: false
    - match: "ui/keep/*"
      texture:
        compress: true
presets:
  desktop:
    output: out/desktop
  mobile:
    output: out/mobile
    mesh:
      merge: false
    rules:
      - match: "ui/keep/*"
        texture:
          compress: false
      - match: "models/*"
        mesh:
          merge: true
)";
  REQUIRE_FALSE(ab::parse_config(yaml, c));
  CHECK(c.input == "src");
  CHECK(c.output == "out");
  CHECK(c.pack);
  CHECK(c.preset == "desktop");
  REQUIRE(c.presets.size() == 2);
  CHECK(c.presets[1].first == "mobile");
  REQUIRE(c.find_preset("mobile") != nullptr);
  CHECK(*c.find_preset("mobile")->output == "out/mobile");
  REQUIRE(c.warnings.size() == 2);  // 'colour' and 'texture.quality'
  CHECK(c.warnings[0].find("colour") != std::string::npos);
  CHECK(c.warnings[1].find("quality") != std::string::npos);

  const ab::layer* mobile = c.find_preset("mobile");
  const ab::layer* desktop = c.find_preset("desktop");
  // built-in < default globals < preset globals < default rules < preset rules.
  CHECK(ab::resolve_settings(c, nullptr, "x.glb") == ab::settings{true, true});
  CHECK(ab::resolve_settings(c, mobile, "x.glb") == ab::settings{false, true});           // preset global
  CHECK(ab::resolve_settings(c, mobile, "models/x.glb") == ab::settings{true, true});     // preset rule over preset global
  CHECK(ab::resolve_settings(c, desktop, "ui/a.png") == ab::settings{true, false});       // default rule
  CHECK(ab::resolve_settings(c, desktop, "ui/keep/a.png") == ab::settings{true, true});   // later default rule wins
  CHECK(ab::resolve_settings(c, mobile, "ui/keep/a.png") == ab::settings{false, false});  // preset rule wins

  ab::config bad;
  CHECK(ab::parse_config("default: [1, 2", bad));  // YAML syntax error
  ab::config typed;
  REQUIRE_FALSE(ab::parse_config("pack: maybe\ndefault:\n  mesh:\n    merge: 3\n", typed));
  CHECK(typed.warnings.size() == 2);
  CHECK_FALSE(typed.pack);
  CHECK_FALSE(typed.defaults.globals.mesh_merge.has_value());
  ab::config empty;
  CHECK_FALSE(ab::parse_config("", empty));
  CHECK(empty.presets.empty());
}

TEST_CASE("untold build: command line (presets, JSON, exit codes)") {
  const fs::path root = cli_test::scratch("build_cli");
  copy_into(cli_test::assimp_model("glTF2/simple_skin/simple_skin.gltf"), root / "assets/models/skin.gltf");
  copy_into(cli_test::assimp_model("glTF2/textureTransform/UV.png"), root / "assets/ui/uv.png");
  std::ofstream(root / "assetc.yml") << "output: runtime\npresets:\n  desktop:\n    output: runtime/desktop\n  mobile:\n"
                                        "    output: runtime/mobile\n    texture:\n      compress: false\n";
  const std::string dir = cli_test::quoted(root / "assets");

  auto list = cli_test::run_untold("build " + dir + " --list-presets");
  CHECK(list.exit_code == 0);
  CHECK(list.out == "desktop -> runtime/desktop\nmobile -> runtime/mobile\n");

  auto unknown = cli_test::run_untold("build " + dir + " --preset phone");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("desktop, mobile") != std::string::npos);

  auto json_run = cli_test::run_untold("build " + dir + " --preset mobile --json -j 2 --verify");
  REQUIRE_MESSAGE(json_run.exit_code == 0, json_run.err);
  const auto j = nlohmann::json::parse(json_run.out);
  CHECK(j["compiled"] == 2);
  CHECK(j["preset"] == "mobile");
  CHECK(j["errors"].empty());
  CHECK(fs::is_regular_file(root / "runtime/mobile/models/skin.hmesh"));
  CHECK(fs::is_regular_file(root / "runtime/mobile/assets.hman"));
  // texture.compress: false asks for raw KTX2: no fallback note for it.
  CHECK(j["notes"].empty());

  auto again = cli_test::run_untold("build " + dir + " --preset mobile --json --pack");
  REQUIRE(again.exit_code == 0);
  CHECK(nlohmann::json::parse(again.out)["cached"] == 2);
  CHECK(fs::is_regular_file(root / "runtime/mobile.hpack"));

  auto out_override = cli_test::run_untold("build " + dir + " -o " + cli_test::quoted(root / "elsewhere") + " -q");
  CHECK(out_override.exit_code == 0);
  CHECK(out_override.out.empty());
  CHECK(fs::is_regular_file(root / "elsewhere/ui/uv.ktx2"));

  CHECK(cli_test::run_untold("build " + cli_test::quoted(root / "missing")).exit_code == 2);
  CHECK(cli_test::run_untold("build " + dir + " -j 0").exit_code == 2);
}

TEST_CASE("build: what a .hmesh/.hmat cannot hold is reported with counts") {
  const fs::path root = cli_test::scratch("build_losses");
  copy_into(cli_test::assimp_model("glTF2/glTF-Asset-Generator/Mesh_PrimitiveMode/Mesh_PrimitiveMode_00.gltf"), root / "assets/points.gltf");
  for (const char* f : {"TextureTransformTest.gltf", "TextureTransformTest.bin", "UV.png", "Arrow.png", "Correct.png",
                        "NotSupported.png", "Error.png"})
    copy_into(cli_test::assimp_model(std::string("glTF2/textureTransform/") + f), root / "assets/tt" / f);
  for (const auto& e : fs::directory_iterator(cli_test::assimp_model("glTF2/glTF-Asset-Generator/Mesh_PrimitiveMode")))
    if (e.path().extension() == ".bin") copy_into(e.path(), root / "assets" / e.path().filename());
  const ab::build_result r = ab::build(options_for(root, "runtime"));
  REQUIRE_MESSAGE(r.exit_code(false) == 0, errors_of(r));
  auto total = [&](const std::string& source, const std::string& what) {
    std::uint64_t n = 0;
    for (const auto& a : r.assets)
      if (a.source == source)
        for (const auto& e : a.report.entries)
          if (e.what.find(what) != std::string::npos) n += e.count;
    return n;
  };
  CHECK(total("points.gltf", "line/point primitives") == 1024);
  // Offset U, Offset V, Offset UV, Rotation, Scale, All carry a transform.
  CHECK(total("tt/TextureTransformTest.gltf", "KHR_texture_transform") == 6);
  CHECK(r.exit_code(true) == 1);
  // The points-only file still yields a valid (empty) mesh.
  const auto points = cli_test::read_bytes(root / "runtime/points.hmesh");  // the mesh views these bytes
  auto mesh = ac::open_hmesh(points, deep());
  REQUIRE(mesh);
  CHECK(mesh->desc().submesh_count == 0);
}
