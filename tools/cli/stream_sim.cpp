// tools/cli/stream_sim.cpp - `untold stream-sim MANIFEST --path camera.csv`:
// replays a camera path against untold::streaming::planner over a simulated
// network and reports what a client would have fetched, when each tile became
// visible, and the memory it held. docs/streaming.md explains the model.
//
// Network model: one link of --bandwidth Mbit/s shared equally by the
// transfers moving bytes at that moment; each HTTP request first waits
// --latency ms. A level's request sizes come from its file when the file is
// next to the manifest (the prefix read by streamed_asset::open, then the
// reads of load_mesh for every mesh - each part grown to its digest blocks -
// as untold::remote::https_range_source sends them: one request per range
// not inside its prefix or fetched before), else from file_size_bytes (prefix = 64 KiB, the rest in one
// request). load completes on the next tick; the planner ticks every --tick s.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/ranges.hpp>
#include <untold/remote/manifest.hpp>
#include <untold/remote/stream_plan.hpp>
#include <untold/source.hpp>
#include <untold/streaming.hpp>

#include "commands.hpp"

namespace untold::tools::cli {
namespace {

namespace us = untold::streaming;
namespace ur = untold::remote;

struct sim_args {
  std::string manifest, path, svg;
  double bandwidth_mbps = 50;
  double latency_ms = 50;
  double tick = 0.1;
  double budget_mb = 0;  // 0 = unlimited
  bool whole_file = false;
  std::uint32_t max_transfers = 4;
};

struct camera_key {
  double t;
  us::vec3 p;
};

/// Reads "t,x,y,z" rows ('#' comments and a non-numeric header line are skipped).
bool read_camera_path(const std::string& file, std::vector<camera_key>& out, std::string& error) {
  std::ifstream in(file);
  if (!in) {
    error = "cannot open " + quote_path(file);
    return false;
  }
  std::string line;
  std::size_t row = 0;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty() || line[0] == '#') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream ls(line);
    camera_key k{};
    if (!(ls >> k.t >> k.p[0] >> k.p[1] >> k.p[2])) {
      if (out.empty() && row == 1) continue;  // a header
      error = quote_path(file) + " line " + std::to_string(row) + ": expected t,x,y,z";
      return false;
    }
    if (!std::isfinite(k.t) || !std::isfinite(k.p[0]) || !std::isfinite(k.p[1]) || !std::isfinite(k.p[2]) ||
        (!out.empty() && k.t < out.back().t)) {
      error = quote_path(file) + " line " + std::to_string(row) + ": times must be finite and ascending";
      return false;
    }
    out.push_back(k);
  }
  if (out.size() < 2) {
    error = quote_path(file) + ": needs at least two rows";
    return false;
  }
  return true;
}

us::vec3 camera_at(const std::vector<camera_key>& keys, double t) {
  if (t <= keys.front().t) return keys.front().p;
  if (t >= keys.back().t) return keys.back().p;
  const auto it = std::upper_bound(keys.begin(), keys.end(), t, [](double v, const camera_key& k) { return v < k.t; });
  const camera_key& b = *it;
  const camera_key& a = *(it - 1);
  const double f = b.t > a.t ? (t - a.t) / (b.t - a.t) : 0;
  return {a.p[0] + f * (b.p[0] - a.p[0]), a.p[1] + f * (b.p[1] - a.p[1]), a.p[2] + f * (b.p[2] - a.p[2])};
}

/// A range_source over a file that counts reads (= HTTP requests of a range
/// client) and bytes. As https_range_source: once `held_prefix` is set, a
/// read inside it costs nothing, nor does a range read before (its disk cache).
class counting_source final : public range_source {
 public:
  explicit counting_source(file_range_source& f) : file_(&f) {}
  [[nodiscard]] std::uint64_t size() const override { return file_->size(); }
  [[nodiscard]] status read(std::uint64_t offset, mutable_byte_span out) override {
    const bool free = held_prefix != 0 && (offset + out.size() <= held_prefix || !seen_.insert({offset, out.size()}).second);
    if (!free) {
      ++reads;
      bytes += out.size();
    }
    return file_->read(offset, out);
  }
  std::uint64_t reads = 0, bytes = 0;
  std::uint64_t held_prefix = 0;

