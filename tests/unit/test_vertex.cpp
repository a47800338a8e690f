// Vertex layouts (untold/vertex.hpp): the spec's 24 PBR_STATIC_V1 vectors bit
// for bit (read from vertex-vectors.json), encoders and their errors, views,
// GpuVertex, the PBR -> GPU conversion, and bulk decode on every SIMD path
// against the scalar path, bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <ranges>
#include <sstream>
#include <string>
#include <vector>

#include "untold/vertex_decode.hpp"
#include "support.hpp"

namespace {

using test::random_bytes;

// ---- a tiny JSON reader, just enough for vertex-vectors.json ---------------------

struct json_value {
  enum class kind { null, boolean, number, string, array, object } type = kind::null;
  double number = 0.0;
  bool boolean = false;
  std::string text;
  std::vector<json_value> items;  // array elements, or object values
  std::vector<std::string> keys;  // object keys, parallel to items

  const json_value* find(std::string_view key) const {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return &items[i];
    }
    return nullptr;
  }
};

class json_parser {
 public:
  explicit json_parser(std::string_view s) : s_(s) {}

  bool parse(json_value& out) {
    if (!value(out)) return false;
    skip_ws();
    return pos_ == s_.size();
  }

 private:
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool string(std::string& out) {
    if (!eat('"')) return false;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\') {
        if (++pos_ >= s_.size()) return false;
        const char e = s_[pos_];
        out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);  // enough for this file
      } else {
        out.push_back(s_[pos_]);
      }
      ++pos_;
    }
    return eat('"');
  }
  bool value(json_value& v) {
    skip_ws();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.type = json_value::kind::object;
      if (eat('}')) return true;
      do {
        std::string key;
        if (!string(key) || !eat(':')) return false;
        v.keys.push_back(std::move(key));
        v.items.emplace_back();
        if (!value(v.items.back())) return false;
      } while (eat(','));
      return eat('}');
    }
    if (c == '[') {
      ++pos_;
      v.type = json_value::kind::array;
      if (eat(']')) return true;
      do {
        v.items.emplace_back();
        if (!value(v.items.back())) return false;
      } while (eat(','));
      return eat(']');
    }
    if (c == '"') {
      v.type = json_value::kind::string;
      return string(v.text);
    }
    if (literal("true")) {
      v.type = json_value::kind::boolean;
      v.boolean = true;
      return true;
    }
    if (literal("false")) {
      v.type = json_value::kind::boolean;
      return true;
    }
    if (literal("null")) return true;
    // from_chars is locale-independent and correctly rounded.
    v.type = json_value::kind::number;
    const auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), v.number);
    if (ec != std::errc{}) return false;
    pos_ = static_cast<std::size_t>(end - s_.data());
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

std::uint32_t parse_hex(const json_value& v) {
  REQUIRE(v.type == json_value::kind::string);
  REQUIRE(v.text.size() > 2);
  std::uint32_t out = 0;
  const auto [end, ec] = std::from_chars(v.text.data() + 2, v.text.data() + v.text.size(), out, 16);
  REQUIRE(ec == std::errc{});
  REQUIRE(end == v.text.data() + v.text.size());
  return out;
}

std::vector<double> numbers(const json_value* v) {
  REQUIRE(v != nullptr);
  REQUIRE(v->type == json_value::kind::array);
  std::vector<double> out;
  for (const auto& item : v->items) {
    REQUIRE(item.type == json_value::kind::number);
    out.push_back(item.number);
  }
  return out;
}

struct spec_vector {
  std::vector<double> normal, tangent, uv0, uv1, color;
  double handedness = 0.0;
  std::uint32_t normal_packed = 0, tangent_packed = 0;
  std::array<std::uint16_t, 2> uv0_half{}, uv1_half{};
  std::array<std::uint8_t, 4> color_u8{};
};

std::vector<spec_vector> load_spec_vectors() {
  std::ifstream file(UNTOLD_TEST_DATA_DIR "/spec/vertex-vectors.json", std::ios::binary);
  REQUIRE(file.good());
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();
  json_value root;
  REQUIRE(json_parser(text).parse(root));
  const json_value* vectors = root.find("vectors");
  REQUIRE(vectors != nullptr);
  std::vector<spec_vector> out;
  for (const json_value& v : vectors->items) {
    spec_vector s;
    s.normal = numbers(v.find("normal"));
    s.tangent = numbers(v.find("tangent"));
    s.uv0 = numbers(v.find("uv0"));
    s.uv1 = numbers(v.find("uv1"));
    s.color = numbers(v.find("color"));
    REQUIRE(v.find("handedness") != nullptr);
    s.handedness = v.find("handedness")->number;
    s.normal_packed = parse_hex(*v.find("normal_packed"));
    s.tangent_packed = parse_hex(*v.find("tangent_packed"));
    for (std::size_t i = 0; i < 2; ++i) {
      s.uv0_half[i] = static_cast<std::uint16_t>(parse_hex(v.find("uv0_half")->items.at(i)));
      s.uv1_half[i] = static_cast<std::uint16_t>(parse_hex(v.find("uv1_half")->items.at(i)));
    }
    const auto colors = numbers(v.find("color_u8"));
    REQUIRE(colors.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) s.color_u8[i] = static_cast<std::uint8_t>(colors[i]);
    REQUIRE(s.normal.size() == 3);
    REQUIRE(s.tangent.size() == 3);
    REQUIRE(s.uv0.size() == 2);
    REQUIRE(s.uv1.size() == 2);
    REQUIRE(s.color.size() == 4);
    out.push_back(std::move(s));
  }
  return out;
}

