// untold::remote without a network: URL rules, the manifest, the disk cache.
#include "harness.hpp"

#include <set>

namespace ur = untold::remote;
using rt::fs::path;

namespace {

untold::byte_span as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

const char* const kManifest = R"({
  "version": 4,
  "streaming_defaults": {"streaming_radius": 80, "unload_radius": 120, "priority": 1, "future_knob": [1, 2]},
  "partitioning_mode": "quadtree_floor",
  "interior_zone": {"min": [0, 0, 0], "max": [5, 5, 5], "anything": {"deep": true}},
  "tile_size": {"x": 64, "y": 32.5, "z": 64},
  "tiles": [
    {"tile_id": "t_0_0", "path_relative_to_manifest": "tiles/t_0_0.untold", "file_size_bytes": 123456,
     "bounds": {"min": [0, 0, 0], "max": [64, 10, 64], "note": "kept"}, "center": [32, 5, 32],
     "hlod_levels": [{"path": "hlods/t_0_0_hlod.untold", "switch_distance": 200, "x-extra": 1}],
     "lod_levels": [{"path": "lods/t_0_0_lod2.untold", "switch_distance": 150},
                    {"path": "lods/t_0_0_lod1.untold", "switch_distance": 60}],
     "floor_id": 2, "quadtree_node_id": "q/0/3", "semantic_tier": "RoomContents", "interior": true,
     "vendor_field": {"a": "b"}},
    {"tile_id": "t_0_1", "path_relative_to_manifest": "tiles/t 0 1.untold", "file_size_bytes": 10,
     "bounds": {"min": [0, 0, 64], "max": [64, 10, 128]}, "center": [32, 5, 96],
     "streaming_radius": 40, "unload_radius": 60, "priority": 3}
  ],
  "scene_lights": [{"type": "sun", "intensity": 3.5}],
  "colorLUT": {"uri": "lut.cube"}
})";

}  // namespace

TEST_CASE("remote url: https only, http refused, malformed rejected") {
  CHECK(ur::require_https("https://cdn.example.com/x/t.untold").has_value());
  CHECK(ur::require_https("HTTPS://cdn.example.com/x").has_value());
  CHECK(ur::require_https("http://cdn.example.com/x").error().code == ur::remote_errc::insecure_scheme);
  CHECK(ur::require_https("HTTP://cdn.example.com/x").error().code == ur::remote_errc::insecure_scheme);
  CHECK(ur::require_https("ftp://cdn.example.com/x").error().code == ur::remote_errc::unsupported_scheme);
  CHECK(ur::require_https("file:///tmp/x").error().code == ur::remote_errc::unsupported_scheme);
  CHECK(ur::require_https("cdn.example.com/x").error().code == ur::remote_errc::bad_url);
  CHECK(ur::require_https("https:///x").error().code == ur::remote_errc::bad_url);
  CHECK(ur::require_https("https://user@evil/x").error().code == ur::remote_errc::bad_url);
  CHECK(ur::require_https("https://cdn/a b").error().code == ur::remote_errc::bad_url);
  CHECK(ur::url_extension("https://cdn/x/T.UNTOLD?v=1#f") == "untold");
  CHECK(ur::url_extension("https://cdn/x.y/noext").empty());
  CHECK(ur::require_https("http://x").error().describe().find("E-REMOTE-INSECURE") == 0);
}