 private:
  file_range_source* file_;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen_;
};

/// The HTTP requests one level costs: the prefix phase, then the geometry phase.
struct level_cost {
  std::uint64_t prefix_bytes = 0, prefix_requests = 1;
  std::uint64_t range_bytes = 0, range_requests = 0;
  std::uint64_t file_bytes = 0;
  bool measured = false;  // from the file itself
};

level_cost cost_of(const std::filesystem::path& file, std::uint64_t declared) {
  // The first request of a range client (range_options::initial_read, equal to this by default).
  const std::uint64_t prefix_size = stream_options{}.initial_read;
  level_cost c;
  c.file_bytes = declared;
  auto src = file_range_source::open(file);
  if (src) {
    counting_source counter(*src);
    auto tile = streamed_asset::open(counter);
    if (tile) {
      c.prefix_bytes = counter.bytes;
      c.prefix_requests = counter.reads;
      // Then every mesh, read exactly as the stream runner reads it
      // (load_mesh: each part on its own, grown to its digest blocks when the
      // file has block digests), served free from the prefix a range client
      // holds or from its cache of ranges already fetched.
      counter.held_prefix = std::min(c.prefix_bytes, prefix_size);
      counter.reads = counter.bytes = 0;
      for (std::uint32_t m = 0; m < tile->metadata().meshes().size(); ++m)
        if (!tile->load_mesh(m)) break;  // the runner fails such a tile at the same read
      c.range_bytes = counter.bytes;
      c.range_requests = counter.reads;
      c.file_bytes = src->size();
      c.measured = true;
      return c;
    }
  }
  const std::uint64_t prefix = std::min(declared, prefix_size);
  c.prefix_bytes = prefix;
  c.range_bytes = declared - prefix;
  c.range_requests = c.range_bytes != 0 ? 1 : 0;
  return c;
}

struct transfer {
  std::uint64_t request = 0;
  double latency_left = 0;  // seconds of request latency still to wait
  double bytes_left = 0;
  std::uint64_t bytes_done = 0;
};

struct event {
  double t;
  std::string what;
  std::uint32_t tile;
  std::uint16_t level;
};

/// Visits of one tile: a visit starts when the camera enters the streaming
/// radius and ends when it leaves; it waits until the full tile is shown.
struct tile_report {
  double visit_start = -1;  // the current visit's start; < 0: outside
  bool shown_in_visit = false;
  std::uint32_t visits = 0, late = 0, missed = 0;  // missed: left before it showed
  bool cold = false;        // needed at the first tick (nothing can be loaded yet)
  double worst_wait = 0, first_wait = -1;
};

struct sample {
  double t;
  std::uint64_t resident, fetched;
};

struct sim_report {
  std::vector<event> events;
  std::vector<tile_report> tiles;
  std::vector<sample> samples;
  std::vector<double> late_at;  // when a tile that was not ready became needed (cold start excluded)
  std::uint64_t prefix_bytes = 0, range_bytes = 0, file_bytes = 0, wasted_bytes = 0;
  std::uint64_t requests = 0, whole_file_equivalent = 0;
  std::uint64_t peak = 0;
  std::uint64_t levels_fetched = 0, cancels = 0, unloads = 0, evictions = 0;
  bool measured = true;
  double duration = 0;
};

std::string level_name(const us::planner& p, std::uint32_t tile, std::uint16_t level) {
  if (level == us::no_level) return "none";
  if (level == 0) return "full";
  if (level == p.hlod_level(tile)) return "hlod";
  return "lod" + std::to_string(level);
}