// Interleaves the spec vectors into encoder streams of type Real.
template <class Real>
struct spec_streams {
  std::vector<Real> positions, normals, tangents, uv0, uv1, colors;

  explicit spec_streams(const std::vector<spec_vector>& vs) {
    for (std::size_t i = 0; i < vs.size(); ++i) {
      const auto& v = vs[i];
      for (double c : {static_cast<double>(i), -0.5, 1e6}) positions.push_back(static_cast<Real>(c));
      for (double c : v.normal) normals.push_back(static_cast<Real>(c));
      for (double c : v.tangent) tangents.push_back(static_cast<Real>(c));
      tangents.push_back(static_cast<Real>(v.handedness));
      for (double c : v.uv0) uv0.push_back(static_cast<Real>(c));
      for (double c : v.uv1) uv1.push_back(static_cast<Real>(c));
      for (double c : v.color) colors.push_back(static_cast<Real>(c));
    }
  }
  untold::basic_pbr_vertex_input<Real> input() const {
    return {.positions = positions, .normals = normals, .tangents = tangents, .uv0 = uv0, .uv1 = uv1,
            .colors = colors};
  }
};

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

bool same_bits(const void* a, const void* b, std::size_t n) { return n == 0 || std::memcmp(a, b, n) == 0; }

template <class T>
bool same_object_bits(const T& a, const T& b) {
  return same_bits(&a, &b, sizeof(T));
}

std::vector<untold::decode_path> available_simd_paths() {
  std::vector<untold::decode_path> out;
  for (auto p : {untold::decode_path::sse41, untold::decode_path::avx2, untold::decode_path::avx512,
                 untold::decode_path::neon}) {
    if (untold::decode_path_supported(p)) out.push_back(p);
  }
  return out;
}


// Vertices that hit every decoder edge: combinations of the code extremes
// with all four w values, then every 10-bit code in every field, every half
// bit pattern (NaN, inf, subnormals, -0) and every color byte in every
// channel; positions include NaN payloads, inf and -0.
std::vector<std::byte> edge_case_vertices() {
  const std::uint32_t codes[] = {0x000, 0x001, 0x1FF, 0x200, 0x201, 0x3FF, 0x100, 0x300};
  const std::uint32_t special_floats[] = {0x7F800001u, 0xFFC00000u, 0x7F800000u, 0x80000000u,
                                          0x00000001u, 0x7F7FFFFFu, 0xFFFFFFFFu, 0x3F800000u};
  std::vector<std::byte> out;
  auto push32 = [&out](std::uint32_t v) {
    std::byte b[4];
    untold::store_le_unchecked<std::uint32_t>(b, v);
    out.insert(out.end(), b, b + 4);
  };
  constexpr std::size_t code_count = std::size(codes);
  constexpr std::size_t combos = code_count * code_count * code_count * 4;  // 2048
  constexpr std::size_t n = 16384;  // 4 halves per vertex -> all 65536 patterns
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < 3; ++c) push32(special_floats[(i + c) % 8]);
    std::uint32_t x = 0, y = 0, z = 0, w = 0;
    if (i < combos) {
      x = codes[i % code_count];
      y = codes[(i / code_count) % code_count];
      z = codes[(i / code_count / code_count) % code_count];
      w = static_cast<std::uint32_t>(i / (code_count * code_count * code_count));
    } else {
      const auto k = static_cast<std::uint32_t>(i);
      x = k & 0x3FFu;
      y = (k + 341) & 0x3FFu;
      z = (k + 682) & 0x3FFu;
      w = (k >> 10) & 3u;
    }
    push32(x | (y << 10) | (z << 20) | (w << 30));  // normal word (w ignored by decoders)
    push32(z | (x << 10) | (y << 20) | (w << 30));  // tangent word
    const auto h = static_cast<std::uint32_t>(4 * i);  // halves 4i .. 4i+3
    push32(h | ((h + 1) << 16));
    push32((h + 2) | ((h + 3) << 16));
    const auto c = static_cast<std::uint32_t>(i & 0xFF);
    push32(c | (((c + 85) & 0xFF) << 8) | (((c + 170) & 0xFF) << 16) | (((c + 255) & 0xFF) << 24));
  }
  return out;
}

