// untold/streaming.hpp - decides which tiles, LODs and HLODs to fetch, show and drop.
//
//   std::vector<untold::streaming::tile_desc> tiles = ...;        // from any manifest
//   untold::streaming::planner plan(std::move(tiles), {});
//   for (;;) {                                                    // the engine's tick
//     auto& actions = plan.tick({.camera = cam, .now = seconds, .memory_budget = bytes,
//                                .results = finished_requests});
//     for (const auto& a : actions) execute(a);                   // in order: frees before fetches
//   }
//
// The planner owns no thread, clock, file or socket: time, the camera, the
// budget and the results of earlier requests come in; actions come out. The
// same inputs give the same actions, so it is testable with a fake clock.
// untold::remote::stream_runner (remote/stream_runner.hpp) drives it with the
// HTTPS downloader; untold::remote::make_stream_tiles (remote/stream_plan.hpp)
// builds the tiles from a manifest. Model and rules: docs/streaming.md.
//
// A tile has levels: 0 = the full tile, 1..L = its LOD files (ascending
// switch distance), L+1 = its HLOD when it has one. Each level has its own
// state machine (the reference engine's tile lifecycle):
//
//   unloaded -> fetching -> parsing -> parsed -> (unload) -> unloaded
//      ^          |  \________|______ cancel __> unloading --(old request ends)--^
//      |          v           v
//      +-- (backoff over) -- failed      backoff 5 s, 10 s, 20 s, then 60 s each time
//
// Distances are from the camera to the tile's centre. Per tile:
// - full tile: shown inside streaming_radius; fetched from prefetch_radius
//   (default (streaming + unload) / 2); kept to unload_radius, then dropped
//   after grace_period (a fetch in flight is cancelled at once).
// - LOD k: shown from its switch distance to the next level's; HLOD: shown
//   beyond max(its switch distance, streaming_radius). They are fetched and
//   kept with the same margins as the full tile (prefetch - streaming,
//   unload - streaming) around their bands.
// - shown level: the finest parsed level whose band holds the camera, the
//   current one kept while the camera is within switch_hysteresis of its band.
// - order: distance, then priority (higher first), then tile and level index.
// - memory budget: a fetch starts only if the levels held (in flight or
//   parsed) fit the budget with it. Levels rank by importance: needed now
//   (the camera is in their shown band), wanted (prefetch range), only kept
//   (hysteresis). To make room a candidate evicts levels farther than itself
//   by more than eviction_hysteresis (50%), least important and farthest
//   first - never the other way round, so two tiles cannot evict each other
//   in turn. A parsed level out of range stays
//   shown until it is unloaded. Safe on any input: non-finite or
//   out-of-order values are clamped, never trusted.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace untold::streaming {

using vec3 = std::array<double, 3>;

/// A LOD or HLOD file of a tile.
struct level_desc {
  /// Camera distance from which this level is shown.
  double switch_distance = 0;
  /// Bytes it takes once loaded; 0 = unknown: the tile's size_bytes is assumed
  /// until a result reports the real size (request_result::resident_bytes).
  std::uint64_t size_bytes = 0;
};

/// One tile as the planner sees it: plain values, so any manifest can feed it.
struct tile_desc {
  vec3 center{};
  vec3 bounds_min{}, bounds_max{};
  /// Bytes of the full tile (the manifest's file_size_bytes).
  std::uint64_t size_bytes = 0;
  double streaming_radius = 0;
  /// Negative = (streaming_radius + unload_radius) / 2, the reference default.
  double prefetch_radius = -1;
  double unload_radius = 0;
  /// Higher loads first among tiles at the same distance.
  double priority = 0;
  /// Any order; the planner sorts them ascending by switch distance.
  std::vector<level_desc> lods{};
  std::optional<level_desc> hlod{};
  /// Loaded wherever the camera is and never evicted (the shared bucket).
  bool always_resident = false;
};

