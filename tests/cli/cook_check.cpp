// One model of the assimp-testmodels sweep (a ctest test per model).
//
//   untold_cook_check MODEL OUTDIR
//
// Assimp itself decides which models are readable: the model is imported with
// exactly cook's importer settings (untold::tools::import_scene).
//
// When assimp rejects it, cook must fail with a message naming the import
// failure (no crash, no output), and `untold cook` must exit 1 with that
// message on stderr.
//
// When assimp imports it, cook (zstd-compressed output) must succeed,
// `untold validate --deep` must pass on the output, and the output must hold
// exactly the triangle geometry of that post-processed aiScene (after
// triangulation and joining identical vertices):
//   - one entity per node, one mesh per (node, mesh) reference whose mesh has
//     triangles, in the node tree's preorder;
//   - per mesh: the triangle count equals the aiMesh's triangle faces; the
//     vertex count equals the number of distinct aiMesh vertices those
//     triangles use; every vertex is referenced by an index;
//   - the triangles are the same: the multiset of triangles as position
//     triples (bit-exact floats, winding kept, rotation normalised) equals
//     the aiMesh's;
//   - the mesh's material has the aiMaterial's name.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <assimp/Importer.hpp>
#include <assimp/material.h>
#include <assimp/scene.h>

#include <untold/untold.hpp>

#include "compress_spec.hpp"
#include "cook.hpp"

namespace fs = std::filesystem;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("FAIL: %s\n", what.c_str());
  ++failures;
}

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