TEST_CASE("remote url: relative paths resolve inside the base directory only") {
  const std::string base = "https://cdn.example.com/dungeon3/dungeon3.json";
  CHECK(*ur::resolve_relative(base, "tiles/tile_0_0.untold") == "https://cdn.example.com/dungeon3/tiles/tile_0_0.untold");
  CHECK(*ur::resolve_relative(base, "./hlods//h.untold") == "https://cdn.example.com/dungeon3/hlods/h.untold");
  CHECK(*ur::resolve_relative(base, "tiles/a b.untold?v=2") == "https://cdn.example.com/dungeon3/tiles/a%20b.untold?v=2");
  CHECK(*ur::resolve_relative("https://cdn:8443/s.json?x=1", "t.untold") == "https://cdn:8443/t.untold");
  CHECK(*ur::resolve_relative("file:///data/scene/s.json", "tiles/t.untold") == "file:///data/scene/tiles/t.untold");
  CHECK(*ur::resolve_relative("/data/scene/s.json", "tiles/./t.untold") == "/data/scene/tiles/t.untold");
  CHECK(*ur::resolve_relative("s.json", "t.untold") == "t.untold");
  for (const char* bad : {"../x.untold", "tiles/../../x", "tiles/%2e%2E/x", "..", "/etc/passwd", "//evil.com/x",
                          "https://evil.com/x", "http:x", "C:/x", "a\\..\\b", "", ".", "tiles/\n"}) {
    CAPTURE(bad);
    const auto r = ur::resolve_relative(base, bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ur::remote_errc::path_escapes);
    CHECK_FALSE(ur::resolve_relative("/data/s.json", bad).has_value());
  }
  CHECK(ur::resolve_relative(base, "a..b/c..untold").has_value());  // dots inside names are fine
}

TEST_CASE("remote manifest: parse, resolve, prefetch radius, LOD order") {
  auto m = ur::parse_manifest(kManifest);
  REQUIRE_MESSAGE(m.has_value(), m.error().describe());
  CHECK(m->version == 4);
  CHECK(m->partitioning_mode == "quadtree_floor");
  REQUIRE(m->tiles.size() == 2);
  const ur::tile& t = m->tiles[0];
  CHECK(t.tile_id == "t_0_0");
  CHECK(t.file_size_bytes == 123456);
  CHECK(t.bounds.max[1] == 10);
  CHECK(t.semantic_tier == "RoomContents");
  CHECK(t.interior == true);
  CHECK(*t.floor_id == 2);
  CHECK(t.hlod_levels->size() == 1);
  const auto lods = ur::lods_by_distance(t);
  REQUIRE(lods.size() == 2);
  CHECK(lods[0].path == "lods/t_0_0_lod1.untold");

  // Prefetch radius: the tile's, else the defaults', else (streaming + unload) / 2.
  CHECK(ur::effective_prefetch_radius(m->tiles[0], m->defaults) == 100);
  CHECK(ur::effective_prefetch_radius(m->tiles[1], m->defaults) == 50);
  m->defaults.prefetch_radius = 90;
  CHECK(ur::effective_prefetch_radius(m->tiles[1], m->defaults) == 90);
  m->tiles[1].prefetch_radius = 70;
  CHECK(ur::effective_prefetch_radius(m->tiles[1], m->defaults) == 70);

  const std::string url = "https://cdn.example.com/dungeon3/dungeon3.json";
  auto where = ur::resolve_tile(url, t);
  REQUIRE(where.has_value());
  CHECK(where->tile == "https://cdn.example.com/dungeon3/tiles/t_0_0.untold");
  CHECK(where->hlods == std::vector<std::string>{"https://cdn.example.com/dungeon3/hlods/t_0_0_hlod.untold"});
  CHECK(where->lods.size() == 2);
  CHECK(ur::resolve_tile(url, m->tiles[1])->tile == "https://cdn.example.com/dungeon3/tiles/t%200%201.untold");
  CHECK(ur::resolve_tile("/srv/scene/dungeon3.json", t)->tile == "/srv/scene/tiles/t_0_0.untold");
}

TEST_CASE("remote manifest: unknown fields round-trip through write") {
  auto m = ur::parse_manifest(kManifest);
  REQUIRE(m.has_value());
  const std::string text = ur::write_manifest(*m);
  const ur::json original = ur::json::parse(kManifest);
  const ur::json written = ur::json::parse(text);
  // Equal as JSON values (key order aside): compare through sorted json.
  CHECK(nlohmann::json::parse(original.dump()) == nlohmann::json::parse(written.dump()));
  CHECK(written["scene_lights"][0]["intensity"] == 3.5);
  CHECK(written["tiles"][0]["vendor_field"]["a"] == "b");
  CHECK(written["tiles"][0]["bounds"]["note"] == "kept");
  CHECK(written["tiles"][0]["hlod_levels"][0]["x-extra"] == 1);
  CHECK(written["streaming_defaults"]["future_knob"][1] == 2);
  CHECK(written["interior_zone"]["anything"]["deep"] == true);
  CHECK(written["tile_size"]["y"] == 32.5);
  CHECK(written["streaming_defaults"]["priority"].is_number_integer());
  // And again: a fixed point.
  auto again = ur::parse_manifest(text);
  REQUIRE(again.has_value());
  CHECK(ur::write_manifest(*again) == text);
}