enum class level_state : std::uint8_t { unloaded, fetching, parsing, parsed, unloading, failed };

[[nodiscard]] constexpr std::string_view name(level_state s) noexcept {
  switch (s) {
    case level_state::unloaded: return "unloaded";
    case level_state::fetching: return "fetching";
    case level_state::parsing: return "parsing";
    case level_state::parsed: return "parsed";
    case level_state::unloading: return "unloading";
    case level_state::failed: return "failed";
  }
  return "unknown";
}

enum class action_kind : std::uint8_t {
  fetch_prefix,  // ranges: one request for header + chunk table + metadata
  fetch_ranges,  // ranges: the geometry of the level, after its prefix
  fetch_file,    // whole_file: the level's file
  load,          // the bytes are here: parse / upload, then report the request
  show,          // switch the tile's visible level (level == no_level: nothing)
  unload,        // drop a parsed level (memory is free once executed)
  cancel,        // abort `request`; report it when it has ended (any outcome)
};

[[nodiscard]] constexpr std::string_view name(action_kind k) noexcept {
  switch (k) {
    case action_kind::fetch_prefix: return "fetch_prefix";
    case action_kind::fetch_ranges: return "fetch_ranges";
    case action_kind::fetch_file: return "fetch_file";
    case action_kind::load: return "load";
    case action_kind::show: return "show";
    case action_kind::unload: return "unload";
    case action_kind::cancel: return "cancel";
  }
  return "unknown";
}

inline constexpr std::uint16_t no_level = 0xFFFF;

struct action {
  action_kind kind = action_kind::show;
  std::uint32_t tile = 0;
  std::uint16_t level = 0;   // 0 full, 1..L LODs, L+1 HLOD; no_level for "show nothing"
  std::uint64_t request = 0; // fetch_*/load: report it back; cancel: the request to abort; 0 otherwise

  friend bool operator==(const action&, const action&) = default;
};

enum class request_outcome : std::uint8_t { completed, failed, cancelled };

/// What became of a request the planner issued (fetch_*, load).
struct request_result {
  std::uint64_t request = 0;
  request_outcome outcome = request_outcome::completed;
  /// Bytes the level will take once loaded, when the request learned it
  /// (e.g. the file size from the prefix); 0 = keep the planner's estimate.
  std::uint64_t resident_bytes = 0;
};

struct tick_input {
  vec3 camera{};
  /// Seconds on any monotonic clock; must not go backwards.
  double now = 0;
  std::uint64_t memory_budget = std::numeric_limits<std::uint64_t>::max();
  std::span<const request_result> results{};
};

enum class transfer_mode : std::uint8_t { ranges, whole_file };

struct planner_options {
  transfer_mode mode = transfer_mode::ranges;
  /// Levels fetching or parsing at once (cancelled ones count until they end).
  std::uint32_t max_in_flight = 4;
  /// Radius unloads per tick (budget evictions are not capped).
  std::uint32_t max_unloads_per_tick = 2;
  /// Seconds a parsed level stays after leaving its keep range.
  double grace_period = 3.0;
  /// Failure backoff in seconds: the n-th consecutive failure of a level
  /// waits backoff_schedule[n - 1], the last step repeating. The default is
  /// the reference engine's documented sequence, 5 s -> 10 s -> 20 s -> 60 s
  /// max (a step table, not a doubling, which would insert 40 s). Empty =
  /// the default; negative or non-finite steps become 0.
  std::vector<double> backoff_schedule{5.0, 10.0, 20.0, 60.0};
  /// The shown level changes only when the camera is this fraction of the
  /// boundary distance past the band edge.
  double switch_hysteresis = 0.1;
  /// A level is evicted for a candidate only if it is farther by more than this fraction.
  double eviction_hysteresis = 0.5;
  /// LODs and HLODs beyond this distance are not kept (infinity = any distance).
  double max_distance = std::numeric_limits<double>::infinity();
};