// Decodes `bytes` on `path` both ways and compares with the scalar path.
void check_paths_match(untold::byte_span bytes, untold::decode_path path) {
  const std::size_t n = bytes.size() / 32;
  CAPTURE(untold::decode_path_name(path));
  CAPTURE(n);
  // Interleaved, with a sentinel element after the output.
  std::vector<untold::pbr_vertex> ref(n), got(n + 1);
  REQUIRE(untold::decode_pbr_vertices(bytes, ref, untold::decode_path::scalar));
  untold::pbr_vertex sentinel;
  sentinel.position = {123.0f, 456.0f, 789.0f};
  got[n] = sentinel;
  REQUIRE(untold::decode_pbr_vertices(bytes, std::span(got).first(n), path));
  CHECK(same_bits(ref.data(), got.data(), n * sizeof(untold::pbr_vertex)));
  CHECK(same_object_bits(got[n], sentinel));

  // Streams, each followed by sentinel floats that must survive.
  constexpr std::size_t guard = 4;
  const std::size_t comps[6] = {3, 3, 4, 2, 2, 4};
  std::vector<float> ref_s[6], got_s[6];
  for (int s = 0; s < 6; ++s) {
    ref_s[s].assign(n * comps[s], 0.0f);
    got_s[s].assign(n * comps[s] + guard, -7.0f);
  }
  auto streams = [&](std::vector<float>* v, std::size_t extra_skip) {
    untold::pbr_vertex_streams s;
    std::span<float>* fields[6] = {&s.positions, &s.normals, &s.tangents, &s.uv0, &s.uv1, &s.colors};
    for (std::size_t i = 0; i < 6; ++i) {
      if (i == extra_skip) continue;
      *fields[i] = std::span(v[i]).first(n * comps[i]);
    }
    return s;
  };
  REQUIRE(untold::decode_pbr_vertices(bytes, streams(ref_s, 99), untold::decode_path::scalar));
  for (std::size_t skip : {std::size_t{99}, std::size_t{0}, std::size_t{3}}) {
    CAPTURE(skip);
    for (auto& g : got_s) std::fill(g.begin(), g.end(), -7.0f);
    REQUIRE(untold::decode_pbr_vertices(bytes, streams(got_s, skip), path));
    for (std::size_t s = 0; s < 6; ++s) {
      CAPTURE(s);
      if (s == skip) {
        CHECK(std::all_of(got_s[s].begin(), got_s[s].end(), [](float f) { return f == -7.0f; }));
        continue;
      }
      CHECK(same_bits(ref_s[s].data(), got_s[s].data(), n * comps[s] * sizeof(float)));
      CHECK(std::all_of(got_s[s].end() - guard, got_s[s].end(), [](float f) { return f == -7.0f; }));
    }
  }
  // The streams agree with the interleaved decode.
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(same_bits(&ref_s[0][3 * i], ref[i].position.data(), 12));
    REQUIRE(same_bits(&ref_s[1][3 * i], ref[i].normal.data(), 12));
    REQUIRE(same_bits(&ref_s[2][4 * i], ref[i].tangent.data(), 16));
    REQUIRE(same_bits(&ref_s[3][2 * i], ref[i].uv0.data(), 8));
    REQUIRE(same_bits(&ref_s[4][2 * i], ref[i].uv1.data(), 8));
    REQUIRE(same_bits(&ref_s[5][4 * i], ref[i].color0.data(), 16));
  }
}

}  // namespace

// ---- spec vectors -----------------------------------------------------------------

