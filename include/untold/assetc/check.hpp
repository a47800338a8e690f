// untold/assetc/check.hpp - cross-file integrity of a compiled runtime tree,
// like `assetc check`: the library half of `untold check DIR`.
//
// Reads: every .hmesh, .hmat, .hman, .hanim and .hpack of a file set given
// as a list of relative paths plus a lookup that returns a file's bytes (so
// the library needs no filesystem: a directory, a pack or memory all work).
//
// Reports, for every file and not only the first problem:
//   - the file's own rules (open_hmesh/.../open_hpack, with open_options);
//   - HM-CHECK-MATERIALS  a .hmesh and its sibling .hmat (same stem) differ
//                         in material count;
//   - HM-CHECK-TEXTURE    a non-zero .hmat texture ref is in no .hman;
//   - HM-CHECK-MANIFEST   refs exist but the set has no .hman at all;
//   - HM-CHECK-FILE       a .hman entry's path is not in the set (or its
//                         lookup fails);
//   - HM-CHECK-HASH       a .hman entry's hash != hash_ref(path without its
//                         final extension), e.g. "models/c/tex_0.ktx2" must
//                         carry hash_ref("models/c/tex_0");
//   - HM-CHECK-JOINT      a .hanim channel's joint >= the SKEL joint count of
//                         the sibling .hmesh (or that mesh is missing).
// Submesh material slots are already HM-MATERIAL-SLOT of open_hmesh.
//
// Safe on untrusted input: every file goes through its validating reader
// first; only validated files take part in cross-file checks. Work is
// n log n in the number of files plus linear in their bytes. Problems are
// handed to a sink as they are found (the streaming form, what `untold
// check` uses), so memory does not grow with their number; the collecting
// form keeps them in the report. The cross-file index (every manifest hash)
// is charged to open_options::budget (HM-LIMITS), which a caller that reads
// a whole directory shares across its files.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../bytes.hpp"
#include "../error.hpp"
#include "common.hpp"
#include "fnv.hpp"
#include "hanim.hpp"
#include "hmat.hpp"
#include "hman.hpp"
#include "hmesh.hpp"
#include "hpack.hpp"