sim_report simulate(const ur::stream_world& world, const std::filesystem::path& base, const std::vector<camera_key>& path,
                    const sim_args& a, us::planner& plan) {
  sim_report rep;
  rep.tiles.resize(world.tiles.size());
  std::map<std::pair<std::uint32_t, std::uint16_t>, level_cost> costs;
  auto cost = [&](std::uint32_t tile, std::uint16_t level) -> const level_cost& {
    const auto key = std::make_pair(tile, level);
    auto it = costs.find(key);
    if (it == costs.end()) {
      std::uint64_t declared = level == 0 ? world.tiles[tile].size_bytes : 0;
      if (level != 0 && level == plan.hlod_level(tile) && world.tiles[tile].hlod)
        declared = world.tiles[tile].hlod->size_bytes;
      else if (level != 0 && level <= world.tiles[tile].lods.size())
        declared = world.tiles[tile].lods[level - 1].size_bytes;
      if (declared == 0) declared = world.tiles[tile].size_bytes;
      it = costs.emplace(key, cost_of(base / std::string(world.path(tile, level)), declared)).first;
      rep.measured = rep.measured && it->second.measured;
    }
    return it->second;
  };
  const double bandwidth = a.bandwidth_mbps * 1e6 / 8;  // bytes per second
  const double latency = a.latency_ms / 1000;
  const std::uint64_t budget =
      a.budget_mb > 0 ? static_cast<std::uint64_t>(a.budget_mb * 1024 * 1024) : std::numeric_limits<std::uint64_t>::max();
  std::vector<transfer> active;
  std::vector<us::request_result> results, next;
  std::uint64_t fetched = 0;
  const double t0 = path.front().t, t1 = path.back().t;
  const auto ticks = static_cast<std::uint64_t>(std::ceil((t1 - t0) / a.tick)) + 1;
  for (std::uint64_t i = 0; i < ticks; ++i) {
    const double now = t0 + static_cast<double>(i) * a.tick;
    // Move the network forward by one tick: latency first, then bytes shared equally.
    if (i > 0) {
      double left = a.tick;
      while (left > 1e-12) {
        std::size_t moving = 0;
        double step = left;
        for (const transfer& tr : active) {
          if (tr.latency_left > 0) step = std::min(step, tr.latency_left);
          else if (tr.bytes_left > 0) ++moving;
        }
        const double share = moving != 0 ? bandwidth / static_cast<double>(moving) : 0;
        for (const transfer& tr : active)
          if (tr.latency_left <= 0 && tr.bytes_left > 0) step = std::min(step, tr.bytes_left / share);
        for (transfer& tr : active) {
          if (tr.latency_left > 0) {
            tr.latency_left = std::max(0.0, tr.latency_left - step);
          } else if (tr.bytes_left > 0) {
            const double moved = std::min(tr.bytes_left, share * step);
            tr.bytes_left -= moved;
            // Within half a byte of its end a transfer is done (the test below): a rounding
            // residue left "moving" (1e-314 was seen) made the next step 0, which stalled
            // every other transfer for the rest of the tick.
            if (tr.bytes_left <= 0.5) tr.bytes_left = 0;
          }
        }
        left -= step;
        if (step <= 0) break;
      }
      for (auto it = active.begin(); it != active.end();) {
        if (it->latency_left <= 0 && it->bytes_left <= 0.5) {
          results.push_back({it->request, us::request_outcome::completed, 0});
          it = active.erase(it);
        } else {
          ++it;
        }
      }
    }
    const us::vec3 cam = camera_at(path, now);
    results.insert(results.end(), next.begin(), next.end());
    next.clear();
    const auto& actions = plan.tick({.camera = cam, .now = now, .memory_budget = budget, .results = results});
    results.clear();
    for (const us::action& act : actions) {
      switch (act.kind) {
        case us::action_kind::fetch_prefix:
        case us::action_kind::fetch_ranges:
        case us::action_kind::fetch_file: {
          const level_cost& c = cost(act.tile, act.level);
          std::uint64_t bytes = 0, requests = 1;
          if (act.kind == us::action_kind::fetch_prefix) {
            bytes = c.prefix_bytes;
            requests = c.prefix_requests;
            rep.prefix_bytes += bytes;
            rep.whole_file_equivalent += c.file_bytes;
            ++rep.levels_fetched;
            rep.events.push_back({now, "fetch", act.tile, act.level});
          } else if (act.kind == us::action_kind::fetch_ranges) {
            bytes = c.range_bytes;
            requests = c.range_requests;
            rep.range_bytes += bytes;
          } else {
            bytes = c.file_bytes;
            rep.file_bytes += bytes;
            rep.whole_file_equivalent += c.file_bytes;
            ++rep.levels_fetched;
            rep.events.push_back({now, "fetch", act.tile, act.level});
          }
          rep.requests += requests;
          fetched += bytes;
          if (requests == 0) next.push_back({act.request, us::request_outcome::completed, 0});
          else active.push_back({act.request, latency * static_cast<double>(requests), static_cast<double>(bytes), bytes});
          break;
        }
        case us::action_kind::load: next.push_back({act.request, us::request_outcome::completed, 0}); break;
        case us::action_kind::cancel: {
          ++rep.cancels;
          rep.events.push_back({now, "cancel", act.tile, act.level});
          const auto it = std::find_if(active.begin(), active.end(),
                                       [&](const transfer& tr) { return tr.request == act.request; });
          if (it != active.end()) {
            const auto unsent = static_cast<std::uint64_t>(std::max(0.0, it->bytes_left));
            rep.wasted_bytes += it->bytes_done - std::min(unsent, it->bytes_done);
            fetched -= std::min(unsent, fetched);
            active.erase(it);
          }
          next.push_back({act.request, us::request_outcome::cancelled, 0});
          break;
        }
        case us::action_kind::unload:
          ++rep.unloads;
          rep.events.push_back({now, "unload", act.tile, act.level});
          break;
        case us::action_kind::show:
          rep.events.push_back({now, "show " + level_name(plan, act.tile, act.level), act.tile, act.level});
          break;
      }
    }
    // Visibility bookkeeping: per visit, how long until the full tile showed.
    for (std::uint32_t t = 0; t < rep.tiles.size(); ++t) {
      tile_report& r = rep.tiles[t];
      if (world.tiles[t].always_resident) continue;
      const bool inside = plan.distance(t) < world.tiles[t].streaming_radius;
      if (inside && r.visit_start < 0) {
        r.visit_start = now;
        r.shown_in_visit = false;
        ++r.visits;
        r.cold = r.cold || i == 0;
      }
      if (r.visit_start >= 0 && !r.shown_in_visit && plan.shown(t) == 0) {
        r.shown_in_visit = true;
        const double wait = now - r.visit_start;
        if (r.first_wait < 0) r.first_wait = wait;
        if (wait > 0) ++r.late;
        if (wait > 0 && !r.cold) rep.late_at.push_back(r.visit_start);
        r.worst_wait = std::max(r.worst_wait, wait);
      }
      if (!inside && r.visit_start >= 0) {
        if (!r.shown_in_visit) ++r.missed;
        if (!r.shown_in_visit && !r.cold) rep.late_at.push_back(r.visit_start);
        r.visit_start = -1;
      }
    }
    rep.peak = std::max(rep.peak, plan.resident_bytes());
    rep.samples.push_back({now, plan.resident_bytes(), fetched});
  }
  // A visit still waiting when the path ends was missed too.
  for (tile_report& r : rep.tiles)
    if (r.visit_start >= 0 && !r.shown_in_visit) {
      ++r.missed;
      if (!r.cold) rep.late_at.push_back(r.visit_start);
    }
  rep.evictions = plan.stats().evictions;
  rep.duration = t1 - t0;
  return rep;
}

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