TEST_CASE("vertex: the 24 spec vectors bit for bit (vertex-vectors.json)") {
  const auto vs = load_spec_vectors();
  REQUIRE(vs.size() == 24);

  // Scalar codecs.
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i];
    CAPTURE(i);
    CHECK(untold::pack_normal_1010102(v.normal[0], v.normal[1], v.normal[2]) == v.normal_packed);
    CHECK(untold::pack_tangent_1010102(v.tangent[0], v.tangent[1], v.tangent[2], v.handedness) == v.tangent_packed);
    for (std::size_t c = 0; c < 2; ++c) {
      CHECK(*untold::float_to_half(v.uv0[c]) == v.uv0_half[c]);
      CHECK(*untold::float_to_half(v.uv1[c]) == v.uv1_half[c]);
    }
    for (std::size_t c = 0; c < 4; ++c) CHECK(untold::pack_unorm8(v.color[c]) == v.color_u8[c]);
  }

  // The encoder with double input reproduces every field.
  const spec_streams<double> in64(vs);
  const auto encoded = untold::encode_pbr_vertices(in64.input());
  REQUIRE(encoded.has_value());
  REQUIRE(encoded->size() == 24 * 32);
  const auto view = untold::pbr_vertex_view::from_bytes(*encoded);
  REQUIRE(view.has_value());
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i];
    CAPTURE(i);
    const auto p = view->packed(i);
    CHECK(p.position == std::array<float, 3>{static_cast<float>(i), -0.5f, 1e6f});
    CHECK(p.normal == v.normal_packed);
    CHECK(p.tangent == v.tangent_packed);
    CHECK(p.uv0 == v.uv0_half);
    CHECK(p.uv1 == v.uv1_half);
    CHECK(p.color0 == v.color_u8);
    // Decoding gives the exact stored values.
    const auto d = (*view)[i];
    CHECK(bits(d.uv0[0]) == bits(untold::half_to_float(v.uv0_half[0])));
    CHECK(d.color0[2] == static_cast<float>(v.color_u8[2]) / 255.0f);
    CHECK(d.tangent[3] == ((v.tangent_packed >> 31) != 0 ? -1.0f : 1.0f));
  }

  // Float input: identical wherever the spec input is exactly a float. The
  // other vectors were quantised from the double value; rounding it to float
  // first can move an exact tie (e.g. color 0.5/255), which is why the double
  // encoder exists.
  const spec_streams<float> in32(vs);
  const auto encoded32 = untold::encode_pbr_vertices(in32.input());
  REQUIRE(encoded32.has_value());
  const auto view32 = untold::pbr_vertex_view::from_bytes(*encoded32);
  REQUIRE(view32.has_value());
  auto float_exact = [](const std::vector<double>& xs) {
    return std::all_of(xs.begin(), xs.end(), [](double x) { return static_cast<double>(static_cast<float>(x)) == x; });
  };
  std::size_t exact_fields = 0;
  std::size_t matched_fields = 0;
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i];
    const auto p = view32->packed(i);
    CAPTURE(i);
    if (float_exact(v.normal)) {
      ++exact_fields;
      CHECK(p.normal == v.normal_packed);
    }
    if (float_exact(v.tangent) && float_exact({v.handedness})) {
      ++exact_fields;
      CHECK(p.tangent == v.tangent_packed);
    }
    if (float_exact(v.uv0)) {
      ++exact_fields;
      CHECK(p.uv0 == v.uv0_half);
    }
    if (float_exact(v.uv1)) {
      ++exact_fields;
      CHECK(p.uv1 == v.uv1_half);
    }
    if (float_exact(v.color)) {
      ++exact_fields;
      CHECK(p.color0 == v.color_u8);
    }
    matched_fields += (p.normal == v.normal_packed) + (p.tangent == v.tangent_packed) + (p.uv0 == v.uv0_half) +
                      (p.uv1 == v.uv1_half) + (p.color0 == v.color_u8);
  }
  MESSAGE("float-input encoder: ", exact_fields, " of 120 spec fields have float-exact inputs (all match); ",
          matched_fields, " of 120 fields match overall");
}

// ---- PBR_STATIC_V1 encoder ----------------------------------------------------------

TEST_CASE("vertex: pbr encoder defaults for missing streams") {
  const std::vector<float> positions = {1, 2, 3, -4, -5, -6};
  const auto bytes = untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions});
  REQUIRE(bytes.has_value());
  REQUIRE(bytes->size() == 64);
  const auto view = untold::pbr_vertex_view::from_bytes(*bytes);
  REQUIRE(view.has_value());
  REQUIRE(view->size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto p = view->packed(i);
    CHECK(p.normal == 0x1FF00000u);   // (0,0,1)
    CHECK(p.tangent == 0x400001FFu);  // (1,0,0), +1
    CHECK(p.uv0 == std::array<std::uint16_t, 2>{0, 0});
    CHECK(p.uv1 == std::array<std::uint16_t, 2>{0, 0});
    CHECK(p.color0 == std::array<std::uint8_t, 4>{255, 255, 255, 255});
  }
  CHECK(view->position(1) == std::array<float, 3>{-4, -5, -6});
  CHECK(view->normal(0) == std::array<float, 3>{0, 0, 1});
  CHECK(view->tangent(0) == std::array<float, 4>{1, 0, 0, 1});
  CHECK(view->color0(0) == std::array<float, 4>{1, 1, 1, 1});

  // Empty input is zero vertices, not an error.
  const auto empty = untold::encode_pbr_vertices(untold::pbr_vertex_input{});
  REQUIRE(empty.has_value());
  CHECK(empty->empty());
}