TEST_CASE("remote manifest: nesting is bounded before parsing (a 100,000-deep array is an error, not a crash)") {
  // Regression: parse_manifest recursed through the JSON library and
  // overflowed the stack on this input.
  const auto nested = [](std::size_t depth, std::string_view inner) {
    std::string s = "{\"version\":3,\"x\":";
    s.append(depth, '[');
    s.append(inner);
    s.append(depth, ']');
    return s + "}";
  };
  auto deep = ur::parse_manifest(nested(100000, ""));
  REQUIRE_FALSE(deep.has_value());
  CHECK(deep.error().code == ur::remote_errc::bad_manifest);
  CHECK(deep.error().describe().find("max_depth") != std::string::npos);
  // Brackets inside strings do not count; escaped quotes do not end a string.
  CHECK(ur::detail::json_nesting_depth(R"({"a":"[[[[\"[[[[","b":[1]})", 100) == 2);
  // Up to the limit, unknown nested fields are kept and written back.
  std::string kept(kManifest);
  kept.insert(kept.rfind('}'), ",\"vendor_deep\":" + std::string(60, '[') + "7" + std::string(60, ']'));
  auto m = ur::parse_manifest(kept);
  REQUIRE_MESSAGE(m.has_value(), m.error().describe());
  const ur::json written = ur::json::parse(ur::write_manifest(*m));
  const ur::json* v = &written["vendor_deep"];
  int levels = 0;
  while (v->is_array() && v->size() == 1) v = &(*v)[0], ++levels;
  CHECK(levels == 60);
  CHECK(*v == 7);
  CHECK_FALSE(ur::parse_manifest(kept, {.max_depth = 32}).has_value());
}

TEST_CASE("remote manifest: missing fields, wrong types and escaping paths are rejected") {
  struct bad_case {
    std::string from, to;
    ur::remote_errc code;
    std::string where;
  };
  const std::vector<bad_case> cases = {
      {"\"version\": 4,", "", ur::remote_errc::bad_manifest, "version: missing"},
      {"\"version\": 4", "\"version\": 9", ur::remote_errc::bad_manifest, "version"},
      {"\"priority\": 1,", "", ur::remote_errc::bad_manifest, "streaming_defaults.priority: missing"},
      {"\"file_size_bytes\": 123456", "\"file_size_bytes\": -1", ur::remote_errc::bad_manifest,
       "tiles[0].file_size_bytes"},
      {"\"center\": [32, 5, 32]", "\"center\": [32, 5]", ur::remote_errc::bad_manifest, "tiles[0].center"},
      {"\"interior\": true", "\"interior\": 1", ur::remote_errc::bad_manifest, "tiles[0].interior"},
      {"\"tiles/t_0_0.untold\"", "\"../t_0_0.untold\"", ur::remote_errc::path_escapes,
       "tiles[0].path_relative_to_manifest"},
      {"\"hlods/t_0_0_hlod.untold\"", "\"https://evil.example/x.untold\"", ur::remote_errc::path_escapes,
       "tiles[0].hlod_levels[0].path"},
      {"\"lods/t_0_0_lod1.untold\"", "\"/etc/passwd\"", ur::remote_errc::path_escapes, "tiles[0].lod_levels[1].path"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.where);
    std::string text = kManifest;
    const std::size_t at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, c.from.size(), c.to);
    auto m = ur::parse_manifest(text);
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().code == c.code);
    CHECK(m.error().detail.find(c.where) == 0);
  }
  CHECK(ur::parse_manifest("{not json").error().code == ur::remote_errc::bad_manifest);
  CHECK(ur::parse_manifest("[]").error().code == ur::remote_errc::bad_manifest);
  // check_paths off: an offline tool can still load (and rewrite) such a file.
  std::string text = kManifest;
  text.replace(text.find("tiles/t_0_0.untold"), 18, "../t_0_0.untold");
  auto lenient = ur::parse_manifest(text, {.check_paths = false});
  REQUIRE(lenient.has_value());
  CHECK(ur::resolve_tile("https://cdn/x/s.json", lenient->tiles[0]).error().code == ur::remote_errc::path_escapes);
}

TEST_CASE("remote cache: SHA-256 keys, <hash>.<ext> files, ETag and digest sidecars, textures keyed by URL") {
  rt::temp_dir dir;
  auto cache = ur::disk_cache::open({.directory = dir.path()});
  REQUIRE(cache.has_value());
  const std::string url = "https://cdn.example.com/x/tiles/t.untold";
  const std::string hash = ur::disk_cache::key_hash(url);
  CHECK(hash.size() == 64);
  CHECK(hash == untold::to_hex(untold::sha256_portable_of(as_bytes(url))));
  CHECK_FALSE(cache->lookup(url).has_value());

  auto e = cache->store(url, as_bytes("tile bytes"), {.etag = "\"v1\""});
  REQUIRE_MESSAGE(e.has_value(), e.error().describe());
  CHECK(e->path == dir.path() / (hash + ".untold"));
  CHECK(rt::read_text(e->path) == "tile bytes");
  const auto sidecar = nlohmann::json::parse(rt::read_text(dir.path() / (hash + ".meta")));
  CHECK(sidecar["etag"] == "\"v1\"");
  CHECK(sidecar["key"] == url);
  CHECK(sidecar["file"] == hash + ".untold");
  CHECK(sidecar["size"] == 10);
  CHECK(sidecar["sha256"] == untold::to_hex(untold::sha256_portable_of(as_bytes("tile bytes"))));
  auto hit = cache->lookup(url);
  REQUIRE(hit.has_value());
  CHECK(hit->etag == "\"v1\"");
  CHECK(hit->size == 10);

  // Replacing an entry is atomic: new bytes, new ETag.
  REQUIRE(cache->store(url, as_bytes("tile bytes v2"), {.etag = "\"v2\""}).has_value());
  CHECK(cache->lookup(url)->etag == "\"v2\"");
  CHECK(rt::read_text(cache->lookup(url)->path) == "tile bytes v2");

  // Textures are entries like any other, keyed by their absolute URL: two
  // directories' (or hosts') Textures/wall.png are two files.
  const std::string tex = "https://cdn.example.com/x/tiles/Textures/wall.png";
  const std::string tex2 = "https://cdn.example.com/y/Textures/wall.png";
  auto t = cache->store(tex, as_bytes("png"), {.etag = "\"t\""});
  auto t2 = cache->store(tex2, as_bytes("other png"));
  REQUIRE(t.has_value());
  REQUIRE(t2.has_value());
  CHECK(t->path == dir.path() / (ur::disk_cache::key_hash(tex) + ".png"));
  CHECK(t2->path != t->path);
  CHECK(rt::read_text(cache->lookup(tex)->path) == "png");
  CHECK(rt::read_text(cache->lookup(tex2)->path) == "other png");

  // No extension: <hash>.bin.
  auto plain = cache->store("https://cdn.example.com/blob", as_bytes("b"));
  REQUIRE(plain.has_value());
  CHECK(plain->path.extension() == ".bin");

  // Persistent: a second cache object on the directory sees everything.
  auto reopened = ur::disk_cache::open({.directory = dir.path()});
  REQUIRE(reopened.has_value());
  CHECK(reopened->lookup(url)->etag == "\"v2\"");

  REQUIRE(cache->clear().has_value());
  CHECK_FALSE(cache->lookup(url).has_value());
  CHECK(cache->usage() == 0);
  CHECK(cache->store(url, as_bytes("after clear")).has_value());
}

TEST_CASE("remote cache: LRU eviction by last access down to 75% of the budget") {
  rt::temp_dir dir;
  // Entries of 1100 bytes plus a sidecar of about 200: four fit in 6000, five do not.
  auto cache = ur::disk_cache::open({.directory = dir.path(), .budget_bytes = 6000});
  REQUIRE(cache.has_value());
  const std::string payload(1100, 'x');
  auto url = [](int i) { return "https://cdn.example.com/e" + std::to_string(i) + ".bin"; };
  for (int i = 0; i < 4; ++i) REQUIRE(cache->store(url(i), as_bytes(payload)).has_value());
  const std::uint64_t per_entry = cache->usage() / 4;
  REQUIRE(per_entry > 1200);
  REQUIRE(per_entry < 1500);
  CHECK(cache->usage() <= 6000);
  // Use 0 and 2 (in that order): the LRU order is now 1, 3, 0, 2.
  REQUIRE(cache->lookup(url(0)).has_value());
  REQUIRE(cache->lookup(url(2)).has_value());
  const auto items = cache->items();
  REQUIRE(items.size() == 4);
  CHECK(items[0].key == url(1));
  CHECK(items[1].key == url(3));
  CHECK(items[2].key == url(0));
  CHECK(items[3].key == url(2));
  // The 5th entry takes usage over 6000: evict oldest first until <= 4500.
  REQUIRE(cache->store(url(4), as_bytes(payload)).has_value());
  CHECK(cache->usage() <= 4500);
  CHECK_FALSE(cache->lookup(url(1)).has_value());
  CHECK_FALSE(cache->lookup(url(3)).has_value());
  CHECK(cache->lookup(url(0)).has_value());
  CHECK(cache->lookup(url(2)).has_value());
  CHECK(cache->lookup(url(4)).has_value());
  CHECK(cache->items().size() == 3);
  // An entry larger than the whole budget is kept (it is what the caller needs now).
  REQUIRE(cache->store(url(9), as_bytes(std::string(7000, 'y'))).has_value());
  CHECK(cache->lookup(url(9)).has_value());
  CHECK(cache->items().size() == 1);
}

TEST_CASE("remote cache: torn entries read as misses and stale temp files are removed") {
  rt::temp_dir dir;
  const std::string url = "https://cdn.example.com/x.untold";
  const std::string hash = ur::disk_cache::key_hash(url);
  {
    auto cache = ur::disk_cache::open({.directory = dir.path()});
    REQUIRE(cache.has_value());
    REQUIRE(cache->store(url, as_bytes("good")).has_value());
  }
  // A data file replaced behind the sidecar's back (as after a crash between
  // the two renames): the inode no longer matches.
  rt::write_text(dir.path() / "x.tmp", "evil");
  rt::fs::rename(dir.path() / "x.tmp", dir.path() / (hash + ".untold"));
  auto cache = ur::disk_cache::open({.directory = dir.path()});
  REQUIRE(cache.has_value());
  CHECK_FALSE(cache->lookup(url).has_value());
  // A garbage sidecar: a miss, and eviction still accounts for it.
  rt::write_text(dir.path() / (hash + ".meta"), "{\"key\": ");
  CHECK_FALSE(cache->lookup(url).has_value());
  CHECK(cache->items().size() == 2);

  // Temp files of a process that no longer runs go at the next open; ours stay.
  rt::write_text(dir.path() / ".tmp" / "0123456789abcdef.999999999.1.part", "partial");
  auto ours = cache->create_temp(url);
  REQUIRE(ours.has_value());
  REQUIRE(ur::disk_cache::open({.directory = dir.path()}).has_value());
  CHECK_FALSE(rt::fs::exists(dir.path() / ".tmp" / "0123456789abcdef.999999999.1.part"));
  CHECK(rt::fs::exists(ours->path()));
  // An uncommitted temp file is never an entry and disappears with its owner.
  const path temp_path = ours->path();
  { auto gone = std::move(*ours); }
  CHECK_FALSE(rt::fs::exists(temp_path));
}

TEST_CASE("remote cache: a corrupted entry is a miss and is counted (SHA-256 in the sidecar)") {
  // Regression (issue 18, item 3): a byte flipped in a cached file used to be
  // served as a hit; the sidecar only knew the inode and the size.
  rt::temp_dir dir;
  const std::string url = "https://cdn.example.com/x.bin";
  const std::string body = "0123456789";
  path file;
  {
    auto cache = ur::disk_cache::open({.directory = dir.path()});
    REQUIRE(cache.has_value());
    auto e = cache->store(url, as_bytes(body));
    REQUIRE(e.has_value());
    file = e->path;
  }
  auto cache = ur::disk_cache::open({.directory = dir.path()});
  REQUIRE(cache.has_value());
  REQUIRE(cache->lookup(url).has_value());  // verified: this object trusts this version from now on
  rt::flip_byte(file, 3);
  CHECK(cache->lookup(url).has_value());  // the documented cost of verifying once per entry
  CHECK(cache->corrupt_entries() == 0);
  CHECK_FALSE(cache->read(url).has_value());  // read() hashes what it reads
  CHECK(cache->corrupt_entries() == 1);
  CHECK_FALSE(cache->lookup_verified(url).has_value());
  CHECK(cache->corrupt_entries() == 2);
  // The next process (another cache object) verifies at its first lookup.
  auto next = ur::disk_cache::open({.directory = dir.path()});
  REQUIRE(next.has_value());
  CHECK_FALSE(next->lookup(url).has_value());
  CHECK(next->corrupt_entries() == 1);
  // Storing again replaces it; every_lookup re-hashes at each lookup.
  REQUIRE(next->store(url, as_bytes(body)).has_value());
  auto strict = ur::disk_cache::open({.directory = dir.path(), .verify = ur::cache_verify::every_lookup});
  REQUIRE(strict.has_value());
  file = strict->lookup(url)->path;
  CHECK(rt::read_text(file) == body);
  rt::flip_byte(file, 0);
  CHECK_FALSE(strict->lookup(url).has_value());
  CHECK(strict->corrupt_entries() == 1);
  // A sidecar without a digest (an older cache) is not trusted either.
  REQUIRE(strict->store(url, as_bytes(body)).has_value());
  const path meta = dir.path() / (ur::disk_cache::key_hash(url) + ".meta");
  auto sidecar = nlohmann::json::parse(rt::read_text(meta));
  sidecar.erase("sha256");
  rt::write_text(meta, sidecar.dump());
  CHECK_FALSE(strict->lookup(url).has_value());
}

TEST_CASE("remote cache: many threads storing, reading and evicting stay consistent") {
  rt::temp_dir dir;
  auto cache = ur::disk_cache::open({.directory = dir.path(), .budget_bytes = 40'000});
  REQUIRE(cache.has_value());
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 60; ++i) {
        const std::string key = "https://cdn.example.com/k" + std::to_string((i * 7 + t) % 25) + ".bin";
        const std::string body = key + std::string(static_cast<std::size_t>(500 + 37 * ((i + t) % 20)), '#') + key;
        if (!cache->store(key, as_bytes(body), {.etag = "\"" + std::to_string(body.size()) + "\""})) ++bad;
        if (auto bytes = cache->read(key)) {
          const std::string got(reinterpret_cast<const char*>(bytes->data()), bytes->size());
          // Whatever version we read, it is whole and belongs to this key.
          if (got.rfind(key, 0) != 0 || got.size() < key.size() * 2 ||
              got.compare(got.size() - key.size(), key.size(), key) != 0)
            ++bad;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(bad == 0);
  CHECK(cache->usage() <= 40'000);
  for (const ur::cache_item& item : cache->items()) {
    CHECK_FALSE(item.key.empty());  // no orphans left behind
    auto e = cache->lookup(item.key);
    REQUIRE(e.has_value());
    CHECK(e->etag == "\"" + std::to_string(e->size) + "\"");
  }
}