/// Counters since construction.
struct planner_stats {
  std::uint64_t ticks = 0;
  std::uint64_t fetches = 0;    // levels whose fetch started
  std::uint64_t parsed = 0;     // levels that reached parsed
  std::uint64_t unloads = 0;    // radius unloads
  std::uint64_t evictions = 0;  // budget evictions (unloads and cancels)
  std::uint64_t cancels = 0;    // in-flight levels cancelled (radius or budget)
  std::uint64_t failures = 0;
};

/// The planner. A class template only so that its member functions are
/// compiled where they are used, as basic_builder (docs/compile-time.md).
/// Use it as `untold::streaming::planner`.
template <class Deferred = void>
class basic_planner {
 public:
  /// Takes the tiles (see tile_desc); values are normalised: non-finite
  /// numbers become 0, radii are ordered streaming <= prefetch <= unload.
  /// Safe on untrusted values. Level counts above 0xFFFD are cut (level ids are 16 bits).
  explicit basic_planner(std::vector<tile_desc> tiles, planner_options options = {}) : options_(std::move(options)) {
    sanitize_options();
    tiles_.reserve(tiles.size());
    for (tile_desc& t : tiles) add_tile(std::move(t));
  }

  /// One tick: applies `in.results`, then decides. The returned actions are
  /// valid until the next call; execute them in order (cancels and unloads
  /// come before the fetches they make room for).
  const std::vector<action>& tick(const tick_input& in) {
    actions_.clear();
    ++stats_.ticks;
    now_ = std::isfinite(in.now) ? std::max(in.now, now_) : now_;
    camera_ = in.camera;
    budget_ = in.memory_budget;
    for (const request_result& r : in.results) apply(r);
    classify();
    release_unwanted();
    enforce_budget();
    start_fetches();
    update_shown();
    return actions_;
  }

  [[nodiscard]] std::size_t tile_count() const noexcept { return tiles_.size(); }
  /// Levels of tile t: 1 + LODs + (1 if HLOD).
  [[nodiscard]] std::uint16_t level_count(std::uint32_t t) const noexcept { return tiles_[t].levels; }
  [[nodiscard]] std::uint16_t hlod_level(std::uint32_t t) const noexcept {
    return tiles_[t].has_hlod ? static_cast<std::uint16_t>(tiles_[t].levels - 1) : no_level;
  }
  [[nodiscard]] bool is_lod(std::uint32_t t, std::uint16_t level) const noexcept {
    return level >= 1 && level < tiles_[t].levels && level != hlod_level(t);
  }
  [[nodiscard]] level_state state(std::uint32_t t, std::uint16_t level) const noexcept {
    return level < tiles_[t].levels ? slot(t, level).state : level_state::unloaded;
  }
  /// The level the tile shows (no_level: nothing).
  [[nodiscard]] std::uint16_t shown(std::uint32_t t) const noexcept { return tiles_[t].shown; }
  /// Consecutive failures of a level (0 after it parsed).
  [[nodiscard]] std::uint32_t failures(std::uint32_t t, std::uint16_t level) const noexcept {
    return slot(t, level).failures;
  }
  /// When a failed level may be fetched again.
  [[nodiscard]] double retry_at(std::uint32_t t, std::uint16_t level) const noexcept { return slot(t, level).retry_at; }
  /// Distance from the camera of the last tick to the tile's centre.
  [[nodiscard]] double distance(std::uint32_t t) const noexcept { return tiles_[t].distance; }
  /// Bytes held by levels fetching, parsing or parsed.
  [[nodiscard]] std::uint64_t resident_bytes() const noexcept { return resident_; }
  [[nodiscard]] std::uint32_t in_flight() const noexcept { return in_flight_; }
  /// Bytes a level is accounted with (its size, or the tile's when unknown).
  [[nodiscard]] std::uint64_t level_bytes(std::uint32_t t, std::uint16_t level) const noexcept {
    return slot(t, level).bytes;
  }
  /// The tile and level of a request id issued by this planner.
  [[nodiscard]] std::pair<std::uint32_t, std::uint16_t> request_target(std::uint64_t request) const noexcept {
    const std::uint32_t s = static_cast<std::uint32_t>(request & 0xFFFFFFFFu);
    if (s >= slots_.size()) return {0, no_level};
    return {slots_[s].tile, slots_[s].level};
  }
  [[nodiscard]] const planner_stats& stats() const noexcept { return stats_; }
  [[nodiscard]] const planner_options& options() const noexcept { return options_; }
  /// The failure backoff after `failures` consecutive failures (0 counts as 1).
  [[nodiscard]] double backoff(std::uint32_t failures) const noexcept {
    const std::vector<double>& steps = options_.backoff_schedule;  // never empty after sanitize_options
    const std::size_t step = std::min<std::size_t>(std::max<std::uint32_t>(failures, 1), steps.size());
    return steps[step - 1];
  }