TEST_CASE("vertex: pbr encoder errors name the field and the vertex") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> positions = {0, 0, 0, 1, 1, 1, 2, 2, 2};
  std::vector<float> uv = {0, 0, 0, 0, 0, 0};

  auto expect = [](const auto& r, const char* field, std::uint32_t record) {
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == untold::errc::invalid_argument);
    REQUIRE(r.error().context.field != nullptr);
    CHECK(std::string_view(r.error().context.field) == field);
    CHECK(r.error().context.record_index == record);
  };

  positions[4] = nan;
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions}), "positions", 1);
  positions[4] = inf;
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions}), "positions", 1);
  positions[4] = 1;

  // Double positions beyond the float range are not finite once stored.
  const std::vector<double> far = {0, 0, 1e39};
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input_f64{.positions = far}), "positions", 0);

  uv[5] = 65520.0f;  // rounds past 65504
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .uv1 = uv}), "uv1", 2);
  uv[5] = 65519.0f;  // rounds to 65504: fine
  CHECK(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .uv1 = uv}).has_value());
  uv[0] = nan;
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .uv0 = uv}), "uv0", 0);
  uv[0] = -inf;
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .uv0 = uv}), "uv0", 0);

  // Stream sizes.
  const std::vector<float> two = {0, 0};
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = std::span(positions).first(8)}),
         "positions", untold::no_index);
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .normals = two}), "normals",
         untold::no_index);
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .tangents = two}),
         "tangents", untold::no_index);
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .colors = two}), "colors",
         untold::no_index);

  // Output span of the wrong size.
  std::vector<std::byte> out(95);
  expect(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions}, out), "out",
         untold::no_index);
  out.resize(96);
  CHECK(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions}, out).has_value());

  // NaN normals, tangents and colors are not errors: spec defaults apply.
  const std::vector<float> bad3 = {nan, 0, 0, 0, 0, 0, inf, 1, 1};
  const std::vector<float> bad4 = {nan, nan, nan, nan, 0, 0, 0, -1, 1, 0, 0, 1};
  const auto ok = untold::encode_pbr_vertices(
      untold::pbr_vertex_input{.positions = positions, .normals = bad3, .tangents = bad4, .colors = bad4});
  REQUIRE(ok.has_value());
  const auto view = *untold::pbr_vertex_view::from_bytes(*ok);
  CHECK(view.normal_packed(0) == 0x1FF00000u);
  CHECK(view.normal_packed(1) == 0x1FF00000u);
  CHECK(view.normal_packed(2) == 0x1FF00000u);
  CHECK(view.tangent_packed(0) == 0x400001FFu);
  CHECK(view.tangent_packed(1) == 0xC00001FFu);
  CHECK(view.packed(0).color0 == std::array<std::uint8_t, 4>{0, 0, 0, 0});
}

// ---- views ---------------------------------------------------------------------------

TEST_CASE("vertex: pbr view accessors, iterators and alignment") {
  const auto bytes = random_bytes(32 * 37, 7);
  // Copy to every misalignment: the view must not care.
  for (std::size_t offset = 0; offset < 8; ++offset) {
    CAPTURE(offset);
    std::vector<std::byte> storage(bytes.size() + 8);
    std::memcpy(storage.data() + offset, bytes.data(), bytes.size());
    const untold::byte_span span(storage.data() + offset, bytes.size());
    const auto view = untold::pbr_vertex_view::from_bytes(span);
    REQUIRE(view.has_value());
    REQUIRE(view->size() == 37);
    CHECK(std::ranges::distance(*view) == 37);
    std::size_t i = 0;
    for (const untold::pbr_vertex v : *view) {
      CAPTURE(i);
      REQUIRE(same_bits(v.position.data(), view->position(i).data(), 12));
      REQUIRE(same_bits(v.normal.data(), view->normal(i).data(), 12));
      REQUIRE(same_bits(v.tangent.data(), view->tangent(i).data(), 16));
      REQUIRE(same_bits(v.uv0.data(), view->uv0(i).data(), 8));
      REQUIRE(same_bits(v.uv1.data(), view->uv1(i).data(), 8));
      REQUIRE(same_bits(v.color0.data(), view->color0(i).data(), 16));
      const auto p = view->packed(i);
      REQUIRE(p.normal == view->normal_packed(i));
      REQUIRE(p.tangent == view->tangent_packed(i));
      REQUIRE(bits(v.uv1[1]) == bits(untold::half_to_float(p.uv1[1])));
      REQUIRE(v.color0[3] == untold::unpack_unorm8(p.color0[3]));
      ++i;
    }
    const auto it = view->begin();
    CHECK(same_object_bits(it[36], (*view)[36]));
    CHECK(same_object_bits(*(it + 5), (*view)[5]));
    CHECK(same_object_bits(*(view->end() - 1), (*view)[36]));
    CHECK(view->end() - view->begin() == 37);
    CHECK(std::ranges::prev(view->end()) > it);
  }
  // Size not a multiple of 32.
  const auto bad = untold::pbr_vertex_view::from_bytes(untold::byte_span(bytes).first(33));
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == untold::errc::invalid_argument);
  CHECK(untold::pbr_vertex_view{}.empty());
}

// ---- GpuVertex --------------------------------------------------------------------------