/// Runs a shell command; its exit code (-1 when it did not exit normally).
int run(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using position = std::array<std::uint32_t, 3>;  // float bits
using triangle = std::array<position, 3>;

position bits(float x, float y, float z) {
  return {std::bit_cast<std::uint32_t>(x), std::bit_cast<std::uint32_t>(y), std::bit_cast<std::uint32_t>(z)};
}

/// The rotation of (a, b, c) that starts with the smallest corner: the same
/// triangle with the same winding always gives the same key.
triangle canonical(const triangle& t) {
  triangle best = t;
  for (int r = 1; r < 3; ++r) {
    const triangle rotated = {t[r], t[(r + 1) % 3], t[(r + 2) % 3]};
    best = std::min(best, rotated);
  }
  return best;
}

struct expected_mesh {
  const aiMesh* mesh;
};

/// (node, mesh) references in cook's preorder, for meshes with triangles.
void collect(const aiScene& scene, std::vector<expected_mesh>& meshes, std::size_t& nodes) {
  std::vector<const aiNode*> stack{scene.mRootNode};
  while (!stack.empty()) {
    const aiNode* node = stack.back();
    stack.pop_back();
    ++nodes;
    for (unsigned k = 0; k < node->mNumMeshes; ++k) {
      const aiMesh* m = scene.mMeshes[node->mMeshes[k]];
      const bool has_triangles =
          std::any_of(m->mFaces, m->mFaces + m->mNumFaces, [](const aiFace& f) { return f.mNumIndices == 3; });
      if (has_triangles) meshes.push_back({m});
    }
    for (unsigned c = node->mNumChildren; c-- > 0;) stack.push_back(node->mChildren[c]);
  }
}

void compare_mesh(const aiScene& scene, const aiMesh& source, const untold::asset& a, const untold::mesh_record& m,
                  const std::string& label) {
  std::vector<triangle> want;
  std::vector<char> used(source.mNumVertices, 0);
  for (unsigned f = 0; f < source.mNumFaces; ++f) {
    const aiFace& face = source.mFaces[f];
    if (face.mNumIndices != 3) continue;
    triangle t;
    for (int k = 0; k < 3; ++k) {
      const aiVector3D& p = source.mVertices[face.mIndices[k]];
      t[k] = bits(p.x, p.y, p.z);
      used[face.mIndices[k]] = 1;
    }
    want.push_back(canonical(t));
  }
  const auto distinct = static_cast<std::size_t>(std::count(used.begin(), used.end(), 1));

  check(m.index_count == 3 * want.size(),
        label + ": " + std::to_string(m.index_count / 3) + " triangles, assimp has " + std::to_string(want.size()));
  check(m.vertex_count == distinct, label + ": " + std::to_string(m.vertex_count) + " vertices, assimp's triangles use " +
                                        std::to_string(distinct));

  const auto view = untold::pbr_vertex_view::from_bytes(a.vertices(m));
  check(view.has_value() && view->size() == m.vertex_count, label + ": vertex bytes");
  if (!view || view->size() != m.vertex_count) return;
  const untold::byte_span index_bytes = a.indices(m);
  std::vector<std::uint32_t> indices(m.index_count);
  for (std::size_t i = 0; i < indices.size(); ++i)
    indices[i] = m.index_type == 1 ? untold::load_le_unchecked<std::uint16_t>(index_bytes.data() + 2 * i)
                                   : untold::load_le_unchecked<std::uint32_t>(index_bytes.data() + 4 * i);
  std::vector<char> referenced(m.vertex_count, 0);
  std::vector<triangle> got;
  for (std::size_t i = 0; i + 2 < indices.size(); i += 3) {
    triangle t;
    for (int k = 0; k < 3; ++k) {
      const auto p = view->position(indices[i + k]);
      t[k] = bits(p[0], p[1], p[2]);
      referenced[indices[i + k]] = 1;
    }
    got.push_back(canonical(t));
  }
  check(std::all_of(referenced.begin(), referenced.end(), [](char r) { return r != 0; }),
        label + ": a vertex no index references");
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  check(want == got, label + ": the triangles (as position triples) differ from assimp's");

  aiString name;
  if (source.mMaterialIndex < scene.mNumMaterials &&
      scene.mMaterials[source.mMaterialIndex]->Get(AI_MATKEY_NAME, name) == AI_SUCCESS && name.length > 0 &&
      m.material_index != untold::none) {
    const std::string stored(a.string(a.materials()[m.material_index].name_offset));
    check(stored == std::string(name.C_Str()) || stored.find('?') != std::string::npos,
          label + ": material '" + stored + "', assimp says '" + name.C_Str() + "'");
  }
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

  Assimp::Importer importer;
  const aiScene* scene = untold::tools::import_scene(importer, model);

  untold::tools::cook_options options;
  options.input = model;
  options.output = output;
  options.compression = untold::tools::uniform_policy({untold::compression::zstd, 0});
  const untold::tools::cook_report report = untold::tools::cook(options);

  if (scene == nullptr) {
    std::printf("assimp rejects %s: %s\n", model.string().c_str(), importer.GetErrorString());
    check(!report, "cook succeeded on a file assimp rejects");
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

  std::vector<expected_mesh> expected;
  std::size_t nodes = 0;
  collect(*scene, expected, nodes);
  check(a.entities().size() == nodes,
        std::to_string(a.entities().size()) + " entities for " + std::to_string(nodes) + " nodes");
  check(a.meshes().size() == expected.size(), std::to_string(a.meshes().size()) + " meshes, expected " +
                                                  std::to_string(expected.size()) + " (node, triangle mesh) pairs");
  std::uint64_t triangles = 0, vertices = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(expected.size(), a.meshes().size()); ++i) {
    const untold::mesh_record m = a.meshes()[i];
    compare_mesh(*scene, *expected[i].mesh, a, m, "mesh " + std::to_string(i));
    triangles += m.index_count / 3;
    vertices += m.vertex_count;
  }
  std::printf("%s: %zu entities, %zu meshes, %llu vertices, %llu triangles, %llu bytes: %s\n", model.string().c_str(),
              static_cast<std::size_t>(a.entities().size()), static_cast<std::size_t>(a.meshes().size()),
              static_cast<unsigned long long>(vertices), static_cast<unsigned long long>(triangles),
              static_cast<unsigned long long>(report.bytes), failures == 0 ? "matches assimp" : "FAILED");
  return failures == 0 ? 0 : 1;
}