 private:
  struct band {
    double lo = 0, hi = 0;  // shown in [lo, hi)
  };
  struct level_slot {
    std::uint32_t tile = 0;
    std::uint16_t level = 0;
    level_state state = level_state::unloaded;
    bool wanted = false;  // this tick: inside its fetch range
    bool kept = false;    // this tick: inside its keep range
    std::uint32_t failures = 0;
    std::uint32_t generation = 0;
    std::uint64_t request = 0;  // the live request (fetching/parsing/unloading)
    std::uint64_t bytes = 0;
    bool size_known = false;
    bool ranges_phase = false;       // ranges mode: the prefix is in, the geometry requested
    double retry_at = 0;
    bool pending_unload = false;       // out of its keep range since pending_unload_since
    double pending_unload_since = 0;
    band shown_band{};
    double fetch_lo = 0, fetch_hi = 0, keep_lo = 0, keep_hi = 0;
  };
  struct tile_entry {
    vec3 center{};
    double priority = 0;
    double distance = 0;
    std::uint32_t first_slot = 0;
    std::uint16_t levels = 1;
    std::uint16_t shown = no_level;
    bool has_hlod = false;
    bool always = false;
  };

  static double finite_or(double v, double fallback) noexcept { return std::isfinite(v) ? v : fallback; }

  void sanitize_options() {
    auto non_negative = [](double& v, double fallback) { v = std::isfinite(v) && v >= 0 ? v : fallback; };
    non_negative(options_.grace_period, 3.0);
    if (options_.backoff_schedule.empty()) options_.backoff_schedule = planner_options{}.backoff_schedule;
    for (double& step : options_.backoff_schedule) non_negative(step, 0.0);
    non_negative(options_.switch_hysteresis, 0.1);
    non_negative(options_.eviction_hysteresis, 0.5);
    if (std::isnan(options_.max_distance) || options_.max_distance < 0)
      options_.max_distance = std::numeric_limits<double>::infinity();
    options_.max_in_flight = std::max<std::uint32_t>(1, options_.max_in_flight);
  }

