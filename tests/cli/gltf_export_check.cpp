// untold_gltf_export_check OUTDIR MODEL... : imports each model with the
// library's importer for its format (Urho3D .mdl, PMDL .pmdl_b, anything
// else through assimp) and writes OUTDIR/<id>.glb and OUTDIR/<id>/<id>.gltf
// (+ .bin), for the Khronos glTF-Validator run (gltf_validate.js, ctest
// gltf.validator). A model the library rejects is listed and skipped (the
// importers' own tests cover rejections); any export failure fails the run.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <untold/udm/pmdl.hpp>
#include <untold/urho3d/import.hpp>

#include "gltf_export.hpp"
#include "import_model.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<std::byte> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  const auto* b = reinterpret_cast<const std::byte*>(text.data());
  return {b, b + text.size()};
}

/// Imports `model` into `out`; false with the importer's reason in `why`.
bool import(const fs::path& model, untold::convert::scene& out, std::string& why) {
  const std::string ext = model.extension().string();
  if (ext == ".mdl") {
    auto s = untold::urho3d::import_files(file_bytes(model), {}, model.stem().string());
    if (!s) return why = s.error().describe(), false;
    out = std::move(*s);
  } else if (ext == ".pmdl_b" || ext == ".pmdl") {
    auto s = untold::udm::import_pmdl(file_bytes(model));
    if (!s) return why = s.error().describe(), false;
    out = std::move(*s);
  } else {
    auto r = untold::tools::import_model(model);
    if (!r) return why = r.error, false;
    out = std::move(r.scene);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: untold_gltf_export_check OUTDIR MODEL...\n");
    return 2;
  }
  const fs::path out_dir = argv[1];
  fs::remove_all(out_dir);
  fs::create_directories(out_dir);
  int failures = 0;
  for (int i = 2; i < argc; ++i) {
    const fs::path model = argv[i];
    // <parent folder>_<file name>: unique over the models passed, readable in the validator's output.
    std::string id = model.parent_path().filename().string() + "_" + model.filename().string();
    for (char& c : id)
      if (c == '.' || c == ' ') c = '_';
    untold::convert::scene scene;
    std::string why;
    if (!import(model, scene, why)) {
      std::printf("not imported: %s: %s\n", model.string().c_str(), why.c_str());
      continue;
    }
    using untold::tools::gltf_container;
    fs::create_directories(out_dir / id);
    for (const auto& [path, container] : {std::pair{out_dir / (id + ".glb"), gltf_container::glb},
                                          std::pair{out_dir / id / (id + ".gltf"), gltf_container::gltf}}) {
      auto r = untold::tools::write_gltf(scene, path,
                                         {.container = container, .image_directory = model.parent_path()});
      if (!r) {
        std::printf("FAILED: %s -> %s: %s\n", model.string().c_str(), path.string().c_str(),
                    r.error().describe().c_str());
        ++failures;
        continue;
      }
      std::printf("wrote %s (%zu files, %zu report entries)\n", path.string().c_str(), r->files.size(),
                  r->report.entries.size());
    }
  }
  return failures == 0 ? 0 : 1;
}
