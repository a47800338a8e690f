// untold/remote/stream_runner.hpp - the streaming planner driven by the HTTPS downloader.
//
//   auto dl = untold::remote::downloader::create({.cache_dir = dir});
//   auto m = untold::remote::load_manifest(**dl, url);
//   untold::remote::stream_runner run(**dl, url, untold::remote::make_stream_world(*m), {});
//   for (;;) {                                   // the engine's frame or streaming tick
//     run.tick(camera, seconds, budget_bytes);   // never blocks on the network
//     if (const auto* l = run.level(tile, run.planner().shown(tile))) draw(l->meshes);
//   }
//
// The planner (untold/streaming.hpp) decides; the runner executes its
// actions on `max_transfers` worker threads (bounded concurrency):
// - ranges mode (default): fetch_prefix opens an https_range_source (one
//   Range request: header, chunk table, metadata) and streamed_asset::open;
//   fetch_ranges loads every mesh (one Range request per coalesced range);
//   whole_file mode: fetch_file is downloader::fetch (cache, validation).
// - load: the level's meshes are ready (ranges) or the cached file is opened
//   (whole file); the level becomes available through level().
// - cancel: a queued job is dropped; a running one has its flag set, which
//   aborts its HTTP transfer in flight (a progress_scope around the job,
//   http.hpp) - range or whole file - and stops it before its next request.
// - unload: the level's bytes are freed. show: recorded for the caller.
// Results reach the planner on the next tick(). Callbacks: on_progress
// (worker threads; bytes done / total of a level), on_action (the tick's thread).
//
// Thread safety: tick(), level() and the accessors from one thread; the
// destructor cancels everything and joins the workers.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../io.hpp"
#include "../ranges.hpp"
#include "../streaming.hpp"
#include "downloader.hpp"
#include "range_source.hpp"
#include "stream_plan.hpp"
#include "url.hpp"

namespace untold::remote {

/// A level's transfer progress: bytes received so far and expected in all.
struct stream_progress {
  std::uint32_t tile = 0;
  std::uint16_t level = 0;
  std::uint64_t done = 0;
  std::uint64_t total = 0;
};

/// A level the runner fetched; available from level() once parsed.
struct stream_level {
  std::string url;
  std::uint64_t file_size = 0;
  std::uint64_t bytes_fetched = 0;  // body bytes over the network for this level
  std::uint32_t requests = 0;       // HTTP requests for this level
  // ranges mode
  struct progress_state {
    std::atomic<std::uint64_t> base{0};   // bytes of the level's earlier requests
    std::atomic<std::uint64_t> total{0};  // the level's expected bytes
  };
  std::shared_ptr<progress_state> progress = std::make_shared<progress_state>();
  std::optional<https_range_source> source;
  std::optional<streamed_asset> streamed;
  std::vector<mesh_bytes> meshes;
  // whole-file mode
  std::optional<fetch_info> file;
  std::optional<mapped_asset> opened;
};

struct stream_runner_options {
  streaming::planner_options planner{};
  /// Worker threads, hence transfers at once (the planner's max_in_flight is raised to it).
  std::uint32_t max_transfers = 4;
  range_options ranges{};
  stream_options stream{};
  /// Called on worker threads; must be thread-safe and quick.
  std::function<void(const stream_progress&)> on_progress{};
  /// Every action the planner issued, after the runner executed it (tick's thread).
  std::function<void(const streaming::action&)> on_action{};
};

/// Counters since construction.
struct stream_runner_stats {
  std::uint64_t levels_loaded = 0;
  std::uint64_t failures = 0;
  std::uint64_t cancelled = 0;          // cancel actions executed
  std::uint64_t aborted_transfers = 0;  // jobs stopped by a cancel while running
  std::uint64_t bytes_fetched = 0;      // body bytes over the network
  std::uint64_t requests = 0;           // HTTP requests
};

class stream_runner {
 public:
  /// `manifest_location`: the manifest's https:// URL. `dl` must outlive the runner.
  stream_runner(downloader& dl, std::string manifest_location, stream_world world, stream_runner_options options = {})
      : dl_(&dl), base_(std::move(manifest_location)), world_(std::move(world)), options_(std::move(options)),
        plan_(world_.tiles, planner_options_with_concurrency(options_)) {
    const std::uint32_t n = std::max<std::uint32_t>(1, options_.max_transfers);
    for (std::uint32_t i = 0; i < n; ++i) workers_.emplace_back([this] { work(); });
  }

  stream_runner(const stream_runner&) = delete;
  stream_runner& operator=(const stream_runner&) = delete;

