// One model of the assimp-testmodels sweep (a ctest test per model).
//
//   untold_cook_check MODEL OUTDIR
//
// OBJ, FBX, Collada: assimp itself decides which models are readable: the
// model is read with the importer's flags (triangulate, sort by primitive
// type, flip UVs, validate; no welding, no degenerate removal) and that
// aiScene is the source the counts below come from. glTF 2.0 is imported
// by TinyGLTF (import_gltf.hpp), not assimp: the importer decides, and the
// counts below compare the .untold with the imported scene (the importer's
// own tests compare the scene with the files).
//
// When the source is rejected, cook must fail with a message naming the import
// failure (no output), and `untold cook` must exit 1 with it on stderr.
//
// When it is read, cook (zstd) must succeed, `untold validate --deep`
// must pass, and nothing may be lost without a report entry:
//   - triangles: the .untold's triangles (every mesh record) equal the
//     source's triangles of the meshes the nodes draw, weighted by how often
//     they are drawn, minus the triangles the report drops (repeated-index
//     triangles, faces of another size), weighted the same way;
//   - skins: one skin record per drawn skinned source mesh, unless the
//     report drops its skinning; joints: the skeletons' joints are the
//     distinct bones that name a node (the others reported);
//   - clips: one per source animation; channels: every source T/R/S key
//     array and morph weight channel is a keyframe list of the .untold or a
//     reported channel (glTF: only the paths the file animates exist);
//   - lights, cameras, morph targets: the source's count, or the report says
//     which were dropped (morph targets: one record set per drawn mesh);
//   - instancing: the mesh records reference at most as many distinct
//     geometry ranges as there are distinct source meshes drawn;
//   - every index count is a multiple of 3.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <untold/untold.hpp>

#include "check_support.hpp"
#include "compress_spec.hpp"
#include "cook.hpp"
#include "import_gltf.hpp"

namespace fs = std::filesystem;
namespace uc = untold::convert;

namespace {

using check_support::check, check_support::check_equal, check_support::failures, check_support::quoted,
    check_support::run;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Sum of the counts of the dropped entries about `what`.
std::uint64_t reported(const uc::conversion_report& r, const std::string& what) {
  std::uint64_t n = 0;
  for (const auto& e : r.entries)
    if (e.severity == uc::report_entry::kind::dropped && e.what == what) n += e.count;
  return n;
}

std::uint64_t triangles(const aiMesh& m) {
  return static_cast<std::uint64_t>(
      std::count_if(m.mFaces, m.mFaces + m.mNumFaces, [](const aiFace& f) { return f.mNumIndices == 3; }));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: untold_cook_check MODEL OUTDIR\n");
    return 2;
  }
  const fs::path model = argv[1];
  const fs::path out_dir = argv[2];
  fs::remove_all(out_dir);
  fs::create_directories(out_dir);
  const fs::path output = out_dir / "model.untold";

  const bool gltf = untold::tools::is_gltf(model);
  Assimp::Importer importer;
  const aiScene* source =
      gltf ? nullptr
           : importer.ReadFile(model.string(), aiProcess_Triangulate | aiProcess_SortByPType | aiProcess_FlipUVs |
                                                   aiProcess_ValidateDataStructure);
  const auto imported = untold::tools::import_model(model);

  untold::tools::cook_options options;
  options.input = model;
  options.output = output;
  options.compression = untold::tools::uniform_policy({untold::compression::zstd, 0});
  options.copy_textures = true;
  const untold::tools::cook_report report = untold::tools::cook(options);

  if (gltf ? !imported : source == nullptr || source->mRootNode == nullptr) {
    std::printf("%s rejects %s: %s\n", gltf ? "the glTF importer" : "assimp", model.string().c_str(),
                gltf ? imported.error.c_str() : importer.GetErrorString());
    check(!report, "cook succeeded on a file the importer rejects");
    check(report.error.find("cannot import") != std::string::npos, "cook's message: " + report.error);
    check(!fs::exists(output), "cook left an output file behind");
    const fs::path err = out_dir / "cli.stderr";
    const int rc = run(std::string(UNTOLD_CLI) + " cook " + quoted(model) + " -o " + quoted(out_dir / "cli.untold") +
                       " > /dev/null 2> " + quoted(err));
    check(rc == 1, "untold cook exited with " + std::to_string(rc) + ", expected 1");
    const std::string message = read_text(err);
    check(message.find("cannot import") != std::string::npos, "untold cook's stderr: " + message);
    std::printf("%s\n", failures == 0 ? "rejected with a clear error, as expected" : "FAILED");
    return failures == 0 ? 0 : 1;
  }

