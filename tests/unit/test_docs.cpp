// The record tables of docs/format.md agree with the codecs: for every
// table documented as "| off | field | type |" under a "#### Name (type)"
// heading (the extension tables, the version-4 material, the morph and
// muscle tables), each field's offset, spec name and byte size equal what
// record_traits<R>::fields encodes at version 4. A doc that drifts from the
// code fails here.
#include <doctest/doctest.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
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
    if (line.rfind("#### ", 0) == 0) {
      const auto open = line.find('(');
      current = open == std::string::npos ? 0 : static_cast<std::uint32_t>(std::atoi(line.c_str() + open + 1));
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

}  // namespace

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