  ~stream_runner() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      for (auto& [id, running] : running_) running->cancel->store(true);
      queue_.clear();
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  /// One streaming tick: hands finished requests to the planner and executes
  /// its actions. Never blocks on the network. Returns the planner's actions.
  const std::vector<streaming::action>& tick(const streaming::vec3& camera, double now,
                                             std::uint64_t memory_budget = UINT64_MAX) {
    results_.clear();
    {
      std::lock_guard lock(mutex_);
      for (finished& d : done_) {
        results_.push_back(d.result);
        stats_.bytes_fetched += d.bytes;
        stats_.requests += d.requests;
        if (d.aborted) ++stats_.aborted_transfers;
        if (d.result.outcome == streaming::request_outcome::failed) ++stats_.failures;
        if (d.level) {
          levels_[key(d.tile, d.level_index)] = std::move(d.level);
          arrived_.emplace_back(d.tile, d.level_index);
        }
      }
      done_.clear();
    }
    const auto& actions = plan_.tick({.camera = camera, .now = now, .memory_budget = memory_budget, .results = results_});
    for (const streaming::action& a : actions) {
      execute(a);
      if (options_.on_action) options_.on_action(a);
    }
    // A level whose request completed after the planner had cancelled it.
    for (const auto& [tile, level] : arrived_)
      if (plan_.state(tile, level) == streaming::level_state::unloaded) levels_.erase(key(tile, level));
    arrived_.clear();
    return actions;
  }

  /// A parsed level's data; nullptr when it is not parsed.
  [[nodiscard]] const stream_level* level(std::uint32_t tile, std::uint16_t level) const {
    if (tile >= plan_.tile_count() || level >= plan_.level_count(tile) ||
        plan_.state(tile, level) != streaming::level_state::parsed)
      return nullptr;
    const auto it = levels_.find(key(tile, level));
    return it == levels_.end() ? nullptr : it->second.get();
  }

  /// The URL of a level's file (resolved against the manifest's URL); empty when unknown.
  [[nodiscard]] std::string location(std::uint32_t tile, std::uint16_t level) const {
    const std::string_view rel = world_.path(tile, level);
    if (rel.empty()) return {};
    auto url = resolve_relative(base_, rel);
    return url ? *url : std::string{};
  }

  [[nodiscard]] const streaming::planner& planner() const noexcept { return plan_; }
  [[nodiscard]] const stream_world& world() const noexcept { return world_; }
  [[nodiscard]] stream_runner_stats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  /// Jobs queued, running or finished but not yet handed to the planner.
  [[nodiscard]] std::size_t busy() const {
    std::lock_guard lock(mutex_);
    return queue_.size() + running_.size() + done_.size();
  }

 private:
  struct job {
    streaming::action action;
    std::string url;
    std::unique_ptr<stream_level> level;  // carried between the phases of a level
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  };
  struct finished {
    streaming::request_result result;
    std::uint32_t tile = 0;
    std::uint16_t level_index = 0;
    std::unique_ptr<stream_level> level;
    std::uint64_t bytes = 0;
    std::uint32_t requests = 0;
    bool aborted = false;
  };

  static streaming::planner_options planner_options_with_concurrency(const stream_runner_options& o) {
    streaming::planner_options p = o.planner;
    p.max_in_flight = std::max(p.max_in_flight, std::max<std::uint32_t>(1, o.max_transfers));
    return p;
  }

  [[nodiscard]] static std::uint64_t key(std::uint32_t tile, std::uint16_t level) noexcept {
    return (std::uint64_t{tile} << 16) | level;
  }

  void execute(const streaming::action& a) {
    using streaming::action_kind;
    switch (a.kind) {
      case action_kind::fetch_prefix:
      case action_kind::fetch_file:
      case action_kind::fetch_ranges:
      case action_kind::load: {
        auto j = std::make_unique<job>();
        j->action = a;
        j->url = location(a.tile, a.level);
        const auto it = levels_.find(key(a.tile, a.level));
        if (a.kind == action_kind::fetch_prefix || a.kind == action_kind::fetch_file) {
          j->level = std::make_unique<stream_level>();
          j->level->url = j->url;
        } else if (it != levels_.end()) {  // the next phase takes the level's data along
          j->level = std::move(it->second);
        }
        if (it != levels_.end()) levels_.erase(it);
        enqueue(std::move(j));
        break;
      }
      case action_kind::cancel: cancel(a.request); break;
      case action_kind::unload: levels_.erase(key(a.tile, a.level)); break;
      case action_kind::show: break;
    }
  }