/// A self-contained SVG: resident memory and cumulative bytes fetched over
/// time, the budget as a dashed line, a tick per tile shown late.
std::string plot_svg(const sim_report& r, std::uint64_t budget, const std::string& title) {
  const double w = 800, h = 360, left = 70, right = 70, top = 40, bottom = 50;
  // Left axis: resident memory and the budget; right axis: bytes fetched so far.
  double ymax = 1, fmax = 1;
  for (const sample& s : r.samples) {
    ymax = std::max(ymax, static_cast<double>(s.resident));
    fmax = std::max(fmax, static_cast<double>(s.fetched));
  }
  if (budget != std::numeric_limits<std::uint64_t>::max()) ymax = std::max(ymax, static_cast<double>(budget));
  ymax *= 1.05;
  fmax *= 1.05;
  const double t0 = r.samples.empty() ? 0 : r.samples.front().t;
  const double span = std::max(1e-9, r.duration);
  auto X = [&](double t) { return left + (t - t0) / span * (w - left - right); };
  auto Y = [&](double v) { return top + (1 - v / ymax) * (h - top - bottom); };
  auto F = [&](double v) { return top + (1 - v / fmax) * (h - top - bottom); };
  std::string svg;
  char buf[256];
  auto add = [&](const char* fmt, auto... v) {
    std::snprintf(buf, sizeof buf, fmt, v...);
    svg += buf;
  };
  add("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n", w, h);
  add("<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", w, h);
  svg += "<text x=\"" + std::to_string(static_cast<int>(left)) + "\" y=\"20\" font-size=\"14\">" + title + "</text>\n";
  add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, h - bottom, w - right, h - bottom);
  add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top, left, h - bottom);
  for (int i = 0; i <= 4; ++i) {
    const double v = ymax * i / 4;
    add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n", left - 5, Y(v) + 4, v / (1024.0 * 1024.0));
    const double f = fmax * i / 4;
    add("<text x=\"%.1f\" y=\"%.1f\" fill=\"#ff7f0e\">%.0f</text>\n", w - right + 5, F(f) + 4, f / (1024.0 * 1024.0));
    const double t = t0 + span * i / 4;
    add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.1f</text>\n", X(t), h - bottom + 18, t);
  }
  add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (s)</text>\n", (left + w - right) / 2, h - 10);
  add("<text x=\"15\" y=\"%.1f\" transform=\"rotate(-90 15 %.1f)\" text-anchor=\"middle\">resident MiB</text>\n", (top + h - bottom) / 2,
      (top + h - bottom) / 2);
  auto polyline = [&](const char* colour, auto value, auto scale) {
    svg += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"";
    svg += colour;
    svg += "\" points=\"";
    for (const sample& s : r.samples) add("%.1f,%.1f ", X(s.t), scale(static_cast<double>(value(s))));
    svg += "\"/>\n";
  };
  polyline("#1f77b4", [](const sample& s) { return s.resident; }, Y);
  polyline("#ff7f0e", [](const sample& s) { return s.fetched; }, F);
  if (budget != std::numeric_limits<std::uint64_t>::max())
    add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-dasharray=\"6,4\"/>\n", left,
        Y(static_cast<double>(budget)), w - right, Y(static_cast<double>(budget)));
  for (const double t : r.late_at)
    add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-width=\"2\"/>\n", X(t),
        h - bottom, X(t), h - bottom - 10);
  const double lx = w - right - 300;
  add("<line x1=\"%.1f\" y1=\"52\" x2=\"%.1f\" y2=\"52\" stroke=\"#1f77b4\" stroke-width=\"2\"/>", lx, lx + 20);
  add("<text x=\"%.1f\" y=\"56\">resident (planner's budget account)</text>\n", lx + 25);
  add("<line x1=\"%.1f\" y1=\"68\" x2=\"%.1f\" y2=\"68\" stroke=\"#ff7f0e\" stroke-width=\"2\"/>", lx, lx + 20);
  add("<text x=\"%.1f\" y=\"72\">fetched so far (right axis, MiB)</text>\n", lx + 25);
  add("<line x1=\"%.1f\" y1=\"84\" x2=\"%.1f\" y2=\"84\" stroke=\"#d62728\" stroke-dasharray=\"6,4\"/>", lx, lx + 20);
  add("<text x=\"%.1f\" y=\"88\">budget; red: a tile needed before it was ready</text>\n", lx + 25);
  svg += "</svg>\n";
  return svg;
}