namespace untold::assetc {

/// Returns a file's bytes (valid until check_files returns), or nullopt when
/// it cannot be read.
using file_lookup = std::function<std::optional<byte_span>(std::string_view path)>;

struct check_problem {
  std::string file;  // the relative path the problem is about
  error err;
};

struct check_report {
  std::size_t meshes = 0, materials = 0, manifests = 0, animations = 0, packs = 0;
  std::size_t texture_refs = 0;      // non-zero .hmat refs looked up
  std::size_t manifest_entries = 0;  // .hman entries checked against the set
  std::size_t problem_count = 0;     // every problem found
  std::vector<check_problem> problems;  // the problems themselves: the collecting check_files only
  [[nodiscard]] bool ok() const noexcept { return problem_count == 0; }
};

/// Receives one problem as soon as it is found: the relative path it is
/// about (valid only during the call) and the error.
using problem_sink = std::function<void(std::string_view file, const error& err)>;

/// The path without the extension of its last component ("a/b.c.d" -> "a/b.c").
[[nodiscard]] constexpr std::string_view strip_extension(std::string_view path) noexcept {
  const std::size_t dot = path.rfind('.');
  const std::size_t slash = path.rfind('/');
  const std::size_t start = slash == std::string_view::npos ? 0 : slash + 1;
  if (dot == std::string_view::npos || dot <= start) return path;  // ".hidden" has no extension
  return path.substr(0, dot);
}

[[nodiscard]] constexpr std::string_view extension_of(std::string_view path) noexcept {
  const std::string_view stem = strip_extension(path);
  return stem.size() == path.size() ? std::string_view{} : path.substr(stem.size() + 1);
}

/// Checks the set (rules above) and hands every problem to `on_problem`;
/// the report holds the counts (problems stays empty). `paths` are
/// relative, '/'-separated; files with other extensions (.ktx2, .spv ...)
/// only serve as manifest targets. Precondition: `read` and `on_problem`
/// are callable.
[[nodiscard]] inline check_report check_files(std::span<const std::string> paths, const file_lookup& read,
                                              const open_options& options, const problem_sink& on_problem) {
  check_report report;
  std::vector<std::string_view> sorted(paths.begin(), paths.end());
  std::sort(sorted.begin(), sorted.end());
  auto exists = [&sorted](std::string_view p) { return std::binary_search(sorted.begin(), sorted.end(), p); };
  auto problem = [&report, &on_problem](std::string_view file, const error& e) {
    ++report.problem_count;
    on_problem(file, e);
  };
  std::uint64_t bytes_read = 0;  // what the cross-file index is charged against when no budget is shared

  struct opened_mesh {
    std::string_view path;
    hmesh mesh;
  };
  std::vector<opened_mesh> meshes;
  std::vector<std::pair<std::string_view, hmat>> mats;
  std::vector<std::pair<std::string_view, hman>> mans;
  std::vector<std::pair<std::string_view, hanim>> anims;

  for (const std::string_view path : sorted) {
    const std::string_view ext = extension_of(path);
    if (ext != "hmesh" && ext != "hmat" && ext != "hman" && ext != "hanim" && ext != "hpack") continue;
    const auto bytes = read(path);
    if (!bytes) {
      problem(path, make_error(errc::hm_check_file).at_field("path").with_value(path.size()).with_subject(path));
      continue;
    }
    bytes_read += bytes->size();
    auto keep = [&](auto opened, auto& into) {
      if (!opened) problem(path, opened.error());
      else into.emplace_back(path, std::move(*opened));
    };
    if (ext == "hmesh") {
      ++report.meshes;
      auto m = open_hmesh(*bytes, options);
      if (!m) problem(path, m.error());
      else meshes.push_back({path, *m});
    } else if (ext == "hmat") {
      ++report.materials;
      keep(open_hmat(*bytes, options), mats);
    } else if (ext == "hman") {
      ++report.manifests;
      keep(open_hman(*bytes, options), mans);
    } else if (ext == "hanim") {
      ++report.animations;
      keep(open_hanim(*bytes, options), anims);
    } else {
      ++report.packs;
      if (auto p = open_hpack(*bytes, options); !p) problem(path, p.error());
    }
  }

  // Manifest entries: the file exists and its path hashes to the entry.
  for (const auto& [man_path, man] : mans) {
    for (std::size_t i = 0; i < man.entries().size(); ++i) {
      const manifest_entry& e = man.entries()[i];
      ++report.manifest_entries;
      if (!exists(e.path)) problem(man_path, make_error(errc::hm_check_file).at_field("path").with_value(e.hash)
          .at_record(i).with_subject(e.path));
      if (hash_ref(strip_extension(e.path)) != e.hash)
        problem(man_path, make_error(errc::hm_check_hash).at_field("hash").with_value(e.hash).at_record(i)
            .with_subject(e.path));
    }
  }
  // Every manifest's hashes in one sorted array: one binary search per ref, however many manifests.
  budget own(options.limits, bytes_read);
  if (auto s = budget::own_or_shared(options.budget, own)
                   .charge_items(report.manifest_entries, sizeof(std::uint64_t), "manifest hashes", errc::hm_limit_exceeded);
      !s) {
    problem("", s.error());
    return report;
  }
  std::vector<std::uint64_t> known;
  known.reserve(report.manifest_entries);
  for (const auto& [p, m] : mans)
    for (const manifest_entry& e : m.entries()) known.push_back(e.hash);
  std::sort(known.begin(), known.end());
  auto in_manifest = [&known](std::uint64_t hash) { return std::binary_search(known.begin(), known.end(), hash); };

  // Material tables: every texture ref resolves.
  for (const auto& [mat_path, mat] : mats) {
    bool reported_no_manifest = false;
    for (std::size_t r = 0; r < mat.size(); ++r) {
      const auto refs = mat.rows()[r].textures();
      for (std::size_t slot = 0; slot < refs.size(); ++slot) {
        if (refs[slot] == 0) continue;
        ++report.texture_refs;
        if (mans.empty()) {
          if (!reported_no_manifest) problem(mat_path, make_error(errc::hm_check_manifest)
              .at_field(material_texture_slots[slot]).with_value(refs[slot]).at_record(r));
          reported_no_manifest = true;
        } else if (!in_manifest(refs[slot])) {
          problem(mat_path, make_error(errc::hm_check_texture).at_field(material_texture_slots[slot])
              .with_value(refs[slot]).at_record(r));
        }
      }
    }
  }

  // Meshes and their sibling material tables (meshes sorted by stem: "a-b" < "a" as paths, not as stems).
  std::sort(meshes.begin(), meshes.end(), [](const opened_mesh& a, const opened_mesh& b) {
    return strip_extension(a.path) < strip_extension(b.path);
  });
  auto find_mesh = [&meshes](std::string_view stem) -> const opened_mesh* {
    const auto it = std::lower_bound(meshes.begin(), meshes.end(), stem, [](const opened_mesh& m, std::string_view s) {
      return strip_extension(m.path) < s;
    });
    return it != meshes.end() && strip_extension(it->path) == stem ? &*it : nullptr;
  };
  for (const auto& [mat_path, mat] : mats) {
    const opened_mesh* m = find_mesh(strip_extension(mat_path));
    if (m == nullptr) continue;  // a standalone material table
    if (m->mesh.desc().material_count != mat.size()) {
      error e = make_error(errc::hm_check_materials).at_field("count").with_value(mat.size());
      e.context.limit = m->mesh.desc().material_count, e.context.has_limit = true;
      problem(mat_path, e.with_subject(m->path));
    }
  }

  // Animations: joints inside the sibling mesh's skeleton.
  for (const auto& [anim_path_, anim] : anims) {
    const opened_mesh* m = find_mesh(strip_extension(anim_path_));
    const std::size_t joints = m == nullptr ? 0 : m->mesh.skeleton().size();
    for (std::size_t k = 0; k < anim.all_channels().size(); ++k) {
      const anim_channel& ch = anim.all_channels()[k];
      if (ch.joint < joints) continue;
      error e = make_error(errc::hm_check_joint).at_field("joint").with_value(ch.joint).at_record(k);
      e.context.limit = joints, e.context.has_limit = true;
      problem(anim_path_, m == nullptr ? e.with_subject("no sibling .hmesh") : e);
      break;  // one report per file: a wrong skeleton breaks every channel
    }
  }
  return report;
}

/// The same, keeping every problem in the report (small sets: tests, the
/// build's verification).
[[nodiscard]] inline check_report check_files(std::span<const std::string> paths, const file_lookup& read,
                                              const open_options& options = {}) {
  std::vector<check_problem> problems;
  check_report report = check_files(paths, read, options, [&problems](std::string_view file, const error& e) {
    problems.push_back({std::string(file), e});
  });
  report.problems = std::move(problems);
  return report;
}

}  // namespace untold::assetc