  void enqueue(std::unique_ptr<job> j) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(j));
    }
    wake_.notify_one();
  }

  void cancel(std::uint64_t request) {
    std::lock_guard lock(mutex_);
    ++stats_.cancelled;
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if ((*it)->action.request != request) continue;
      done_.push_back(ended((*it)->action, streaming::request_outcome::cancelled));
      queue_.erase(it);
      return;
    }
    const auto running = running_.find(request);
    if (running != running_.end()) running->second->cancel->store(true);
    // Otherwise it has finished: its result is on its way to the planner.
  }

  static finished ended(const streaming::action& a, streaming::request_outcome outcome) {
    finished f;
    f.result = {a.request, outcome, 0};
    f.tile = a.tile;
    f.level_index = a.level;
    return f;
  }

  void work() {
    for (;;) {
      std::unique_ptr<job> j;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        j = std::move(queue_.front());
        queue_.pop_front();
        running_[j->action.request] = j.get();
      }
      finished f = run(*j);
      {
        std::lock_guard lock(mutex_);
        running_.erase(j->action.request);
        done_.push_back(std::move(f));
      }
    }
  }

  // Runs one phase of a level on a worker thread. Every HTTP transfer it
  // starts reports the level's progress and stops when the level is cancelled.
  finished run(job& j) {
    using streaming::action_kind;
    using streaming::request_outcome;
    finished f = ended(j.action, request_outcome::completed);
    std::optional<progress_scope> scope;
    if (j.level)
      scope.emplace([this, cancel = j.cancel, tile = j.action.tile, level = j.action.level,
                     p = j.level->progress](std::uint64_t done, std::uint64_t expected) {
        const std::uint64_t base = p->base.load(), total = p->total.load();
        if (options_.on_progress) options_.on_progress({tile, level, base + done, total != 0 ? total : base + expected});
        return !cancel->load();
      });
    auto fail = [&f, &j](request_outcome o) {
      f.aborted = j.cancel->load();
      f.result.outcome = f.aborted ? request_outcome::cancelled : o;
      f.level.reset();
      return std::move(f);
    };
    if (!j.level) return fail(request_outcome::failed);
    stream_level& l = *j.level;
    const std::shared_ptr<std::atomic<bool>> cancel = j.cancel;
    const std::uint32_t tile = j.action.tile;
    const std::uint16_t level = j.action.level;
    switch (j.action.kind) {
      case action_kind::fetch_prefix: {
        const range_options& ro = options_.ranges;
        l.progress->total = ro.initial_read;
        auto src = https_range_source::open(*dl_, j.url, ro);
        if (!src) return fail(request_outcome::failed);
        l.source.emplace(std::move(*src));
        l.file_size = l.source->size();
        auto s = streamed_asset::open(*l.source, options_.stream);
        account(f, l);
        if (!s) return fail(request_outcome::failed);
        l.streamed.emplace(std::move(*s));
        f.result.resident_bytes = l.file_size;
        break;
      }
      case action_kind::fetch_ranges: {
        if (!l.streamed || !l.source) return fail(request_outcome::failed);
        const std::uint32_t meshes = static_cast<std::uint32_t>(l.streamed->metadata().meshes().size());
        std::uint64_t total = l.source->bytes_fetched();
        for (std::uint32_t m = 0; m < meshes; ++m)
          for (const byte_range& r : l.streamed->ranges_for_mesh(m)) total += r.size;
        l.progress->total = total;
        l.meshes.clear();
        for (std::uint32_t m = 0; m < meshes && !cancel->load(); ++m) {
          l.progress->base = l.source->bytes_fetched();
          auto mesh = l.streamed->load_mesh(m);
          if (!mesh) {
            account(f, l);
            return fail(request_outcome::failed);
          }
          l.meshes.push_back(std::move(*mesh));
        }
        account(f, l);
        if (cancel->load()) return fail(request_outcome::cancelled);
        if (options_.on_progress) options_.on_progress({tile, level, total, total});
        break;
      }
      case action_kind::fetch_file: {
        auto info = dl_->fetch(j.url);
        if (!info) return fail(request_outcome::failed);
        l.file_size = info->size;
        l.bytes_fetched = info->outcome == fetch_outcome::downloaded ? info->size : 0;
        l.requests = info->attempts;
        f.bytes = l.bytes_fetched;
        f.requests = l.requests;
        if (options_.on_progress) options_.on_progress({tile, level, info->size, info->size});
        l.file = std::move(*info);
        f.result.resident_bytes = l.file_size;
        if (cancel->load()) return fail(request_outcome::cancelled);
        break;
      }
      case action_kind::load: {
        if (l.file && !l.opened) {
          auto opened = open_file(l.file->path);
          if (!opened) return fail(request_outcome::failed);
          l.opened.emplace(std::move(*opened));
        }
        std::lock_guard lock(mutex_);
        ++stats_.levels_loaded;
        break;
      }
      default: return fail(request_outcome::failed);
    }
    f.level = std::move(j.level);
    return f;
  }

  // Moves the level source's counters since the last phase into `f`.
  static void account(finished& f, stream_level& l) {
    if (!l.source) return;
    f.bytes = l.source->bytes_fetched() - l.bytes_fetched;
    f.requests = static_cast<std::uint32_t>(l.source->requests() - l.requests);
    l.bytes_fetched = l.source->bytes_fetched();
    l.requests = static_cast<std::uint32_t>(l.source->requests());
  }

  downloader* dl_;
  std::string base_;
  stream_world world_;
  stream_runner_options options_;
  streaming::planner plan_;
  std::unordered_map<std::uint64_t, std::unique_ptr<stream_level>> levels_;  // parsed or between phases
  std::vector<streaming::request_result> results_;
  std::vector<std::pair<std::uint32_t, std::uint16_t>> arrived_;  // levels handed back this tick

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<job>> queue_;
  std::unordered_map<std::uint64_t, job*> running_;
  std::vector<finished> done_;
  stream_runner_stats stats_{};
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace untold::remote