  void add_tile(tile_desc t) {
    tile_entry e;
    for (std::size_t i = 0; i < 3; ++i) e.center[i] = finite_or(t.center[i], 0);
    e.priority = finite_or(t.priority, 0);
    e.always = t.always_resident;
    const double rs = std::max(0.0, finite_or(t.streaming_radius, 0));
    const double ru = std::max(rs, finite_or(t.unload_radius, rs));
    const double rp_in = finite_or(t.prefetch_radius, -1);
    const double rp = rp_in < 0 ? (rs + ru) / 2 : std::clamp(rp_in, rs, ru);
    const double fetch_margin = rp - rs, keep_margin = ru - rs;
    const double far = options_.max_distance;

    std::vector<level_desc> lods = std::move(t.lods);
    for (level_desc& l : lods) l.switch_distance = std::max(0.0, finite_or(l.switch_distance, 0));
    std::stable_sort(lods.begin(), lods.end(),
                     [](const level_desc& a, const level_desc& b) { return a.switch_distance < b.switch_distance; });
    const std::size_t max_lods = no_level - 2;
    if (lods.size() > max_lods) lods.resize(max_lods);
    e.has_hlod = t.hlod.has_value();
    e.levels = static_cast<std::uint16_t>(1 + lods.size() + (e.has_hlod ? 1 : 0));
    e.first_slot = static_cast<std::uint32_t>(slots_.size());
    const std::uint32_t index = static_cast<std::uint32_t>(tiles_.size());

    const double hlod_start =
        e.has_hlod ? std::max(rs, std::max(0.0, finite_or(t.hlod->switch_distance, 0))) : far;
    auto push = [&](std::uint16_t level, std::uint64_t size, band b, double fetch_lo, double fetch_hi,
                    double keep_lo, double keep_hi) {
      level_slot s;
      s.tile = index;
      s.level = level;
      s.size_known = size != 0;
      s.bytes = size != 0 ? size : t.size_bytes;
      s.shown_band = b;
      s.fetch_lo = fetch_lo;
      s.fetch_hi = fetch_hi;
      s.keep_lo = keep_lo;
      s.keep_hi = keep_hi;
      slots_.push_back(s);
    };
    // The full tile: shown inside streaming_radius, fetched from prefetch, kept to unload.
    push(0, t.size_bytes, {0, rs}, 0, rp, 0, ru);
    for (std::size_t k = 0; k < lods.size(); ++k) {
      const double lo = lods[k].switch_distance;
      const double hi = k + 1 < lods.size() ? lods[k + 1].switch_distance : hlod_start;
      const double fetch_hi = std::min(hi + fetch_margin, far);
      const double keep_hi = std::min(hi + keep_margin, far + keep_margin);
      push(static_cast<std::uint16_t>(k + 1), lods[k].size_bytes, {lo, hi}, std::max(0.0, lo - fetch_margin),
           fetch_hi, std::max(0.0, lo - keep_margin), keep_hi);
    }
    if (e.has_hlod)
      push(static_cast<std::uint16_t>(e.levels - 1), t.hlod->size_bytes, {hlod_start, far},
           std::max(0.0, hlod_start - fetch_margin), far, std::max(0.0, hlod_start - keep_margin), far + keep_margin);
    tiles_.push_back(e);
  }

  [[nodiscard]] level_slot& slot(std::uint32_t t, std::uint16_t level) noexcept {
    return slots_[tiles_[t].first_slot + level];
  }
  [[nodiscard]] const level_slot& slot(std::uint32_t t, std::uint16_t level) const noexcept {
    return slots_[tiles_[t].first_slot + level];
  }

  std::uint64_t new_request(std::uint32_t slot_index) {
    level_slot& s = slots_[slot_index];
    ++s.generation;
    if (s.generation == 0) s.generation = 1;
    s.request = (std::uint64_t{s.generation} << 32) | slot_index;
    return s.request;
  }

  void emit(action_kind kind, const level_slot& s, std::uint64_t request = 0) {
    actions_.push_back({kind, s.tile, s.level, request});
  }

  [[nodiscard]] static bool holds_memory(level_state st) noexcept {
    return st == level_state::fetching || st == level_state::parsing || st == level_state::parsed;
  }
  [[nodiscard]] static bool busy(level_state st) noexcept {
    return st == level_state::fetching || st == level_state::parsing || st == level_state::unloading;
  }

  void set_state(level_slot& s, level_state next) {
    if (holds_memory(s.state) && !holds_memory(next)) resident_ -= s.bytes;
    if (!holds_memory(s.state) && holds_memory(next)) resident_ += s.bytes;
    if (busy(s.state) && !busy(next)) --in_flight_;
    if (!busy(s.state) && busy(next)) ++in_flight_;
    s.state = next;
  }

  void fail(level_slot& s) {
    ++s.failures;
    ++stats_.failures;
    s.retry_at = now_ + backoff(s.failures);
    s.ranges_phase = false;
    set_state(s, level_state::failed);
  }

