// The record tables of docs/format.md agree with the codecs: for every
// table documented as "| off | field | type |" under a "#### Name (type)"
// heading (the extension tables, the version-4 material, the morph and
// muscle tables), each field's offset, spec name and byte size equal what
// record_traits<R>::fields encodes at version 4. A doc that drifts from the
// code fails here.
//
// Speed figures live in docs/benchmarks.md only (issue 19 item 7: bench/run.sh
// regenerates every figure there in one run; docs/compile-time.md has its own
// script): no other page and not README.md states a time, a throughput or a
// "N x memcpy" ratio; they link to the benchmarks section instead, and those
// links (every "page.md#anchor" or "#anchor" of the docs) name headings that
// exist.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <untold/extensions.hpp>

namespace {

struct doc_field {
  std::size_t offset = 0;
  std::string name;
  std::size_t size = 0;
};

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" `");
  const auto e = s.find_last_not_of(" `");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream ss(row.substr(1));
  for (std::string c; std::getline(ss, c, '|');) out.push_back(trim(c));
  return out;
}

/// Byte size of one field of a documented type ("u32", "string", "f32 x 3",
/// "matrix", "u64", "f16 x 3" (binary16), "u32 x 2" for two fields -> per field).
std::size_t type_size(std::string type, std::size_t names) {
  type = type.substr(0, type.find_first_of(":("));
  type = trim(type);
  std::size_t count = 1;
  if (const auto x = type.find(" x "); x != std::string::npos) {
    count = std::stoul(type.substr(x + 3));
    type = trim(type.substr(0, x));
  }
  const std::size_t unit = type == "u64"                                          ? 8
                           : type == "matrix"                                     ? 64
                           : (type == "u32" || type == "string" || type == "f32") ? 4
                           : (type == "f16" || type == "u16")                     ? 2
                                                                                  : 0;
  REQUIRE_MESSAGE(unit != 0, "unknown documented type '" << type << "'");
  // "a, b | u32 x 2" documents two fields of 4 bytes; "color | f32 x 3" one of 12.
  return names > 1 ? unit * count / names : unit * count;
}

/// chunk type -> the fields documented in its "| off | field | type" table.
std::map<std::uint32_t, std::vector<doc_field>> documented_tables() {
  std::ifstream in(UNTOLD_TEST_DATA_DIR "/../../docs/format.md");
  REQUIRE(in);
  std::map<std::uint32_t, std::vector<doc_field>> tables;
  std::uint32_t current = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) {  // a record table runs until the next heading of any level
      const auto open = line.find('(');
      current = line.rfind("#### ", 0) != 0 || open == std::string::npos
                    ? 0
                    : static_cast<std::uint32_t>(std::atoi(line.c_str() + open + 1));
      continue;
    }
    if (current == 0 || line.empty() || line[0] != '|') continue;
    const auto c = cells(line);
    if (c.size() < 3 || c[0].empty() || !std::isdigit(static_cast<unsigned char>(c[0][0]))) continue;
    std::vector<std::string> names;
    std::stringstream ss(c[1]);
    for (std::string n; std::getline(ss, n, ',');) names.push_back(trim(n));
    const std::size_t size = type_size(c[2], names.size());
    std::size_t offset = std::stoul(c[0]);
    for (const auto& n : names) {
      tables[current].push_back({offset, n, size});
      offset += size;
    }
  }
  return tables;
}

struct collect {
  std::vector<doc_field>* out;
  std::size_t offset = 0;
  template <class T>
  void operator()(const T&, const char* name) {
    out->push_back({offset, name, sizeof(T)});
    offset += sizeof(T);
  }
};

template <class R>
std::vector<doc_field> codec_fields() {
  std::vector<doc_field> out;
  R record{};
  collect c{&out};
  untold::record_traits<R>::fields(c, record, untold::max_format_version);
  return out;
}

template <class R>
void check_table(const std::map<std::uint32_t, std::vector<doc_field>>& docs) {
  const auto type = static_cast<std::uint32_t>(untold::record_traits<R>::table);
  CAPTURE(type);
  const auto it = docs.find(type);
  REQUIRE_MESSAGE(it != docs.end(), "docs/format.md has no field table for chunk type " << type);
  const auto code = codec_fields<R>();
  REQUIRE(it->second.size() == code.size());
  for (std::size_t i = 0; i < code.size(); ++i) {
    CAPTURE(code[i].name);
    CHECK(it->second[i].name == code[i].name);
    CHECK(it->second[i].offset == code[i].offset);
    CHECK(it->second[i].size == code[i].size);
  }
}