TEST_CASE("vertex: gpu encoder writes the spec octahedral codes") {
  const std::vector<float> positions = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> normals = {0, 0, 1, 0, 0, -1, 1, 0, 0, -1, 0, 0};
  const std::vector<float> tangents = {0, 0, 1, -1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0};
  const std::vector<float> uvs = {0.5f, -2.0f, 1e30f, 0, 0, 0, 0, 0};
  const auto bytes = untold::encode_gpu_vertices(
      untold::gpu_vertex_input{.positions = positions, .normals = normals, .tangents = tangents, .uvs = uvs});
  REQUIRE(bytes.has_value());
  REQUIRE(bytes->size() == 4 * 28);
  const auto view = untold::gpu_vertex_view::from_bytes(*bytes);
  REQUIRE(view.has_value());
  using code = std::array<std::int16_t, 2>;
  CHECK(view->normal_oct(0) == code{0, 0});
  CHECK(view->normal_oct(1) == code{32767, 32767});
  CHECK(view->normal_oct(2) == code{32767, 0});
  CHECK(view->normal_oct(3) == code{-32767, 0});
  CHECK(view->tangent_oct(0) == code{1, 0});
  CHECK(view->tangent_oct(1) == code{32766, 0});
  CHECK(view->tangent_oct(2) == code{32766, 0});  // zero tangent -> (1,0,0), handedness 0 -> +
  CHECK(view->position(3) == std::array<float, 3>{10, 11, 12});
  CHECK(view->uv(0) == std::array<float, 2>{0.5f, -2.0f});
  CHECK(view->uv(1)[0] == 1e30f);  // f32 UVs: no half range limit
  const auto v1 = (*view)[1];
  CHECK(v1.normal == std::array<float, 3>{0, 0, -1});
  CHECK(v1.tangent[3] == 1.0f);
  CHECK((*view)[0].tangent[3] == -1.0f);
  CHECK(std::ranges::distance(*view) == 4);
  CHECK(view->packed(2).tangent == code{32766, 0});

  // Defaults and errors.
  const auto defaults = untold::encode_gpu_vertices(untold::gpu_vertex_input{.positions = positions});
  REQUIRE(defaults.has_value());
  const auto dview = *untold::gpu_vertex_view::from_bytes(*defaults);
  CHECK(dview.normal_oct(0) == code{0, 0});
  CHECK(dview.tangent_oct(0) == code{32766, 0});
  CHECK(dview.uv(0) == std::array<float, 2>{0, 0});
  std::vector<float> bad_uvs = uvs;
  bad_uvs[7] = std::numeric_limits<float>::infinity();
  const auto err =
      untold::encode_gpu_vertices(untold::gpu_vertex_input{.positions = positions, .uvs = bad_uvs});
  REQUIRE_FALSE(err.has_value());
  CHECK(std::string_view(err.error().context.field) == "uvs");
  CHECK(err.error().context.record_index == 3);
  CHECK_FALSE(untold::gpu_vertex_view::from_bytes(untold::byte_span(*bytes).first(27)).has_value());
}

TEST_CASE("vertex: pbr to gpu conversion") {
  // Random bytes: the conversion is total (NaN positions and UVs included).
  const auto bytes = random_bytes(32 * 501, 11);
  const auto pbr = *untold::pbr_vertex_view::from_bytes(bytes);
  const auto gpu_bytes = untold::convert_pbr_to_gpu(bytes);
  REQUIRE(gpu_bytes.has_value());
  REQUIRE(gpu_bytes->size() == 501 * 28);
  const auto gpu = *untold::gpu_vertex_view::from_bytes(*gpu_bytes);
  for (std::size_t i = 0; i < pbr.size(); ++i) {
    CAPTURE(i);
    REQUIRE(same_bits(gpu.bytes().data() + 28 * i, pbr.bytes().data() + 32 * i, 12));  // positions bit for bit
    const auto n = pbr.normal(i);
    const auto t = pbr.tangent(i);
    REQUIRE(gpu.normal_oct(i) == untold::pack_octahedral_normal(n[0], n[1], n[2]));
    REQUIRE(gpu.tangent_oct(i) == untold::pack_octahedral_tangent(t[0], t[1], t[2], t[3]));
    REQUIRE(gpu.tangent(i)[3] == t[3]);
    const auto uv = gpu.uv(i);
    const auto uv0 = pbr.uv0(i);
    REQUIRE(same_bits(uv.data(), uv0.data(), 8));
  }
  // Angular error of the conversion on real unit normals stays within the sum
  // of both quantisations.
  std::vector<float> positions, normals;
  for (int i = 0; i < 20000; ++i) {
    const double z = 1.0 - (2.0 * i + 1.0) / 20000.0;
    const double r = std::sqrt(1.0 - z * z);
    const double phi = 2.399963229728653 * i;
    positions.insert(positions.end(), {0, 0, 0});
    normals.insert(normals.end(),
                   {static_cast<float>(r * std::cos(phi)), static_cast<float>(r * std::sin(phi)), static_cast<float>(z)});
  }
  const auto encoded = *untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .normals = normals});
  const auto converted = *untold::convert_pbr_to_gpu(encoded);
  const auto cview = *untold::gpu_vertex_view::from_bytes(converted);
  double worst = 0.0;
  for (std::size_t i = 0; i < cview.size(); ++i) {
    const auto a = cview.normal(i);
    const double ax = a[0], ay = a[1], az = a[2];
    const double bx = normals[3 * i], by = normals[3 * i + 1], bz = normals[3 * i + 2];
    const double cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx;
    worst = std::max(worst, std::atan2(std::sqrt(cx * cx + cy * cy + cz * cz), ax * bx + ay * by + az * bz));
  }
  MESSAGE("PBR_STATIC_V1 -> GpuVertex normal max angular error: ", worst, " rad");
  CHECK(worst < 1.6951e-3 + 6.6e-5);

  // Size errors.
  std::vector<std::byte> out(28 * 500);
  CHECK_FALSE(untold::convert_pbr_to_gpu(bytes, out).has_value());
  CHECK_FALSE(untold::convert_pbr_to_gpu(untold::byte_span(bytes).first(40)).has_value());
}