  void apply(const request_result& r) {
    const std::uint32_t index = static_cast<std::uint32_t>(r.request & 0xFFFFFFFFu);
    if (index >= slots_.size()) return;
    level_slot& s = slots_[index];
    if (s.request != r.request || !busy(s.state)) return;  // stale or unknown
    if (s.state == level_state::unloading) {  // the cancelled request has ended
      s.ranges_phase = false;
      set_state(s, level_state::unloaded);
      return;
    }
    if (r.outcome != request_outcome::completed) {
      fail(s);
      return;
    }
    if (r.resident_bytes != 0 && r.resident_bytes != s.bytes) {
      if (holds_memory(s.state)) resident_ = resident_ - s.bytes + r.resident_bytes;
      s.bytes = r.resident_bytes;
      s.size_known = true;
    }
    if (s.state == level_state::fetching && options_.mode == transfer_mode::ranges && !s.ranges_phase) {
      s.ranges_phase = true;
      emit(action_kind::fetch_ranges, s, new_request(index));
    } else if (s.state == level_state::fetching) {
      s.ranges_phase = false;
      set_state(s, level_state::parsing);
      emit(action_kind::load, s, new_request(index));
    } else {  // parsing -> parsed
      s.failures = 0;
      s.request = 0;
      set_state(s, level_state::parsed);
      ++stats_.parsed;
    }
  }

  // Distances, wanted/kept flags for this tick.
  void classify() {
    for (tile_entry& t : tiles_) {
      const double dx = t.center[0] - camera_[0], dy = t.center[1] - camera_[1], dz = t.center[2] - camera_[2];
      t.distance = std::sqrt(dx * dx + dy * dy + dz * dz);
      if (!std::isfinite(t.distance)) t.distance = std::numeric_limits<double>::infinity();
      for (std::uint16_t l = 0; l < t.levels; ++l) {
        level_slot& s = slots_[t.first_slot + l];
        const bool always = t.always && l == 0;
        s.wanted = always || (t.distance >= s.fetch_lo && t.distance <= s.fetch_hi);
        s.kept = always || (t.distance >= s.keep_lo && t.distance <= s.keep_hi);
      }
    }
  }