int run_stream_sim(const sim_args& a, const common_flags& flags) {
  std::string error;
  int code = exit_ok;
  auto fail = [&](int c, std::string message) {
    code = c;
    error = std::move(message);
  };
  std::vector<camera_key> path;
  std::optional<ur::manifest> manifest;
  if (auto m = ur::read_manifest_file(a.manifest); !m) {
    fail(m.error().code == ur::remote_errc::cache_io ? exit_io : exit_invalid,
         quote_path(a.manifest) + ": " + m.error().describe());
  } else {
    manifest = std::move(*m);
    if (!read_camera_path(a.path, path, error)) code = exit_usage;
  }
  if (code == exit_ok && !(a.tick > 0 && std::isfinite(a.tick) && a.bandwidth_mbps > 0 && a.latency_ms >= 0))
    fail(exit_usage, "--tick and --bandwidth must be positive, --latency not negative");
  if (code != exit_ok) {
    complain(error);
    if (flags.json) print(to_text(json{{"ok", false}, {"error", error}}));
    return code;
  }
  const ur::stream_world world = ur::make_stream_world(*manifest);
  us::planner_options po;
  po.mode = a.whole_file ? us::transfer_mode::whole_file : us::transfer_mode::ranges;
  po.max_in_flight = std::max<std::uint32_t>(1, a.max_transfers);
  us::planner plan(world.tiles, po);
  const std::filesystem::path base = std::filesystem::path(a.manifest).parent_path();
  const sim_report r = simulate(world, base, path, a, plan);
  const std::uint64_t budget = a.budget_mb > 0 ? static_cast<std::uint64_t>(a.budget_mb * 1024 * 1024)
                                               : std::numeric_limits<std::uint64_t>::max();

  // Tiles needed at the first tick are a cold start: reported apart, not as late.
  std::uint32_t passed = 0, late = 0, missed = 0, cold = 0;
  double worst = 0, cold_worst = 0, sum = 0;
  std::uint32_t waits = 0;
  json tiles = json::array();
  for (std::uint32_t t = 0; t < r.tiles.size(); ++t) {
    const tile_report& tr = r.tiles[t];
    if (tr.visits == 0) continue;
    ++passed;
    if (tr.cold) {
      ++cold;
      cold_worst = std::max(cold_worst, tr.first_wait);
    } else {
      late += tr.late != 0 ? 1 : 0;
      missed += tr.missed != 0 ? 1 : 0;
      worst = std::max(worst, tr.worst_wait);
      if (tr.first_wait > 0) {
        sum += tr.first_wait;
        ++waits;
      }
    }
    tiles.push_back(json{{"tile", world.ids[t]},
                         {"visits", tr.visits},
                         {"cold_start", tr.cold},
                         {"time_to_visible", tr.first_wait < 0 ? json(nullptr) : json(tr.first_wait)},
                         {"late_visits", tr.late},
                         {"missed_visits", tr.missed},
                         {"worst_wait", tr.worst_wait}});
  }
  const std::uint64_t fetched = r.prefix_bytes + r.range_bytes + r.file_bytes;
  if (!a.svg.empty()) {
    const std::string svg = plot_svg(r, budget, "untold stream-sim: " + std::filesystem::path(a.manifest).filename().string());
    if (auto failed = write_output(a.svg, std::as_bytes(std::span(svg)))) {
      complain(failed->message);
      return exit_io;
    }
  }
  if (flags.json) {
    json events = json::array();
    for (const event& e : r.events)
      events.push_back(json{{"t", e.t}, {"event", e.what}, {"tile", world.ids[e.tile]},
                            {"level", e.level == us::no_level ? json(nullptr) : json(e.level)}});
    print(to_text(json{{"ok", true},
                       {"manifest", a.manifest},
                       {"mode", a.whole_file ? "whole_file" : "ranges"},
                       {"sizes_from_files", r.measured},
                       {"duration_s", r.duration},
                       {"bytes", json{{"fetched", fetched},
                                      {"prefix", r.prefix_bytes},
                                      {"ranges", r.range_bytes},
                                      {"whole_file", r.file_bytes},
                                      {"whole_file_equivalent", r.whole_file_equivalent},
                                      {"cancelled_in_flight", r.wasted_bytes}}},
                       {"requests", r.requests},
                       {"levels_fetched", r.levels_fetched},
                       {"cancels", r.cancels},
                       {"unloads", r.unloads},
                       {"evictions", r.evictions},
                       {"memory", json{{"peak", r.peak}, {"budget", budget == std::numeric_limits<std::uint64_t>::max()
                                                                          ? json(nullptr)
                                                                          : json(budget)}}},
                       {"tiles_passed", passed},
                       {"tiles_cold_start", cold},
                       {"tiles_late", late},
                       {"tiles_missed", missed},
                       {"worst_time_to_visible_s", worst},
                       {"cold_start_worst_s", cold_worst},
                       {"tiles", tiles},
                       {"events", events}}));
    return exit_ok;
  }
  if (!flags.quiet) {
    for (const event& e : r.events)
      std::printf("%8.2f s  %-10s %s%s\n", e.t, e.what.c_str(), escaped(world.ids[e.tile]).c_str(),
                  e.what == "fetch" || e.what == "cancel" || e.what == "unload"
                      ? (" (" + level_name(plan, e.tile, e.level) + ")").c_str()
                      : "");
  }
  std::printf("%.1f s of camera path, %s mode, sizes %s\n", r.duration, a.whole_file ? "whole-file" : "range",
              r.measured ? "measured from the files" : "from the manifest");
  std::printf("fetched: %s in %llu requests (prefix %s, ranges %s, whole files %s); whole-file equivalent %s\n",
              mib(fetched).c_str(), static_cast<unsigned long long>(r.requests), mib(r.prefix_bytes).c_str(),
              mib(r.range_bytes).c_str(), mib(r.file_bytes).c_str(), mib(r.whole_file_equivalent).c_str());
  std::printf("levels fetched %llu, cancelled %llu (%s in flight dropped), unloaded %llu, evicted %llu\n",
              static_cast<unsigned long long>(r.levels_fetched), static_cast<unsigned long long>(r.cancels),
              mib(r.wasted_bytes).c_str(), static_cast<unsigned long long>(r.unloads),
              static_cast<unsigned long long>(r.evictions));
  std::printf("tiles passed %u (%u at the start: all shown within %.2f s): late %u, missed %u (left before shown); "
              "time to visible of late tiles mean %.2f s, worst %.2f s\n",
              passed, cold, cold_worst, late, missed, waits != 0 ? sum / waits : 0.0, worst);
  if (budget == std::numeric_limits<std::uint64_t>::max())
    std::printf("peak memory %s (no budget)\n", mib(r.peak).c_str());
  else
    std::printf("peak memory %s of a %s budget\n", mib(r.peak).c_str(), mib(budget).c_str());
  return exit_ok;
}

}  // namespace