// ---- bulk decode -----------------------------------------------------------------------

TEST_CASE("vertex: bulk decode agrees with the view") {
  const auto bytes = random_bytes(32 * 300, 3);
  std::vector<untold::pbr_vertex> out(300);
  REQUIRE(untold::decode_pbr_vertices(bytes, out));
  const auto view = *untold::pbr_vertex_view::from_bytes(bytes);
  for (std::size_t i = 0; i < out.size(); ++i) {
    REQUIRE(same_object_bits(view[i], out[i]));
  }
}

TEST_CASE("vertex: decode path selection") {
  std::string names;
  for (auto p : available_simd_paths()) names.append(untold::decode_path_name(p)).append(" ");
  MESSAGE("SIMD decode paths on this machine: ", names.empty() ? std::string("none") : names,
          "; automatic = ", untold::decode_path_name(untold::best_decode_path()));
  CHECK(untold::decode_path_supported(untold::decode_path::automatic));
  CHECK(untold::decode_path_supported(untold::decode_path::scalar));
  CHECK(untold::decode_path_supported(untold::best_decode_path()));
  CHECK(untold::best_decode_path() != untold::decode_path::automatic);
}

TEST_CASE("vertex: the AVX-512 path's quotient, q x (1/d) corrected by one FMA step, is q / d for every snorm10 code and byte") {
  // What decode_soa_avx512 computes instead of a division (the divider
  // would bound it), checked here with std::fma on any machine; the path
  // itself is compared with scalar below where the CPU runs it.
  const auto corrected = [](float q, float d) {
    const float reciprocal = 1.0f / d;
    const float r = q * reciprocal;
    return std::fma(std::fma(-r, d, q), reciprocal, r);
  };
  for (int q = -512; q <= 511; ++q) {
    CAPTURE(q);
    const float exact = static_cast<float>(q) / 511.0f, got = corrected(static_cast<float>(q), 511.0f);
    REQUIRE(same_object_bits(exact, got));
  }
  for (int q = 0; q <= 255; ++q) {
    CAPTURE(q);
    const float exact = static_cast<float>(q) / 255.0f, got = corrected(static_cast<float>(q), 255.0f);
    REQUIRE(same_object_bits(exact, got));
  }
}

TEST_CASE("vertex: bulk decode SIMD paths are bit-identical to scalar") {
  const auto paths = available_simd_paths();
  SUBCASE("edge cases: code extremes, every code, half pattern and color byte") {
    const auto bytes = edge_case_vertices();
    for (auto p : paths) check_paths_match(bytes, p);
    // Spot checks of the scalar decode itself on the extremes.
    const auto view = *untold::pbr_vertex_view::from_bytes(bytes);
    for (std::size_t i = 0; i < view.size(); ++i) {
      const auto n = view.normal(i);
      const auto t = view.tangent(i);
      for (int c = 0; c < 3; ++c) {
        REQUIRE(n[static_cast<std::size_t>(c)] >= -1.0f);
        REQUIRE(n[static_cast<std::size_t>(c)] <= 1.0f);
      }
      REQUIRE((t[3] == 1.0f || t[3] == -1.0f));
      REQUIRE((t[3] < 0) == ((view.tangent_packed(i) >> 31) != 0));
    }
  }
  SUBCASE("random bytes, many sizes and misalignments") {
    for (std::size_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 1000, 100'003}) {
      const auto raw = random_bytes(32 * n + 16, 1000 + n);
      for (std::size_t offset : {0, 1, 3}) {
        CAPTURE(offset);
        const untold::byte_span bytes(raw.data() + offset, 32 * n);
        for (auto p : paths) check_paths_match(bytes, p);
      }
    }
  }
  SUBCASE("encoded meshes") {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-3.0f, 3.0f);
    std::vector<float> pos(3 * 4099), nrm(3 * 4099), tan(4 * 4099), uv(2 * 4099), col(4 * 4099);
    for (auto* v : {&pos, &nrm, &tan, &uv, &col}) std::generate(v->begin(), v->end(), [&] { return d(rng); });
    const auto bytes = *untold::encode_pbr_vertices(untold::pbr_vertex_input{
        .positions = pos, .normals = nrm, .tangents = tan, .uv0 = uv, .uv1 = uv, .colors = col});
    for (auto p : paths) check_paths_match(bytes, p);
  }
}

