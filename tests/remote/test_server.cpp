// untold::remote against a real nginx over TLS on 127.0.0.1 (harness.hpp).
// Assertions are on observable facts: the server's access log, the cache
// directory, result values and counters - never on how long something took.
#include "harness.hpp"

#include "../support.hpp"

#include <untold/ranges.hpp>

#include <algorithm>
#include <set>

namespace ur = untold::remote;
using rt::fs::path;
using namespace std::chrono_literals;

#ifndef UNTOLD_REMOTE_CHILD
#define UNTOLD_REMOTE_CHILD ""
#endif
#ifndef UNTOLD_REMOTE_EXAMPLE
#define UNTOLD_REMOTE_EXAMPLE ""
#endif

namespace {

/// nginx and a cache directory in one temp dir.
struct fixture {
  rt::temp_dir dir;
  rt::nginx_server server{dir / "nginx"};
  path cache_dir = dir / "cache";

  [[nodiscard]] ur::downloader_options options() const { return rt::options_for(cache_dir, server.tls()); }
  void put(const std::string& rel, untold::byte_span bytes) const { rt::write_bytes(server.www() / rel, bytes); }
  void put(const std::string& rel, const std::string& text) const { rt::write_text(server.www() / rel, text); }
};

/// A small valid tile naming `textures` (URIs relative to the tile).
test::bytes small_tile(const std::vector<std::string>& textures = {}, float z = 0.0f) {
  untold::builder b{untold::file_type::tile};
  const test::grid g = test::make_grid(6, z);
  std::uint32_t material = untold::none;
  for (std::size_t i = 0; i < textures.size(); ++i) {
    const auto t = b.add_texture({.name = "t", .uri = textures[i], .format = untold::texture_format::rgba8,
                                  .width = 4, .height = 4, .mip_count = 1});
    if (i == 0) material = b.add_material({.name = "m", .base_color_texture = t});
  }
  const auto e = b.add_entity({.name = "root"});
  b.add_mesh({.entity = e, .name = "grid", .material = material, .vertices = g.vertices, .indices = g.indices});
  auto bytes = b.finish();
  REQUIRE(bytes.has_value());
  return std::move(*bytes);
}

bool same(untold::byte_span a, untold::byte_span b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

test::bytes file_bytes(const path& p) {
  auto b = untold::read_file(p);
  REQUIRE(b.has_value());
  return std::move(*b);
}

/// One part (vertex, index or edge-index bytes) of a mesh, as a file range.
struct part {
  untold::byte_range range;
};

/// The non-empty parts of mesh i in the order streamed_asset::load_mesh reads them.
std::vector<part> mesh_parts(const untold::asset& a, std::uint32_t i) {
  const untold::mesh_record m = a.meshes()[i];
  std::vector<part> out;
  auto add = [&](untold::chunk_type type, std::uint64_t offset, std::uint64_t size) {
    const auto row = a.find_chunk(type);
    if (row && size != 0) out.push_back({{a.chunks()[*row].file_offset + offset, size}});
  };
  add(untold::chunk_type::vertex_data, m.vertex_data_offset, m.vertex_data_size_bytes);
  add(untold::chunk_type::index_data, m.index_data_offset, m.index_data_size_bytes);
  add(untold::chunk_type::edge_index_data, m.edge_index_offset(),
      std::uint64_t{m.edge_index_count()} * untold::index_size(m.index_type));
  return out;
}

std::size_t temp_files(const path& cache_dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : rt::fs::directory_iterator(cache_dir / ".tmp", ec)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("remote fetch: http:// is refused before any network I/O") {
  fixture f;
  f.put("t.untold", small_tile());
  auto dl = rt::make_downloader(f.options());
  const std::string http_url = "http://127.0.0.1:" + std::to_string(f.server.port()) + "/t.untold";

  auto r = dl->fetch(http_url);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ur::remote_errc::insecure_scheme);
  CHECK(r.error().attempts == 0);
  CHECK(dl->resolve(http_url).error().code == ur::remote_errc::insecure_scheme);
  CHECK(ur::https_range_source::open(*dl, http_url).error().code == ur::remote_errc::insecure_scheme);
  CHECK(ur::load_manifest(*dl, "http://127.0.0.1/scene.json").error().code == ur::remote_errc::insecure_scheme);
  CHECK(dl->client().requests_started() == 0);
  // The libcurl layer refuses it too, should anything get past the check.
  const auto raw = dl->client().perform({.url = http_url});
  CHECK(raw.curl_code == CURLE_UNSUPPORTED_PROTOCOL);
  CHECK(dl->client().requests_started() == 0);
  // Local paths and file:// pass through untouched.
  CHECK(*dl->resolve("/data/t.untold") == path("/data/t.untold"));
  CHECK(*dl->resolve("file:///data/t.untold") == path("/data/t.untold"));

  // The server saw nothing: the only line in its log is this https request.
  REQUIRE(dl->fetch(f.server.url("t.untold")).has_value());
  CHECK(f.server.wait_log_for("t.untold", 1).size() == 1);
  CHECK(f.server.log().size() == 1);
}

TEST_CASE("remote fetch: 200, then a cache hit with no request, then 304 on revalidation") {
  fixture f;
  const test::bytes v1 = small_tile();
  f.put("tiles/t.untold", v1);
  const std::string url = f.server.url("tiles/t.untold");
  std::string etag;
  {
    auto dl = rt::make_downloader(f.options());
    auto first = dl->fetch(url);
    REQUIRE_MESSAGE(first.has_value(), first.error().describe());
    CHECK(first->outcome == ur::fetch_outcome::downloaded);
    CHECK(first->attempts == 1);
    CHECK_FALSE(first->etag.empty());
    CHECK(first->path == f.cache_dir / (ur::disk_cache::key_hash(url) + ".untold"));
    CHECK(same(file_bytes(first->path), v1));
    etag = first->etag;

    auto second = dl->fetch(url);
    REQUIRE(second.has_value());
    CHECK(second->outcome == ur::fetch_outcome::hit);
    CHECK(second->attempts == 0);

    auto third = dl->fetch(url, ur::fetch_policy::revalidate);
    REQUIRE(third.has_value());
    CHECK(third->outcome == ur::fetch_outcome::not_modified);
    CHECK(third->path == first->path);
    const auto stats = dl->stats();
    CHECK(stats.requests == 2);
    CHECK(stats.downloads == 1);
    CHECK(stats.not_modified == 1);
    CHECK(stats.hits == 1);
  }
  auto log = f.server.wait_log_for("tiles/t.untold", 2);
  REQUIRE(log.size() == 2);
  CHECK(log[0].status == 200);
  CHECK(log[0].if_none_match.empty());
  CHECK(log[0].bytes == v1.size());
  CHECK(log[1].status == 304);
  CHECK(log[1].if_none_match == etag);
  CHECK(log[1].bytes == 0);
  CHECK(log[0].protocol == "HTTP/2.0");  // negotiated by ALPN

  // A new session (new downloader, same directory): the cache persisted.
  // After the file changes on the server, revalidation downloads it again.
  const test::bytes v2 = small_tile({}, 5.0f);
  REQUIRE(v2 != v1);
  f.put("tiles/t.untold", v2);
  rt::fs::last_write_time(f.server.www() / "tiles/t.untold",
                          rt::fs::file_time_type::clock::now() + std::chrono::hours(1));
  auto dl = rt::make_downloader(f.options());
  CHECK(dl->fetch(url)->outcome == ur::fetch_outcome::hit);
  auto fresh = dl->fetch(url, ur::fetch_policy::revalidate);
  REQUIRE(fresh.has_value());
  CHECK(fresh->outcome == ur::fetch_outcome::downloaded);
  CHECK(fresh->etag != etag);
  CHECK(same(file_bytes(fresh->path), v2));
  log = f.server.wait_log_for("tiles/t.untold", 3);
  REQUIRE(log.size() == 3);
  CHECK(log[2].status == 200);
  CHECK(log[2].if_none_match == etag);
}

TEST_CASE("remote fetch: concurrent callers of one URL share one transfer") {
  fixture f;
  const test::bytes tile = small_tile();
  f.put("shared.untold", tile);
  // Every connection is held (no server byte reaches the client) until release().
  rt::tcp_proxy proxy(f.server.port(), [](int) { return rt::proxy_mode{rt::proxy_mode::hold, 0}; });
  auto dl = rt::make_downloader(f.options());
  const std::string url = proxy.url("shared.untold");
  constexpr int callers = 8;
  std::vector<ur::result<ur::fetch_info>> results(callers, ur::make_error(ur::remote_errc::ok));
  std::vector<std::thread> threads;
  for (int i = 0; i < callers; ++i) threads.emplace_back([&, i] { results[i] = dl->fetch(url); });
  // Observable: seven callers wait on the first one's transfer.
  CHECK(rt::eventually([&] { return dl->waiting_callers() == callers - 1; }));
  proxy.release();
  for (std::thread& t : threads) t.join();
  int leaders = 0;
  for (const auto& r : results) {
    REQUIRE_MESSAGE(r.has_value(), r.error().describe());
    CHECK(r->path == results[0]->path);
    leaders += r->joined ? 0 : 1;
  }
  CHECK(leaders == 1);
  CHECK(dl->stats().joined == callers - 1);
  CHECK(dl->stats().requests == 1);
  CHECK(f.server.wait_log_for("shared.untold", 1).size() == 1);
  CHECK(proxy.connections() == 1);
}

TEST_CASE("remote fetch: 500 and 404 are retried with backoff, then fail with the status") {
  CHECK(ur::retry_policy{}.delay_before(2) == 1000ms);  // the defaults: 1 s, 2 s, 4 s
  CHECK(ur::retry_policy{}.delay_before(3) == 2000ms);
  CHECK(ur::retry_policy{}.delay_before(4) == 4000ms);
  fixture f;
  auto dl = rt::make_downloader(f.options());
  auto r = dl->fetch(f.server.url("fault/500"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ur::remote_errc::http_status);
  CHECK(r.error().http_status == 500);
  CHECK(r.error().attempts == 3);
  auto log = f.server.wait_log_for("fault/500", 3);
  CHECK(log.size() == 3);
  CHECK(std::all_of(log.begin(), log.end(), [](const rt::log_entry& e) { return e.status == 500; }));

  auto missing = dl->fetch(f.server.url("missing.untold"));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().http_status == 404);
  CHECK(missing.error().attempts == 3);
  CHECK(missing.error().describe().find("E-REMOTE-HTTP") == 0);
  CHECK(f.server.wait_log_for("missing.untold", 3).size() == 3);

  const auto stats = dl->stats();
  CHECK(stats.retries == 4);
  CHECK(stats.failures == 2);
  CHECK(dl->cache().items().empty());
  CHECK(temp_files(f.cache_dir) == 0);
}

TEST_CASE("remote fetch: a response slower than the resource timeout fails as a timeout") {
  fixture f;
  f.put("slow/big.untold", test::write_scene(true));  // ~3.5 MB at 64 KiB/s (nginx limit_rate)
  auto o = f.options();
  o.resource_timeout = 1500ms;
  auto dl = rt::make_downloader(o);
  auto r = dl->fetch(f.server.url("slow/big.untold"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ur::remote_errc::timeout);
  CHECK(r.error().attempts == 1);  // the resource deadline covers retries too
  CHECK(dl->cache().items().empty());
  CHECK(temp_files(f.cache_dir) == 0);
}

TEST_CASE("remote fetch: a connection that stalls mid-body hits the request timeout") {
  fixture f;
  f.put("big.untold", test::write_scene(true));
  rt::tcp_proxy proxy(f.server.port(), [](int) { return rt::proxy_mode{rt::proxy_mode::stall_after, 200'000}; });
  auto o = f.options();
  o.request_timeout = 1000ms;
  o.retry.max_attempts = 2;
  o.client.verbose = std::getenv("UNTOLD_CURL_VERBOSE") != nullptr;
  auto dl = rt::make_downloader(o);
  auto r = dl->fetch(proxy.url("big.untold"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ur::remote_errc::timeout);
  CHECK(r.error().attempts == 2);
  CHECK(proxy.connections() == 2);
  CHECK(dl->cache().items().empty());
}

TEST_CASE("remote fetch: a connection reset mid-body is retried and the entry is whole") {
  fixture f;
  const test::bytes big = test::write_scene(true);
  f.put("big.untold", big);
  rt::tcp_proxy proxy(f.server.port(), [](int i) {
    return i == 0 ? rt::proxy_mode{rt::proxy_mode::reset_after, 200'000} : rt::proxy_mode{};
  });
  auto dl = rt::make_downloader(f.options());
  auto r = dl->fetch(proxy.url("big.untold"));
  REQUIRE_MESSAGE(r.has_value(), r.error().describe());
  CHECK(r->attempts == 2);
  CHECK(proxy.connections() == 2);
  CHECK(same(file_bytes(r->path), big));
  CHECK(untold::open_file(r->path).has_value());
  CHECK(dl->stats().retries == 1);
}

TEST_CASE("remote fetch: a truncated body never becomes a cache entry") {
  fixture f;
  f.put("big.untold", test::write_scene(true));
  rt::tcp_proxy proxy(f.server.port(), [](int) { return rt::proxy_mode{rt::proxy_mode::close_after, 200'000}; });
  auto dl = rt::make_downloader(f.options());
  auto r = dl->fetch(proxy.url("big.untold"));
  REQUIRE_FALSE(r.has_value());
  CAPTURE(r.error().describe());
  CHECK((r.error().code == ur::remote_errc::transfer_failed || r.error().code == ur::remote_errc::truncated_body));
  CHECK(r.error().attempts == 3);
  CHECK(proxy.connections() == 3);
  CHECK(dl->cache().items().empty());
  CHECK(temp_files(f.cache_dir) == 0);
  CHECK_FALSE(dl->cache().lookup(proxy.url("big.untold")).has_value());
}

TEST_CASE("remote fetch: a Content-Length over the limit is refused at the headers, no body byte read") {
  // Regression (issue 18, item 5): the limit used to trip only once the body
  // had grown past it, so a huge declared length still started the transfer.
  fixture f;
  const test::bytes tile = test::write_scene(true);
  REQUIRE(tile.size() > 100'000);
  f.put("big.untold", tile);
  ur::client_options co;
  co.ca_file = f.server.tls().ca_cert.string();
  ur::http_client client(co);
  ur::http_request req;
  req.url = f.server.url("big.untold");
  req.max_body = tile.size() - 1;  // just below: a body-time check would read almost all of it
  const ur::http_response r = client.perform(req);
  CHECK(r.too_large);
  CHECK(r.content_length == tile.size());
  CHECK(r.body_bytes == 0);
  CHECK(r.body.empty());
  // Through the downloader: too_large, nothing cached, no temporary file left.
  auto o = f.options();
  o.max_download_bytes = tile.size() - 1;
  auto dl = rt::make_downloader(o);
  auto fetched = dl->fetch(f.server.url("big.untold"));
  REQUIRE_FALSE(fetched.has_value());
  CHECK(fetched.error().code == ur::remote_errc::too_large);
  CHECK(dl->cache().items().empty());
  CHECK(temp_files(f.cache_dir) == 0);
}

TEST_CASE("remote fetch: a downloaded tile's textures are prefetched, keyed by absolute URL") {
  fixture f;
  const test::bytes tile = small_tile({"Textures/a.png", "Textures/sub/b.png", "Textures/missing.png", "../x.png"});
  f.put("scene/tiles/t.untold", tile);
  f.put("scene/tiles/Textures/a.png", std::string("png a"));
  f.put("scene/tiles/Textures/sub/b.png", std::string("png b"));
  std::mutex log_mutex;
  std::vector<std::string> lines;
  auto o = f.options();
  o.prefetch_textures = true;
  o.log = [&](std::string_view line) {
    std::lock_guard lock(log_mutex);
    lines.emplace_back(line);
  };
  auto dl = rt::make_downloader(o);
  auto r = dl->fetch(f.server.url("scene/tiles/t.untold"));
  REQUIRE_MESSAGE(r.has_value(), r.error().describe());
  dl->wait_idle();
  const std::string a_url = f.server.url("scene/tiles/Textures/a.png");
  REQUIRE(dl->cache().lookup(a_url).has_value());
  CHECK(dl->cache().lookup(a_url)->path == f.cache_dir / (ur::disk_cache::key_hash(a_url) + ".png"));
  CHECK(rt::read_text(dl->cache().lookup(a_url)->path) == "png a");
  CHECK(rt::read_text(*dl->resolve(f.server.url("scene/tiles/Textures/sub/b.png"))) == "png b");
  CHECK_FALSE(dl->cache().lookup(f.server.url("scene/tiles/Textures/missing.png")).has_value());
  CHECK_FALSE(rt::fs::exists(f.cache_dir / "Textures"));
  const auto stats = dl->stats();
  CHECK(stats.prefetch_ok == 2);
  CHECK(stats.prefetch_failed == 1);
  {
    std::lock_guard lock(log_mutex);
    CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return l.find("missing.png") != std::string::npos; }));
    CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return l.find("../x.png") != std::string::npos; }));
  }
  CHECK(f.server.wait_log_for("scene/tiles/Textures/a.png", 1).size() == 1);
  CHECK(f.server.wait_log_for("scene/tiles/Textures/missing.png", 3).size() == 3);
  CHECK(f.server.log_for("x.png").empty());
  // A cache hit prefetches nothing more.
  CHECK(dl->fetch(f.server.url("scene/tiles/t.untold"))->outcome == ur::fetch_outcome::hit);
  dl->wait_idle();
  CHECK(dl->stats().prefetch_ok == 2);
}

TEST_CASE("remote fetch: two tiles' Textures/wall.png from other directories or hosts are separate entries") {
  // Regression (issue 18, item 4): textures were stored at their relative
  // URI, so the second tile's Textures/wall.png replaced the first one's.
  fixture f;
  f.put("a/t.untold", small_tile({"Textures/wall.png"}));
  f.put("b/t.untold", small_tile({"Textures/wall.png"}, 1.0f));
  f.put("a/Textures/wall.png", std::string("wall of a"));
  f.put("b/Textures/wall.png", std::string("wall of b"));
  auto o = f.options();
  o.prefetch_textures = true;
  auto dl = rt::make_downloader(o);
  // The same server under another host name (the certificate names both).
  const std::string other_host = "https://localhost:" + std::to_string(f.server.port()) + "/";
  const std::vector<std::string> tiles = {f.server.url("a/t.untold"), f.server.url("b/t.untold"), other_host + "a/t.untold"};
  for (const std::string& tile : tiles) {
    auto r = dl->fetch(tile);
    REQUIRE_MESSAGE(r.has_value(), r.error().describe());
    dl->wait_idle();
  }
  CHECK(dl->stats().prefetch_ok == 3);
  const std::vector<std::string> walls = {f.server.url("a/Textures/wall.png"), f.server.url("b/Textures/wall.png"),
                                          other_host + "a/Textures/wall.png"};
  std::set<path> paths;
  for (const std::string& wall : walls) {
    CAPTURE(wall);
    const auto e = dl->cache().lookup(wall);
    REQUIRE(e.has_value());
    paths.insert(e->path);
  }
  CHECK(paths.size() == 3);
  CHECK(rt::read_text(dl->cache().lookup(walls[0])->path) == "wall of a");
  CHECK(rt::read_text(dl->cache().lookup(walls[1])->path) == "wall of b");
  CHECK(rt::read_text(dl->cache().lookup(walls[2])->path) == "wall of a");
}

TEST_CASE("remote fetch: a corrupted cache entry is downloaded again, on a hit and instead of a 304") {
  // Regression (issue 18, item 3): a byte flipped in a cached file was served
  // on a hit and again after a 304 revalidation.
  fixture f;
  const test::bytes tile = small_tile();
  f.put("t.untold", tile);
  const std::string url = f.server.url("t.untold");
  {
    auto dl = rt::make_downloader(f.options());
    auto first = dl->fetch(url);
    REQUIRE(first.has_value());
    CHECK(dl->fetch(url)->outcome == ur::fetch_outcome::hit);  // verified once: trusted by this downloader
    rt::flip_byte(first->path, tile.size() / 2);
    // Revalidation re-hashes before it would reuse the entry: the server gets
    // an unconditional GET instead of If-None-Match.
    auto again = dl->fetch(url, ur::fetch_policy::revalidate);
    REQUIRE(again.has_value());
    CHECK(again->outcome == ur::fetch_outcome::downloaded);
    CHECK(same(file_bytes(again->path), tile));
    CHECK(dl->stats().cache_corrupt == 1);
    CHECK(dl->stats().not_modified == 0);
    const auto log = f.server.wait_log_for("t.untold", 2);
    REQUIRE(log.size() == 2);
    CHECK(log[1].status == 200);
    CHECK(log[1].if_none_match.empty());
  }
  // The next session: its first hit verifies the entry, finds the flip and downloads.
  const path cached = (f.cache_dir / (ur::disk_cache::key_hash(url) + ".untold"));
  rt::flip_byte(cached, 10);
  auto dl = rt::make_downloader(f.options());
  auto r = dl->fetch(url);
  REQUIRE(r.has_value());
  CHECK(r->outcome == ur::fetch_outcome::downloaded);
  CHECK(same(file_bytes(r->path), tile));
  CHECK(dl->stats().cache_corrupt == 1);
  CHECK(dl->stats().hits == 0);
  CHECK(f.server.wait_log_for("t.untold", 3).size() == 3);
  CHECK(dl->fetch(url)->outcome == ur::fetch_outcome::hit);
}

TEST_CASE("remote fetch: a file that fails validation is not cached") {
  fixture f;
  // Default writer options: block digests, which a lazy open leaves unchecked
  // for the vertex data (no open reads it). The fetch must still find it.
  test::bytes tile = small_tile();
  const std::uint32_t vertex_row = test::chunk_row(tile, 6);
  tile[test::chunk_payload_offset(tile, 6) + 40] ^= std::byte{0x10};  // a vertex byte
  REQUIRE(untold::open(tile).has_value());  // the lazy default alone accepts it
  // A file written without block digests: the contentHash catches it.
  untold::builder plain_builder{untold::file_type::tile};
  const test::grid g = test::make_grid(6, 0.0f);
  plain_builder.add_mesh({.entity = plain_builder.add_entity({.name = "root"}), .vertices = g.vertices,
                          .indices = g.indices});
  auto plain = plain_builder.finish({.block_digests = false});
  REQUIRE(plain.has_value());
  (*plain)[test::chunk_payload_offset(*plain, 6) + 40] ^= std::byte{0x10};
  f.put("bad.untold", tile);
  f.put("bad_plain.untold", *plain);
  auto dl = rt::make_downloader(f.options());
  auto r = dl->fetch(f.server.url("bad.untold"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ur::remote_errc::invalid_asset);
  CHECK(r.error().core.rule_id() == "R-BLOCK-HASH");
  CHECK(r.error().core.context.chunk_index == vertex_row);
  CHECK(r.error().core.context.value == 0);  // the block: byte 40 of the chunk
  auto p = dl->fetch(f.server.url("bad_plain.untold"));
  REQUIRE_FALSE(p.has_value());
  CHECK(p.error().code == ur::remote_errc::invalid_asset);
  CHECK(p.error().core.rule_id() == "R-HASH");
  CHECK(dl->cache().items().empty());
  CHECK(dl->stats().downloads == 0);
}

TEST_CASE("remote fetch: a cached default-options file opens without a second full pass") {
  fixture f;
  const test::bytes tile = small_tile();
  f.put("t.untold", tile);
  auto dl = rt::make_downloader(f.options());
  auto r = dl->fetch(f.server.url("t.untold"));
  REQUIRE_MESSAGE(r.has_value(), r.error().describe());
  CHECK(r->outcome == ur::fetch_outcome::downloaded);
  CHECK(dl->fetch(f.server.url("t.untold"))->outcome == ur::fetch_outcome::hit);
  // The cached copy opens with default options (integrity::lazy) without
  // hashing its geometry a second time: with a vertex byte changed on disk
  // after the download's check, the open still succeeds (a whole-file hash,
  // the contentHash path, would fail it: R-HASH), and the change is found
  // by the first verified access to those bytes.
  const std::size_t vertex_byte = test::chunk_payload_offset(tile, 6) + 40;
  {
    auto a = untold::open_file(r->path);
    REQUIRE(a.has_value());
    CHECK(untold::has_block_digests(a->asset));
    CHECK(untold::verify_all(a->asset).has_value());
  }
  rt::flip_byte(r->path, vertex_byte);
  auto a = untold::open_file(r->path);
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  const auto v = untold::verified_vertices(a->asset, a->asset.meshes()[0]);
  REQUIRE_FALSE(v.has_value());
  CHECK(v.error().rule_id() == "R-BLOCK-HASH");
  CHECK(v.error().context.chunk_index == test::chunk_row(tile, 6));
  // What the lazy open skipped: integrity::full verifies every block at open,
  // strict the contentHash over the whole file too (first).
  CHECK(untold::open_file(r->path, {.integrity = untold::integrity::full}).error().rule_id() == "R-BLOCK-HASH");
  CHECK(untold::open_file(r->path, {.integrity = untold::integrity::strict}).error().rule_id() == "R-HASH");
}

TEST_CASE("remote cache: a process killed mid-download leaves no corrupt entry") {
  const std::string child = UNTOLD_REMOTE_CHILD;
  REQUIRE(!child.empty());
  fixture f;
  const test::bytes big = test::write_scene(true);
  f.put("big.untold", big);
  // The child's connection stalls after 300 kB; later ones pass.
  rt::tcp_proxy proxy(f.server.port(), [](int i) {
    return i == 0 ? rt::proxy_mode{rt::proxy_mode::stall_after, 300'000} : rt::proxy_mode{};
  });
  const std::string url = proxy.url("big.untold");
  const pid_t pid = rt::spawn({child, "--cache", f.cache_dir.string(), "--ca", f.server.tls().ca_cert.string(), url},
                              f.dir / "child.log");
  // Wait until the child has written part of the body to its temp file.
  const bool partial = rt::eventually([&] {
    std::error_code ec;
    for (const auto& e : rt::fs::directory_iterator(f.cache_dir / ".tmp", ec))
      if (e.is_regular_file() && e.file_size() > 0) return true;
    return false;
  });
  REQUIRE(partial);
  ::kill(pid, SIGKILL);
  CHECK(rt::wait_exit(pid) == -SIGKILL);
  CHECK(temp_files(f.cache_dir) == 1);  // the orphaned temp file, not an entry

  auto dl = rt::make_downloader(f.options());  // opening the cache removes dead processes' temp files
  CHECK(temp_files(f.cache_dir) == 0);
  CHECK_FALSE(dl->cache().lookup(url).has_value());
  CHECK(dl->cache().items().empty());
  auto r = dl->fetch(url);
  REQUIRE_MESSAGE(r.has_value(), r.error().describe());
  CHECK(r->outcome == ur::fetch_outcome::downloaded);
  CHECK(same(file_bytes(r->path), big));
}

TEST_CASE("remote cache: two processes share one cache directory") {
  const std::string child = UNTOLD_REMOTE_CHILD;
  REQUIRE(!child.empty());
  fixture f;
  std::vector<std::string> urls;
  for (int i = 0; i < 8; ++i) {
    f.put("shared/t" + std::to_string(i) + ".untold", small_tile({}, static_cast<float>(i)));
    urls.push_back(f.server.url("shared/t" + std::to_string(i) + ".untold"));
  }
  const std::uint64_t tile_size = rt::fs::file_size(f.server.www() / "shared/t0.untold");
  const std::uint64_t budget = tile_size * 4;  // forces evictions while both run
  auto args = [&](bool reversed) {
    std::vector<std::string> a = {child, "--cache", f.cache_dir.string(), "--ca", f.server.tls().ca_cert.string(),
                                  "--budget", std::to_string(budget)};
    for (int round = 0; round < 3; ++round) {
      std::vector<std::string> order = urls;
      if (reversed) std::reverse(order.begin(), order.end());
      a.insert(a.end(), order.begin(), order.end());
    }
    return a;
  };
  const pid_t a = rt::spawn(args(false), f.dir / "a.log");
  const pid_t b = rt::spawn(args(true), f.dir / "b.log");
  CHECK(rt::wait_exit(a) == 0);
  CHECK(rt::wait_exit(b) == 0);
  INFO(rt::read_text(f.dir / "a.log"), rt::read_text(f.dir / "b.log"));

  auto cache = ur::disk_cache::open({.directory = f.cache_dir, .budget_bytes = budget});
  REQUIRE(cache.has_value());
  CHECK(cache->usage() <= budget);
  const auto items = cache->items();
  CHECK_FALSE(items.empty());
  for (const ur::cache_item& item : items) {
    CAPTURE(item.path.string());
    CHECK_FALSE(item.key.empty());  // every file belongs to an entry
    auto e = cache->lookup(item.key);
    REQUIRE(e.has_value());
    CHECK(untold::open_file(e->path).has_value());  // every entry is whole
  }
  CHECK(temp_files(f.cache_dir) == 0);
}

TEST_CASE("remote ranges: a streamed tile reads only the bytes it needs") {
  fixture f;
  const test::bytes file = test::write_scene(true);
  f.put("tiles/big.untold", file);
  auto whole = untold::open(file);
  REQUIRE(whole.has_value());
  // Every mesh but the 2.9 MB terrain.
  std::vector<std::uint32_t> wanted;
  std::uint32_t terrain = 0;
  for (std::uint32_t i = 0; i < whole->meshes().size(); ++i)
    if (whole->meshes()[i].vertex_count > whole->meshes()[terrain].vertex_count) terrain = i;
  for (std::uint32_t i = 0; i < whole->meshes().size(); ++i)
    if (i != terrain) wanted.push_back(i);
  // The file has block digests (the writer's default), in row 0 inside the
  // 64 KiB prefix open reads: open stays one request, and each mesh part is
  // read grown to the digest blocks around it (test::mesh_range_requests).
  REQUIRE(untold::has_block_digests(*whole));
  const untold::chunk_entry digests = whole->chunks()[test::chunk_row(file, untold::integrity_chunk_type)];
  REQUIRE(digests.file_offset + digests.compressed_size <= 65536);
  const auto ranges = test::mesh_range_requests(*whole, wanted);
  std::uint64_t expected = 0;
  for (const auto& r : ranges) expected += r.second;
  const std::uint64_t expected_requests = 1 + ranges.size();
  REQUIRE(expected > 0);

  const std::string url = f.server.url("tiles/big.untold");
  std::string etag;
  {
    auto dl = rt::make_downloader(f.options());
    auto src = ur::https_range_source::open(*dl, url);
    REQUIRE_MESSAGE(src.has_value(), src.error().describe());
    CHECK(src->size() == file.size());
    CHECK(src->requests() == 1);
    etag = src->etag();
    auto tile = untold::streamed_asset::open(*src);
    REQUIRE_MESSAGE(tile.has_value(), tile.error().describe());
    CHECK(src->requests() == 1);  // header, chunk table and metadata came with open's one request
    auto log = f.server.wait_log_for("tiles/big.untold", 1);
    REQUIRE(log.size() == 1);
    CHECK(log[0].status == 206);
    CHECK(log[0].range == "bytes=0-65535");
    CHECK(log[0].bytes == 65536);

    for (const std::uint32_t i : wanted) {
      auto mesh = tile->load_mesh(i);
      REQUIRE(mesh.has_value());
      const untold::mesh_record m = whole->meshes()[i];
      CHECK(same(mesh->vertices, whole->vertices(m)));
      CHECK(same(mesh->indices, whole->indices(m)));
      CHECK(same(mesh->edge_indices, whole->edge_indices(m)));
    }
    CHECK(src->requests() == expected_requests);
    log = f.server.wait_log_for("tiles/big.untold", expected_requests);
    REQUIRE(log.size() == expected_requests);
    std::uint64_t sent = 0;
    for (std::size_t i = 1; i < log.size(); ++i) {
      CHECK(log[i].status == 206);
      CHECK(log[i].if_range == etag);
      sent += log[i].bytes;
    }
    CHECK(sent == expected);
    CHECK(src->bytes_fetched() == 65536 + expected);
    // The terrain's geometry was never fetched: everything read is less than
    // its vertex bytes alone.
    CHECK(65536 + expected < whole->meshes()[terrain].vertex_data_size_bytes);
  }
  // Again with the cache warm: one conditional request (304), ranges from disk.
  auto dl = rt::make_downloader(f.options());
  auto src = ur::https_range_source::open(*dl, url);
  REQUIRE(src.has_value());
  auto tile = untold::streamed_asset::open(*src);
  REQUIRE(tile.has_value());
  for (const std::uint32_t i : wanted) REQUIRE(tile->load_mesh(i).has_value());
  CHECK(src->requests() == 1);
  CHECK(src->bytes_fetched() == 0);
  const auto log = f.server.wait_log_for("tiles/big.untold", expected_requests + 1);
  REQUIRE(log.size() == expected_requests + 1);
  CHECK(log.back().status == 304);
  CHECK(log.back().if_none_match == etag);
  CHECK(log.back().range == "bytes=0-65535");
}

TEST_CASE("remote ranges: a file replaced on the server mid-stream fails, never mixing bytes") {
  fixture f;
  const test::bytes v1 = test::write_scene(true);
  f.put("tiles/big.untold", v1);
  auto whole = untold::open(v1);
  REQUIRE(whole.has_value());
  std::string etag;
  {
    auto dl = rt::make_downloader(f.options());
    auto src = ur::https_range_source::open(*dl, f.server.url("tiles/big.untold"));
    REQUIRE(src.has_value());
    etag = src->etag();
    auto tile = untold::streamed_asset::open(*src);
    REQUIRE(tile.has_value());
    // A new version (other size, so another ETag) lands on the server.
    test::bytes v2 = test::write_scene(true);
    v2.resize(v2.size() + 16, std::byte{0});
    f.put("tiles/big.untold", v2);
    // A small mesh with a part past the prefix: its read goes to the server.
    std::uint32_t pick = 0;
    auto needs_request = [&](std::uint32_t i) {
      bool past = false, small = true;
      for (const part& p : mesh_parts(*whole, i)) {
        past = past || p.range.end() > 65536;
        small = small && p.range.size < 100'000;
      }
      return past && small;
    };
    while (pick < whole->meshes().size() && !needs_request(pick)) ++pick;
    REQUIRE(pick < whole->meshes().size());
    auto mesh = tile->load_mesh(pick);
    REQUIRE_FALSE(mesh.has_value());
    CHECK(mesh.error().code == untold::errc::io_read_failed);
    CHECK(std::string(mesh.error().context.field) == "changed_on_server");
    CHECK(src->last_error().code == ur::remote_errc::changed_on_server);
    CHECK(src->last_error().attempts == 1);  // not retried
    CHECK(src->requests() == 2);
    CHECK(src->bytes_fetched() == 65536);  // the new body was refused at its headers
  }
  // nginx logs an HTTP/2 request the client cancelled once the connection closes.
  const auto log = f.server.wait_log_for("tiles/big.untold", 2);
  REQUIRE(log.size() == 2);
  CHECK(log[1].if_range == etag);
  CHECK(log[1].status == 200);  // the server's answer to a stale If-Range: the new full body
}

TEST_CASE("remote ranges: a 206 without the pinned ETag is refused, never mixing versions") {
  // Regression (issue 18, item 2): a 206 that carried no ETag was accepted
  // after open() had pinned one. Under /strip-etag/ the server answers the
  // If-Range requests with a 206 and no ETag (and ignores If-Range), so a
  // file replaced by one of the same size used to be served as a mix.
  fixture f;
  const test::bytes v1 = test::write_scene(true);
  auto whole = untold::open(v1);
  REQUIRE(whole.has_value());
  // A small mesh with a part past the prefix: that read goes to the server.
  std::uint32_t pick = 0;
  std::optional<std::uint64_t> fetched_byte;  // a byte of that part
  for (; pick < whole->meshes().size() && !fetched_byte; ++pick) {
    const auto parts = mesh_parts(*whole, pick);
    const bool small = std::all_of(parts.begin(), parts.end(), [](const part& p) { return p.range.size < 100'000; });
    for (const part& p : parts)
      if (small && p.range.offset >= 65536) fetched_byte = p.range.offset;
  }
  REQUIRE(fetched_byte.has_value());
  --pick;
  f.put("strip-etag/big.untold", v1);

  auto dl = rt::make_downloader(f.options());
  auto src = ur::https_range_source::open(*dl, f.server.url("strip-etag/big.untold"), {.use_cache = false});
  REQUIRE_MESSAGE(src.has_value(), src.error().describe());
  CHECK(src->etag().size() > 2);  // open's 206 came with a strong ETag
  auto tile = untold::streamed_asset::open(*src);
  REQUIRE(tile.has_value());
  // Version 2: same size, other vertex bytes (unhashed: nothing else would notice).
  test::bytes v2 = v1;
  v2[*fetched_byte] ^= std::byte{0x5a};
  f.put("strip-etag/big.untold", v2);

  auto mesh = tile->load_mesh(pick);
  REQUIRE_FALSE(mesh.has_value());
  CHECK(mesh.error().code == untold::errc::io_read_failed);
  CHECK(std::string(mesh.error().context.field) == "changed_on_server");
  CHECK(src->last_error().code == ur::remote_errc::changed_on_server);
  CHECK(src->last_error().attempts == 1);  // not retried
  CHECK(src->requests() == 2);
  // The server did answer 206 (without an ETag), through the stripping proxy.
  const auto proxied = f.server.wait_log_for("strip-etag-proxied/big.untold", 1);
  REQUIRE(proxied.size() == 1);
  CHECK(proxied[0].status == 206);
  CHECK(proxied[0].if_range == src->etag());
}

TEST_CASE("remote manifest: loaded over https, revalidated, tiles resolved and fetched") {
  fixture f;
  const std::string manifest = R"({"version": 3,
    "streaming_defaults": {"streaming_radius": 80, "unload_radius": 120, "priority": 1},
    "tiles": [{"tile_id": "a", "path_relative_to_manifest": "tiles/a.untold", "file_size_bytes": 1,
               "bounds": {"min": [0,0,0], "max": [1,1,1]}, "center": [0.5,0.5,0.5],
               "hlod_levels": [{"path": "hlods/a.untold", "switch_distance": 300}]}],
    "scene_cameras": [{"name": "intro"}]})";
  f.put("scene/scene.json", manifest);
  f.put("scene/tiles/a.untold", small_tile());
  f.put("scene/hlods/a.untold", small_tile({}, 1.0f));
  auto dl = rt::make_downloader(f.options());
  const std::string url = f.server.url("scene/scene.json");
  auto m = ur::load_manifest(*dl, url);
  REQUIRE_MESSAGE(m.has_value(), m.error().describe());
  CHECK(m->extra.contains("scene_cameras"));
  auto where = ur::resolve_tile(url, m->tiles[0]);
  REQUIRE(where.has_value());
  CHECK(where->tile == f.server.url("scene/tiles/a.untold"));
  CHECK(dl->fetch(where->tile).has_value());
  CHECK(dl->fetch(where->hlods[0]).has_value());
  REQUIRE(ur::load_manifest(*dl, url).has_value());  // revalidated: 304
  const auto log = f.server.wait_log_for("scene/scene.json", 2);
  REQUIRE(log.size() == 2);
  CHECK(log[0].status == 200);
  CHECK(log[1].status == 304);
}

#ifdef UNTOLD_REMOTE_FETCH_CLI
TEST_CASE("remote cli: untold fetch downloads, validates and reports hit and miss") {
  fixture f;
  const test::bytes tile = small_tile();
  f.put("tiles/t.untold", tile);
  const std::string url = f.server.url("tiles/t.untold");
  const std::vector<std::string> base = {UNTOLD_REMOTE_FETCH_CLI, "fetch", url, "--cache-dir", f.cache_dir.string(),
                                         "--ca-file", f.server.tls().ca_cert.string()};
  CHECK(rt::run(base, f.dir / "first.txt") == 0);
  const std::string first = rt::read_text(f.dir / "first.txt");
  INFO(first);
  CHECK(first.find("miss (downloaded)") != std::string::npos);
  CHECK(first.find("meshes:   1") != std::string::npos);
  CHECK(first.find("size:     " + std::to_string(tile.size())) != std::string::npos);
  CHECK(first.find("etag:") != std::string::npos);

  CHECK(rt::run(base, f.dir / "second.txt") == 0);
  CHECK(rt::read_text(f.dir / "second.txt").find("cache:    hit") != std::string::npos);

  std::vector<std::string> json = base;
  json.insert(json.end(), {"--revalidate", "--json"});
  CHECK(rt::run(json, f.dir / "third.json") == 0);
  const auto j = nlohmann::json::parse(rt::read_text(f.dir / "third.json"));
  CHECK(j["cache"] == "hit (revalidated, 304)");
  CHECK(j["chunks"].get<int>() >= 7);

  std::vector<std::string> ranges = base;
  ranges.push_back("--ranges");
  CHECK(rt::run(ranges, f.dir / "ranges.txt") == 0);
  CHECK(rt::read_text(f.dir / "ranges.txt").find("requests: 1") != std::string::npos);
}

// docs/cli.md, exit codes: 2 only for what the command line got wrong (a URL
// refused before any request), 1 for a file that fails validation, 3 for
// everything the network, the server or the cache did - a server's redirect
// to http:// included, though it is refused with the same error as an
// http:// URL given on the command line.
TEST_CASE("remote cli: every untold fetch failure has its documented exit code") {
  fixture f;
  f.put("tiles/t.untold", small_tile());
  test::bytes flipped = small_tile();
  flipped[test::chunk_payload_offset(flipped, 6) + 40] ^= std::byte{0x10};  // a vertex byte: R-BLOCK-HASH
  f.put("tiles/flipped.untold", flipped);
  f.put("tiles/text.untold", std::string("not an untold file\n"));
  f.put("big.bin", std::string(1'000'000, 'x'));
  rt::write_text(f.dir / "not-a-dir", "a file where the cache directory should be\n");
  const std::string ca = f.server.tls().ca_cert.string();
  // Runs `untold fetch URL --attempts 1` with the test CA, a fresh cache and
  // `extra` arguments; returns the exit code and keeps what it printed in `out`.
  int runs = 0;
  std::string out;
  INFO("the last run printed: ", out);
  auto fetch = [&](const std::string& url, const std::vector<std::string>& extra = {}) {
    const path log = f.dir / ("run" + std::to_string(++runs) + ".txt");
    std::vector<std::string> argv = {UNTOLD_REMOTE_FETCH_CLI, "fetch", url, "--attempts", "1", "--cache-dir",
                                     (f.dir / ("cache" + std::to_string(runs))).string(), "--ca-file", ca};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const int code = rt::run(argv, log);
    out = rt::read_text(log);
    return code;
  };
  auto printed = [&out](const std::string& text) { return out.find(text) != std::string::npos; };

  // 2: usage.
  CHECK(rt::run({UNTOLD_REMOTE_FETCH_CLI, "fetch"}, f.dir / "usage.txt") == 2);
  CHECK(fetch("http://127.0.0.1:" + std::to_string(f.server.port()) + "/tiles/t.untold") == 2);
  CHECK(printed("E-REMOTE-INSECURE"));
  CHECK(fetch("ftp://127.0.0.1/tiles/t.untold") == 2);
  CHECK(printed("E-REMOTE-SCHEME"));
  CHECK(fetch("tiles/t.untold") == 2);
  CHECK(printed("E-REMOTE-URL"));
  CHECK(f.server.log().empty());  // all refused before any request

  // 3: the server redirects https:// to http:// (refused, not followed), by
  // download and by ranges.
  CHECK(fetch(f.server.url("to-http/tiles/t.untold"), {"--json"}) == 3);
  CHECK(printed("E-REMOTE-SCHEME"));
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  CHECK(j["error"]["httpStatus"] == 301);
  CHECK(j["error"]["attempts"] == 1);
  CHECK(fetch(f.server.url("to-http/tiles/t.untold"), {"--ranges"}) == 3);
  CHECK(printed("E-REMOTE-SCHEME"));
  const auto redirects = f.server.wait_log_for("to-http/tiles/t.untold", 2);
  REQUIRE(redirects.size() == 2);
  CHECK(redirects[0].status == 301);
  const path origin_log = f.dir / "nginx" / "logs" / "origin.log";
  REQUIRE(rt::fs::exists(origin_log));
  CHECK(rt::read_text(origin_log).empty());  // the http:// origin saw no request
  // 3: HTTP error status, untrusted certificate, no server, a stalled and a
  // cut connection, an unusable cache directory.
  CHECK(fetch(f.server.url("nope.untold")) == 3);
  CHECK(printed("E-REMOTE-HTTP"));
  CHECK(fetch(f.server.url("fault/500")) == 3);
  CHECK(printed("E-REMOTE-HTTP"));
  CHECK(rt::run({UNTOLD_REMOTE_FETCH_CLI, "fetch", f.server.url("tiles/t.untold"), "--attempts", "1", "--cache-dir",
                 (f.dir / "cache-tls").string()},
                f.dir / "tls.txt") == 3);  // no --ca-file: the system store does not know the test CA
  CHECK(rt::read_text(f.dir / "tls.txt").find("E-REMOTE-TLS") != std::string::npos);
  CHECK(fetch("https://127.0.0.1:" + std::to_string(rt::free_port()) + "/tiles/t.untold") == 3);
  CHECK(printed("E-REMOTE-TRANSFER"));
  {
    rt::tcp_proxy proxy(f.server.port(), [](int i) {
      return i == 0 ? rt::proxy_mode{rt::proxy_mode::stall_after, 0} : rt::proxy_mode{rt::proxy_mode::close_after, 200'000};
    });
    CHECK(fetch(proxy.url("tiles/t.untold"), {"--timeout", "0.5"}) == 3);
    CHECK(printed("E-REMOTE-TIMEOUT"));
    CHECK(fetch(proxy.url("big.bin")) == 3);
    CHECK((printed("E-REMOTE-TRANSFER") || printed("E-REMOTE-TRUNCATED")));
  }
  CHECK(rt::run({UNTOLD_REMOTE_FETCH_CLI, "fetch", f.server.url("tiles/t.untold"), "--cache-dir",
                 (f.dir / "not-a-dir").string(), "--ca-file", ca},
                f.dir / "cache.txt") == 3);
  CHECK(rt::read_text(f.dir / "cache.txt").find("E-REMOTE-CACHE") != std::string::npos);

  // 1: the downloaded file fails validation (a block digest, not an .untold
  // file at all), by download and by ranges.
  CHECK(fetch(f.server.url("tiles/flipped.untold")) == 1);
  CHECK(printed("E-REMOTE-INVALID"));
  CHECK(printed("R-BLOCK-HASH"));
  CHECK(fetch(f.server.url("tiles/text.untold")) == 1);
  CHECK(printed("E-REMOTE-INVALID"));
  CHECK(fetch(f.server.url("tiles/text.untold"), {"--ranges"}) == 1);
}
#endif

TEST_CASE("remote example: remote_stream streams a manifest's first tile by ranges") {
  const std::string example = UNTOLD_REMOTE_EXAMPLE;
  REQUIRE(!example.empty());
  fixture f;
  f.put("scene/scene.json", std::string(R"({"version": 3,
    "streaming_defaults": {"streaming_radius": 80, "unload_radius": 120, "priority": 1},
    "tiles": [{"tile_id": "a", "path_relative_to_manifest": "tiles/a.untold", "file_size_bytes": 1,
               "bounds": {"min": [0,0,0], "max": [1,1,1]}, "center": [0.5,0.5,0.5]}]})"));
  f.put("scene/tiles/a.untold", test::write_scene(true));
  CHECK(rt::run({example, f.server.url("scene/scene.json"), "--ca-file", f.server.tls().ca_cert.string(), "--cache-dir",
                 f.cache_dir.string()},
                f.dir / "out.txt") == 0);
  const std::string out = rt::read_text(f.dir / "out.txt");
  INFO(out);
  CHECK(out.find("manifest v3: 1 tiles") != std::string::npos);
  CHECK(out.find("4 meshes") != std::string::npos);
  CHECK(out.find("requests") != std::string::npos);
}