void add_stream_sim_command(CLI::App& app, context& ctx) {
  auto a = std::make_shared<sim_args>();
  CLI::App* cmd = app.add_subcommand("stream-sim", "Replay a camera path against the streaming planner (simulated network)");
  cmd->add_option("MANIFEST", a->manifest, "tile manifest (JSON); tile files next to it give exact request sizes")
      ->required();
  cmd->add_option("--path", a->path, "camera path: CSV rows t,x,y,z (seconds, world units)")->required();
  cmd->add_option("--bandwidth", a->bandwidth_mbps, "link bandwidth in Mbit/s (default 50)");
  cmd->add_option("--latency", a->latency_ms, "latency per HTTP request in ms (default 50)");
  cmd->add_option("--budget-mb", a->budget_mb, "memory budget in MiB (default: none)");
  cmd->add_option("--tick", a->tick, "planner tick in seconds (default 0.1)");
  cmd->add_option("--max-transfers", a->max_transfers, "levels in flight at once (default 4)");
  cmd->add_flag("--whole-file", a->whole_file, "fetch whole files instead of a prefix + mesh ranges");
  cmd->add_option("--svg", a->svg, "write a plot of memory and bytes fetched over time (SVG)");
  add_common_flags(*cmd, ctx.flags, "print a JSON report (events, per-tile time to visible, totals)");
  cmd->callback([a, &ctx] { ctx.exit_code = run_stream_sim(*a, ctx.flags); });
}

}  // namespace untold::tools::cli