  check(static_cast<bool>(report), "cook failed: " + report.error);
  if (!report) return 1;
  const int rc = run(std::string(UNTOLD_CLI) + " validate --deep " + quoted(output) + " > /dev/null");
  check(rc == 0, "untold validate --deep exited with " + std::to_string(rc));
  auto opened = untold::open_file(output, {.deep_checks = true});
  check(opened.has_value(), "open: " + (opened ? std::string() : opened.error().describe()));
  if (!opened) return 1;
  const untold::asset& a = opened->asset;
  const uc::conversion_report& r = report.conversion;

  // The importer's scene (what cook converted): deterministic, so the same as cook's.
  check(static_cast<bool>(imported), "import_model: " + imported.error);
  if (!imported) return 1;
  const uc::scene& s = imported.scene;
  if (!gltf) {
    check_equal(s.meshes.size(), source->mNumMeshes, "scene meshes");
    if (s.meshes.size() != source->mNumMeshes) return 1;
  }

  // How often each mesh is drawn (a mesh drawn by no node gets an entity of its own).
  std::vector<std::uint64_t> drawn(s.meshes.size(), 0);
  for (const uc::node& n : s.nodes)
    for (const std::uint32_t m : n.meshes) ++drawn[m];
  for (auto& d : drawn) d = std::max<std::uint64_t>(d, 1);