  // Cancels in-flight levels that left their keep range; unloads parsed ones
  // after the grace period, unless the tile would lose the level it shows
  // while its replacement is still coming.
  void release_unwanted() {
    std::uint32_t unloads = 0;
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      level_slot& s = slots_[i];
      if (s.kept) {
        s.pending_unload = false;
        continue;
      }
      if (s.state == level_state::fetching || s.state == level_state::parsing) {
        cancel(s);
        continue;
      }
      if (s.state != level_state::parsed) continue;
      if (!s.pending_unload) {
        s.pending_unload = true;
        s.pending_unload_since = now_;
      }
      if (now_ - s.pending_unload_since < options_.grace_period) continue;
      if (tiles_[s.tile].shown == s.level && replacement_coming(s.tile)) continue;
      if (unloads >= options_.max_unloads_per_tick) continue;
      ++unloads;
      ++stats_.unloads;
      unload(s);
    }
  }

  [[nodiscard]] bool replacement_coming(std::uint32_t t) const noexcept {
    const tile_entry& e = tiles_[t];
    for (std::uint16_t l = 0; l < e.levels; ++l) {
      const level_slot& s = slots_[e.first_slot + l];
      if (s.wanted && (s.state == level_state::fetching || s.state == level_state::parsing)) return true;
    }
    return false;
  }

  void cancel(level_slot& s) {
    ++stats_.cancels;
    emit(action_kind::cancel, s, s.request);
    s.ranges_phase = false;
    set_state(s, level_state::unloading);
  }

  void unload(level_slot& s) {
    emit(action_kind::unload, s);
    s.pending_unload = false;
    set_state(s, level_state::unloaded);
    if (tiles_[s.tile].shown == s.level) show(s.tile, best_shown(s.tile));
  }

  void drop(level_slot& s) {  // budget eviction
    ++stats_.evictions;
    if (s.state == level_state::parsed) unload(s);
    else cancel(s);
  }

  // Importance for the budget, lower keeps its memory: 0 = the camera is in
  // the level's shown band (needed now), 1 = wanted (prefetch), 2 = only kept
  // by hysteresis.
  [[nodiscard]] int importance(const level_slot& s) const noexcept {
    if (!s.wanted) return 2;
    return in_band(s, tiles_[s.tile].distance, 0) ? 0 : 1;
  }

  // Evictable levels, the first to go first: least important, then farthest.
  void collect_evictable() {
    evictable_.clear();
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      const level_slot& s = slots_[i];
      if (!holds_memory(s.state) || (tiles_[s.tile].always && s.level == 0)) continue;
      evictable_.push_back(i);
    }
    std::sort(evictable_.begin(), evictable_.end(), [this](std::uint32_t a, std::uint32_t b) {
      const int ia = importance(slots_[a]), ib = importance(slots_[b]);
      if (ia != ib) return ia > ib;
      const double da = tiles_[slots_[a].tile].distance, db = tiles_[slots_[b].tile].distance;
      if (da != db) return da > db;
      return a > b;
    });
  }

  // A budget that shrank (or a size that grew): evict until it fits.
  void enforce_budget() {
    if (resident_ <= budget_) return;
    collect_evictable();
    for (const std::uint32_t i : evictable_) {
      if (resident_ <= budget_) break;
      if (holds_memory(slots_[i].state)) drop(slots_[i]);
    }
  }

  [[nodiscard]] bool candidate_before(std::uint32_t a, std::uint32_t b) const noexcept {
    const level_slot& sa = slots_[a];
    const level_slot& sb = slots_[b];
    const tile_entry& ta = tiles_[sa.tile];
    const tile_entry& tb = tiles_[sb.tile];
    if (ta.always != tb.always) return ta.always;
    if (ta.distance != tb.distance) return ta.distance < tb.distance;
    if (ta.priority != tb.priority) return ta.priority > tb.priority;
    return a < b;
  }

  void start_fetches() {
    candidates_.clear();
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      const level_slot& s = slots_[i];
      if (!s.wanted) continue;
      if (s.state == level_state::unloaded || (s.state == level_state::failed && now_ >= s.retry_at))
        candidates_.push_back(i);
    }
    if (candidates_.empty() || in_flight_ >= options_.max_in_flight) return;
    const std::size_t slots_free = options_.max_in_flight - in_flight_;
    const std::size_t k = std::min(slots_free, candidates_.size());
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k), candidates_.end(),
                      [this](std::uint32_t a, std::uint32_t b) { return candidate_before(a, b); });
    bool have_evictable = false;
    for (std::size_t c = 0; c < k; ++c) {
      level_slot& s = slots_[candidates_[c]];
      if (s.bytes > budget_) continue;  // can never fit: do not let it block the others
      if (!fits(s.bytes)) {
        if (!have_evictable) {
          collect_evictable();
          have_evictable = true;
        }
        if (!make_room(s)) break;  // nearer candidates first: the rest wait too
      }
      start(candidates_[c]);
    }
  }

  [[nodiscard]] bool fits(std::uint64_t bytes) const noexcept {
    return bytes <= budget_ && resident_ <= budget_ - bytes;
  }

  // Evicts levels farther than `candidate` by more than eviction_hysteresis,
  // least important first, until it fits. False (nothing evicted) when that
  // cannot make room. The candidate's own tile is never evicted for it (no
  // hole while it loads). A distance margin rather than the importance class
  // decides, so a camera jittering across a radius cannot swap two tiles.
  bool make_room(const level_slot& candidate) {
    const double limit = tiles_[candidate.tile].distance * (1 + options_.eviction_hysteresis);
    chosen_.clear();
    std::uint64_t freeable = 0;
    for (std::size_t n = 0; n < evictable_.size() && !fits_after(candidate.bytes, freeable); ++n) {
      const level_slot& e = slots_[evictable_[n]];
      if (!holds_memory(e.state) || e.tile == candidate.tile || !(tiles_[e.tile].distance > limit)) continue;
      freeable += e.bytes;
      chosen_.push_back(evictable_[n]);
    }
    if (!fits_after(candidate.bytes, freeable)) return false;
    for (const std::uint32_t i : chosen_) drop(slots_[i]);
    return true;
  }

  [[nodiscard]] bool fits_after(std::uint64_t bytes, std::uint64_t freed) const noexcept {
    const std::uint64_t after = resident_ - std::min(freed, resident_);
    return bytes <= budget_ && after <= budget_ - bytes;
  }

  void start(std::uint32_t index) {
    level_slot& s = slots_[index];
    ++stats_.fetches;
    s.ranges_phase = false;
    set_state(s, level_state::fetching);
    emit(options_.mode == transfer_mode::ranges ? action_kind::fetch_prefix : action_kind::fetch_file, s,
         new_request(index));
  }

  [[nodiscard]] bool in_band(const level_slot& s, double d, double widen) const noexcept {
    const double lo = s.shown_band.lo * (1 - widen);
    const double hi = std::isinf(s.shown_band.hi) ? s.shown_band.hi : s.shown_band.hi * (1 + widen);
    return d >= lo && (d < hi || std::isinf(hi));
  }

  // The level to show: the current one while the camera is near its band,
  // else the finest parsed level whose band holds the camera, else (no
  // holes) the parsed level whose band is nearest, else nothing.
  [[nodiscard]] std::uint16_t best_shown(std::uint32_t t) const noexcept {
    const tile_entry& e = tiles_[t];
    const double d = e.distance;
    if (e.shown != no_level && slot(t, e.shown).state == level_state::parsed &&
        in_band(slot(t, e.shown), d, options_.switch_hysteresis))
      return e.shown;
    std::uint16_t nearest = no_level;
    double nearest_gap = std::numeric_limits<double>::infinity();
    for (std::uint16_t l = 0; l < e.levels; ++l) {
      const level_slot& s = slot(t, l);
      if (s.state != level_state::parsed) continue;
      if (in_band(s, d, 0)) return l;
      const double gap = d < s.shown_band.lo ? s.shown_band.lo - d : d - s.shown_band.hi;
      if (gap < nearest_gap) {
        nearest_gap = gap;
        nearest = l;
      }
    }
    return nearest;
  }

  void show(std::uint32_t t, std::uint16_t level) {
    tile_entry& e = tiles_[t];
    if (e.shown == level) return;
    e.shown = level;
    actions_.push_back({action_kind::show, t, level, 0});
  }

  void update_shown() {
    for (std::uint32_t t = 0; t < tiles_.size(); ++t) {
      const tile_entry& e = tiles_[t];
      if (e.shown == no_level) {
        // Fast path: nothing shown and nothing parsed.
        bool any = false;
        for (std::uint16_t l = 0; l < e.levels && !any; ++l) any = slots_[e.first_slot + l].state == level_state::parsed;
        if (!any) continue;
      }
      show(t, best_shown(t));
    }
  }

  planner_options options_;
  std::vector<tile_entry> tiles_;
  std::vector<level_slot> slots_;
  std::vector<action> actions_;
  std::vector<std::uint32_t> candidates_;
  std::vector<std::uint32_t> evictable_;
  std::vector<std::uint32_t> chosen_;
  planner_stats stats_{};
  vec3 camera_{};
  double now_ = -std::numeric_limits<double>::infinity();
  std::uint64_t budget_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t resident_ = 0;
  std::uint32_t in_flight_ = 0;
};
using planner = basic_planner<>;

}  // namespace untold::streaming