TEST_CASE("vertex: bulk decode argument errors") {
  const auto bytes = random_bytes(64, 1);
  std::vector<untold::pbr_vertex> out(2);
  CHECK_FALSE(untold::decode_pbr_vertices(untold::byte_span(bytes).first(63), out).has_value());
  CHECK_FALSE(untold::decode_pbr_vertices(bytes, std::span(out).first(1)).has_value());
  std::vector<float> three(6), wrong(5);
  CHECK(untold::decode_pbr_vertices(bytes, untold::pbr_vertex_streams{.positions = three}).has_value());
  const auto e = untold::decode_pbr_vertices(bytes, untold::pbr_vertex_streams{.normals = wrong});
  REQUIRE_FALSE(e.has_value());
  CHECK(std::string_view(e.error().context.field) == "normals");
  // Forcing a path this machine lacks is an error, not a silent fallback.
  for (auto p : {untold::decode_path::sse41, untold::decode_path::avx2, untold::decode_path::avx512,
                 untold::decode_path::neon}) {
    const auto r = untold::decode_pbr_vertices(bytes, out, p);
    CHECK(r.has_value() == untold::decode_path_supported(p));
  }
  // Zero vertices with empty outputs is fine on every path.
  CHECK(untold::decode_pbr_vertices(untold::byte_span{}, std::span<untold::pbr_vertex>{}).has_value());
}

TEST_CASE("vertex: index widening, every path, against the view") {
  // uint16 indices at every count around the SIMD block sizes (8, 16), at odd
  // byte offsets, with the extreme values; uint32 indices are copied.
  for (std::size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 33, 1000, 65'537}) {
    const auto raw = random_bytes(2 * n + 3, 77 + n);
    for (std::size_t offset : {0, 1}) {
      CAPTURE(n);
      CAPTURE(offset);
      auto bytes = std::vector<std::byte>(raw.begin() + static_cast<std::ptrdiff_t>(offset),
                                          raw.begin() + static_cast<std::ptrdiff_t>(offset + 2 * n));
      if (n > 2) {
        bytes[0] = bytes[1] = std::byte{0xFF};   // 65535
        bytes[2] = bytes[3] = std::byte{0x00};   // 0
      }
      const auto view = *untold::index_view::make(bytes, 1);
      std::vector<untold::decode_path> paths{untold::decode_path::scalar, untold::decode_path::automatic};
      for (auto p : available_simd_paths()) paths.push_back(p);
      for (auto p : paths) {
        CAPTURE(untold::decode_path_name(p));
        const auto out = untold::widen_indices(view, p);
        REQUIRE(out.has_value());
        REQUIRE(out->size == n);
        for (std::size_t i = 0; i < n; ++i) REQUIRE(out->data[i] == view[i]);
      }
    }
  }
  const auto raw32 = random_bytes(4 * 37, 9);
  const auto view32 = *untold::index_view::make(raw32, 2);
  const auto out32 = untold::widen_indices(view32);
  REQUIRE(out32.has_value());
  for (std::size_t i = 0; i < view32.size(); ++i) REQUIRE(out32->data[i] == view32[i]);
}

TEST_CASE("vertex: decode into fresh arrays equals decode into caller memory") {
  const auto bytes = random_bytes(32 * 129, 21);
  std::vector<untold::pbr_vertex> expected(129);
  REQUIRE(untold::decode_pbr_vertices(bytes, expected));
  const auto fresh = untold::decode_pbr_vertices(untold::byte_span(bytes));
  REQUIRE(fresh.has_value());
  REQUIRE(fresh->size == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) REQUIRE(same_object_bits(fresh->data[i], expected[i]));
  CHECK_FALSE(untold::decode_pbr_vertices(untold::byte_span(bytes).first(31)).has_value());
  // Caller memory of the wrong size is refused, naming the argument.
  const auto view = *untold::index_view::make(untold::byte_span(bytes).first(64), 1);
  std::vector<std::uint32_t> short_out(31);
  const auto e = untold::widen_indices(view, short_out);
  REQUIRE_FALSE(e.has_value());
  CHECK(std::string_view(e.error().context.field) == "out");
}