  // ---- triangles ------------------------------------------------------------------
  std::uint64_t untold_triangles = 0;
  for (const untold::mesh_record& m : a.meshes()) {
    check(m.index_count % 3 == 0, "a mesh record's index count is not a multiple of 3");
    untold_triangles += m.index_count / 3;
  }
  std::uint64_t expected = 0, source_total = 0, scene_total = 0;
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    if (s.meshes[i].primitive != uc::topology::triangle_list) continue;
    expected += drawn[i] * (s.meshes[i].indices.size() / 3);
    scene_total += s.meshes[i].indices.size() / 3;
    if (!gltf) source_total += triangles(*source->mMeshes[i]);
  }
  check_equal(untold_triangles, expected, "triangles in the .untold (scene triangles x times drawn)");
  // The importer's losses: the source's triangles are the scene's plus the reported ones.
  if (!gltf)
    check_equal(scene_total + reported(r, "triangles with a repeated index") + reported(r, "faces") +
                    reported(r, "faces with a non-finite position"),
                source_total, "source triangles = carried + reported");

  // ---- instancing -------------------------------------------------------------------
  std::set<std::uint64_t> ranges;
  for (const untold::mesh_record& m : a.meshes()) ranges.insert(m.vertex_data_offset);
  std::size_t distinct_drawn = 0;
  for (const uc::mesh& m : s.meshes) distinct_drawn += m.primitive == uc::topology::triangle_list && !m.indices.empty();
  check(ranges.size() <= distinct_drawn, std::to_string(ranges.size()) + " stored geometries for " +
                                             std::to_string(distinct_drawn) + " distinct source meshes");

  // ---- skins and joints -------------------------------------------------------------
  std::uint64_t skinned_refs = 0, skinned_source = 0, skinned_scene = 0;
  std::set<std::string> bones;
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    if (gltf ? s.meshes[i].skin == uc::no_ref : source->mMeshes[i]->mNumBones == 0) continue;
    ++skinned_source;
    if (!gltf) {
      const aiMesh& m = *source->mMeshes[i];
      for (unsigned b = 0; b < m.mNumBones; ++b) bones.insert(untold::tools::sanitized_utf8(m.mBones[b]->mName.C_Str()));
    }
    if (s.meshes[i].skin == uc::no_ref) continue;
    ++skinned_scene;
    if (s.meshes[i].primitive == uc::topology::triangle_list && !s.meshes[i].indices.empty()) skinned_refs += drawn[i];
  }
  check_equal(a.table<untold::skin_record>().size(), skinned_refs, "skin records (skinned meshes x times drawn)");
  if (!gltf) check_equal(skinned_scene + reported(r, "skinning"), skinned_source, "skinned source meshes = carried + reported");
  std::uint64_t scene_joints = 0;
  for (const uc::skeleton& k : s.skeletons) scene_joints += k.joints.size();
  check_equal(a.table<untold::skeleton_joint_record>().size(), scene_joints, "joint records");
  std::uint64_t bones_naming_nodes = 0;
  for (const std::string& b : bones)
    bones_naming_nodes += std::any_of(s.nodes.begin(), s.nodes.end(), [&](const uc::node& n) { return n.name == b; });
  if (!gltf) check_equal(scene_joints, bones_naming_nodes, "joints = distinct bones that name a node");

  // ---- clips and channels -------------------------------------------------------------
  check_equal(a.table<untold::animation_clip_record>().size(), gltf ? s.animations.size() : source->mNumAnimations, "clips");
  std::uint64_t keyframe_lists = 0;
  for (const untold::animation_channel_record& c : a.table<untold::animation_channel_record>())
    keyframe_lists += (c.translation_count > 0) + (c.rotation_count > 0);
  std::uint64_t scene_channels = 0, scene_empty = 0;
  for (const uc::animation& an : s.animations)
    for (const uc::animation_channel& c : an.channels) {
      ++scene_channels;
      scene_empty += c.times.empty();
    }
  check_equal(keyframe_lists + reported(r, "scale channels") + reported(r, "morph weight channels") +
                  reported(r, "node channels") + reported(r, "duplicate channels") + scene_empty,
              scene_channels, "scene channels = .untold keyframe lists + reported");
  std::uint64_t source_channels = 0;
  for (unsigned i = 0; !gltf && i < source->mNumAnimations; ++i) {
    const aiAnimation& an = *source->mAnimations[i];
    for (unsigned c = 0; c < an.mNumChannels; ++c)
      source_channels += (an.mChannels[c]->mNumPositionKeys > 0) + (an.mChannels[c]->mNumRotationKeys > 0) +
                         (an.mChannels[c]->mNumScalingKeys > 0);
    source_channels += an.mNumMorphMeshChannels;
  }
  const std::uint64_t carried_channels = scene_channels + reported(r, "animation channels");
  if (!gltf) check_equal(carried_channels, source_channels, "source channels = scene channels + reported");

  // ---- lights, cameras, morph targets ------------------------------------------------------
  if (gltf) {
    check_equal(a.table<untold::light_record>().size(), s.lights.size(), "lights");
    check_equal(a.table<untold::camera_record>().size(), s.cameras.size(), "cameras");
  } else {
    check_equal(a.table<untold::light_record>().size() + reported(r, "light"), source->mNumLights, "lights (+ reported)");
    check_equal(a.table<untold::camera_record>().size(), source->mNumCameras, "cameras");
  }
  std::uint64_t source_morphs = 0, scene_morphs = 0, written_morphs = 0;
  for (unsigned i = 0; !gltf && i < source->mNumMeshes; ++i) source_morphs += source->mMeshes[i]->mNumAnimMeshes;
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    const uc::mesh& m = s.meshes[i];
    scene_morphs += m.morphs.size();
    if (m.primitive == uc::topology::triangle_list) written_morphs += drawn[i] * m.morphs.size();
  }
  if (!gltf) check_equal(scene_morphs + reported(r, "morph target"), source_morphs, "source morph targets = carried + reported");
  // Morph targets follow every mesh record of their mesh; those of line/point meshes are reported.
  check_equal(a.table<untold::morph_target_record>().size(), written_morphs, "morph target records");

  std::printf("%s: %zu entities, %zu meshes (%zu geometries), %llu triangles, %zu skins, %zu joints, %zu clips, "
              "%zu lights, %zu cameras, %llu bytes, %zu report entries: %s\n",
              model.string().c_str(), static_cast<std::size_t>(a.entities().size()),
              static_cast<std::size_t>(a.meshes().size()), ranges.size(),
              static_cast<unsigned long long>(untold_triangles),
              static_cast<std::size_t>(a.table<untold::skin_record>().size()),
              static_cast<std::size_t>(a.table<untold::skeleton_joint_record>().size()),
              static_cast<std::size_t>(a.table<untold::animation_clip_record>().size()),
              static_cast<std::size_t>(a.table<untold::light_record>().size()),
              static_cast<std::size_t>(a.table<untold::camera_record>().size()),
              static_cast<unsigned long long>(report.bytes), r.entries.size(),
              failures == 0 ? "nothing lost unreported" : "FAILED");
  return failures == 0 ? 0 : 1;
}