const std::filesystem::path repo_root = UNTOLD_TEST_DATA_DIR "/../..";

std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// docs/*.md and README.md, as paths relative to the repository root.
std::vector<std::string> documentation_pages() {
  std::vector<std::string> pages{"README.md", "SECURITY.md"};
  for (const auto& entry : std::filesystem::directory_iterator(repo_root / "docs"))
    if (entry.is_regular_file() && entry.path().extension() == ".md")
      pages.push_back("docs/" + entry.path().filename().string());
  std::sort(pages.begin(), pages.end());
  return pages;
}

// What a measured speed looks like in prose or a table: a number with a time
// or throughput unit, a number times a baseline ("1.6x raw LZ4", "3× memcpy's
// time"), or a rate of things per second. Bare seconds are left out on
// purpose: timeouts, backoff schedules and simulated camera paths are
// settings and outputs of deterministic code, not measurements.
const std::vector<std::regex>& speed_figure_patterns() {
  static const std::string times = "(x|\xC3\x97)";  // x or U+00D7
  static const std::vector<std::regex> patterns{
      std::regex("\\d(\\.\\d+)?\\s?([KMGT]i?B/s|ms|us|\xC2\xB5s|ns)\\b"),  // \xC2\xB5 = U+00B5
      std::regex("\\d(\\.\\d+)?\\s?" + times +
                 "\\s?(a |the )?(memcpy|raw|faster|slower|scalar|cgltf|fastgltf|tinygltf|assimp)\\b"),
      std::regex("\\d(\\.\\d+)?\\s?times (faster|slower|the speed|as fast)"),
      std::regex("\\d(\\.\\d+)?\\s?[kKMG]?\\s?(triangles|properties|vertices|indices|meshes|files|requests)/s\\b"),
  };
  return patterns;
}

bool states_a_speed(const std::string& text) {
  const auto& patterns = speed_figure_patterns();
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::regex& pattern) { return std::regex_search(text, pattern); });
}

/// Figures that match a pattern but are fixed facts, not measurements.
struct allowed_figure {
  std::string_view page;
  std::string_view text;  // a substring of the line
};
constexpr allowed_figure allowed_figures[] = {
    {"docs/streaming.md", "(64 KiB/s)"},  // the nginx test server's limit_rate for /slow/: a fixture setting
};

bool allowed(const std::string& page, const std::string& line) {
  return std::any_of(std::begin(allowed_figures), std::end(allowed_figures), [&](const allowed_figure& a) {
    return a.page == page && line.find(a.text) != std::string::npos;
  });
}

/// The anchor GitHub gives a heading: lower case, ASCII letters, digits,
/// '-' and '_' kept, spaces become '-', everything else dropped; the n-th
/// repeat of a heading gets "-n".
std::set<std::string> heading_anchors(const std::filesystem::path& page) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  bool in_code = false;
  for (const auto& line : read_lines(page)) {
    if (line.rfind("```", 0) == 0) in_code = !in_code;
    if (in_code || line.empty() || line[0] != '#') continue;
    const auto text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ') continue;
    std::string anchor;
    for (const char c : line.substr(text + 1)) {
      const auto u = static_cast<unsigned char>(c);
      if (std::isalnum(u) && u < 0x80) anchor += static_cast<char>(std::tolower(u));
      else if (c == ' ') anchor += '-';
      else if (c == '-' || c == '_') anchor += c;
    }
    const int repeat = seen[anchor]++;
    anchors.insert(repeat == 0 ? anchor : anchor + "-" + std::to_string(repeat));
  }
  return anchors;
}

}  // namespace

