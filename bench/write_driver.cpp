// untold_write_driver - writes a generated scene (scene_generator.hpp) the way
// a converter does, to measure the writer's peak memory (issue 19 item 5).
//
//   /usr/bin/time -v untold_write_driver --meshes 1000 --geometry-mb 1024 -o big.untold
//   /usr/bin/time -v untold_write_driver --meshes 1000 --geometry-mb 1024 --in-memory -o big.untold
//
// Each mesh's input arrays (encoded vertices, indices) are made, handed to
// add_mesh and dropped, so at most one mesh's inputs are alive: the peak RSS
// is the writer's own (the builder's copy of the geometry plus whatever
// writing adds). Default: builder::write streamed into the file
// (write_file_with); --in-memory: builder::finish() and write_file, the
// whole-file vector way. Prints the output size, the peak RSS (getrusage)
// and their ratio.
#include "scene_generator.hpp"

#include <untold/io.hpp>
#include <untold/writer.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: untold_write_driver [--meshes N] [--geometry-mb M] [--compress none|lz4|zstd]\n"
               "                           [--threads T] [--no-hash] [--in-memory] -o FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  untold_bench::scene_spec spec;
  std::string out;
  bool in_memory = false, hash = true;
  std::uint64_t threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    std::uint64_t n = 0;
    if (arg == "--in-memory") {
      in_memory = true;
    } else if (arg == "--no-hash") {
      hash = false;
    } else if (!value) {
      return usage();
    } else if (untold_bench::parse_scene_option(arg, value, spec)) {
      ++i;
    } else if (arg == "--threads" && untold_bench::parse_u64(value, n) && n <= 1024) {
      threads = n;
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
  untold::builder b{untold::file_type::tile};
  untold_bench::add_scene_metadata(b, plan);
  for (std::uint32_t i = 0; i < plan.meshes.size(); ++i) {
    const untold_bench::mesh_geometry g = untold_bench::make_geometry(plan, i);
    const auto vertices = untold_bench::encode_vertices(g);
    if (!vertices) {
      std::fprintf(stderr, "untold_write_driver: %s\n", vertices.error().describe().c_str());
      return 1;
    }
    const untold_bench::mesh_plan& m = plan.meshes[i];
    b.add_mesh({.entity = m.entity, .name = "mesh_" + std::to_string(i), .material = m.material,
                .vertices = *vertices, .indices = g.indices, .index_type = m.index_type});
  }
  untold::write_options options = untold_bench::write_options_for(spec);
  options.content_hash = hash;
  options.block_digests.reset();  // the builder's default
  options.threads = static_cast<unsigned>(threads);

  untold::status written;
  if (in_memory) {
    auto file = b.finish(options);
    written = file ? untold::write_file(out, *file) : untold::status(file.error());
  } else {
    written = untold::write_file_with(out, [&](auto&& sink) { return b.write(sink, options); });
  }
  if (!written) {
    std::fprintf(stderr, "untold_write_driver: %s: %s\n", out.c_str(), written.error().describe().c_str());
    return 1;
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(out, ec);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak = static_cast<double>(usage.ru_maxrss) * 1024.0;  // KiB on Linux
  std::printf("%s: %llu bytes (%s), peak RSS %.1f MiB = %.2f x the output\n", out.c_str(),
              static_cast<unsigned long long>(size), in_memory ? "finish + write_file" : "write, streamed",
              peak / (1 << 20), peak / static_cast<double>(size));
  return 0;
}
