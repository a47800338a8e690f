// untold_make_scene - writes a generated benchmark scene (scene_generator.hpp).
//
//   untold_make_scene --meshes 1000 --geometry-mb 64 --compress zstd -o scene.untold
//   untold_make_scene --meshes 1000 --geometry-mb 64 --glb -o scene.glb   # the same scene as glTF
#include "glb_writer.hpp"
#include "scene_generator.hpp"

#include <untold/untold.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: untold_make_scene [--meshes N] [--geometry-mb M] [--compress none|lz4|zstd]\n"
               "                         [--level L] [--seed S] [--glb] -o FILE\n"
               "  N meshes (default 100, 1..10000000), about M MiB of vertex + index data (default 1),\n"
               "  every chunk compressed as asked (default none); --glb writes the same scene as\n"
               "  binary glTF (float32 attributes) instead of .untold.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  untold_bench::scene_spec spec;
  std::string out;
  bool glb = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    std::uint64_t n = 0;
    if (arg == "--glb") {
      glb = true;
    } else if (!value) {
      return usage();
    } else if (untold_bench::parse_scene_option(arg, value, spec)) {
      ++i;
    } else if (arg == "--level" && untold_bench::parse_u64(value, n) && n <= 22) {
      spec.level = static_cast<int>(n);
      ++i;
    } else if (arg == "--seed" && untold_bench::parse_u64(value, n) && n <= 0xFFFFFFFFu) {
      spec.seed = static_cast<std::uint32_t>(n);
      ++i;
    } else if (arg == "-o" || arg == "--output") {
      out = value;
      ++i;
    } else {
      return usage();
    }
  }
  if (out.empty()) return usage();

  const untold_bench::scene_plan plan = untold_bench::plan_scene(spec);
  std::vector<std::byte> bytes;
  if (glb) {
    bytes = untold_bench::write_glb(plan);
  } else {
    auto file = untold_bench::write_untold(plan);
    if (!file) {
      std::fprintf(stderr, "untold_make_scene: %s\n", file.error().describe().c_str());
      return 1;
    }
    bytes = std::move(*file);
  }
  if (const auto s = untold::write_file(out, bytes); !s) {
    std::fprintf(stderr, "untold_make_scene: %s: %s\n", out.c_str(), s.error().describe().c_str());
    return 1;
  }
  std::size_t wide = 0;
  for (const untold_bench::mesh_plan& m : plan.meshes) wide += m.index_type == untold::index_type::uint32;
  std::printf("%s: %zu bytes, %zu meshes (%zu with uint32 indices), %zu entities, %zu materials, %zu textures, "
              "%.1f MiB geometry\n",
              out.c_str(), bytes.size(), plan.meshes.size(), wide, plan.entities.size(), plan.materials.size(),
              plan.textures.size(), static_cast<double>(plan.geometry_bytes()) / (1 << 20));
  return 0;
}