TEST_CASE("docs: the speed-figure detector flags measurements and passes fixed facts") {
  // Lines the pages held before their figures moved to docs/benchmarks.md.
  for (const char* measured : {
           "every byte of the file once at open: about 2 GB/s with OpenSSL, so a 200 MB",
           "| planner tick, 10,000 tiles | **0.22 ms** | 19.7 \xC2\xB5s | 11.3x |",
           "| 64 x 64 (4 K vertices) | 0.30 MB | 2.3 us | 0.67 us | 31 us |",
           "| `u3d/mdl_memcpy` | 0.72 ms | 19.7 GiB/s |",
           "(or the `untold_bench` target, `--benchmark_filter=u3d`). Extraction costs 1.6\xC3\x97 raw LZ4",
           "| `import_pmdl` from bytes (parse + neutral mesh) | 6.1 ms | 2.4 GB/s | 1.66 \xC3\x97 raw LZ4 |",
           "meshlet index, weight and position, about 1.5x a memcpy of the file.",
           "cache-resident case AVX2 is about 3x the scalar path.",
           "| parse of 100k elements | 17.4 ms | 23 M properties/s | |",
           "a compile at 300000 triangles/s",
           "the writer is 2 times faster",
       }) {
    CAPTURE(measured);
    CHECK(states_a_speed(measured));
  }
  for (const char* fact : {
           "| 8 | baseColorFactor | f32 x 4 | all |",
           "stay within 2 x the joint count + 4096 steps",
           "12 \xC3\x97 f32 offset matrix (3\xC3\x97" "4 row-major)",
           "| 100 Mbit/s | 160 MiB | 1064 MiB | 92 | 5.2 s | 160 MiB |",
           "backoff exactly 5/10/20/60/60/60 s",
           "model, 15.2 MB; a ULZ4 package of it plus 1 MiB of XML-like text",
           "The decoded output is 2.25 times the input (72 bytes per vertex)",
           "namespace us = untold::streaming;",
       }) {
    CAPTURE(fact);
    CHECK_FALSE(states_a_speed(fact));
  }
}

TEST_CASE("docs: speed figures appear only in docs/benchmarks.md and docs/compile-time.md") {
  // benchmarks.md is written by bench/run.sh + bench/report.py from one run;
  // compile-time.md by scripts/compile-time.sh. Any other page links to the
  // benchmarks section that shows the figure and names the benchmark.
  std::string found;
  for (const auto& page : documentation_pages()) {
    if (page == "docs/benchmarks.md" || page == "docs/compile-time.md") continue;
    const auto lines = read_lines(repo_root / page);
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (states_a_speed(lines[i]) && !allowed(page, lines[i]))
        found += page + ":" + std::to_string(i + 1) + ": " + lines[i] + "\n";
  }
  CHECK_MESSAGE(found.empty(), "speed figures outside docs/benchmarks.md (link to its section instead):\n" << found);
}

TEST_CASE("docs: every link to a section (page.md#anchor, #anchor) names a heading of that page") {
  static const std::regex link(R"re(\]\(([A-Za-z0-9_./-]*\.md)?#([^)\s]+)\))re");
  std::map<std::string, std::set<std::string>> anchors;  // page -> its headings' anchors
  std::string broken;
  for (const auto& page : documentation_pages()) {
    const auto lines = read_lines(repo_root / page);
    const auto dir = std::filesystem::path(page).parent_path();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      for (std::sregex_iterator m(lines[i].begin(), lines[i].end(), link), end; m != end; ++m) {
        const auto target =
            (*m)[1].matched ? (dir / (*m)[1].str()).lexically_normal().generic_string() : page;
        if (!anchors.count(target)) {
          REQUIRE_MESSAGE(std::filesystem::exists(repo_root / target), page << ":" << i + 1 << " links to " << target);
          anchors[target] = heading_anchors(repo_root / target);
        }
        if (!anchors[target].count((*m)[2].str()))
          broken += page + ":" + std::to_string(i + 1) + ": " + target + "#" + (*m)[2].str() + "\n";
      }
    }
  }
  CHECK_MESSAGE(broken.empty(), "links to headings that do not exist:\n" << broken);
}

TEST_CASE("docs: the record tables of docs/format.md match the codecs field by field") {
  const auto docs = documented_tables();
  check_table<untold::skeleton_record>(docs);
  check_table<untold::skeleton_joint_record>(docs);
  check_table<untold::skin_record>(docs);
  check_table<untold::skin_joint_mapping_record>(docs);
  check_table<untold::animation_clip_record>(docs);
  check_table<untold::animation_channel_record>(docs);
  check_table<untold::translation_keyframe_record>(docs);
  check_table<untold::rotation_keyframe_record>(docs);
  check_table<untold::light_record>(docs);
  check_table<untold::camera_record>(docs);
  check_table<untold::color_management_record>(docs);
  check_table<untold::color_grade_lut_record>(docs);
  check_table<untold::material_record>(docs);  // version 4
  check_table<untold::morph_target_record>(docs);
  check_table<untold::morph_target_entry>(docs);
  check_table<untold::morph_driver_record>(docs);
  check_table<untold::muscle_record>(docs);
}

